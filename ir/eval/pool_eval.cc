// Reference evaluation of the pooling ops: AveragePool, MaxPool (with Indices), LpPool, their
// global forms, and MaxUnpool.
//
// A pooling plan lists, per spatial axis and output index, the input indices its window taps
// (kernel offsets * dilation, from the begin-padded start; taps in the padding dropped) and
// how many taps fall inside the explicitly padded extent (AveragePool's count_include_pad
// divisor: taps a ceil_mode window adds past the end padding are never counted, as in
// onnxruntime and PyTorch). A window is the cartesian product of its axes' taps.
//
// MaxPool follows numpy's max: a NaN in the window makes the result NaN (and Indices point at
// the first NaN); ties keep the first maximum in row-major window order. Indices are flat
// offsets into X, row-major (storage_order 0) or with the spatial axes column-major
// (storage_order 1), as ONNX's reference. A window that lies wholly in the padding yields
// -inf (the lowest value for integers) and index -1.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/eval/nn_eval_util.h"
#include "ir/ops/conv_util.h"
#include "ir/ops/tensor_internal.h"

namespace dlc::eval {

using ops::readWindowGeometry;
using ops::WindowGeometry;

namespace {

struct PoolPlan {
  int64_t planes = 0; // N * C
  std::vector<int64_t> in, out;
  std::vector<std::vector<std::vector<int64_t>>> taps; // [axis][output index] -> input indices
  std::vector<std::vector<int64_t>> paddedCount;       // [axis][output index]
};

Expected<PoolPlan> makePlan(const Node &node, const std::vector<int64_t> &xShape,
                            const std::vector<int64_t> &yShape, bool hasDilations) {
  const int64_t n = static_cast<int64_t>(xShape.size()) - 2;
  DLC_ASSIGN_OR_RETURN(
      WindowGeometry g,
      readWindowGeometry(node, n, nullptr, {.dilations = hasDilations, .ceilMode = true}));
  PoolPlan p;
  p.planes = xShape[0] * xShape[1];
  p.in.assign(xShape.begin() + 2, xShape.end());
  p.out.assign(yShape.begin() + 2, yShape.end());
  p.taps.resize(static_cast<size_t>(n));
  p.paddedCount.resize(static_cast<size_t>(n));
  for (int64_t a = 0; a < n; ++a) {
    size_t i = static_cast<size_t>(a);
    auto [begin, end] = g.resolvePads(a, p.in[i]);
    for (int64_t o = 0; o < p.out[i]; ++o) {
      std::vector<int64_t> taps;
      int64_t padded = 0;
      for (int64_t k = 0; k < g.kernel[i]; ++k) {
        int64_t t = o * g.strides[i] - begin + k * g.dilations[i];
        if (t >= -begin && t < p.in[i] + end)
          ++padded;
        if (t >= 0 && t < p.in[i])
          taps.push_back(t);
      }
      p.taps[i].push_back(std::move(taps));
      p.paddedCount[i].push_back(padded);
    }
  }
  return p;
}

/// Calls visit(plane, outFlat, window) for every output element, where window.tap(f) walks
/// the taps. Window exposes the taps as row-major flat offsets within the plane and, for
/// MaxPool's storage_order 1, as offsets with the spatial axes column-major.
struct Window {
  const PoolPlan *plan;
  std::vector<const std::vector<int64_t> *> axes;
  int64_t paddedCount = 1;

