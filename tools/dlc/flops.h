// FLOP estimate of a shape-inferred graph (convolutions and matrix products).
#pragma once

#include <map>
#include <string>

#include "ir/graph.h"

namespace dlc::tool {

struct FlopReport {
  double total = 0;
  std::map<std::string, double> byOp;         // ONNX op type -> FLOPs
  std::map<std::string, int64_t> assumedDims; // symbolic dims and the sizes used
};

/// Counts 2 FLOPs per multiply-accumulate in Conv, ConvTranspose, ConvInteger, QLinearConv,
/// MatMul, MatMulInteger, QLinearMatMul and Gemm. Symbolic dims take the size in `dims`, or 1.
FlopReport estimateFlops(const Graph &g, const std::map<std::string, int64_t> &dims);

} // namespace dlc::tool
