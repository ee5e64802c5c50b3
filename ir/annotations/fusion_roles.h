// What role a node can play in a fused group: part of the `fuse.group` contract
// (fused_groups.h) between the fuse pass, which forms groups, and those who read them back
// (plan-memory, codegen's lowering).
//
// A fused group is one kernel: at most one anchor (a GEMM, convolution, reduction, pooling or
// data-movement node that decides the kernel's shape) and any number of elementwise members
// before it (a prologue, reductions only) or after it (an epilogue), or only elementwise
// members (a chain). Views (reshape & co.) and opaque nodes are groups of one.
#pragma once

#include <string>

#include "ir/graph.h"

namespace dlc {

enum class FusionRole : uint8_t {
  kElementwise, // an elementwise or broadcast op, or a per-tensor/per-axis Q/DQ (isElementwiseNode)
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

/// The node's role. Elementwise: the table's elementwise and broadcast ops, and QuantizeLinear /
/// DequantizeLinear per tensor or per axis (isElementwiseNode). Anchors: the table's
/// out-fusable ops (MatMul, Gemm, Conv, ...), its reductions except ArgMax/ArgMin/Hardmax,
/// LayerNormalization, pooling, Attention, its injective ops except views, and Resize. A node with
/// a used output past the first is opaque whatever its op.
FusionClass classifyForFusion(const Node &n);

/// The table's elementwise and broadcast ops: a fused group takes them as members, and the GPU
/// backend has an expression for each (codegen checks that it has one for every such op).
bool isElementwiseOp(Op op);

/// isElementwiseOp, and also QuantizeLinear / DequantizeLinear whose scale and zero point apply
/// per tensor or per axis (ir/quant_layout.h; static shapes, block_size 0). The table keeps
/// those two ops opaque, so that passes which move elementwise ops by their fusion kind
/// (transpose sinking) never move a per-axis Q/DQ away from its axis; only fusion and codegen
/// treat such a node as elementwise, reading per-axis parameters as QdqLayout::paramView()
/// says.
bool isElementwiseNode(const Node &n);

/// Reshape, Flatten, Squeeze, Unsqueeze, Identity, Copy: ops whose output is their input 0's
/// data. A Copy (insert-copies) moves a value between devices, but in dlc's memory model every
/// value lives in the one device arena and the runtime stages a CPU step's inputs and outputs
/// itself, so the copy's output is its input's buffer too.
bool isViewOp(Op op);

/// A node that, as a group of its own, only reinterprets its input 0's buffer: a view op, or a
/// Dropout in inference (training_mode absent or constant false) whose mask is unused. One
/// predicate for plan-memory (which aliases the buffers) and codegen's lowering (which then
/// launches nothing).
bool isViewNode(const Node &n);

} // namespace dlc
