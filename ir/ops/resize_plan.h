// Resize's sampling plan, shared by the reference evaluation (ir/eval/resize_eval.cc) and the GPU
// kernel (codegen/data_movement.cc) so that both take the same taps with the same weights.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "ir/status.h"
#include "ir/tensor.h"

namespace dlc::ops {

/// One axis: for each output index, whether it extrapolates (tf_crop_and_resize), else its
/// taps: input indices (clamped into the axis) and weights, zero weights left out.
struct ResizeAxisPlan {
  std::vector<bool> extrapolate;
  std::vector<size_t> begin; // taps of output o: [begin[o], begin[o + 1])
  std::vector<int64_t> index;
  std::vector<double> weight;
  /// Every output index takes the same input index with weight 1.
  bool identity = false;
};

struct ResizePlan {
  std::vector<ResizeAxisPlan> axes; // one per dim of X
  double extrapolation = 0.0;
};

/// The plan of Resize `node` from X of shape `xShape` to `yShape`; `in` holds the node's input
/// tensors as evaluation gets them (roi, scales, sizes at 1..3; an absent or empty one is not
/// given; in[0] is not read).
Expected<ResizePlan> planResize(const Node &node, const std::vector<int64_t> &xShape,
                                const std::vector<int64_t> &yShape, const std::vector<Tensor> &in);

} // namespace dlc::ops
