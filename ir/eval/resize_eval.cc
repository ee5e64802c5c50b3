// Reference evaluation of Resize: the taps and weights of each axis come from planResize
// (ir/ops/resize_plan.cc, where the arithmetic is described), shared with the GPU kernel; the
// 1-D interpolation is applied axis by axis, innermost first, in double.
#include <algorithm>
#include <cmath>

#include "ir/eval/nn_eval_util.h"
#include "ir/ops/resize_plan.h"

namespace dlc::eval {

using ops::planResize;
using ops::ResizeAxisPlan;
using ops::ResizePlan;

namespace {

using AxisPlan = ResizeAxisPlan;

/// Resamples axis `a` of `src` (shape `shape`) with `plan` into a tensor whose axis a has
/// `out` elements. The passes run innermost axis first, which computes exactly the sums of the
/// reference's recursion (inner axes interpolated first, in double, taps in order).
std::vector<double> resampleAxis(const std::vector<double> &src, std::vector<int64_t> &shape,
                                 size_t a, int64_t out, const AxisPlan &plan,
                                 double extrapolation) {
  const int64_t outer = sizeProduct(shape, 0, a), in = shape[a];
  const int64_t inner = sizeProduct(shape, a + 1, shape.size());
  std::vector<double> dst(static_cast<size_t>(outer * out * inner), 0.0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t x = 0; x < out; ++x) {
      double *d = dst.data() + (o * out + x) * inner;
      if (plan.extrapolate[static_cast<size_t>(x)]) {
        std::fill(d, d + inner, extrapolation);
        continue;
      }
      for (size_t t = plan.begin[static_cast<size_t>(x)];
           t < plan.begin[static_cast<size_t>(x) + 1]; ++t) {
        const double w = plan.weight[t];
        const double *s = src.data() + (o * in + plan.index[t]) * inner;
        for (int64_t i = 0; i < inner; ++i)
          d[i] += w * s[i];
      }
    }
  shape[a] = out;
  return dst;
}

} // namespace

EvalResult evalResize(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const Tensor &x = in[0];
  if (!isNumeric(x.dtype()))
    return invalidArgument("input X must be numeric, got {}", dtypeName(x.dtype()));
  const std::vector<int64_t> yShape = types[0].shape.sizes();
  // The output first: its size limit refuses a huge scale before the plan (tables as long as
  // the output's axes) is made.
  DLC_ASSIGN_OR_RETURN(Tensor y, newTensor(DType::kF64, yShape));
  DLC_ASSIGN_OR_RETURN(ResizePlan plan, planResize(node, x.shape(), yShape, in));
  if (y.numElements() == 0)
    return std::vector<Tensor>{y.castTo(x.dtype())};
  if (x.numElements() == 0)
    return invalidArgument("cannot resize an empty input to a non-empty output");
  Tensor xd = x.castTo(DType::kF64);
  std::vector<double> cur(xd.data<double>(), xd.data<double>() + xd.numElements());
  std::vector<int64_t> shape = x.shape();
  for (size_t a = plan.axes.size(); a-- > 0;)
    if (!plan.axes[a].identity)
      cur = resampleAxis(cur, shape, a, yShape[a], plan.axes[a], plan.extrapolation);
  std::copy(cur.begin(), cur.end(), y.mutableData<double>());
  return std::vector<Tensor>{y.castTo(x.dtype())};
}

} // namespace dlc::eval
