// Buffer planning: where every value that needs memory lives in one device arena.
//
// planMemory is what codegen's lowering calls; the `plan-memory` pass (passes/plan_memory.cc)
// runs it and writes the result into the IR as annotations (`mem.offset`, one int per node
// output, -1 for none) so that dumps show it.
//
// Rules:
//  * Steps are the fused groups (ir/annotations/fused_groups.h) in topological order; `steps` below
//  is
//    that order, and kernels must run in it (after fuse the groups are contiguous and this is
//    the node order).
//  * A value gets a buffer when it is a graph input, a graph output, a node output used outside
//    its group, or a node output nobody uses (its kernel may still write it). Values used only
//    inside their group (fused intermediates) get none. Constants are not in the arena.
//  * A view (reshape, flatten, squeeze, unsqueeze, identity, dropout in inference) that forms a
//    group of its own aliases its input: same offset, and the input's buffer lives until the
//    view's last use.
//  * A value lives from the step that writes it to the last step that reads it, both
//    included (a kernel reads its inputs while it writes its outputs). Graph inputs live for
//    the whole run (they are staged into the arena before it); graph outputs live from their
//    step to the end. A graph output that is a graph input or a constant, or a view of one,
//    gets an extra buffer with `copyFrom` set (MemoryPlan::outputBuffers points at it): the
//    runtime copies it there at the end. Steps run 0..S-1; step S is that final copy-out.
//  * Offsets are multiples of 256 bytes. Buffers are placed greedily, largest first, each in
//    the smallest gap left by the buffers already placed whose lifetimes overlap its own
//    (best fit), else above them. Without reuse (`plan-memory{reuse=false}`, for
//    `dlc run --verify`, which reads every intermediate after the run) each buffer goes above
//    all the others.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/annotations/fused_groups.h"
#include "ir/annotations/memory_plan.h"
#include "ir/graph.h"
#include "ir/status.h"

namespace dlc {

/// One buffer in the arena.
struct ArenaBuffer {
  /// The value that owns the buffer (views of it share it).
  const Value *value = nullptr;
  uint64_t offset = 0;
  /// The value's size (numElements * dtype size); the slot is rounded up to kArenaAlignment.
  uint64_t bytes = 0;
  /// Lifetime in steps, both ends included.
  int first = 0, last = 0;
  /// Set on the extra buffer of a graph output that returns a graph input or a constant
  /// (possibly through views): the runtime copies that value here at the end of the run.
  const Value *copyFrom = nullptr;
};

/// Where one value's data is.
struct Slot {
  /// Index into MemoryPlan::buffers, or -1 when the value has no buffer of its own: a
  /// constant, a view of a constant, or a value internal to a fused group.
  int buffer = -1;
  /// Set for views: the value whose memory this one reuses (a buffer owner or a constant).
  const Value *aliasOf = nullptr;
};

struct MemoryPlan {
  uint64_t arenaBytes = 0;
  std::vector<ArenaBuffer> buffers;
  /// Every graph input and every present node output.
  std::unordered_map<const Value *, Slot> slots;
  /// Per graph output (Graph::outputs() order): the buffer that holds it at the end.
  std::vector<int> outputBuffers;
  /// The order the groups run in; Buffer lifetimes index it.
  std::vector<NodeGroup> steps;

  /// The value's arena offset (a view's is its root's), or -1 when it has no place there.
  int64_t offsetOf(const Value *v) const;
  /// Sum of the aligned sizes of all buffers: the arena size without any reuse.
  uint64_t unsharedBytes() const;
  /// `arena N bytes for M values (sum of intermediates S bytes, X% reuse)`.
  std::string summary() const;

  /// The plan as the annotations state it (ir/annotations/memory_plan.h).
  ArenaLayout layout() const;
};

/// Plans the arena for `g` (`reuse`: let buffers whose lifetimes do not overlap share memory).
/// Errors: a value that needs a buffer has no static type (naming it and its producer), or the
/// fused groups are malformed (see orderedGroups).
Expected<MemoryPlan> planMemory(const Graph &g, bool reuse = true);

} // namespace dlc
