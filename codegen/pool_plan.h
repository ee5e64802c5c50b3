// The window arithmetic of the pooling kernels (pool.cc), as index expressions the kernel
// prints and the unit tests evaluate on the host against the reference pooling.
#pragma once

#include <vector>

#include "codegen/index_expr.h"
#include "ir/graph.h"
#include "ir/status.h"

namespace dlc::codegen {

/// One spatial axis of a windowed pool, auto_pad resolved.
struct PoolAxis {
  int64_t in = 1, out = 1, kernel = 1, stride = 1, dilation = 1, padBegin = 0, padEnd = 0;

  /// The input index that tap k of output o reads (outside [0, in) in the padding).
  IndexExpr tap(const IndexExpr &o, const IndexExpr &k) const;
  /// How many taps of output o lie in the padded extent [-padBegin, in + padEnd): the divisor
  /// of AveragePool with count_include_pad (taps a ceil_mode window adds past the end padding
  /// do not count, as in the reference, onnxruntime and PyTorch).
  IndexExpr paddedCount(const IndexExpr &o) const;
};

/// The spatial axes of a MaxPool, AveragePool or LpPool node with static shapes.
Expected<std::vector<PoolAxis>> poolAxes(const Node &node);

} // namespace dlc::codegen
