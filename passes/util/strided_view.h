// Strided views of a value's buffer, and how one moves up through the ops that only move data.
//
// A kernel that reads an operand through arbitrary element strides and an offset (the
// attention kernel does) can read it straight out of the buffer the data came from, so the
// Transposes, Gathers and Reshapes that made it need not run. viewThrough answers, for one
// such op, which view of its input's buffer holds the elements a view of its output's buffer
// names. Example, torch's multi-head attention: the packed projection P [S, B, 3, H * D] goes
// through Unsqueeze, Transpose, Squeeze to [3, S, B, H * D], then Gather(index 1) and Reshape
// give K; K's elements are P's at offset H * D with the strides of P's S, B and H axes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace dlc {

/// Elements `offset + sum_j i_j * strides[j]` of a row-major buffer, for i_j < sizes[j].
struct StridedView {
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;

  /// "[2, 12, 197, 64] at [2304, 64, 4608, 1] + 768", for decision logs.
  std::string str() const;
};

/// The row-major view of a whole buffer of static shape `shape`.
StridedView contiguousView(const std::vector<int64_t> &shape);

/// The view of the buffer of `n`'s data input (input 0) that holds the elements `view` names
/// in the buffer of `n`'s output, when `n` only moves data: Reshape, Flatten, Squeeze,
/// Unsqueeze and Identity keep it (one buffer); Transpose permutes it; Gather with a
/// one-element constant index selects from it. nullopt for any other op, shapes that are not
/// static, and views that cannot be written over the input: an axis of the view whose steps
/// would carry from one axis of the output into the next (a merged axis the transpose tears
/// apart). Axes of size 1 get stride 0.
std::optional<StridedView> viewThrough(const Node &n, const StridedView &view);

/// `view` over the buffer of transpose(x, perm) (shape `out`) as a view of x's buffer.
std::optional<StridedView> viewThroughTranspose(const std::vector<int64_t> &out,
                                                const std::vector<int64_t> &perm,
                                                const StridedView &view);

/// `view` over a buffer of shape `part` as a view of a buffer of shape `whole`, when `part`
/// is the block of `whole` from `start` (one per axis; part's sizes fit inside); nullopt
/// when a view axis would carry across part's axes. Merging three projections into one
/// wider one reads each old result as a block of the new (fuse-attention).
std::optional<StridedView> viewInBlock(const std::vector<int64_t> &part, const StridedView &view,
                                       const std::vector<int64_t> &whole,
                                       const std::vector<int64_t> &start);

} // namespace dlc
