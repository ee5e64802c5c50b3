// expand-ops' rewrites of control flow (passes/expand_ops.cc): If, Loop and Scan whose path
// through their bodies is known when the graph is compiled are inlined, so that the bodies run
// as the GPU kernels of any other nodes and fuse with their neighbours.
//
//  * If whose condition is a constant: the branch taken, inlined. A condition computed from
//    the data is a shape point first (runtime/jit/segments.h): a GPU session reads it back and
//    compiles the rest of the model with it bound, where it is a constant.
//  * Scan whose sequence length is static, 1 to `max-steps`: the body inlined once per step,
//    each scan input's element taken by a Gather at the step's index (from the end when its
//    direction is reverse), each scan output's elements stacked by Unsqueeze and Concat along
//    its axis (in reverse order when its direction says so).
//  * Loop whose trip count M is a constant, 1 to `max-steps`, whose condition input is absent
//    or a constant true, and whose body returns its condition unchanged (the condition input,
//    through Identity or not, or a constant true): the body inlined M times, the iteration
//    number a constant in each copy, the scan outputs stacked along a new first axis. A loop
//    whose body computes its condition stays: how many times it runs is the data's.
//
// Control flow nested in an inlined body is expanded in turn by the same rules.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "ir/status.h"

namespace dlc {

/// If, Loop or Scan.
bool isControlFlow(Op op);

/// Whether Loop `n`'s body returns its condition unchanged: given its trip count and condition
/// input, the loop's path is then known (segments read them back when they are the data's).
bool loopRunsItsTripCount(const Node &n);

/// Ok when `n` (If, Loop or Scan) can be inlined with at most `maxSteps` iterations; else why
/// not, for expand-ops' decision log.
Status checkControlFlow(const Node &n, int64_t maxSteps);

/// Inlines `n` in front of it; returns one replacement per output of `n` (nullptr where `n`
/// has none). `checkControlFlow` must have accepted it.
Expected<std::vector<Value *>> expandControlFlow(Graph &g, Node *n, int64_t maxSteps);

} // namespace dlc
