// The rows of the misc family's reference kernels (declared in misc_eval.h).
#include "ir/eval/misc_eval.h"
#include "ir/eval/families.h"

namespace dlc::eval {

std::vector<EvalRow> miscEvals() {
  return {
      {Op::kRNN, evalRnn},
      {Op::kGRU, evalGru},
      {Op::kLSTM, evalLstm},
      {Op::kRandomNormal, evalRandomNormal},
      {Op::kRandomUniform, evalRandomUniform},
      {Op::kRandomNormalLike, evalRandomNormal},
      {Op::kRandomUniformLike, evalRandomUniform},
      {Op::kBernoulli, evalBernoulli},
      {Op::kMultinomial, evalMultinomial},
      {Op::kBlackmanWindow, evalBlackmanWindow},
      {Op::kHammingWindow, evalHammingWindow},
      {Op::kHannWindow, evalHannWindow},
      {Op::kDFT, evalDft},
      {Op::kSTFT, evalStft},
      {Op::kMelWeightMatrix, evalMelWeightMatrix},
      {Op::kNonMaxSuppression, evalNonMaxSuppression},
      {Op::kTfIdfVectorizer, evalTfIdfVectorizer},
      {Op::kAdagrad, evalAdagrad},
      {Op::kAdam, evalAdam},
      {Op::kMomentum, evalMomentum},
  };
}

} // namespace dlc::eval
