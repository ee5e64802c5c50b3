// Einsum as MatMul, Transpose, Reshape, ReduceSum and Mul (expand-ops): repeated labels in one
// operand take the diagonal (a Mul by an identity matrix, then a ReduceSum), labels no one else
// needs are summed out, then operands contract pairwise, left to right, each pair one batched
// MatMul over [shared kept labels, left-only, contracted] x [.., contracted, right-only], and
// the result is transposed to the output's order. Without a GEMM for the type (f64) a pair
// contracts as a broadcast Mul and a ReduceSum instead.
#pragma once

#include "ir/graph.h"
#include "ir/status.h"

namespace dlc {

/// Why Einsum node `n` cannot be expanded (a dynamic shape, a type other than
/// f32/f16/bf16/f64, sizes that would broadcast, an f64 product above 4M elements); ok when it
/// can. f64 has no GEMM kernel: its pairs contract as a broadcast Mul and a ReduceSum.
Status checkEinsumExpandable(const Node &n);

/// The value computing `n`, built in front of it; `n` itself is left for the caller to replace.
Expected<Value *> expandEinsum(Graph &g, Node *n);

} // namespace dlc
