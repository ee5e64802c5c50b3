// Helpers of the tensor family: shape values, dim arithmetic, checks and element strides.
#include <algorithm>
#include <charconv>

#include "ir/ops/tensor_internal.h"

namespace dlc::ops::tensor {

namespace {
/// Larger integer constants are not turned into shape values (they are data, not shapes).
constexpr int64_t kMaxShapeValueElements = 1024;
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

// --- Element strides -------------------------------------------------------------------------

std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    s[i - 1] = s[i] * shape[i];
  return s;
}

} // namespace dlc::ops::tensor