  int64_t size() const {
    int64_t s = 1;
    for (auto *t : axes)
      s *= static_cast<int64_t>(t->size());
    return s;
  }
  /// f(rowMajorOffset, columnMajorOffset) for each tap in row-major window order.
  template <typename F> void forEachTap(F &&f) const { walk(0, 0, 0, 1, f); }

private:
  template <typename F>
  void walk(size_t a, int64_t row, int64_t col, int64_t colStride, F &f) const {
    if (a == axes.size()) {
      f(row, col);
      return;
    }
    const int64_t extent = plan->in[a];
    for (int64_t idx : *axes[a])
      walk(a + 1, row * extent + idx, col + idx * colStride, colStride * extent, f);
  }
};

template <typename F> void forEachWindow(const PoolPlan &p, F &&visit) {
  const size_t n = p.out.size();
  int64_t outSize = sizeProduct(p.out, 0, n);
  Window w{&p, std::vector<const std::vector<int64_t> *>(n), 1};
  std::vector<int64_t> o(n, 0);
  for (int64_t flat = 0; flat < outSize; ++flat) {
    w.paddedCount = 1;
    for (size_t a = 0; a < n; ++a) {
      w.axes[a] = &p.taps[a][static_cast<size_t>(o[a])];
      w.paddedCount *= p.paddedCount[a][static_cast<size_t>(o[a])];
    }
    visit(flat, w);
    for (size_t a = n; a-- > 0;) {
      if (++o[a] < p.out[a])
        break;
      o[a] = 0;
    }
  }
}

enum class PoolKind { kAverage, kLp };

/// AveragePool and LpPool on a float tensor, computed in double.
EvalResult evalSumPool(const Node &node, const std::vector<Tensor> &in, PoolKind kind) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const Tensor &x = in[0];
  DLC_RETURN_IF_ERROR(floatComputeType(x.dtype(), "input X").status());
  std::vector<int64_t> yShape = types[0].shape.sizes();
  DLC_ASSIGN_OR_RETURN(PoolPlan plan, makePlan(node, x.shape(), yShape, true));
  DLC_ASSIGN_OR_RETURN(Tensor y, newTensor(DType::kF64, yShape));
  Tensor xd = x.castTo(DType::kF64);
  const bool includePad = kind == PoolKind::kAverage && node.getInt("count_include_pad") != 0;
  const double p = kind == PoolKind::kLp ? static_cast<double>(node.getInt("p")) : 1.0;
  const int64_t inSize = sizeProduct(plan.in, 0, plan.in.size());
  const int64_t outSize = sizeProduct(plan.out, 0, plan.out.size());
  for (int64_t c = 0; c < plan.planes; ++c) {
    const double *src = xd.data<double>() + c * inSize;
    double *dst = y.mutableData<double>() + c * outSize;
    forEachWindow(plan, [&](int64_t o, const Window &w) {
      double acc = 0;
      if (kind == PoolKind::kAverage)
        w.forEachTap([&](int64_t off, int64_t) { acc += src[off]; });
      else
        w.forEachTap([&](int64_t off, int64_t) { acc += std::pow(std::abs(src[off]), p); });
      if (kind == PoolKind::kLp)
        dst[o] = std::pow(acc, 1.0 / p);
      else
        dst[o] = acc / static_cast<double>(includePad ? w.paddedCount : w.size());
    });
  }
  return std::vector<Tensor>{y.castTo(x.dtype())};
}

/// numpy max: NaN wins.
template <typename T> bool takes(T candidate, T best) {
  if constexpr (std::is_floating_point_v<T>)
    return !std::isnan(best) && (candidate > best || std::isnan(candidate));
  else
    return candidate > best;
}

template <typename T> T emptyMax() {
  if constexpr (std::is_floating_point_v<T>)
    return -std::numeric_limits<T>::infinity();
  else
    return std::numeric_limits<T>::lowest();
}

/// MaxPool on T (float, double, int8_t or uint8_t).
template <typename T>
void maxPool(const PoolPlan &plan, bool columnMajor, const T *x, T *y, int64_t *indices) {
  const int64_t inSize = sizeProduct(plan.in, 0, plan.in.size());
  const int64_t outSize = sizeProduct(plan.out, 0, plan.out.size());
  for (int64_t c = 0; c < plan.planes; ++c) {
    const T *src = x + c * inSize;
    forEachWindow(plan, [&](int64_t o, const Window &w) {
      T best = emptyMax<T>();
      int64_t at = -1;
      w.forEachTap([&](int64_t off, int64_t colOff) {
        if (at < 0 || takes(src[off], best)) {
          best = src[off];
          at = c * inSize + (columnMajor ? colOff : off);
        }
      });
      y[c * outSize + o] = best;
      if (indices)
        indices[c * outSize + o] = at;
    });
  }
}

/// The Global* pools: windows over every spatial element.
EvalResult evalGlobal(const Node &node, const std::vector<Tensor> &in, char kind) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  Tensor x = in[0];
  if (node.getInt("channels_last") != 0) { // [N, spatial..., C]: pooled as [N, C, spatial...]
    DLC_ASSIGN_OR_RETURN(x, permuted(x, ops::channelsFirstPerm(x.rank())));
  }
  DLC_RETURN_IF_ERROR(floatComputeType(x.dtype(), "input X").status());
  DLC_ASSIGN_OR_RETURN(Tensor y, newTensor(DType::kF64, types[0].shape.sizes()));
  Tensor xd = x.castTo(DType::kF64);
  const int64_t planes = x.shape()[0] * x.shape()[1];
  const int64_t size = planes == 0 ? 0 : x.numElements() / planes;
  const double p = kind == 'l' ? static_cast<double>(node.getInt("p")) : 1.0;
  for (int64_t c = 0; c < planes; ++c) {
    const double *src = xd.data<double>() + c * size;
    double acc = kind == 'm' ? emptyMax<double>() : 0.0;
    for (int64_t i = 0; i < size; ++i) {
      if (kind == 'm')
        acc = i == 0 || takes(src[i], acc) ? src[i] : acc;
      else
        acc += kind == 'l' ? std::pow(std::abs(src[i]), p) : src[i];
    }
    y.mutableData<double>()[c] = kind == 'a'   ? acc / static_cast<double>(size)
                                 : kind == 'l' ? std::pow(acc, 1.0 / p)
                                               : acc;
  }
  return std::vector<Tensor>{y.castTo(x.dtype())};
}

} // namespace

