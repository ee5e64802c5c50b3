// Reference evaluation of the linear-algebra family (the rows of ir/ops/linalg.cc).
// Internal to ir/eval: the kernel table (families.h) refers to these.
//
// f32 products go through sgemm and f64 through dgemm (ir/eval/cpu_gemm.h); f16/bf16 are
// widened to f32 and rounded once. Integer products are exact, wrapping in the element type.
//
//   matmul_eval.cc  MatMul, Gemm, MatMulInteger, QLinearMatMul, Det
//   einsum_eval.cc  Einsum
//   attention_eval.cc  Attention (in double, Y rounded once)
#pragma once

#include <vector>

#include "ir/eval/eval_util.h"
#include "ir/graph.h"

namespace dlc::eval {

EvalResult evalMatMul(const Node &node, const std::vector<Tensor> &in);
EvalResult evalGemm(const Node &node, const std::vector<Tensor> &in);
EvalResult evalMatMulInteger(const Node &node, const std::vector<Tensor> &in);
EvalResult evalQLinearMatMul(const Node &node, const std::vector<Tensor> &in);
EvalResult evalDet(const Node &node, const std::vector<Tensor> &in);
EvalResult evalEinsum(const Node &node, const std::vector<Tensor> &in);
EvalResult evalAttention(const Node &node, const std::vector<Tensor> &in);

/// numpy matmul of `a` and `b` (same dtype): 1-D operands are promoted and the added dim
/// dropped again, batch dims broadcast. The matrix kernel shared by MatMul and the quantized
/// matmuls (ir/eval/matmul_eval.cc).
Expected<Tensor> matmulTensors(const Tensor &a, const Tensor &b);

} // namespace dlc::eval
