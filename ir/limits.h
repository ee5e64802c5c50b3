// Resource limits on what a model may make dlc do. A model is input from outside: it may
// declare a tensor of 2^62 elements, compute one with a Resize by 1e12, hold a million nodes or
// loop forever. Each limit is checked where the thing is first known, before anything is
// allocated, and the error names the value (or node) and its size and the flag that raises it.
//
//   limit               default                       checked by
//   maxTensorBytes      the machine's physical memory shape inference (every inferred output
//                       (--max-tensor-bytes)          type, ir/op.cc inferNode), infer-shapes
//                                                     (declared graph inputs), the reference
//                                                     backend's allocations (eval::newTensor),
//                                                     random inputs
//   maxNodes            10,000,000 (--max-nodes)      the ONNX and TensorFlow importers and the
//                                                     text parser, subgraphs counted
//   maxLoopIterations   1,000,000                     the reference backend's Loop
//                       (--max-loop-iterations)
//
// Graph nesting (If/Loop/Scan bodies) has a fixed limit: ir/parser.h's kMaxGraphNesting for
// text, protobuf's recursion limit of 100 for ONNX.
//
// The limits are process-wide (one set per `dlc` command or host process), set before work
// starts and read from any thread.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ir/dtype.h"
#include "ir/status.h"

namespace dlc {

struct Limits {
  int64_t maxTensorBytes = 0; // 0 in setLimits: the machine's physical memory
  int64_t maxNodes = 10'000'000;
  int64_t maxLoopIterations = 1'000'000;
};

/// The limits in force.
Limits limits();
/// Replaces the limits (0 for maxTensorBytes: the default). Values must be positive.
void setLimits(const Limits &l);
/// The machine's physical memory in bytes (sysconf), or 2^40 when it cannot be read.
int64_t physicalMemoryBytes();

/// Error unless a `dtype` tensor of `shape` (every dim known and non-negative) fits in
/// maxTensorBytes: "WHAT would be f32[...] (N bytes), past the limit of L bytes per tensor
/// (--max-tensor-bytes)". Overflow of the element count or byte size is refused too.
Status checkTensorBytes(DType dtype, const std::vector<int64_t> &shape, std::string_view what);

/// Error unless a graph of `nodes` nodes (subgraphs counted) is within maxNodes; `what` names
/// the model.
Status checkNodeCount(int64_t nodes, std::string_view what);

} // namespace dlc
