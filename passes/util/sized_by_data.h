// expand-ops' rewrites of ops whose output size is the data's (passes/expand_ops.cc): each
// becomes fixed-size work the GPU has kernels for, a count, and a Slice whose end is the
// count. The Slice's shape is then known only when the count is: a shape point, where a GPU
// session reads the count back and compiles what follows for it (runtime/jit/segments.h).
//
//  * NonZero: the flattened input's non-zero positions compacted by a scan (CumSum) and a
//    ScatterElements into a buffer of the input's size (plus one slot where the zeros go),
//    the first `count` taken and turned back into coordinates (Div, Mod).
//  * Compress: the condition's true positions compacted the same way, then a Gather.
//  * Unique without an axis: the flattened input sorted (TopK, stable: equal values keep
//    their order), the start of each run of equal values marked, and each run's value, first
//    index and length scattered to its group's slot; not sorted (sorted=0), the groups then
//    reordered by their first index after the point. TopK sorts with one thread per line:
//    quadratic in the input's length, meant for the small inputs Unique sees. With an axis
//    (sorted): the slices compared pairwise, lexicographically, each slice's group the number
//    of distinct slices below it; quadratic in the slices too.
//  * NonMaxSuppression: the per-class selection in one kernel (the nms_per_class op), the
//    selected (batch, class, box) triples compacted as NonZero's positions are.
#pragma once

#include "passes/util/more_expansions.h"

namespace dlc {

/// The expansion of `op` among those above, or nullptr.
const OpExpansion *findSizedByDataExpansion(Op op);

} // namespace dlc
