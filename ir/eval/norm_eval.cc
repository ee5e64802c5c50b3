// Reference evaluation of the normalisations (BatchNormalization, InstanceNormalization,
// GroupNormalization, LayerNormalization, MeanVarianceNormalization, LpNormalization, LRN) and
// Dropout.
//
// Statistics are accumulated in double with two passes (mean, then the mean squared
// deviation), whatever the element type; results are rounded once to the output type.
// MeanVarianceNormalization is ONNX's function (x - mean) / (sqrt(variance) + 1e-9), with the
// variance computed as the mean squared deviation (equal to E[x^2] - E[x]^2, never negative).
// LpNormalization divides by the norm as ONNX's reference does (a zero vector gives NaN).
// BatchNormalization's training_mode normalises with the batch's statistics and returns the
// updated running ones; Dropout in training draws its mask from the reference backend's
// reproducible stream (random_eval.cc), so it is a pure function of the seed.
#include <algorithm>
#include <cmath>

#include "ir/eval/misc_eval.h"
#include "ir/eval/nn_eval_util.h"
#include "ir/ops/nn_util.h"
#include "ir/ops/tensor_internal.h"

namespace dlc::eval {

using ops::stashTypeToDType;

namespace {

/// All elements of `t` as doubles.
std::vector<double> asDoubles(const Tensor &t) {
  std::vector<double> v(static_cast<size_t>(t.numElements()));
  for (int64_t i = 0; i < t.numElements(); ++i)
    v[static_cast<size_t>(i)] = t.elementAsDouble(i);
  return v;
}

/// A float input's values broadcast (numpy, one direction) to `shape`; `what` names it.
Expected<std::vector<double>> broadcastTo(const Tensor &t, const std::vector<int64_t> &shape,
                                          const char *what) {
  if (!isFloat(t.dtype()))
    return invalidArgument("{} must be a float tensor, got {}", what, dtypeName(t.dtype()));
  const std::vector<int64_t> &from = t.shape();
  bool ok = from.size() <= shape.size();
  std::vector<int64_t> strides(shape.size(), 0);
  std::vector<int64_t> fromStrides = ops::tensor::stridesOf(from);
  for (size_t i = 0; ok && i < from.size(); ++i) {
    size_t j = shape.size() - from.size() + i;
    ok = from[i] == shape[j] || from[i] == 1;
    strides[j] = from[i] == 1 ? 0 : fromStrides[i];
  }
  if (!ok)
    return invalidArgument("{} of shape {} does not broadcast to {}", what,
                           Shape::fromSizes(from).str(), Shape::fromSizes(shape).str());
  std::vector<double> src = asDoubles(t), out;
  int64_t n = sizeProduct(shape, 0, shape.size());
  out.reserve(static_cast<size_t>(n));
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t off = 0;
    for (size_t a = 0; a < shape.size(); ++a)
      off += idx[a] * strides[a];
    out.push_back(src[static_cast<size_t>(off)]);
    for (size_t a = shape.size(); a-- > 0;) {
      if (++idx[a] < shape[a])
        break;
      idx[a] = 0;
    }
  }
  return out;
}

/// Per-channel parameter `t` (1-D with `channels` elements) as doubles.
Expected<std::vector<double>> perChannel(const Tensor &t, int64_t channels, const char *what) {
  if (!isFloat(t.dtype()))
    return invalidArgument("{} must be a float tensor, got {}", what, dtypeName(t.dtype()));
  if (t.rank() != 1 || t.shape()[0] != channels)
    return invalidArgument("{} must have shape [{}], got {}", what, channels,
                           Shape::fromSizes(t.shape()).str());
  return asDoubles(t);
}

/// Mean and 1 / sqrt(variance + eps) of each row of x viewed as [rows, cols].
template <typename T>
void rowStats(const T *x, int64_t rows, int64_t cols, double eps, std::vector<double> &mean,
              std::vector<double> &invStd) {
  mean.assign(static_cast<size_t>(rows), 0.0);
  invStd.assign(static_cast<size_t>(rows), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const T *row = x + r * cols;
    double sum = 0;
    for (int64_t i = 0; i < cols; ++i)
      sum += static_cast<double>(row[i]);
    double m = sum / static_cast<double>(cols), sq = 0;
    for (int64_t i = 0; i < cols; ++i) {
      double d = static_cast<double>(row[i]) - m;
      sq += d * d;
    }
    mean[static_cast<size_t>(r)] = m;
    invStd[static_cast<size_t>(r)] = 1.0 / std::sqrt(sq / static_cast<double>(cols) + eps);
  }
}

/// Per-channel mean and biased variance of x viewed as [N, channels, inner] (two passes).
template <typename T>
void batchStats(const T *x, int64_t n, int64_t channels, int64_t inner, std::vector<double> &mean,
                std::vector<double> &var) {
  std::vector<double> sum(static_cast<size_t>(channels), 0.0), sq(sum);
  for (int64_t i = 0; i < n; ++i)
    sum[static_cast<size_t>((i / inner) % channels)] += static_cast<double>(x[i]);
  const double count = static_cast<double>(n / std::max<int64_t>(channels, 1));
  for (int64_t c = 0; c < channels; ++c)
    mean[static_cast<size_t>(c)] = sum[static_cast<size_t>(c)] / count;
  for (int64_t i = 0; i < n; ++i) {
    size_t c = static_cast<size_t>((i / inner) % channels);
    double d = static_cast<double>(x[i]) - mean[c];
    sq[c] += d * d;
  }
  for (int64_t c = 0; c < channels; ++c)
    var[static_cast<size_t>(c)] = sq[static_cast<size_t>(c)] / count;
}

/// Runs `body.template operator()<T>(const T *x, T *y)` on x widened to its compute type and
/// returns y rounded back to x's dtype.
template <typename F> Expected<Tensor> mapFloat(const Tensor &x, const char *what, F &&body) {
  DLC_ASSIGN_OR_RETURN(DType compute, floatComputeType(x.dtype(), what));
  DLC_ASSIGN_OR_RETURN(Tensor y, newTensor(compute, x.shape()));
  Tensor xc = toCompute(x, compute);
  withFloatType(compute, [&]<typename T>() {
    body.template operator()<T>(xc.data<T>(), y.mutableData<T>());
  });
  return y.castTo(x.dtype());
}

/// Instance / group normalisation: rows of `cols` elements normalised, then
/// y = normalised * scale[channel] + bias[channel], channel = channelOf(row, col).
template <typename ChannelOf>
Expected<Tensor> normalizeRows(const Tensor &x, int64_t rows, int64_t cols, double eps,
                               const std::vector<double> &scale, const std::vector<double> &bias,
                               ChannelOf channelOf) {
  return mapFloat(x, "input X", [&]<typename T>(const T *src, T *dst) {
    std::vector<double> mean, invStd;
    rowStats(src, rows, cols, eps, mean, invStd);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < cols; ++i) {
        size_t c = static_cast<size_t>(channelOf(r, i));
        double v = (static_cast<double>(src[r * cols + i]) - mean[static_cast<size_t>(r)]) *
                   invStd[static_cast<size_t>(r)];
        dst[r * cols + i] = static_cast<T>(v * scale[c] + bias[c]);
      }
  });
}