EvalResult evalAveragePool(const Node &node, const std::vector<Tensor> &in) {
  return evalSumPool(node, in, PoolKind::kAverage);
}

EvalResult evalLpPool(const Node &node, const std::vector<Tensor> &in) {
  return evalSumPool(node, in, PoolKind::kLp);
}

EvalResult evalMaxPool(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const Tensor &x = in[0];
  DType dt = x.dtype();
  if (!isFloat(dt) && dt != DType::kI8 && dt != DType::kU8)
    return invalidArgument("input X must be a float, i8 or u8 tensor, got {}", dtypeName(dt));
  std::vector<int64_t> yShape = types[0].shape.sizes();
  DLC_ASSIGN_OR_RETURN(PoolPlan plan, makePlan(node, x.shape(), yShape, true));
  int64_t order = node.getInt("storage_order");
  if (order != 0 && order != 1)
    return invalidArgument("attribute 'storage_order' must be 0 or 1, got {}", order);
  bool wantIndices = node.numOutputs() > 1 && node.output(1) != nullptr;
  Tensor indices;
  if (wantIndices) {
    DLC_ASSIGN_OR_RETURN(indices, newTensor(DType::kI64, yShape));
  }
  int64_t *idx = wantIndices ? indices.mutableData<int64_t>() : nullptr;
  Tensor y;
  if (dt == DType::kI8 || dt == DType::kU8) {
    DLC_ASSIGN_OR_RETURN(y, newTensor(dt, yShape));
    if (dt == DType::kI8)
      maxPool(plan, order == 1, x.data<int8_t>(), y.mutableData<int8_t>(), idx);
    else
      maxPool(plan, order == 1, x.data<uint8_t>(), y.mutableData<uint8_t>(), idx);
  } else {
    DType compute = dt == DType::kF64 ? DType::kF64 : DType::kF32;
    DLC_ASSIGN_OR_RETURN(y, newTensor(compute, yShape));
    Tensor xc = toCompute(x, compute);
    withFloatType(compute, [&]<typename T>() {
      maxPool(plan, order == 1, xc.data<T>(), y.mutableData<T>(), idx);
    });
    y = y.castTo(dt);
  }
  std::vector<Tensor> out{std::move(y)};
  if (node.numOutputs() > 1)
    out.push_back(std::move(indices));
  return out;
}

