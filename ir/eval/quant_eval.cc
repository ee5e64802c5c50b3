// Reference evaluation of QuantizeLinear and DequantizeLinear (per tensor, per axis, or
// blocked along `axis` with `block_size`) and DynamicQuantizeLinear.
#include <algorithm>
#include <cmath>

#include "ir/eval/families.h"
#include "ir/eval/quant_eval.h"
#include "ir/quant_math.h"

namespace dlc::eval {

namespace {

std::string shapeStr(const std::vector<int64_t> &s) { return Shape::fromSizes(s).str(); }

/// Where element i of x finds its scale and zero point.
struct QuantLayout {
  enum class Kind : uint8_t { kTensor, kAxis, kBlocked } kind = Kind::kTensor;
  AxisSplit split;       // x around `axis`
  int64_t blockSize = 1; // blocked only
  int64_t numBlocks = 1; // blocked only: the scale's size along `axis`

  int64_t paramIndex(int64_t i) const {
    if (kind == Kind::kTensor)
      return 0;
    int64_t a = (i / split.inner) % split.len;
    if (kind == Kind::kAxis)
      return a;
    int64_t outer = i / (split.len * split.inner), inner = i % split.inner;
    return (outer * numBlocks + a / blockSize) * split.inner + inner;
  }
};

/// The layout for `scale` (input 1) and the optional zero point (input 2), whose shape must
/// match the scale's.
Expected<QuantLayout> quantLayout(const Node &node, const std::vector<Tensor> &in,
                                  const char *scaleName) {
  const Tensor &x = in[0], &scale = in[1];
  if (in.size() > 2 && !in[2].empty() && in[2].shape() != scale.shape() &&
      !(in[2].numElements() == 1 && scale.numElements() == 1))
    return invalidArgument("the zero point's shape {} differs from {}'s shape {}",
                           shapeStr(in[2].shape()), scaleName, shapeStr(scale.shape()));
  QuantLayout q;
  int64_t blockSize = node.getInt("block_size");
  if (scale.numElements() == 1 && (blockSize == 0 || scale.rank() != x.rank()))
    return q; // per tensor
  DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(node.getInt("axis"), x.rank()));
  q.split = splitAt(x.shape(), axis);
  if (blockSize < 0)
    return invalidArgument("block_size must be >= 0, got {}", blockSize);
  if (blockSize == 0) {
    if (scale.rank() != 1 || scale.numElements() != q.split.len)
      return invalidArgument("{} of shape {} is neither a scalar nor a 1-D tensor of the "
                             "size {} of axis {}",
                             scaleName, shapeStr(scale.shape()), q.split.len, axis);
    q.kind = QuantLayout::Kind::kAxis;
    return q;
  }
  q.kind = QuantLayout::Kind::kBlocked;
  q.blockSize = blockSize;
  q.numBlocks = (q.split.len + blockSize - 1) / blockSize;
  std::vector<int64_t> expected = x.shape();
  expected[static_cast<size_t>(axis)] = q.numBlocks;
  if (scale.shape() != expected)
    return invalidArgument("{} has shape {}, expected {} for blocks of {} along axis {}", scaleName,
                           shapeStr(scale.shape()), shapeStr(expected), blockSize, axis);
  return q;
}

/// The zero point at parameter index k (0 when absent).
int64_t zeroPointAt(const std::vector<Tensor> &in, int64_t k) {
  return in.size() > 2 && !in[2].empty() ? in[2].elementAsInt64(k) : 0;
}

} // namespace

EvalResult evalQuantizeLinear(const Node &node, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 2));
  const Tensor &x = in[0];
  if (!isFloat(x.dtype()) && x.dtype() != DType::kI32)
    return noEval(x.dtype());
  if (!isFloat(in[1].dtype()))
    return invalidArgument("y_scale must be a float tensor, got {}", dtypeName(in[1].dtype()));
  bool hasZp = in.size() > 2 && !in[2].empty();
  const Attribute *attr = node.findAttr("output_dtype");
  DType requested = attr && attr->kind() == AttrKind::kDType ? attr->dtype() : DType::kUnknown;
  if (hasZp && requested != DType::kUnknown && requested != in[2].dtype())
    return invalidArgument("output_dtype {} does not match y_zero_point's dtype {}",
                           dtypeName(requested), dtypeName(in[2].dtype()));
  DType outType = hasZp ? in[2].dtype() : requested != DType::kUnknown ? requested : DType::kU8;
  if (!isInteger(outType))
    return noEval(outType);
  DLC_ASSIGN_OR_RETURN(QuantLayout q, quantLayout(node, in, "y_scale"));
  Tensor xf = widenHalf(x), scale = castTensor(in[1], DType::kF32);
  Tensor out = Tensor::zeros(outType, x.shape());
  for (int64_t i = 0; i < x.numElements(); ++i) {
    int64_t k = q.paramIndex(i);
    float s = scale.data<float>()[k];
    double real = xf.dtype() == DType::kI32
                      ? static_cast<double>(xf.data<int32_t>()[i]) / static_cast<double>(s)
                      : static_cast<double>(xf.dtype() == DType::kF64
                                                ? static_cast<float>(xf.data<double>()[i]) / s
                                                : xf.data<float>()[i] / s);
    storeQuantized(out, i, real, zeroPointAt(in, k));
  }
  return std::vector<Tensor>{out};
}

