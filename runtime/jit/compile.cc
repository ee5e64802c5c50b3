#include "runtime/jit/compile.h"

#include "codegen/kernel.h"
#include "ir/clone.h"
#include "runtime/jit/pipelines.h"

namespace dlc::jit {

Expected<std::unique_ptr<Graph>> specializeGraph(const Graph &model,
                                                 const std::map<std::string, int64_t> &dims) {
  std::unique_ptr<Graph> g = cloneGraph(model);
  for (Value *in : g->inputs()) {
    TensorType t = in->type();
    if (!t.shape.isRanked())
      return invalidArgument("input '{}' has unknown rank; the GPU backend needs static shapes",
                             in->name());
    for (Dim &d : t.shape.dims()) {
      if (d.isKnown())
        continue;
      if (!d.isSymbol())
        return invalidArgument("input '{}' ({}) has an unknown dim; the GPU backend needs "
                               "static shapes",
                               in->name(), in->type().str());
      auto it = dims.find(d.symbolName());
      if (it == dims.end())
        return invalidArgument("input '{}' ({}): no size for dim '{}'", in->name(),
                               in->type().str(), d.symbolName());
      d = Dim(it->second);
    }
    in->setType(std::move(t));
  }
  return g;
}

bool codegenSupports(const Node &n, std::string *why) { return codegen::gpuSupports(n, why); }

Expected<std::unique_ptr<Graph>> prepareForGpu(const Graph &model,
                                               const std::map<std::string, int64_t> &dims,
                                               const JitOptions &opts) {
  DLC_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, specializeGraph(model, dims));
  GpuPipelineOptions gpo;
  gpo.strictPlacement = opts.strictPlacement;
  gpo.reuseMemory = !opts.lower.exposeIntermediates;
  gpo.precision = opts.precision;
  gpo.keepFp32 = opts.keepFp32;
  gpo.fuseAttention = opts.fuseAttention;
  DLC_ASSIGN_OR_RETURN(Pipeline pipeline, parsePipeline(gpuPipeline(gpo)));
  PipelineOptions po = opts.pipeline;
  if (!po.gpuSupport)
    po.gpuSupport = codegenSupports;
  DLC_RETURN_IF_ERROR(runPipeline(*g, pipeline, po));
  for (const Node *n : g->nodes())
    for (const Value *v : n->outputs())
      if (v && !v->shape().isStatic())
        return invalidArgument("{}: output '{}' has shape {} after specialisation; the GPU "
                               "backend needs static shapes (a data-dependent size?)",
                               n->describe(), v->name(), v->shape().str());
  return g;
}

Expected<rt::Program> compileForGpu(const Graph &model, const std::map<std::string, int64_t> &dims,
                                    const JitOptions &opts) {
  DLC_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, prepareForGpu(model, dims, opts));
  return codegen::lowerToProgram(*g, opts.lower);
}

} // namespace dlc::jit
