#include "ir/eval/eval_util.h"

#include <bit>
#include <cstring>

#include "ir/limits.h"
#include "ir/parallel.h"

namespace dlc::eval {

Expected<std::vector<TensorType>> constantOutputTypes(const Node &node,
                                                      const std::vector<Tensor> &inputs) {
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

Expected<std::vector<TensorType>> staticOutputTypes(const Node &node,
                                                    const std::vector<Tensor> &inputs) {
  DLC_ASSIGN_OR_RETURN(auto out, constantOutputTypes(node, inputs));
  for (size_t i = 0; i < out.size(); ++i) {
    const TensorType &t = out[i];
    if (node.output(static_cast<int>(i)) && (!t.isKnown() || !t.shape.isStatic()))
      return invalidArgument("cannot evaluate: output {} has no static type ({})", i, t.str());
  }
  return out;
}

Expected<Tensor> newTensor(DType dtype, const std::vector<int64_t> &shape) {
  DLC_RETURN_IF_ERROR(checkedNumElements(shape, "tensor").status());
  DLC_RETURN_IF_ERROR(checkTensorBytes(dtype, shape, "a tensor"));
  return Tensor::tryZeros(dtype, shape);
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

Expected<Tensor> permuted(const Tensor &in, const std::vector<int64_t> &perm) {
  std::vector<int64_t> inStrides(in.shape().size(), 1), shape, strides;
  for (size_t d = inStrides.size(); d-- > 1;)
    inStrides[d - 1] = inStrides[d] * in.shape()[d];
  for (int64_t p : perm) {
    shape.push_back(in.shape()[static_cast<size_t>(p)]);
    strides.push_back(inStrides[static_cast<size_t>(p)]);
  }
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(in.dtype(), shape));
  stridedCopy(in, out, 0, strides);
  return out;
}

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
  const int64_t inner = shape[rank - 1], rows = n / inner;
  // Rows [first, last) of the output: each starts from its own index, so that ranges can run
  // on different threads.
  auto copyRows = [&](int64_t first, int64_t last) {
    std::vector<int64_t> idx(rank, 0);
    int64_t off = base;
    for (int64_t r = first, d = static_cast<int64_t>(rank) - 2; d >= 0; --d) {
      idx[static_cast<size_t>(d)] = r % shape[static_cast<size_t>(d)];
      off += idx[static_cast<size_t>(d)] * strides[static_cast<size_t>(d)];
      r /= shape[static_cast<size_t>(d)];
    }
    for (int64_t row = first; row < last; ++row) {
      copyRow(dst + static_cast<size_t>(row * inner) * es, src, off, strides[rank - 1], inner, es);
      for (size_t d = rank - 1; d-- > 0;) {
        off += strides[d];
        if (++idx[d] < shape[d])
          break;
        off -= strides[d] * shape[d];
        idx[d] = 0;
      }
    }
  };
  // Big copies (a weight re-laid channels-last by the layout pass, a large Transpose) on a
  // few threads; every row lands in its own place, so the bytes are the same.
  parallelRanges(rows, threadsFor(static_cast<uint64_t>(n) * es, uint64_t{1} << 20, rows),
                 copyRows);
}

Status checkInputs(const std::vector<Tensor> &in, size_t n) {
  if (in.size() < n)
    return invalidArgument("expects {} inputs, got {}", n, in.size());
  for (size_t i = 0; i < n; ++i)
    if (in[i].empty())
      return invalidArgument("input {} is missing", i);
  return Status::ok();
}

Status checkSameDType(const std::vector<Tensor> &in) {
  for (size_t i = 1; i < in.size(); ++i)
    if (!in[i].empty() && in[i].dtype() != in[0].dtype())
      return invalidArgument("inputs 0 and {} have different dtypes ({} vs {})", i,
                             dtypeName(in[0].dtype()), dtypeName(in[i].dtype()));
  return Status::ok();
}

Status noEval(DType dtype) {
  return unimplemented("no reference evaluation for dtype {}", dtypeName(dtype));
}

Expected<std::string> stringAttr(const Node &node, const char *name) {
  const Attribute *a = node.findAttr(name);
  if (!a || a->kind() != AttrKind::kString)
    return invalidArgument("string attribute '{}' is missing", name);
  return a->s();
}

Expected<int64_t> scalarIntInput(const Tensor &t, const char *what) {
  if (!isInteger(t.dtype()))
    return invalidArgument("{} must be an integer tensor, got {}", what, dtypeName(t.dtype()));
  if (t.numElements() != 1)
    return invalidArgument("{} must hold exactly one element, got {}", what, t.numElements());
  return t.elementAsInt64(0);
}

Tensor widenHalf(const Tensor &t) { return isHalf(t.dtype()) ? t.castTo(DType::kF32) : t; }

Tensor narrowTo(const Tensor &t, DType to) {
  return isHalf(to) && t.dtype() == DType::kF32 ? t.castTo(to) : t;
}

float toFloatOdd(double x) {
  float f = static_cast<float>(x);
  if (std::isnan(x) || static_cast<double>(f) == x)
    return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(x)) // rounded away from zero: truncate
    f = std::nextafter(f, 0.0f);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u); // inexact: make the last bit odd
}

