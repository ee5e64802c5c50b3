// The question place-devices asks about the GPU, answered by whoever knows the GPU backend.
//
// passes/ cannot ask codegen whether a node has a GPU kernel (DESIGN.md's folder table: passes
// include only ir/), so the answer comes in as a function: the driver that builds the GPU
// pipeline (runtime/jit/compile.cc) sets PipelineOptions::gpuSupport, and runPipeline hands it
// to every pass as PassOptions::gpuSupport:
//
// clang-format off
//     PipelineOptions opts;
//     opts.gpuSupport = [](const Node &n, std::string *why) { return codegen::gpuSupports(n, why); };
//     runPipeline(g, pipeline, opts);
// clang-format on
//
// Left empty (plain `dlc opt`), place-devices treats the GPU as able to run every node except
// the ops named in its `gpu-unsupported` option: a fake device, so placement can be tested
// without a GPU.
#pragma once

#include <functional>
#include <string>

namespace dlc {

class Node;

/// Whether the GPU backend can run `node` (its op, dtypes, attributes, static shapes). On
/// false it sets *why to one line a user can act on ("Conv: 3-D convolution has no GPU kernel
/// yet"). Called only for nodes not yet placed; must not modify anything.
using DeviceSupportFn = std::function<bool(const Node &node, std::string *why)>;

} // namespace dlc
