// Lowering: a placed, fused graph with static shapes -> rt::Program.
//
// Before: every value has a static shape; nodes carry devices (unset means gpu:0) and
// `fuse.group` annotations (unannotated nodes are groups of one).
//
//  1. Groups are collected in node order (collectGroups). View ops (Reshape, Flatten, Squeeze,
//     Unsqueeze, Identity, inference Dropout) that form a group of their own launch nothing:
//     their output aliases their input's buffer.
//  2. Buffers: graph inputs and every value that leaves its group get a 256-byte aligned slot in
//     the arena (passes/plan_memory.h reuses memory whose value is dead); constants read by GPU
//     code go into the constant pool once. Graph outputs that are inputs, constants or another
//     output's value get a slot of their own and a copy.
//  3. Each GPU group goes to its family emitter (codegen/emitters.h); each CPU node becomes a
//     host step evaluated by the reference backend.
//  4. Kernels are split into a few NVRTC programs compiled in parallel (cached on disk).
//
// The same graph always yields byte-identical sources (names come from node order).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "codegen/nvrtc.h"
#include "ir/graph.h"
#include "runtime/program.h"

namespace dlc::codegen {

struct LowerOptions {
  EmitOptions emit;
  NvrtcOptions nvrtc;
  /// Compile with NVRTC (off: the Program has sources only, for `--emit cuda`).
  bool compile = true;
  /// Parallel NVRTC jobs (0: the number of hardware threads).
  int jobs = 0;
  /// Also make every value a kernel writes a program output, named after the value (for
  /// `dlc run --verify`); memory is then never reused.
  bool exposeIntermediates = false;
};

/// The groups of `g` in node order (see step 1 above). Fails, naming the nodes, when a group has
/// more than one non-elementwise node or mixes devices.
Expected<std::vector<FusedGroup>> collectGroups(const Graph &g);

Expected<rt::Program> lowerToProgram(const Graph &g, const LowerOptions &opts);

/// Lowering summary for `dlc compile` and logs: kernels, modules, arena and constant bytes.
std::string describeProgram(const rt::Program &p);

} // namespace dlc::codegen
