// The CUDA spelling of elementwise and broadcast ops, keyed by op (after tinygrad's
// code_for_op), and the C types and literals generated code computes in.
//
// An expression works on one element: its operands arrive as C expressions in their compute
// type (float for f32/f16/bf16, the storage type otherwise; see cuda_prelude.h) and it yields an
// expression in the compute type of output 0. The names it uses are CUDA built-ins or the
// `dlc_*` helpers of the prelude (cuda_prelude.cc); tests/unit/codegen/elementwise_expr_test.cc
// checks that every helper an expression names is defined there, and that every op whose fusion
// kind is elementwise or broadcast has an expression.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/status.h"

namespace dlc::codegen {

/// The CUDA expression of one element of `node` from its operands' expressions `args` (an
/// absent optional operand is an empty string).
using CudaExprFn = Expected<std::string> (*)(const Node &node,
                                             const std::vector<std::string> &args);

/// The CUDA expression of `op`; nullptr when the op has none (it is not elementwise).
/// QuantizeLinear and DequantizeLinear have one, for the nodes isElementwiseNode accepts
/// (codegen/quant_expr.h).
CudaExprFn elementwiseExpr(Op op);

/// Whether `op`'s expression is a few plain arithmetic instructions per element (no division,
/// no transcendental math, no quantization): what a GEMM epilogue may unroll freely
/// (gemm::heavyEpilogue) and what an epilogue table does not pay for (byte_table.h).
bool isPlainArithmetic(Op op);

/// The C type an element of `t` is computed in on the GPU ("float" for f16/bf16).
std::string cudaComputeType(DType t);
/// A C literal of `v` in the compute type of `t` (exact for floats; inf/nan as bit casts).
std::string cudaLiteral(double v, DType t);

} // namespace dlc::codegen
