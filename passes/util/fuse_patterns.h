// The normalisation patterns exporters write in pieces, rewritten into one op each (the first
// step of the `fuse` pass; see passes/fuse.cc).
//
//   LayerNormalization  mean = reduce_mean(x, axes); d = sub(x, mean)
//                       var = reduce_mean(pow(d, 2) | mul(d, d), axes)
//                       y = div(d, sqrt(add(var, eps)))  [mul(y, gamma)]  [add(_, beta)]
//                       axes: the trailing axes of x, keepdims=1
//   Gelu                e = erf(div(x, 1.41421) | mul(x, 0.707107)); b = add(e, 1)
//                       y = mul(mul(x, b), 0.5) | mul(mul(x, 0.5), b) | mul(x, mul(b, 0.5))
//   Softmax             e = exp(sub(x, reduce_max(x, [-1]))); y = div(e, reduce_sum(e, [-1]))
//
// Operands of add and mul match in either order; scalar constants match within a relative
// 1e-4 (exporters round sqrt(2)). Every value inside a pattern must be used only inside it (and
// not be a graph output), and all its nodes must be on one device, which the new node takes.
// The new node takes the name and output value name of the pattern's last node.
#pragma once

#include "ir/graph.h"
#include "passes/pass.h"

namespace dlc::passes {

/// Applies the three rewrites everywhere; returns how many nodes were created. Partial
/// matches that are refused are logged through options.debugf with the reason.
int rewriteNormalizationPatterns(Graph &g, const PassOptions &options);

} // namespace dlc::passes
