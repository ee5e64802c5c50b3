// The arena layout as `plan-memory` leaves it in the graph: the contract between that pass and
// codegen's lowering, which reads it back and never plans memory itself.
//
//     graph @g(%x: f32[4,8]) -> (y: f32[4,8], x: f32[4,8])
//         attributes {mem.arena = 512, mem.inputs = [0], mem.outputs = [256, 512]} {
//       %h = matmul(%x, %w) {fuse.group = 0, mem.offset = [-1]} : f32[4,8] @gpu:0
//       %y = relu(%h) {fuse.group = 0, mem.offset = [256]} : f32[4,8] @gpu:0
//       return %y, %x
//     }
//
//  * `mem.offset` (node, ints, one per output): the output's offset in the arena, a view's
//    being its root's; -1 when the output has no place there (internal to its fused group,
//    absent, or a view of a constant).
//  * `mem.arena` (graph, int): the arena's size in bytes.
//  * `mem.inputs` (graph, ints, one per graph input): where the input is staged before a run.
//  * `mem.outputs` (graph, ints, one per graph output): where the output is at the end of the
//    run. Where that is not the value's own place (an output that returns a graph input or a
//    constant, or a value returned twice), the run ends by copying the value there.
//
// Every offset is a multiple of kArenaAlignment, and a value's bytes lie inside the arena.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "ir/status.h"

namespace dlc {

inline constexpr std::string_view kMemOffsetAttr = "mem.offset";
inline constexpr std::string_view kMemArenaAttr = "mem.arena";
inline constexpr std::string_view kMemInputsAttr = "mem.inputs";
inline constexpr std::string_view kMemOutputsAttr = "mem.outputs";
inline constexpr uint64_t kArenaAlignment = 256;

/// The annotations above, gathered.
struct ArenaLayout {
  uint64_t arenaBytes = 0;
  /// Graph inputs and node outputs that have a place in the arena (views: their root's).
  std::unordered_map<const Value *, uint64_t> offsets;
  /// Per graph output, in Graph::outputs() order.
  std::vector<uint64_t> outputOffsets;

  /// The value's offset, or -1 when it has no place in the arena.
  int64_t offsetOf(const Value *v) const;
};

/// Writes `layout` into `g` as annotations; returns whether any annotation changed.
bool writeArenaLayout(Graph &g, const ArenaLayout &layout);

/// Reads the annotations back. Errors (naming the node, or the graph annotation) when they are
/// missing ("run plan-memory first"), of the wrong kind or count, misaligned, or outside the
/// arena.
Expected<ArenaLayout> readArenaLayout(const Graph &g);

} // namespace dlc