void storeFloat(Tensor &out, int64_t i, double v) {
  switch (out.dtype()) {
  case DType::kF64:
    out.mutableData<double>()[i] = v;
    break;
  case DType::kF32:
    out.mutableData<float>()[i] = static_cast<float>(v);
    break;
  case DType::kF16:
    out.mutableData<uint16_t>()[i] = floatToHalf(toFloatOdd(v));
    break;
  case DType::kBF16:
    out.mutableData<uint16_t>()[i] = floatToBf16(toFloatOdd(v));
    break;
  default:
    DLC_CHECK(false, "storeFloat on a {} tensor", dtypeName(out.dtype()));
  }
}

namespace {

static_assert(std::numeric_limits<long double>::digits >= 64,
              "integer -> f16/bf16 casts rely on long double holding every 64-bit integer");

/// `x` rounded to double with round-to-odd (see toFloatOdd).
double toDoubleOdd(long double x) {
  double d = static_cast<double>(x);
  if (static_cast<long double>(d) == x)
    return d;
  if (std::fabs(static_cast<long double>(d)) > std::fabs(x))
    d = std::nextafter(d, 0.0);
  return std::bit_cast<double>(std::bit_cast<uint64_t>(d) | 1u);
}

/// A non-half element as a float that rounds correctly to f16/bf16 afterwards.
template <typename From> float oddFloat(From v) {
  if constexpr (std::is_same_v<From, float>)
    return v;
  else if constexpr (std::is_same_v<From, double>)
    return toFloatOdd(v);
  else if constexpr (std::is_same_v<From, bool>)
    return v ? 1.0f : 0.0f;
  else // every 64-bit integer is exact in long double
    return toFloatOdd(toDoubleOdd(static_cast<long double>(v)));
}

template <typename To, typename From> To convertElement(From v) {
  if constexpr (std::is_same_v<To, bool>)
    return v != From(0);
  else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>)
    return truncSaturate<To>(static_cast<double>(v));
  else
    return static_cast<To>(v); // integers wrap; to float types: one rounding to nearest even
}

} // namespace

Tensor castTensor(const Tensor &x, DType to) {
  if (x.dtype() == to)
    return x;
  if (isHalf(x.dtype())) // widening to f32 is exact
    return castTensor(x.castTo(DType::kF32), to);
  Tensor out = Tensor::zeros(to, x.shape());
  int64_t n = x.numElements();
  dispatch(x.dtype(), [&]<typename From>() {
    const From *src = x.data<From>();
    if (isHalf(to)) {
      uint16_t *dst = out.mutableData<uint16_t>();
      for (int64_t i = 0; i < n; ++i) {
        float f = oddFloat(src[i]);
        dst[i] = to == DType::kF16 ? floatToHalf(f) : floatToBf16(f);
      }
      return;
    }
    dispatch(to, [&]<typename To>() {
      To *dst = out.mutableData<To>();
      for (int64_t i = 0; i < n; ++i)
        dst[i] = convertElement<To>(src[i]);
    });
  });
  return out;
}

void storeQuantized(Tensor &out, int64_t i, double real, int64_t zeroPoint) {
  double q = std::nearbyint(real); // the default rounding mode: half to even
  if (std::isnan(q))
    q = 0;
  q += static_cast<double>(zeroPoint);
  dispatch(out.dtype(), [&]<typename T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      double lo = static_cast<double>(std::numeric_limits<T>::lowest());
      double hi = static_cast<double>(std::numeric_limits<T>::max());
      out.mutableData<T>()[i] = q <= lo   ? std::numeric_limits<T>::lowest()
                                : q >= hi ? std::numeric_limits<T>::max()
                                          : static_cast<T>(q);
    }
  });
}

AxisSplit splitAt(const std::vector<int64_t> &shape, int64_t axis) {
  AxisSplit s;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t a = static_cast<int64_t>(d);
    if (a < axis)
      s.outer *= shape[d];
    else if (a == axis)
      s.len = shape[d];
    else
      s.inner *= shape[d];
  }
  return s;
}

} // namespace dlc::eval
