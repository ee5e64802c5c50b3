// Index plans of the data-movement ops: for each output element, which input element (or
// which literal) it copies. A plan is pure host data built from a node with static shapes; the
// data-movement family prints it as a CUDA kernel (data_movement.cc), and the unit tests
// evaluate it on the host against the reference op (evalMove / evalSplit). Building a plan is
// also how the family decides whether it supports a node: a node it cannot plan is refused
// with the planner's reason.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/index_expr.h"
#include "ir/graph.h"
#include "ir/status.h"

namespace dlc::codegen {

/// One candidate for an output element: when `when` holds (over the coordinates), copy
/// element `offset` of buffer `buffer`, or the scalar `literal` when buffer is -1.
struct MoveSource {
  IndexExpr when = 1;
  int buffer = -1;
  IndexExpr offset = 0;
  Tensor literal; // a scalar of the output dtype
};

/// A gather-style kernel: iterate over the output, seen as the row-major shape `iter` with
/// coordinates c0, c1, ... (and its flat index i); evaluate `lets` in order; take the first
/// source whose condition holds (the last one's always does).
struct MovePlan {
  std::vector<int64_t> iter;
  /// Buffers the kernel reads, in parameter order: named in0, in1, ... in IndexExpr loads.
  std::vector<const Value *> buffers;
  std::vector<std::pair<std::string, IndexExpr>> lets;
  std::vector<MoveSource> sources;

  /// Coordinate d of the iteration shape: the variable `c<d>`, or 0 when that dim is 1.
  IndexExpr coord(size_t d) const;
  /// The buffer index of `v` (added on first use).
  int buffer(const Value *v);
};

/// Split: iterate over the input (coordinates c0, ... of its shape, flat index i); the element
/// goes to the first target whose condition holds, at `offset` of that output.
struct SplitTarget {
  IndexExpr when = 1;
  const Value *output = nullptr;
  IndexExpr offset = 0;
};
struct SplitPlan {
  std::vector<int64_t> iter;
  std::vector<SplitTarget> targets;
};

/// Whether the data-movement family plans this op (Transpose, Concat, Slice, Gather, ...).
bool isMoveOp(Op op);

/// The plan of a node whose op isMoveOp (not Split, Resize or Range). Errors say why the node
/// cannot run as a data-movement kernel ("Slice: input 'starts' is not a constant").
Expected<MovePlan> planMove(const Node &node);
Expected<SplitPlan> planSplit(const Node &node);

/// Host evaluation, for tests: the source that output element `flat` takes, and its offset.
/// `load(buffer, offset)` reads integer elements of buffer `buffer` (gather indices).
struct MovePick {
  const MoveSource *source = nullptr;
  int64_t offset = 0;
};
MovePick evalMove(const MovePlan &plan, int64_t flat,
                  const std::function<int64_t(int buffer, int64_t offset)> &load = nullptr);
/// The target and output offset of input element `flat`; target nullptr when none holds.
std::pair<const SplitTarget *, int64_t> evalSplit(const SplitPlan &plan, int64_t flat);

/// A transpose of `in` by `perm` with size-1 axes dropped and input axes that stay adjacent in
/// the output merged: the reduced input dims and permutation (same elements, same order).
std::pair<std::vector<int64_t>, std::vector<int64_t>>
canonicalTranspose(const std::vector<int64_t> &in, const std::vector<int64_t> &perm);

/// Binds c0.. (and i) for flat index `flat` of the row-major shape `iter`.
IndexExpr::Env coordinateEnv(const std::vector<int64_t> &iter, int64_t flat);

} // namespace dlc::codegen