Tensor allTrue(const std::vector<int64_t> &shape) {
  Tensor mask = Tensor::zeros(DType::kBool, shape);
  std::fill(mask.mutableData<bool>(), mask.mutableData<bool>() + mask.numElements(), true);
  return mask;
}

} // namespace

EvalResult evalBatchNormalization(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const Tensor &x = in[0];
  const int64_t channels = x.rank() < 2 ? 1 : x.shape()[1];
  const char *names[] = {"input X", "scale", "B", "input_mean", "input_var"};
  std::vector<std::vector<double>> params;
  for (size_t i = 1; i < 5; ++i) {
    DLC_ASSIGN_OR_RETURN(auto p, perChannel(in[i], channels, names[i]));
    params.push_back(std::move(p));
  }
  const double eps = node.getFloat("epsilon");
  const int64_t inner = x.rank() < 2 ? 1 : sizeProduct(x.shape(), 2, x.shape().size());
  const bool training = node.getInt("training_mode") != 0;
  // Training normalises with the batch's own statistics (mean and biased variance over every
  // axis but the channel), and the running statistics move towards them by 1 - momentum.
  std::vector<double> mean = params[2], var = params[3];
  if (training) {
    DLC_ASSIGN_OR_RETURN(DType compute, floatComputeType(x.dtype(), "input X"));
    Tensor xc = toCompute(x, compute);
    withFloatType(compute, [&]<typename T>() {
      batchStats(xc.data<T>(), x.numElements(), channels, inner, mean, var);
    });
  }
  DLC_ASSIGN_OR_RETURN(Tensor y, mapFloat(x, "input X", [&]<typename T>(const T *src, T *dst) {
                         for (int64_t i = 0; i < x.numElements(); ++i) {
                           size_t c = static_cast<size_t>((i / inner) % channels);
                           double v =
                               (static_cast<double>(src[i]) - mean[c]) / std::sqrt(var[c] + eps);
                           dst[i] = static_cast<T>(v * params[0][c] + params[1][c]);
                         }
                       }));
  std::vector<Tensor> out{std::move(y)};
  const double momentum = node.getFloat("momentum");
  for (int i = 1; i < node.numOutputs(); ++i) {
    const Tensor &running = in[static_cast<size_t>(i) + 2];
    if (!node.output(i) || !training) { // inference: the running statistics pass through
      out.push_back(node.output(i) ? running : Tensor());
      continue;
    }
    const std::vector<double> &batch = i == 1 ? mean : var;
    Tensor r = Tensor::zeros(DType::kF64, {channels});
    for (int64_t c = 0; c < channels; ++c)
      r.mutableData<double>()[c] =
          params[static_cast<size_t>(i) + 1][static_cast<size_t>(c)] * momentum +
          batch[static_cast<size_t>(c)] * (1.0 - momentum);
    out.push_back(r.castTo(running.dtype()));
  }
  return out;
}

