// Reference evaluation of the elementwise family (the rows of ir/ops/elementwise.cc).
// Internal to ir/eval: the kernel table (families.h) refers to these.
//
// Every op follows the ONNX spec on every dtype the spec allows: f16/bf16 are computed in f32
// and rounded once; binary ops broadcast like numpy; integer arithmetic wraps (never undefined
// behaviour); integer division or modulo by zero is an error naming the node.
//
//   unary_eval.cc       math functions, activations, IsNaN/IsInf, Abs/Neg/Sign, Not, BitwiseNot
//   elementwise_eval.cc Add/Sub/Mul/Div/Pow/Mod, variadic Max/Min/Sum/Mean, PRelu
//   compare_eval.cc     comparisons, And/Or/Xor, bitwise ops and BitShift, Where, Clip, Cast
#pragma once

#include <vector>

#include "ir/eval/eval_util.h"
#include "ir/graph.h"

namespace dlc::eval {

// Unary math.
EvalResult evalAbs(const Node &node, const std::vector<Tensor> &in);
EvalResult evalAcos(const Node &node, const std::vector<Tensor> &in);
EvalResult evalAcosh(const Node &node, const std::vector<Tensor> &in);
EvalResult evalAsin(const Node &node, const std::vector<Tensor> &in);
EvalResult evalAsinh(const Node &node, const std::vector<Tensor> &in);
EvalResult evalAtan(const Node &node, const std::vector<Tensor> &in);
EvalResult evalAtanh(const Node &node, const std::vector<Tensor> &in);
EvalResult evalCeil(const Node &node, const std::vector<Tensor> &in);
EvalResult evalCos(const Node &node, const std::vector<Tensor> &in);
EvalResult evalCosh(const Node &node, const std::vector<Tensor> &in);
EvalResult evalErf(const Node &node, const std::vector<Tensor> &in);
EvalResult evalExp(const Node &node, const std::vector<Tensor> &in);
EvalResult evalFloor(const Node &node, const std::vector<Tensor> &in);
EvalResult evalIsInf(const Node &node, const std::vector<Tensor> &in);
EvalResult evalIsNaN(const Node &node, const std::vector<Tensor> &in);
EvalResult evalLog(const Node &node, const std::vector<Tensor> &in);
EvalResult evalNeg(const Node &node, const std::vector<Tensor> &in);
EvalResult evalReciprocal(const Node &node, const std::vector<Tensor> &in);
EvalResult evalRound(const Node &node, const std::vector<Tensor> &in);
EvalResult evalSign(const Node &node, const std::vector<Tensor> &in);
EvalResult evalSin(const Node &node, const std::vector<Tensor> &in);
EvalResult evalSinh(const Node &node, const std::vector<Tensor> &in);
EvalResult evalSqrt(const Node &node, const std::vector<Tensor> &in);
EvalResult evalTan(const Node &node, const std::vector<Tensor> &in);
EvalResult evalTanh(const Node &node, const std::vector<Tensor> &in);
EvalResult evalNot(const Node &node, const std::vector<Tensor> &in);
EvalResult evalBitwiseNot(const Node &node, const std::vector<Tensor> &in);

// Activations.
EvalResult evalCelu(const Node &node, const std::vector<Tensor> &in);
EvalResult evalElu(const Node &node, const std::vector<Tensor> &in);
EvalResult evalGelu(const Node &node, const std::vector<Tensor> &in);
EvalResult evalHardSigmoid(const Node &node, const std::vector<Tensor> &in);
EvalResult evalHardSwish(const Node &node, const std::vector<Tensor> &in);
EvalResult evalLeakyRelu(const Node &node, const std::vector<Tensor> &in);
EvalResult evalMish(const Node &node, const std::vector<Tensor> &in);
EvalResult evalPRelu(const Node &node, const std::vector<Tensor> &in);
EvalResult evalRelu(const Node &node, const std::vector<Tensor> &in);
EvalResult evalSelu(const Node &node, const std::vector<Tensor> &in);
EvalResult evalShrink(const Node &node, const std::vector<Tensor> &in);
EvalResult evalSigmoid(const Node &node, const std::vector<Tensor> &in);
EvalResult evalSoftplus(const Node &node, const std::vector<Tensor> &in);
EvalResult evalSoftsign(const Node &node, const std::vector<Tensor> &in);
EvalResult evalThresholdedRelu(const Node &node, const std::vector<Tensor> &in);

// Binary and variadic arithmetic.
EvalResult evalAdd(const Node &node, const std::vector<Tensor> &in);
EvalResult evalSub(const Node &node, const std::vector<Tensor> &in);
EvalResult evalMul(const Node &node, const std::vector<Tensor> &in);
EvalResult evalDiv(const Node &node, const std::vector<Tensor> &in);
EvalResult evalPow(const Node &node, const std::vector<Tensor> &in);
EvalResult evalMod(const Node &node, const std::vector<Tensor> &in);
EvalResult evalMax(const Node &node, const std::vector<Tensor> &in);
EvalResult evalMin(const Node &node, const std::vector<Tensor> &in);
EvalResult evalSum(const Node &node, const std::vector<Tensor> &in);
EvalResult evalMean(const Node &node, const std::vector<Tensor> &in);

// Comparisons, logic, bitwise.
EvalResult evalEqual(const Node &node, const std::vector<Tensor> &in);
EvalResult evalLess(const Node &node, const std::vector<Tensor> &in);
EvalResult evalLessOrEqual(const Node &node, const std::vector<Tensor> &in);
EvalResult evalGreater(const Node &node, const std::vector<Tensor> &in);
EvalResult evalGreaterOrEqual(const Node &node, const std::vector<Tensor> &in);
EvalResult evalAnd(const Node &node, const std::vector<Tensor> &in);
EvalResult evalOr(const Node &node, const std::vector<Tensor> &in);
EvalResult evalXor(const Node &node, const std::vector<Tensor> &in);
EvalResult evalBitShift(const Node &node, const std::vector<Tensor> &in);
EvalResult evalBitwiseAnd(const Node &node, const std::vector<Tensor> &in);
EvalResult evalBitwiseOr(const Node &node, const std::vector<Tensor> &in);
EvalResult evalBitwiseXor(const Node &node, const std::vector<Tensor> &in);

// Selection and conversion.
EvalResult evalWhere(const Node &node, const std::vector<Tensor> &in);
EvalResult evalClip(const Node &node, const std::vector<Tensor> &in);
EvalResult evalCast(const Node &node, const std::vector<Tensor> &in);
EvalResult evalCastLike(const Node &node, const std::vector<Tensor> &in);

} // namespace dlc::eval
