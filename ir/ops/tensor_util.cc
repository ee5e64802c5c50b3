// Helpers of the tensor family: shape values, dim arithmetic, checks, and the evaluation
// plumbing (output types from inference, guarded allocation, strided copies).
#include <algorithm>
#include <charconv>
#include <cstring>

#include "ir/ops/tensor_internal.h"

namespace dlc::ops::tensor {

namespace {
/// Larger integer constants are not turned into shape values (they are data, not shapes).
constexpr int64_t kMaxShapeValueElements = 1024;
/// The reference backend refuses to allocate a single tensor above this size.
constexpr int64_t kMaxEvalBytes = int64_t{1} << 32;
} // namespace

// --- Shape values -----------------------------------------------------------------------------

std::optional<std::vector<Dim>> inputElements(const InferContext &ctx, int i) {
  if (!ctx.hasInput(i) || i >= ctx.numInputs())
    return std::nullopt;
  if (const std::vector<Dim> *v = ctx.inputShapeValue(i))
    return *v;
  const Tensor *t = ctx.inputConstant(i);
  if (!t || !isInteger(t->dtype()) || t->rank() > 1 || t->numElements() > kMaxShapeValueElements)
    return std::nullopt;
  std::vector<Dim> dims;
  for (int64_t v : t->toInt64Vector())
    dims.push_back(shapeValueDim(v));
  return dims;
}

std::optional<std::vector<int64_t>> inputInts(const InferContext &ctx, int i) {
  auto elems = inputElements(ctx, i);
  if (!elems)
    return std::nullopt;
  std::vector<int64_t> out;
  for (const Dim &d : *elems) {
    auto v = shapeValueInt(d);
    if (!v)
      return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

std::optional<int64_t> staticLength(const InferContext &ctx, int i) {
  if (!ctx.hasInput(i) || i >= ctx.numInputs())
    return std::nullopt;
  const Shape &s = ctx.inputType(i).shape;
  if (!s.isRanked() || s.rank() > 1 || !s.isStatic())
    return std::nullopt;
  return s.rank() == 0 ? 1 : s[0].value();
}

std::string elementsStr(const std::vector<Dim> &dims) { return Shape(dims).str(); }

std::string intsStr(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

Expected<std::optional<std::vector<Dim>>> targetDims(const InferContext &ctx, int i,
                                                     const char *what) {
  DLC_RETURN_IF_ERROR(checkRankAtMost(ctx, i, 1, what));
  if (auto elems = inputElements(ctx, i)) {
    for (const Dim &d : *elems)
      if (auto v = shapeValueInt(d); v && *v < 0)
        return ctx.error("{} {} has a negative value {}", what, elementsStr(*elems), *v);
    return std::optional<std::vector<Dim>>(std::move(*elems));
  }
  if (auto n = staticLength(ctx, i))
    return std::optional<std::vector<Dim>>(unknownDims(*n));
  return std::optional<std::vector<Dim>>();
}

// --- Dim arithmetic ---------------------------------------------------------------------------

Dim dimMul(const Dim &a, const Dim &b) {
  if (a.isKnown() && b.isKnown()) {
    int64_t p;
    if (__builtin_mul_overflow(a.value(), b.value(), &p))
      return Dim::unknown();
    return Dim(p);
  }
  if ((a.isKnown() && a.value() == 0) || (b.isKnown() && b.value() == 0))
    return Dim(0);
  if (a.isKnown() && a.value() == 1)
    return b;
  if (b.isKnown() && b.value() == 1)
    return a;
  return Dim::unknown();
}

Dim dimProduct(const std::vector<Dim> &dims, size_t begin, size_t end) {
  Dim p(1);
  for (size_t i = begin; i < end && i < dims.size(); ++i)
    p = dimMul(p, dims[i]);
  return p;
}

std::vector<Dim> unknownDims(int64_t count) {
  return std::vector<Dim>(static_cast<size_t>(std::max<int64_t>(count, 0)), Dim::unknown());
}

// --- Checks -----------------------------------------------------------------------------------

Status checkIndexType(const InferContext &ctx, int i, const char *what) {
  DType t = ctx.inputType(i).dtype;
  if (t != DType::kUnknown && t != DType::kI32 && t != DType::kI64)
    return ctx.error("{} must be i32 or i64, got {}", what, dtypeName(t));
  return Status::ok();
}

Status checkRankAtMost(const InferContext &ctx, int i, int64_t maxRank, const char *what) {
  if (!ctx.hasInput(i))
    return Status::ok();
  const TensorType &t = ctx.inputType(i);
  if (t.shape.isRanked() && t.shape.rank() > maxRank)
    return ctx.error("{} must have rank at most {}, got {}", what, maxRank, t.str());
  return Status::ok();
}

Expected<std::vector<int64_t>> normalizeAxes(const std::vector<int64_t> &axes, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    DLC_ASSIGN_OR_RETURN(int64_t n, normalizeAxis(a, rank));
    if (std::find(out.begin(), out.end(), n) != out.end())
      return invalidArgument("axis {} is repeated", a);
    out.push_back(n);
  }
  return out;
}

// --- Evaluation helpers -----------------------------------------------------------------------

Expected<std::vector<TensorType>> constantOutputTypes(const Node &node, const Tensors &inputs) {
  if (static_cast<int>(inputs.size()) != node.numInputs())
    return internalError("{} inputs given for {} node inputs", inputs.size(), node.numInputs());
  std::vector<TensorType> types;
  std::vector<const Tensor *> constants;
  for (int i = 0; i < node.numInputs(); ++i) {
    const Tensor &t = inputs[static_cast<size_t>(i)];
    if (node.hasInput(i) && t.empty())
      return internalError("input {} is present but has no data", i);
    types.push_back(t.empty() ? TensorType() : t.type());
    constants.push_back(t.empty() ? nullptr : &t);
  }
  InferContext ctx(node, std::move(types), std::move(constants), {});
  DLC_RETURN_IF_ERROR(node.def().infer(ctx));
  std::vector<TensorType> out;
  for (int i = 0; i < ctx.numOutputs(); ++i)
    out.push_back(ctx.outputType(i));
  return out;
}

Expected<std::vector<TensorType>> staticOutputTypes(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto out, constantOutputTypes(node, inputs));
  for (size_t i = 0; i < out.size(); ++i) {
    const TensorType &t = out[i];
    if (node.output(static_cast<int>(i)) && (!t.isKnown() || !t.shape.isStatic()))
      return invalidArgument("cannot evaluate: output {} has no static type ({})", i, t.str());
  }
  return out;
}

Expected<Tensor> newTensor(DType dtype, const std::vector<int64_t> &shape) {
  DLC_ASSIGN_OR_RETURN(int64_t n, checkedNumElements(shape, "tensor"));
  int64_t bytes;
  if (__builtin_mul_overflow(n, dtypeSize(dtype), &bytes) || bytes > kMaxEvalBytes)
    return outOfRange("a {} tensor of {} elements exceeds the reference backend's limit of {} "
                      "bytes per tensor",
                      dtypeName(dtype), n, kMaxEvalBytes);
  return Tensor::zeros(dtype, shape);
}

std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    s[i - 1] = s[i] * shape[i];
  return s;
}

namespace {
template <typename T>
void copyRowAs(uint8_t *dst, const uint8_t *src, int64_t off, int64_t stride, int64_t n) {
  T *d = reinterpret_cast<T *>(dst);
  const T *s = reinterpret_cast<const T *>(src);
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(d + i, s + off + i * stride, sizeof(T));
}

void copyRow(uint8_t *dst, const uint8_t *src, int64_t off, int64_t stride, int64_t n, size_t es) {
  if (stride == 1) {
    std::memcpy(dst, src + off * static_cast<int64_t>(es), static_cast<size_t>(n) * es);
    return;
  }
  switch (es) {
  case 1:
    copyRowAs<uint8_t>(dst, src, off, stride, n);
    return;
  case 2:
    copyRowAs<uint16_t>(dst, src, off, stride, n);
    return;
  case 4:
    copyRowAs<uint32_t>(dst, src, off, stride, n);
    return;
  case 8:
    copyRowAs<uint64_t>(dst, src, off, stride, n);
    return;
  default:
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(dst + static_cast<size_t>(i) * es, src + (off + i * stride) * es, es);
  }
}
} // namespace

void stridedCopy(const Tensor &in, Tensor &out, int64_t base, const std::vector<int64_t> &strides) {
  const int64_t n = out.numElements();
  if (n == 0)
    return;
  const size_t es = static_cast<size_t>(dtypeSize(out.dtype()));
  const auto *src = static_cast<const uint8_t *>(in.raw());
  auto *dst = static_cast<uint8_t *>(out.mutableRaw());
  const std::vector<int64_t> &shape = out.shape();
  if (shape.empty()) {
    std::memcpy(dst, src + base * static_cast<int64_t>(es), es);
    return;
  }
  const size_t rank = shape.size();
  const int64_t inner = shape[rank - 1];
  std::vector<int64_t> idx(rank, 0);
  int64_t off = base;
  for (int64_t o = 0; o < n; o += inner) {
    copyRow(dst + static_cast<size_t>(o) * es, src, off, strides[rank - 1], inner, es);
    for (size_t d = rank - 1; d-- > 0;) {
      off += strides[d];
      if (++idx[d] < shape[d])
        break;
      off -= strides[d] * shape[d];
      idx[d] = 0;
    }
  }
}

} // namespace dlc::ops::tensor
