// What role a node can play in a fused group (GPU_CONTEXT.md "Fused groups"), shared by the
// fuse pass, plan-memory and anyone who needs to read groups back.
#pragma once

#include <string>

#include "ir/graph.h"

namespace dlc::passes {

enum class FusionRole : uint8_t {
  kElementwise, // its fusion kind is elementwise or broadcast: codegen has its CUDA expression
  kAnchor,      // a group may be built around it
  kOpaque,      // always a group of one
};

struct FusionClass {
  FusionRole role = FusionRole::kOpaque;
  /// Reductions (Reduce*, Softmax, LogSoftmax, LayerNormalization) take a prologue.
  bool takesPrologue = false;
  /// For opaque nodes: more about why ("a view: reshape"), or "".
  std::string why;
};

/// The node's role. Anchors: the table's out-fusable ops (MatMul, Gemm, Conv, ...), its
/// reductions except ArgMax/ArgMin/Hardmax, LayerNormalization, pooling, its injective ops
/// except views, and Resize. A node with a used output past the first is opaque whatever its op.
FusionClass classifyForFusion(const Node &n);

/// Reshape, Flatten, Squeeze, Unsqueeze, Identity: ops whose output is their input 0's data.
bool isViewOp(Op op);

/// A node that, as a group of its own, only reinterprets its input 0's buffer: a view op, or a
/// Dropout in inference (training_mode absent or constant false) whose mask is unused. One
/// predicate for plan-memory (which aliases the buffers) and codegen's lowering (which then
/// launches nothing).
bool isViewNode(const Node &n);

} // namespace dlc::passes
