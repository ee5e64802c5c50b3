// Reference evaluation of the elementwise ops that constant folding of shape arithmetic needs.
// Internal to ir/ops: the op table refers to these through OpDef::eval.
//
// Arithmetic and comparisons run on every integer dtype, f32 and f64 (f16/bf16 are computed
// in f32), with numpy broadcasting. Integer arithmetic wraps like unsigned machine arithmetic
// (never undefined behaviour); integer Div truncates toward zero and division by zero is an
// error naming the node.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "ir/status.h"
#include "ir/tensor.h"

namespace dlc::ops {

using EvalResult = Expected<std::vector<Tensor>>;

EvalResult evalAdd(const Node &node, const std::vector<Tensor> &in);
EvalResult evalSub(const Node &node, const std::vector<Tensor> &in);
EvalResult evalMul(const Node &node, const std::vector<Tensor> &in);
EvalResult evalDiv(const Node &node, const std::vector<Tensor> &in);
EvalResult evalMax(const Node &node, const std::vector<Tensor> &in);
EvalResult evalMin(const Node &node, const std::vector<Tensor> &in);
EvalResult evalEqual(const Node &node, const std::vector<Tensor> &in);
EvalResult evalLess(const Node &node, const std::vector<Tensor> &in);
EvalResult evalGreater(const Node &node, const std::vector<Tensor> &in);
EvalResult evalAnd(const Node &node, const std::vector<Tensor> &in);
EvalResult evalOr(const Node &node, const std::vector<Tensor> &in);
EvalResult evalNot(const Node &node, const std::vector<Tensor> &in);
EvalResult evalNeg(const Node &node, const std::vector<Tensor> &in);
EvalResult evalAbs(const Node &node, const std::vector<Tensor> &in);
EvalResult evalWhere(const Node &node, const std::vector<Tensor> &in);
EvalResult evalCast(const Node &node, const std::vector<Tensor> &in);

} // namespace dlc::ops