EvalResult evalDequantizeLinear(const Node &node, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 2));
  const Tensor &x = in[0];
  if (!isInteger(x.dtype()))
    return noEval(x.dtype());
  if (!isFloat(in[1].dtype()))
    return invalidArgument("x_scale must be a float tensor, got {}", dtypeName(in[1].dtype()));
  if (in.size() > 2 && !in[2].empty() && in[2].dtype() != x.dtype())
    return invalidArgument("x_zero_point has dtype {}, but x has dtype {}",
                           dtypeName(in[2].dtype()), dtypeName(x.dtype()));
  DLC_ASSIGN_OR_RETURN(QuantLayout q, quantLayout(node, in, "x_scale"));
  Tensor scale = castTensor(in[1], DType::kF64); // exact
  Tensor out = Tensor::zeros(in[1].dtype(), x.shape());
  for (int64_t i = 0; i < x.numElements(); ++i) {
    int64_t k = q.paramIndex(i);
    double centered = static_cast<double>(wrapSub(x.elementAsInt64(i), zeroPointAt(in, k)));
    storeFloat(out, i, centered * scale.data<double>()[k]);
  }
  return std::vector<Tensor>{out};
}

EvalResult evalDynamicQuantizeLinear(const Node &node, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 1));
  if (!isFloat(in[0].dtype()))
    return noEval(in[0].dtype());
  Tensor x = castTensor(in[0], DType::kF32); // the spec computes in f32
  const float *a = x.data<float>();
  int64_t n = x.numElements();
  // The data range, adjusted to include 0 (NaN elements are ignored).
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, a[i]);
    hi = std::max(hi, a[i]);
  }
  constexpr float kQmin = 0.0f, kQmax = 255.0f;
  // An all-zero range would divide by zero; onnxruntime then uses scale 1.
  float scale = hi == lo ? 1.0f : (hi - lo) / (kQmax - kQmin);
  float zeroPoint = std::nearbyint(std::clamp(kQmin - lo / scale, kQmin, kQmax));
  if (std::isnan(zeroPoint)) // only for infinite data: -inf / inf
    zeroPoint = kQmin;
  Tensor y = Tensor::zeros(DType::kU8, x.shape());
  for (int64_t i = 0; i < n; ++i)
    storeQuantized(y, i, static_cast<double>(a[i] / scale), static_cast<int64_t>(zeroPoint));
  return std::vector<Tensor>{
      y, Tensor::scalarF32(scale),
      Tensor::fromVector<uint8_t>(DType::kU8, {}, {static_cast<uint8_t>(zeroPoint)})};
}

/// FakeQuant with TensorFlow's arithmetic (fake_quant_ops_functor.h), in float as TensorFlow
/// computes it: min/max are nudged so that 0 is exactly representable, x is clamped to the
/// nudged range and rounded to the nearest of the 2^num_bits (minus one with narrow_range)
/// levels. The result is (level - zero level) * scale, so 0 comes out as exactly 0 (level *
/// scale + nudged min would leave a rounding residue). A channel whose min and max are both 0
/// is all zeros, as in TensorFlow. Per channel, min and max hold one entry per element of x's
/// last dimension. (TensorFlow's per-tensor Vars kernel divides by the scale where the others
/// multiply by its inverse, computed from min/max: this multiplies, as Args and PerChannel do;
/// the two can differ by one level only where a value lies exactly on a rounding boundary.)
EvalResult evalFakeQuant(const Node &node, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 3));
  if (!isFloat(in[0].dtype()))
    return noEval(in[0].dtype());
  const Tensor x = castTensor(in[0], DType::kF32);
  const Tensor lo = castTensor(in[1], DType::kF32), hi = castTensor(in[2], DType::kF32);
  const int64_t channels = x.shape().empty() ? 1 : x.shape().back();
  for (const Tensor *t : {&lo, &hi})
    if (t->numElements() != 1 && (t->shape().size() != 1 || t->numElements() != channels))
      return invalidArgument("min/max of shape {} match neither one value nor the {} channels "
                             "of x's last dimension",
                             shapeStr(t->shape()), channels);
  if (lo.numElements() != hi.numElements())
    return invalidArgument("min has {} entries but max has {}", lo.numElements(), hi.numElements());
  struct Nudged {
    FakeQuantNudge n;
    float zeroLevel; // the level of 0 counted from the nudged min, as TensorFlow rounds it
  };
  std::vector<Nudged> params;
  for (int64_t c = 0; c < lo.numElements(); ++c) {
    DLC_ASSIGN_OR_RETURN(FakeQuantNudge n,
                         nudgeFakeQuant(lo.data<float>()[c], hi.data<float>()[c],
                                        node.getInt("num_bits"), node.getInt("narrow_range")));
    params.push_back({n, std::floor(-n.min * n.invScale + 0.5f)});
  }
  Tensor out = Tensor::zeros(in[0].dtype(), in[0].shape());
  const float *a = x.data<float>();
  for (int64_t i = 0; i < x.numElements(); ++i) {
    const Nudged &p = params[params.size() == 1 ? 0 : static_cast<size_t>(i % channels)];
    if (p.n.zero)
      continue;
    const float clamped = std::max(std::min(a[i], p.n.max), p.n.min);
    const float level = std::floor((clamped - p.n.min) * p.n.invScale - p.zeroLevel + 0.5f);
    storeFloat(out, i, static_cast<double>(level * p.n.scale));
  }
  return std::vector<Tensor>{out};
}

std::vector<EvalRow> quantEvals() {
  return {
      {Op::kQuantizeLinear, evalQuantizeLinear},
      {Op::kDequantizeLinear, evalDequantizeLinear},
      {Op::kDynamicQuantizeLinear, evalDynamicQuantizeLinear},
      {Op::kFakeQuant, evalFakeQuant},
      {Op::kQLinearConv, evalQLinearConv},
  };
}

} // namespace dlc::eval
