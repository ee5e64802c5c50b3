#include "ir/eval/nn_eval_util.h"

#include "ir/eval/families.h"

namespace dlc::eval {

Expected<DType> floatComputeType(DType t, std::string_view what) {
  switch (t) {
  case DType::kF32:
  case DType::kF16:
  case DType::kBF16:
    return DType::kF32;
  case DType::kF64:
    return DType::kF64;
  default:
    return invalidArgument("{} must be a float tensor, got {}", what, dtypeName(t));
  }
}

Tensor toCompute(const Tensor &t, DType compute) {
  if (t.empty() || t.dtype() == compute)
    return t;
  return t.castTo(compute);
}

int64_t sizeProduct(const std::vector<int64_t> &shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < shape.size(); ++i)
    p *= shape[i];
  return p;
}

std::vector<EvalRow> nnEvals() {
  return {
      {Op::kConv, evalConv},
      {Op::kConvInteger, evalConvInteger},
      {Op::kConvTranspose, evalConvTranspose},
      {Op::kAveragePool, evalAveragePool},
      {Op::kMaxPool, evalMaxPool},
      {Op::kLpPool, evalLpPool},
      {Op::kGlobalAveragePool, evalGlobalAveragePool},
      {Op::kGlobalMaxPool, evalGlobalMaxPool},
      {Op::kGlobalLpPool, evalGlobalLpPool},
      {Op::kMaxUnpool, evalMaxUnpool},
      {Op::kMaxRoiPool, evalMaxRoiPool},
      {Op::kRoiAlign, evalRoiAlign},
      {Op::kBatchNormalization, evalBatchNormalization},
      {Op::kInstanceNormalization, evalInstanceNormalization},
      {Op::kGroupNormalization, evalGroupNormalization},
      {Op::kLayerNormalization, evalLayerNormalization},
      {Op::kLRN, evalLRN},
      {Op::kLpNormalization, evalLpNormalization},
      {Op::kMeanVarianceNormalization, evalMeanVarianceNormalization},
      {Op::kDropout, evalDropout},
      {Op::kResize, evalResize},
      {Op::kGridSample, evalGridSample},
      {Op::kCol2Im, evalCol2Im},
      {Op::kNegativeLogLikelihoodLoss, evalNegativeLogLikelihoodLoss},
      {Op::kSoftmaxCrossEntropyLoss, evalSoftmaxCrossEntropyLoss},
  };
}

} // namespace dlc::eval
