// The value ranges calibration measured, as `dlc quantize` leaves them in the graph for the
// quantization passes (insert-fake-quant) to read:
//
//     graph @g(%x: f32[1,8]) -> (y: f32[1,8]) attributes {quant.input_ranges = [-1.0, 1.0]} {
//       %h = matmul(%x, %w) {quant.ranges = [-3.5, 4.25]} : f32[1,8]
//       %y = relu(%h) {quant.ranges = [0.0, 4.25]} : f32[1,8]
//       return %y
//     }
//
//  * `quant.ranges` (node, floats, two per output: the smallest and largest value the output
//    is expected to take; NaN twice for an output that was not measured).
//  * `quant.input_ranges` (graph, floats, two per graph input, NaN twice when not measured).
//
// Constants carry no range: their data is their range. A node without the annotation was not
// measured.
#pragma once

#include <string_view>
#include <unordered_map>

#include "ir/graph.h"
#include "ir/status.h"

namespace dlc {

inline constexpr std::string_view kQuantRangesAttr = "quant.ranges";
inline constexpr std::string_view kQuantInputRangesAttr = "quant.input_ranges";
/// Left by insert-fake-quant on a join (Add/Concat/Mul) whose input ranges differ by more than
/// its range-ratio (string: the ranges, the ratio and what was done), for the quantization
/// report.
inline constexpr std::string_view kQuantRangeMismatchAttr = "quant.range_mismatch";

/// [lo, hi], lo <= hi, both finite.
struct ValueRange {
  float lo = 0;
  float hi = 0;
  bool operator==(const ValueRange &o) const { return lo == o.lo && hi == o.hi; }
};

/// Measured ranges by value (graph inputs and node outputs).
using RangeMap = std::unordered_map<const Value *, ValueRange>;

/// Writes `ranges` into `g` as the annotations above, replacing any there were: nodes with no
/// measured output lose theirs.
void writeRanges(Graph &g, const RangeMap &ranges);

/// Reads them back. Errors naming the node (or the graph annotation) for a wrong kind or
/// count, a NaN paired with a number, lo > hi, or an infinite bound.
Expected<RangeMap> readRanges(const Graph &g);

} // namespace dlc
