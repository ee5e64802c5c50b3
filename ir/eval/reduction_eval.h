// Reference evaluation of the reduction family (the rows of ir/ops/reduction.cc).
// Internal to ir/eval: the kernel table (families.h) refers to these.
//
// Floating-point reductions accumulate in double and round once to the element type.
// Integer Sum/SumSquare/L1/Prod/Mean/Max/Min are exact (wrapping) in the element type;
// integer L2/LogSum/LogSumExp are computed in double and truncated. Reducing an empty set
// gives the spec's identity: 0 for the sums and norms, 1 for Prod, -inf for Max and LogSum(Exp)
// (the type's lowest value for integers), +inf for Min (its largest), NaN for a float Mean.
// With noop_with_empty_axes and no axes every element is its own set, so ReduceSumSquare is a
// plain square (the spec's example). Max, Min and the arg-reductions let NaN win, like numpy.
//
//   reduce_eval.cc   Reduce*, ArgMax, ArgMin
//   softmax_eval.cc  Softmax, LogSoftmax, Hardmax, TopK, CumSum
#pragma once

#include <vector>

#include "ir/eval/eval_util.h"
#include "ir/graph.h"

namespace dlc::eval {

EvalResult evalReduceL1(const Node &node, const std::vector<Tensor> &in);
EvalResult evalReduceL2(const Node &node, const std::vector<Tensor> &in);
EvalResult evalReduceLogSum(const Node &node, const std::vector<Tensor> &in);
EvalResult evalReduceLogSumExp(const Node &node, const std::vector<Tensor> &in);
EvalResult evalReduceMax(const Node &node, const std::vector<Tensor> &in);
EvalResult evalReduceMean(const Node &node, const std::vector<Tensor> &in);
EvalResult evalReduceMin(const Node &node, const std::vector<Tensor> &in);
EvalResult evalReduceProd(const Node &node, const std::vector<Tensor> &in);
EvalResult evalReduceSum(const Node &node, const std::vector<Tensor> &in);
EvalResult evalReduceSumSquare(const Node &node, const std::vector<Tensor> &in);
EvalResult evalArgMax(const Node &node, const std::vector<Tensor> &in);
EvalResult evalArgMin(const Node &node, const std::vector<Tensor> &in);

EvalResult evalSoftmax(const Node &node, const std::vector<Tensor> &in);
EvalResult evalLogSoftmax(const Node &node, const std::vector<Tensor> &in);
EvalResult evalHardmax(const Node &node, const std::vector<Tensor> &in);
EvalResult evalTopK(const Node &node, const std::vector<Tensor> &in);
EvalResult evalCumSum(const Node &node, const std::vector<Tensor> &in);

} // namespace dlc::eval
