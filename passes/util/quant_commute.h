// Moving quantization across ops that commute with it (insert-fake-quant's last step), so that
// int8 data flows through them, as TensorRT propagates Q/DQ:
//
//     x -> op -> Q(s) -> DQ(s)      becomes      x -> Q(s) -> op -> DQ(s)
//
// for op in MaxPool (max commutes with a monotone Q), Reshape, Transpose, Flatten, Squeeze,
// Unsqueeze (they move elements, never change them) and Concat (every input quantized with the
// output's scale: equal scales, or made equal by requantizing an input to it). The result is
// bit for bit the same. Then a Q reading a DQ with the same parameters (scale, zero point,
// axis) is the identity and goes, so DQ(s) -> op -> Q(s) -> DQ(s) ends as op on int8 -> DQ(s).
// A move is refused, with the reason under --debug-only, when the op's output has another
// reader or is a graph output (it is needed in float), when its data input is not float, when
// MaxPool's Indices are read, and for per-axis Q/DQ whose axis does not follow the op: a
// Transpose maps it, MaxPool and a Concat along another axis keep it, a Reshape, Flatten,
// Squeeze or Unsqueeze refuse it. Repeated until nothing moves, so a Q climbs a chain
// (Reshape after MaxPool) up to the producer's epilogue.
#pragma once

#include "ir/graph.h"
#include "passes/pass.h"

namespace dlc {

/// The rewrite above over the whole graph; returns whether it changed it.
bool commuteQuantization(Graph &g, const PassOptions &options);

} // namespace dlc
