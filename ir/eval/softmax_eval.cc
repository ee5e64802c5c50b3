// Reference evaluation of the softmax family (one axis; the largest element is subtracted
// before exp, so large inputs do not overflow), TopK and CumSum.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "ir/eval/reduction_eval.h"

namespace dlc::eval {

namespace {

enum class Soft : uint8_t { kSoftmax, kLogSoftmax, kHardmax };

/// `v` ranks above `w`: larger, with NaN above everything (numpy's order).
template <typename T> bool ranksAbove(T v, T w) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(v))
      return !std::isnan(w);
    if (std::isnan(w))
      return false;
  }
  return v > w;
}

EvalResult softmaxLike(const Node &node, const std::vector<Tensor> &in, Soft kind) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 1));
  DType dtype = in[0].dtype();
  if (!isFloat(dtype))
    return noEval(dtype);
  DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(node.getInt("axis"), in[0].rank()));
  AxisSplit s = splitAt(in[0].shape(), axis);
  Tensor x = widenHalf(in[0]);
  Tensor out = Tensor::zeros(dtype, in[0].shape());
  std::vector<double> e(static_cast<size_t>(s.len));
  auto run = [&]<typename T>() {
    const T *a = x.data<T>();
    for (int64_t outer = 0; outer < s.outer; ++outer)
      for (int64_t inner = 0; inner < s.inner; ++inner) {
        int64_t base = outer * s.len * s.inner + inner;
        auto at = [&](int64_t j) { return base + j * s.inner; };
        if (kind == Soft::kHardmax) { // 1 at the first largest element (NaN ranks highest)
          int64_t best = 0;
          for (int64_t j = 1; j < s.len; ++j)
            if (ranksAbove(a[at(j)], a[at(best)]))
              best = j;
          for (int64_t j = 0; j < s.len; ++j)
            storeFloat(out, at(j), j == best ? 1.0 : 0.0);
          continue;
        }
        double peak = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < s.len; ++j)
          peak = std::max(peak, static_cast<double>(a[at(j)])); // NaN ignored here, not below
        double sum = 0;
        for (int64_t j = 0; j < s.len; ++j) {
          e[static_cast<size_t>(j)] = std::exp(static_cast<double>(a[at(j)]) - peak);
          sum += e[static_cast<size_t>(j)];
        }
        double logSum = std::log(sum);
        for (int64_t j = 0; j < s.len; ++j)
          storeFloat(out, at(j),
                     kind == Soft::kSoftmax ? e[static_cast<size_t>(j)] / sum
                                            : static_cast<double>(a[at(j)]) - peak - logSum);
      }
  };
  if (x.dtype() == DType::kF64)
    run.template operator()<double>();
  else
    run.template operator()<float>();
  return std::vector<Tensor>{out};
}

} // namespace

EvalResult evalSoftmax(const Node &n, const std::vector<Tensor> &in) {
  return softmaxLike(n, in, Soft::kSoftmax);
}
EvalResult evalLogSoftmax(const Node &n, const std::vector<Tensor> &in) {
  return softmaxLike(n, in, Soft::kLogSoftmax);
}
EvalResult evalHardmax(const Node &n, const std::vector<Tensor> &in) {
  return softmaxLike(n, in, Soft::kHardmax);
}

EvalResult evalTopK(const Node &node, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 2));
  DType dtype = in[0].dtype();
  if (!isNumeric(dtype))
    return noEval(dtype);
  DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(node.getInt("axis"), in[0].rank()));
  DLC_ASSIGN_OR_RETURN(int64_t k, scalarIntInput(in[1], "K"));
  AxisSplit s = splitAt(in[0].shape(), axis);
  if (k < 0 || k > s.len)
    return invalidArgument("K = {} is outside [0, {}], the size of axis {}", k, s.len, axis);
  bool largest = node.getInt("largest") != 0;
  std::vector<int64_t> shape = in[0].shape();
  shape[static_cast<size_t>(axis)] = k;
  Tensor values = Tensor::zeros(dtype, shape), indices = Tensor::zeros(DType::kI64, shape);
  Tensor x = widenHalf(in[0]); // ordering only: values are copied from the input's bytes
  size_t size = static_cast<size_t>(dtypeSize(dtype));
  const auto *src = static_cast<const uint8_t *>(in[0].raw());
  auto *dst = static_cast<uint8_t *>(values.mutableRaw());
  int64_t *idx = indices.mutableData<int64_t>();
  std::vector<int64_t> order(static_cast<size_t>(s.len));
  // Results are always sorted (sorted=0 leaves the order to the implementation); equal values
  // keep the lower index first, as the spec requires.
  dispatch(x.dtype(), [&]<typename T>() {
    const T *a = x.data<T>();
    for (int64_t outer = 0; outer < s.outer; ++outer)
      for (int64_t inner = 0; inner < s.inner; ++inner) {
        int64_t base = outer * s.len * s.inner + inner;
        auto value = [&](int64_t j) { return a[base + j * s.inner]; };
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t i, int64_t j) {
          T u = value(i), v = value(j);
          bool before = largest ? ranksAbove(u, v) : ranksAbove(v, u);
          bool after = largest ? ranksAbove(v, u) : ranksAbove(u, v);
          return before || (!after && i < j);
        });
        for (int64_t r = 0; r < k; ++r) {
          int64_t from = base + order[static_cast<size_t>(r)] * s.inner;
          int64_t to = outer * k * s.inner + r * s.inner + inner;
          std::memcpy(dst + static_cast<size_t>(to) * size, src + static_cast<size_t>(from) * size,
                      size);
          idx[to] = order[static_cast<size_t>(r)];
        }
      }
  });
  return std::vector<Tensor>{values, indices};
}

EvalResult evalCumSum(const Node &node, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 2));
  DType dtype = in[0].dtype();
  if (!isNumeric(dtype))
    return noEval(dtype);
  DLC_ASSIGN_OR_RETURN(int64_t a, scalarIntInput(in[1], "axis"));
  DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(a, in[0].rank()));
  bool exclusive = node.getInt("exclusive") != 0, reverse = node.getInt("reverse") != 0;
  AxisSplit s = splitAt(in[0].shape(), axis);
  Tensor x = widenHalf(in[0]);
  Tensor out = Tensor::zeros(dtype, in[0].shape());
  dispatch(x.dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      // Floats accumulate in double and round each output once; integers wrap.
      using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
      const T *src = x.data<T>();
      for (int64_t outer = 0; outer < s.outer; ++outer)
        for (int64_t inner = 0; inner < s.inner; ++inner) {
          Acc acc = 0;
          for (int64_t step = 0; step < s.len; ++step) {
            int64_t j = reverse ? s.len - 1 - step : step;
            int64_t i = outer * s.len * s.inner + j * s.inner + inner;
            Acc before = acc;
            if constexpr (std::is_floating_point_v<T>)
              acc += static_cast<double>(src[i]);
            else
              acc = wrapAdd(acc, src[i]);
            Acc v = exclusive ? before : acc;
            if constexpr (std::is_floating_point_v<T>)
              storeFloat(out, i, v);
            else
              out.mutableData<T>()[i] = v;
          }
        }
    }
  });
  return std::vector<Tensor>{out};
}

} // namespace dlc::eval