EvalResult evalGlobalAveragePool(const Node &node, const std::vector<Tensor> &in) {
  return evalGlobal(node, in, 'a');
}
EvalResult evalGlobalMaxPool(const Node &node, const std::vector<Tensor> &in) {
  return evalGlobal(node, in, 'm');
}
EvalResult evalGlobalLpPool(const Node &node, const std::vector<Tensor> &in) {
  return evalGlobal(node, in, 'l');
}

EvalResult evalMaxUnpool(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const Tensor &x = in[0], &indices = in[1];
  if (!isNumeric(x.dtype()))
    return invalidArgument("input X must be numeric, got {}", dtypeName(x.dtype()));
  if (indices.dtype() != DType::kI64)
    return invalidArgument("input I must be i64, got {}", dtypeName(indices.dtype()));
  if (indices.shape() != x.shape())
    return invalidArgument("input I has shape {} but X has shape {}",
                           Shape::fromSizes(indices.shape()).str(),
                           Shape::fromSizes(x.shape()).str());
  // Indices address the unpooled shape inferred from the attributes (pads ignored when
  // output_shape is given); that block then sits at the start of every output axis.
  const std::vector<int64_t> yShape = types[0].shape.sizes();
  const bool hasOutputShape = in.size() > 2 && !in[2].empty();
  const std::vector<int64_t> kernel = node.getInts("kernel_shape");
  const size_t n = kernel.size();
  std::vector<int64_t> strides =
      node.hasAttr("strides") ? node.getInts("strides") : std::vector<int64_t>(n, 1);
  std::vector<int64_t> pads = node.hasAttr("pads") && !hasOutputShape
                                  ? node.getInts("pads")
                                  : std::vector<int64_t>(2 * n, 0);
  std::vector<int64_t> inferred{x.shape()[0], x.shape()[1]};
  for (size_t a = 0; a < n; ++a)
    inferred.push_back((x.shape()[a + 2] - 1) * strides[a] - pads[a] - pads[a + n] + kernel[a]);
  for (size_t a = 0; a < inferred.size(); ++a)
    if (inferred[a] < 0 || inferred[a] > yShape[a])
      return invalidArgument("output_shape {} is smaller than the unpooled shape {}",
                             Shape::fromSizes(yShape).str(), Shape::fromSizes(inferred).str());
  const int64_t inferredSize = sizeProduct(inferred, 0, inferred.size());
  DLC_ASSIGN_OR_RETURN(Tensor y, newTensor(x.dtype(), yShape));
  const std::vector<int64_t> yStrides = ops::tensor::stridesOf(yShape);
  const int64_t es = dtypeSize(x.dtype());
  auto *dst = static_cast<uint8_t *>(y.mutableRaw());
  const auto *src = static_cast<const uint8_t *>(x.raw());
  for (int64_t i = 0; i < x.numElements(); ++i) {
    int64_t at = indices.data<int64_t>()[i];
    if (at < 0 || at >= inferredSize)
      return outOfRange("index {} in input I is out of range for an unpooled shape of {} "
                        "elements",
                        at, inferredSize);
    int64_t offset = 0;
    for (size_t a = inferred.size(), rest = static_cast<size_t>(at); a-- > 0;) {
      offset += static_cast<int64_t>(rest % static_cast<size_t>(inferred[a])) * yStrides[a];
      rest /= static_cast<size_t>(inferred[a]);
    }
    std::copy(src + i * es, src + (i + 1) * es, dst + offset * es);
  }
  return std::vector<Tensor>{std::move(y)};
}

} // namespace dlc::eval