EvalResult evalInstanceNormalization(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const Tensor &x = in[0];
  const int64_t channels = x.shape()[1];
  DLC_ASSIGN_OR_RETURN(auto scale, perChannel(in[1], channels, "scale"));
  DLC_ASSIGN_OR_RETURN(auto bias, perChannel(in[2], channels, "B"));
  const int64_t rows = x.shape()[0] * channels;
  const int64_t cols = rows == 0 ? 0 : x.numElements() / rows;
  DLC_ASSIGN_OR_RETURN(Tensor y, normalizeRows(x, rows, cols, node.getFloat("epsilon"), scale, bias,
                                               [&](int64_t r, int64_t) { return r % channels; }));
  return std::vector<Tensor>{std::move(y)};
}

EvalResult evalGroupNormalization(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const Tensor &x = in[0];
  const int64_t channels = x.shape()[1], groups = node.getInt("num_groups");
  DLC_ASSIGN_OR_RETURN(auto scale, perChannel(in[1], channels, "scale"));
  DLC_ASSIGN_OR_RETURN(auto bias, perChannel(in[2], channels, "bias"));
  const int64_t spatial = sizeProduct(x.shape(), 2, x.shape().size());
  const int64_t perGroup = channels / groups;
  DLC_ASSIGN_OR_RETURN(Tensor y, normalizeRows(x, x.shape()[0] * groups, perGroup * spatial,
                                               node.getFloat("epsilon"), scale, bias,
                                               [&](int64_t r, int64_t i) {
                                                 return (r % groups) * perGroup + i / spatial;
                                               }));
  return std::vector<Tensor>{std::move(y)};
}

EvalResult evalLayerNormalization(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const Tensor &x = in[0];
  DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(node.getInt("axis"), x.rank()));
  DLC_ASSIGN_OR_RETURN(DType stash, stashTypeToDType(node.getInt("stash_type")));
  std::vector<int64_t> normShape(x.shape().begin() + axis, x.shape().end());
  const int64_t cols = sizeProduct(normShape, 0, normShape.size());
  const int64_t rows = sizeProduct(x.shape(), 0, static_cast<size_t>(axis));
  DLC_ASSIGN_OR_RETURN(auto scale, broadcastTo(in[1], normShape, "Scale"));
  std::vector<double> bias(static_cast<size_t>(cols), 0.0);
  if (in.size() > 2 && !in[2].empty()) {
    DLC_ASSIGN_OR_RETURN(bias, broadcastTo(in[2], normShape, "B"));
  }
  std::vector<int64_t> statShape = x.shape();
  for (size_t d = static_cast<size_t>(axis); d < statShape.size(); ++d)
    statShape[d] = 1;
  DLC_ASSIGN_OR_RETURN(Tensor mean, newTensor(DType::kF64, statShape));
  DLC_ASSIGN_OR_RETURN(Tensor invStd, newTensor(DType::kF64, statShape));
  DLC_ASSIGN_OR_RETURN(
      Tensor y, mapFloat(x, "input X", [&]<typename T>(const T *src, T *dst) {
        std::vector<double> m, s;
        rowStats(src, rows, cols, node.getFloat("epsilon"), m, s);
        std::copy(m.begin(), m.end(), mean.mutableData<double>());
        std::copy(s.begin(), s.end(), invStd.mutableData<double>());
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t i = 0; i < cols; ++i) {
            double v = (static_cast<double>(src[r * cols + i]) - m[static_cast<size_t>(r)]) *
                       s[static_cast<size_t>(r)];
            dst[r * cols + i] =
                static_cast<T>(v * scale[static_cast<size_t>(i)] + bias[static_cast<size_t>(i)]);
          }
      }));
  std::vector<Tensor> out{std::move(y)};
  if (node.numOutputs() > 1)
    out.push_back(node.output(1) ? mean.castTo(stash) : Tensor());
  if (node.numOutputs() > 2)
    out.push_back(node.output(2) ? invStd.castTo(stash) : Tensor());
  return out;
}

