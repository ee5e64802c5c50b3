// From a model graph (symbolic dims allowed) to a GPU Program for concrete input shapes: the
// compiler driver of every GPU path (`dlc run`, Model/Session on the GPU, `dlc compile`,
// `--verify`).
//
//   1. specializeGraph: a clone whose graph inputs' symbolic dims take the bound sizes;
//   2. the GPU pipeline (runtime/jit/pipelines.h): shape inference with the sizes bound,
//      BatchNormalization folding, folding of what became constant, placement (nodes without
//      a GPU kernel fall back to the CPU with a warning, unless strict), fusion, memory
//      planning;
//   3. codegen::lowerToProgram, which reads the groups and the memory plan the passes left.
#pragma once

#include <map>
#include <ostream>
#include <string>

#include "codegen/lower.h"
#include "passes/pass_manager.h"
#include "runtime/program.h"

namespace dlc::jit {

struct JitOptions {
  /// Lowering options; `lower.exposeIntermediates` (--verify) also turns off memory reuse.
  codegen::LowerOptions lower;
  /// Refuse CPU fallback: a node without a GPU kernel is an error naming it.
  bool strictPlacement = false;
  /// Mixed precision (GpuPipelineOptions::precision, keepFp32).
  std::string precision;
  std::string keepFp32;
  /// GpuPipelineOptions::fuseAttention.
  bool fuseAttention = true;
  /// Shape inputs bound to this run's values (see shapeInputs): each graph input named here
  /// is read as a constant of that value, so the shapes it gives become static. The program
  /// is then valid for these values only; callers key it by them.
  std::map<std::string, Tensor> shapeValues;
  /// Instrumentation of the GPU pipeline (print IR after passes, debug logs, ...).
  PipelineOptions pipeline;
};

/// Binds `dims` (symbol -> size) into the inputs of a clone of `model` and specialises it.
/// Every input dim must end up known: the error names the input and the unbound symbol.
Expected<std::unique_ptr<Graph>> specializeGraph(const Graph &model,
                                                 const std::map<std::string, int64_t> &dims);

/// The shape inputs of `model` for these dims (TensorRT calls them shape tensors): numeric or
/// bool graph inputs with at most 64 elements and rank <= 1 whose values, bound as constants (here
/// `inputs`' values), make more of the graph's shapes static, or more of its nodes runnable on
/// the GPU: the shape of a Reshape, the axes of a reduction, a Slice's starts and ends, the
/// sizes of an Expand or a Pad, a Range's limits, Resize's roi, Dropout's training_mode and
/// ratio (expand-ops then turns an inference Dropout into its input). Found by binding every such
/// input, then keeping those without which more shapes stay unknown or more nodes stay off the
/// GPU. The GPU compiles a
/// program per set of their values (they are on the host when a run starts, so no device
/// read-back is needed); other inputs stay runtime data.
Expected<std::vector<std::string>> shapeInputs(const Graph &model,
                                               const std::map<std::string, int64_t> &dims,
                                               const std::map<std::string, Tensor> &inputs);

/// shapeInputs, with each one's value from `inputs` put into `opts.shapeValues`.
Status bindShapeInputs(const Graph &model, const std::map<std::string, int64_t> &dims,
                       const std::map<std::string, Tensor> &inputs, JitOptions &opts);

/// Shape inference, expand-ops and folding: what settles the shapes that binding made known
/// (shape inputs' analysis, the search for shape points).
inline constexpr const char *kSettleShapes = "infer-shapes,expand-ops,fold-constants,infer-shapes";

/// Runs `pipeline` over `g` with what passes print discarded (an analysis trying a pipeline).
Status runQuietly(Graph &g, const std::string &pipeline);

/// The GPU backend's answer to placement: whether codegen has a kernel for a node.
bool codegenSupports(const Node &n, std::string *why);

/// specializeGraph, then opts.shapeValues bound as constants: the graph the GPU pipeline
/// starts from.
Expected<std::unique_ptr<Graph>>
bindForGpu(const Graph &model, const std::map<std::string, int64_t> &dims, const JitOptions &opts);

/// The GPU pipeline of `opts` over `g` (static input shapes); an error names any output whose
/// shape is still not static.
Status runGpuPipeline(Graph &g, const JitOptions &opts);

/// bindForGpu + runGpuPipeline: the graph lowering sees.
Expected<std::unique_ptr<Graph>> prepareForGpu(const Graph &model,
                                               const std::map<std::string, int64_t> &dims,
                                               const JitOptions &opts);

/// prepareForGpu + lowering.
Expected<rt::Program> compileForGpu(const Graph &model, const std::map<std::string, int64_t> &dims,
                                    const JitOptions &opts);

} // namespace dlc::jit
