// Reference evaluation of the random generators: RandomNormal(Like), RandomUniform(Like),
// Bernoulli, Multinomial.
//
// The reference backend is reproducible: the same node gives the same tensor on every run.
// The generator is SplitMix64 (Steele, Lea, Flood 2014) started at the f32 bit pattern of the
// `seed` attribute, zero-extended (seed 0.0 when the attribute is absent: ONNX leaves an
// unseeded generator's stream unspecified, and dlc picks this one). Draw n of a node is the
// n-th output of that stream, so every element is a pure function of (seed, n):
//   u(n) = (splitmix64 output n >> 11) * 2^-53, uniform in [0, 1);
//   RandomUniform: element i = low + (high - low) * u(i);
//   RandomNormal: Box-Muller on pairs, element 2k = mean + scale * r cos(t) and element 2k+1
//     = mean + scale * r sin(t), r = sqrt(-2 ln(1 - u(2k))), t = 2 pi u(2k+1);
//   Bernoulli: element i = 1 when u(i) < p(i), else 0;
//   Multinomial: sample s of batch row b uses u(b * sample_size + s) and picks the first
//     class whose cumulative softmax weight exceeds u * total;
//   Dropout in training (norm_eval.cc): element i is kept when u(i) >= ratio, with the stream
//     started at the int `seed` attribute's low 32 bits.
// Values are computed in f64 and rounded once to the output type.
#include <bit>
#include <cmath>
#include <numbers>

#include "ir/eval/eval_compute.h"
#include "ir/eval/eval_util.h"
#include "ir/eval/misc_eval.h"

namespace dlc::eval {

namespace {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

/// The n-th (from 0) output of SplitMix64 started at `state`.
uint64_t splitmix64(uint64_t state, uint64_t n) {
  uint64_t z = state + (n + 1) * kGolden;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049EB133111EBull;
  return z ^ (z >> 31);
}

class Stream {
public:
  explicit Stream(const Node &node)
      : state_(node.hasAttr("seed") ? std::bit_cast<uint32_t>(node.getFloat("seed")) : 0u) {}
  /// Uniform in [0, 1).
  double uniform(uint64_t n) const { return uniformDraw(state_, n); }
  /// Standard normal: Box-Muller on draws 2k and 2k+1.
  double normal(uint64_t i) const {
    const uint64_t k = i / 2;
    const double r = std::sqrt(-2.0 * std::log(1.0 - uniform(2 * k)));
    const double t = 2.0 * std::numbers::pi * uniform(2 * k + 1);
    return r * (i % 2 == 0 ? std::cos(t) : std::sin(t));
  }

private:
  uint64_t state_;
};

Status checkFloatOutput(DType dtype) {
  if (!isFloat(dtype))
    return invalidArgument("the output must be a float type, got {}", dtypeName(dtype));
  return Status::ok();
}

} // namespace

double uniformDraw(uint64_t state, uint64_t n) {
  return static_cast<double>(splitmix64(state, n) >> 11) * 0x1.0p-53;
}

MiscEvalResult evalRandomNormal(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  DLC_RETURN_IF_ERROR(checkFloatOutput(types[0].dtype));
  const std::vector<int64_t> shape = types[0].shape.sizes();
  DLC_ASSIGN_OR_RETURN(Tensor probe, newTensor(DType::kF64, shape));
  const Stream stream(node);
  const double mean = node.getFloat("mean"), scale = node.getFloat("scale");
  double *v = probe.mutableData<double>();
  for (int64_t i = 0; i < probe.numElements(); ++i)
    v[i] = mean + scale * stream.normal(static_cast<uint64_t>(i));
  return std::vector<Tensor>{castTensor(probe, types[0].dtype)};
}

MiscEvalResult evalRandomUniform(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  DLC_RETURN_IF_ERROR(checkFloatOutput(types[0].dtype));
  DLC_ASSIGN_OR_RETURN(Tensor probe, newTensor(DType::kF64, types[0].shape.sizes()));
  const Stream stream(node);
  const double low = node.getFloat("low"), high = node.getFloat("high");
  double *v = probe.mutableData<double>();
  for (int64_t i = 0; i < probe.numElements(); ++i)
    v[i] = low + (high - low) * stream.uniform(static_cast<uint64_t>(i));
  return std::vector<Tensor>{castTensor(probe, types[0].dtype)};
}

MiscEvalResult evalBernoulli(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const Tensor &p = in[0];
  if (!isFloat(p.dtype()))
    return invalidArgument("input must hold float probabilities, got {}", p.type().str());
  DLC_ASSIGN_OR_RETURN(Tensor probe, newTensor(DType::kF64, p.shape()));
  const Stream stream(node);
  double *v = probe.mutableData<double>();
  for (int64_t i = 0; i < p.numElements(); ++i)
    v[i] = stream.uniform(static_cast<uint64_t>(i)) < p.elementAsDouble(i) ? 1.0 : 0.0;
  return std::vector<Tensor>{castTensor(probe, types[0].dtype)};
}

MiscEvalResult evalMultinomial(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const Tensor &x = in[0];
  if (!isFloat(x.dtype()))
    return invalidArgument("input must hold float log-probabilities, got {}", x.type().str());
  const int64_t batch = x.shape()[0], classes = x.shape()[1];
  const int64_t samples = node.getInt("sample_size");
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(DType::kI64, {batch, samples}));
  const std::vector<double> logits = floatValues<double>(x);
  const Stream stream(node);
  std::vector<double> cumulative(static_cast<size_t>(classes));
  for (int64_t b = 0; b < batch; ++b) {
    const double *row = logits.data() + b * classes;
    double top = -INFINITY;
    for (int64_t c = 0; c < classes; ++c)
      top = std::fmax(top, row[c]);
    if (!std::isfinite(top))
      return invalidArgument("batch row {} has no finite maximum log-probability", b);
    double total = 0;
    for (int64_t c = 0; c < classes; ++c) {
      total += std::exp(row[c] - top);
      cumulative[static_cast<size_t>(c)] = total;
    }
    if (!std::isfinite(total))
      return invalidArgument("batch row {} holds a NaN log-probability", b);
    for (int64_t s = 0; s < samples; ++s) {
      const double target = stream.uniform(static_cast<uint64_t>(b * samples + s)) * total;
      int64_t pick = classes - 1;
      for (int64_t c = 0; c < classes; ++c)
        if (cumulative[static_cast<size_t>(c)] > target) {
          pick = c;
          break;
        }
      out.mutableData<int64_t>()[b * samples + s] = pick;
    }
  }
  return std::vector<Tensor>{castTensor(out, types[0].dtype)};
}

} // namespace dlc::eval
