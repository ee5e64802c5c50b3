// Reference evaluation of the linear-algebra family (the rows of ir/ops/linalg.cc).
// Internal to ir/ops: the op table refers to these through OpDef::eval.
//
// f32 products go through sgemm and f64 through dgemm (ir/ops/gemm_kernel.h); f16/bf16 are
// widened to f32 and rounded once. Integer products are exact, wrapping in the element type.
//
//   matmul_eval.cc  MatMul, Gemm, MatMulInteger, QLinearMatMul, Det
//   einsum_eval.cc  Einsum
#pragma once

#include <vector>

#include "ir/graph.h"
#include "ir/ops/eval_util.h"

namespace dlc::ops {

EvalResult evalMatMul(const Node &node, const std::vector<Tensor> &in);
EvalResult evalGemm(const Node &node, const std::vector<Tensor> &in);
EvalResult evalMatMulInteger(const Node &node, const std::vector<Tensor> &in);
EvalResult evalQLinearMatMul(const Node &node, const std::vector<Tensor> &in);
EvalResult evalDet(const Node &node, const std::vector<Tensor> &in);
EvalResult evalEinsum(const Node &node, const std::vector<Tensor> &in);

/// numpy matmul of `a` and `b` (same dtype): 1-D operands are promoted and the added dim
/// dropped again, batch dims broadcast. The matrix kernel shared by MatMul and the quantized
/// matmuls (ir/ops/matmul_eval.cc).
Expected<Tensor> matmulTensors(const Tensor &a, const Tensor &b);

} // namespace dlc::ops
