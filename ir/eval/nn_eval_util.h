// Helpers shared by the nn family's reference evaluators (conv_eval.cc, pool_eval.cc,
// norm_eval.cc, resize_eval.cc, ...), and the declarations of those evaluators (nnEvals() in
// nn_eval_util.cc lists them for the ops of ir/ops/conv.cc, pool.cc, norm.cc, resize.cc and
// loss.cc).
//
// Conventions: an evaluator first runs the op's shape inference on its inputs
// (staticOutputTypes, eval_util.h), so evaluation agrees with inference on output shapes and on
// every error message. Float ops compute in f32 (f32, f16, bf16: half types are widened once and
// the result rounded once at the end) or f64 (f64). Errors do not name the node: evaluate prefixes
// its description.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ir/eval/eval_util.h"
#include "ir/graph.h"
#include "ir/status.h"
#include "ir/tensor.h"

namespace dlc::eval {

/// The type a float op computes in: f32 for f16, bf16 and f32; f64 for f64. An error naming
/// `what` for non-float types.
Expected<DType> floatComputeType(DType t, std::string_view what);

/// `t` converted to `compute` (shared, not copied, when it already is); empty stays empty.
Tensor toCompute(const Tensor &t, DType compute);

/// Calls `f.template operator()<T>()` with T = float for f32 and double for f64.
template <typename F> decltype(auto) withFloatType(DType compute, F &&f) {
  if (compute == DType::kF64)
    return f.template operator()<double>();
  return f.template operator()<float>();
}

/// Product of shape[begin, end).
int64_t sizeProduct(const std::vector<int64_t> &shape, size_t begin, size_t end);

// --- The evaluators -----------------------------------------------------------------------------
// conv_eval.cc
EvalResult evalConv(const Node &node, const std::vector<Tensor> &in);
EvalResult evalConvTranspose(const Node &node, const std::vector<Tensor> &in);
EvalResult evalConvInteger(const Node &node, const std::vector<Tensor> &in);
// pool_eval.cc
EvalResult evalAveragePool(const Node &node, const std::vector<Tensor> &in);
EvalResult evalMaxPool(const Node &node, const std::vector<Tensor> &in);
EvalResult evalLpPool(const Node &node, const std::vector<Tensor> &in);
EvalResult evalGlobalAveragePool(const Node &node, const std::vector<Tensor> &in);
EvalResult evalGlobalMaxPool(const Node &node, const std::vector<Tensor> &in);
EvalResult evalGlobalLpPool(const Node &node, const std::vector<Tensor> &in);
EvalResult evalMaxUnpool(const Node &node, const std::vector<Tensor> &in);
// roi_eval.cc
EvalResult evalRoiAlign(const Node &node, const std::vector<Tensor> &in);
EvalResult evalMaxRoiPool(const Node &node, const std::vector<Tensor> &in);
// norm_eval.cc
EvalResult evalBatchNormalization(const Node &node, const std::vector<Tensor> &in);
EvalResult evalInstanceNormalization(const Node &node, const std::vector<Tensor> &in);
EvalResult evalGroupNormalization(const Node &node, const std::vector<Tensor> &in);
EvalResult evalLayerNormalization(const Node &node, const std::vector<Tensor> &in);
EvalResult evalMeanVarianceNormalization(const Node &node, const std::vector<Tensor> &in);
EvalResult evalLpNormalization(const Node &node, const std::vector<Tensor> &in);
EvalResult evalLRN(const Node &node, const std::vector<Tensor> &in);
EvalResult evalDropout(const Node &node, const std::vector<Tensor> &in);
// resize_eval.cc
EvalResult evalResize(const Node &node, const std::vector<Tensor> &in);
// sample_eval.cc
EvalResult evalGridSample(const Node &node, const std::vector<Tensor> &in);
EvalResult evalCol2Im(const Node &node, const std::vector<Tensor> &in);
// loss_eval.cc
EvalResult evalNegativeLogLikelihoodLoss(const Node &node, const std::vector<Tensor> &in);
EvalResult evalSoftmaxCrossEntropyLoss(const Node &node, const std::vector<Tensor> &in);

} // namespace dlc::eval