EvalResult evalMeanVarianceNormalization(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const Tensor &x = in[0];
  std::vector<bool> reduced(static_cast<size_t>(x.rank()), false);
  for (int64_t a : node.getInts("axes")) {
    Expected<int64_t> axis = normalizeAxis(a, x.rank());
    if (!axis)
      return invalidArgument("attribute 'axes' value {} is out of range for rank {}", a, x.rank());
    if (reduced[static_cast<size_t>(*axis)])
      return invalidArgument("attribute 'axes' repeats axis {}", a);
    reduced[static_cast<size_t>(*axis)] = true;
  }
  // Each element's group: its index with the reduced axes dropped.
  const std::vector<int64_t> &shape = x.shape();
  std::vector<int64_t> groupOf(static_cast<size_t>(x.numElements()));
  int64_t groups = 1;
  {
    std::vector<int64_t> keptStride(shape.size(), 0);
    for (size_t a = shape.size(); a-- > 0;)
      if (!reduced[a]) {
        keptStride[a] = groups;
        groups *= shape[a];
      }
    std::vector<int64_t> idx(shape.size(), 0);
    for (int64_t e = 0; e < x.numElements(); ++e) {
      int64_t g = 0;
      for (size_t a = 0; a < shape.size(); ++a)
        g += idx[a] * keptStride[a];
      groupOf[static_cast<size_t>(e)] = g;
      for (size_t a = shape.size(); a-- > 0;) {
        if (++idx[a] < shape[a])
          break;
        idx[a] = 0;
      }
    }
  }
  DLC_ASSIGN_OR_RETURN(
      Tensor y, mapFloat(x, "input X", [&]<typename T>(const T *src, T *dst) {
        std::vector<double> sum(static_cast<size_t>(groups), 0.0), sq(sum), count(sum);
        for (int64_t e = 0; e < x.numElements(); ++e) {
          size_t g = static_cast<size_t>(groupOf[static_cast<size_t>(e)]);
          sum[g] += static_cast<double>(src[e]);
          count[g] += 1;
        }
        for (size_t g = 0; g < sum.size(); ++g)
          sum[g] /= count[g];
        for (int64_t e = 0; e < x.numElements(); ++e) {
          size_t g = static_cast<size_t>(groupOf[static_cast<size_t>(e)]);
          double d = static_cast<double>(src[e]) - sum[g];
          sq[g] += d * d;
        }
        for (int64_t e = 0; e < x.numElements(); ++e) {
          size_t g = static_cast<size_t>(groupOf[static_cast<size_t>(e)]);
          double stddev = std::sqrt(sq[g] / count[g]);
          dst[e] = static_cast<T>((static_cast<double>(src[e]) - sum[g]) / (stddev + 1e-9));
        }
      }));
  return std::vector<Tensor>{std::move(y)};
}

