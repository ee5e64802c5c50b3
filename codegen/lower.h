// Lowering: a placed, fused, planned graph with static shapes -> rt::Program. It reads what the
// passes left (ir/annotations/) and decides nothing they decided.
//
// Before: every value has a static shape; nodes carry devices (unset means gpu:0), `fuse.group`
// annotations (unannotated nodes are groups of one) and the memory plan (`mem.offset`,
// `mem.arena`, `mem.inputs`, `mem.outputs`: ir/annotations/memory_plan.h); lowering refuses a
// graph without the plan.
//
//  1. Groups are collected in the order plan-memory used (collectGroups). View ops (Reshape,
//     Flatten, Squeeze, Unsqueeze, Identity, inference Dropout) that form a group of their own
//     launch nothing: their output aliases their input's buffer. So does a `copy` node
//     (insert-copies) on either device: every value lives in the device arena, and the runtime
//     already stages the inputs and outputs of each CPU host step between the arena and the
//     host, so the transfer a copy marks happens there; the node itself moves nothing.
//  2. Buffers: every value lives where the plan put it; constants read by GPU code go into the
//     constant pool once; a group's scratch goes above the planned arena. A graph output whose
//     value lives elsewhere than `mem.outputs` says (an input, a constant) is copied there last.
//  3. Each GPU group goes to its family emitter (codegen/emitters.h); each CPU node becomes a
//     host step evaluated by the reference backend.
//  4. Kernels are split into a few NVRTC programs compiled in parallel (cached on disk), each
//     starting with the prelude helpers its kernels name.
//
// The same graph always yields byte-identical sources (names come from node order).
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "codegen/nvrtc.h"
#include "ir/graph.h"
#include "runtime/program.h"

namespace dlc::codegen {

/// NVRTC's progress through a program's kernels, for a display. Modules compile whole, so the
/// kernel count advances by a module's kernels. The first report (nothing done yet) comes
/// before compiling starts; the last has kernelsDone == kernelsTotal.
struct KernelProgress {
  size_t kernelsDone = 0, kernelsTotal = 0;
  size_t modulesDone = 0, modulesTotal = 0;
  double elapsed = 0;         // seconds since compiling started
  double slowestSeconds = 0;  // the slowest module NVRTC compiled so far (cache hits excluded)
  std::string slowestKernels; // its kernels: "conv_3_relu" or "conv_3_relu and 4 more"
};

struct LowerOptions {
  EmitOptions emit;
  NvrtcOptions nvrtc;
  /// Compile with NVRTC (off: the Program has sources only, for `--emit cuda`).
  bool compile = true;
  /// Parallel NVRTC jobs (0: the number of hardware threads).
  int jobs = 0;
  /// Hears how compiling goes (optional; called from NVRTC's worker threads, one at a time).
  std::function<void(const KernelProgress &)> progress;
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
