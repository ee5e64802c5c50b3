// The op families. Each returns the OpDef rows of its family file; ir/op.cc gathers them
// into the table and checks that every op in ir/ops.def has exactly one row.
#pragma once

#include <vector>

#include "ir/op.h"

namespace dlc::ops {

std::vector<OpDef> elementwiseOps(); // unary/binary math, activations, comparisons, logic
std::vector<OpDef> reductionOps();   // Reduce*, ArgMax/Min, softmax family, TopK, CumSum
std::vector<OpDef> nnOps();          // conv, pooling, normalisation, resize, losses
std::vector<OpDef> linalgOps();      // MatMul, Gemm, Einsum, Det, integer/quantized matmul
OpDef attentionRow();                // attention.cc: Attention, one of linalgOps
std::vector<OpDef> tensorOps();      // shape and data-movement ops
std::vector<OpDef> quantOps();       // Quantize/Dequantize, DynamicQuantizeLinear
std::vector<OpDef> miscOps();        // RNNs, random, signal, detection, others
std::vector<OpDef> controlFlowOps(); // If, Loop, Scan: ops with body graphs

} // namespace dlc::ops