EvalResult evalLpNormalization(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const Tensor &x = in[0];
  const int64_t p = node.getInt("p");
  DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(node.getInt("axis"), x.rank()));
  const int64_t n = x.shape()[static_cast<size_t>(axis)];
  const int64_t inner = sizeProduct(x.shape(), static_cast<size_t>(axis) + 1, x.shape().size());
  const int64_t outer = sizeProduct(x.shape(), 0, static_cast<size_t>(axis));
  DLC_ASSIGN_OR_RETURN(Tensor y, mapFloat(x, "input", [&]<typename T>(const T *src, T *dst) {
                         for (int64_t o = 0; o < outer; ++o)
                           for (int64_t i = 0; i < inner; ++i) {
                             const int64_t base = o * n * inner + i;
                             double norm = 0;
                             for (int64_t k = 0; k < n; ++k) {
                               double v = static_cast<double>(src[base + k * inner]);
                               norm += p == 1 ? std::abs(v) : v * v;
                             }
                             if (p == 2)
                               norm = std::sqrt(norm);
                             for (int64_t k = 0; k < n; ++k)
                               dst[base + k * inner] = static_cast<T>(
                                   static_cast<double>(src[base + k * inner]) / norm);
                           }
                       }));
  return std::vector<Tensor>{std::move(y)};
}

EvalResult evalLRN(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const Tensor &x = in[0];
  if (x.rank() < 2)
    return invalidArgument("input X must have rank >= 2, got rank {}", x.rank());
  const int64_t size = node.getInt("size"), channels = x.shape()[1];
  const double alpha = node.getFloat("alpha"), beta = node.getFloat("beta");
  const double bias = node.getFloat("bias");
  const int64_t inner = sizeProduct(x.shape(), 2, x.shape().size());
  const int64_t before = (size - 1) / 2, after = size - 1 - before; // floor / ceil of (size-1)/2
  DLC_ASSIGN_OR_RETURN(Tensor y, mapFloat(x, "input X", [&]<typename T>(const T *src, T *dst) {
                         for (int64_t b = 0; b < x.shape()[0]; ++b)
                           for (int64_t c = 0; c < channels; ++c)
                             for (int64_t i = 0; i < inner; ++i) {
                               double sq = 0;
                               for (int64_t k = std::max<int64_t>(0, c - before);
                                    k <= std::min<int64_t>(channels - 1, c + after); ++k) {
                                 double v =
                                     static_cast<double>(src[(b * channels + k) * inner + i]);
                                 sq += v * v;
                               }
                               int64_t at = (b * channels + c) * inner + i;
                               double scale =
                                   std::pow(bias + alpha / static_cast<double>(size) * sq, beta);
                               dst[at] = static_cast<T>(static_cast<double>(src[at]) / scale);
                             }
                       }));
  return std::vector<Tensor>{std::move(y)};
}

EvalResult evalDropout(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const Tensor &x = in[0];
  if (!isFloat(x.dtype()))
    return invalidArgument("input data must be a float tensor, got {}", dtypeName(x.dtype()));
  double ratio = in.size() > 1 && !in[1].empty() ? in[1].elementAsDouble(0) : 0.5;
  bool training = in.size() > 2 && !in[2].empty() && in[2].elementAsDouble(0) != 0.0;
  if (!training || ratio == 0.0) {
    std::vector<Tensor> out{x};
    if (node.numOutputs() > 1)
      out.push_back(node.output(1) ? allTrue(x.shape()) : Tensor());
    return out;
  }
  if (!(ratio > 0.0 && ratio < 1.0))
    return invalidArgument("ratio must be in [0, 1) in training, got {}", ratio);
  // Training: element i is kept (and scaled by 1 / (1 - ratio)) when draw i of the seed's
  // stream (random_eval.cc) is at least ratio.
  const uint64_t state =
      node.hasAttr("seed") ? static_cast<uint32_t>(node.getInt("seed")) : uint64_t{0};
  Tensor mask = Tensor::zeros(DType::kBool, x.shape());
  bool *keep = mask.mutableData<bool>();
  for (int64_t i = 0; i < x.numElements(); ++i)
    keep[i] = uniformDraw(state, static_cast<uint64_t>(i)) >= ratio;
  const double scale = 1.0 / (1.0 - ratio);
  DLC_ASSIGN_OR_RETURN(Tensor y, mapFloat(x, "input data", [&]<typename T>(const T *src, T *dst) {
                         for (int64_t i = 0; i < x.numElements(); ++i)
                           dst[i] =
                               keep[i] ? static_cast<T>(static_cast<double>(src[i]) * scale) : T(0);
                       }));
  std::vector<Tensor> out{std::move(y)};
  if (node.numOutputs() > 1)
    out.push_back(node.output(1) ? std::move(mask) : Tensor());
  return out;
}

} // namespace dlc::eval
