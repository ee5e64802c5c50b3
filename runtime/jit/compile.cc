#include "runtime/jit/compile.h"

#include "codegen/kernel.h"
#include <set>
#include <sstream>

#include "ir/clone.h"
#include "runtime/jit/pipelines.h"
#include "runtime/jit/segments.h"

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
  // The declared output types take the same sizes (the signature then says what the program
  // returns); dims the inputs do not bind stay symbolic.
  for (size_t i = 0; i < g->outputs().size(); ++i) {
    TensorType t = g->outputs()[i].declared;
    if (!t.shape.isRanked())
      continue;
    for (Dim &d : t.shape.dims())
      if (d.isSymbol())
        if (auto it = dims.find(d.symbolName()); it != dims.end())
          d = Dim(it->second);
    g->setOutputDeclared(i, std::move(t));
  }
  return g;
}

Status runQuietly(Graph &g, const std::string &pipeline) {
  DLC_ASSIGN_OR_RETURN(Pipeline p, parsePipeline(pipeline));
  std::ostringstream sink;
  PipelineOptions po;
  po.out = &sink;
  po.err = &sink;
  return runPipeline(g, p, po);
}

namespace {

/// Reads each graph input named in `values` as a constant of that value (the input stays, now
/// unused: the program's signature does not change).
Status bindValues(Graph &g, const std::map<std::string, Tensor> &values) {
  for (const auto &[name, t] : values) {
    Value *in = nullptr;
    for (Value *v : g.inputs())
      if (v->name() == name)
        in = v;
    if (!in)
      return invalidArgument("shape input '{}' is not an input of the model", name);
    if (in->dtype() != t.dtype() || in->shape().sizes() != t.shape())
      return invalidArgument("shape input '{}': the value is {}{}, the input {}", name,
                             dtypeName(t.dtype()), Shape::fromSizes(t.shape()).str(),
                             in->type().str());
    g.replaceAllUsesWith(in, g.addConstant(g.uniqueName(name + ".value"), t));
  }
  return Status::ok();
}

/// What keeps `g` off the GPU after shape inference and folding: node outputs whose shape is
/// not static, and nodes the GPU backend refuses (an operand it needs constant, such as a
/// reduction's axes or Resize's roi), by their first output's name.
struct Blockers {
  int dynamic = 0;
  std::set<std::string> refused, supported;
};

Expected<Blockers> gpuBlockers(Graph &g) {
  DLC_RETURN_IF_ERROR(runQuietly(g, kSettleShapes));
  Blockers b;
  for (const Node *node : g.nodes()) {
    bool dynamic = false;
    for (const Value *v : node->outputs())
      if (v && !v->shape().isStatic()) {
        ++b.dynamic;
        dynamic = true;
      }
    std::string why;
    std::string name = node->name(); // a node by its first output's name, else its own
    for (const Value *v : node->outputs())
      if (v) {
        name = v->name();
        break;
      }
    if (!dynamic && codegen::gpuSupports(*node, &why))
      b.supported.insert(name);
    else if (!dynamic)
      b.refused.insert(name);
  }
  return b;
}

/// How far `bound` is from running on the GPU, measured against the unbound graph `base`:
/// its dynamic outputs and refused nodes, plus the nodes `base` refused that binding folded
/// away. Those still count: their inputs are data the host computes (a new program per value
/// would be a recompile per run), not shapes.
int distance(const Blockers &base, const Blockers &bound) {
  int n = bound.dynamic + static_cast<int>(bound.refused.size());
  for (const std::string &name : base.refused)
    n += bound.supported.count(name) || bound.refused.count(name) ? 0 : 1;
  return n;
}

} // namespace

Expected<std::vector<std::string>> shapeInputs(const Graph &model,
                                               const std::map<std::string, int64_t> &dims,
                                               const std::map<std::string, Tensor> &inputs) {
  // The candidates come from the model's own inputs (rank is never symbolic), so a model
  // without any costs no copy of its graph.
  std::vector<std::string> candidates;
  for (const Value *v : model.inputs()) {
    auto it = inputs.find(v->name());
    if (it != inputs.end() && (isNumeric(v->dtype()) || v->dtype() == DType::kBool) &&
        v->shape().isRanked() && v->shape().rank() <= 1 && it->second.rank() <= 1 &&
        it->second.numElements() <= 64 && v->hasUses())
      candidates.push_back(v->name());
  }
  std::vector<std::string> out;
  if (candidates.empty())
    return out;
  DLC_ASSIGN_OR_RETURN(std::unique_ptr<Graph> base, specializeGraph(model, dims));
  DLC_ASSIGN_OR_RETURN(Blockers unbound, gpuBlockers(*base));
  const int start = distance(unbound, unbound);
  if (start == 0)
    return out;
  // Shapes may need several values at once (a Slice's starts and ends): bind every candidate,
  // then keep those whose absence leaves the graph farther from the GPU.
  auto boundWithout = [&](const std::string &skip) -> Expected<int> {
    DLC_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, specializeGraph(model, dims));
    std::map<std::string, Tensor> values;
    for (const std::string &name : candidates)
      if (name != skip)
        values.emplace(name, inputs.at(name));
    DLC_RETURN_IF_ERROR(bindValues(*g, values));
    DLC_ASSIGN_OR_RETURN(Blockers b, gpuBlockers(*g));
    return distance(unbound, b);
  };
  auto all = boundWithout("");
  if (!all || *all >= start) // values the graph cannot use (out of range) stay data
    return out;
  for (const std::string &name : candidates) {
    auto without = boundWithout(name);
    if (!without || *without > *all)
      out.push_back(name);
  }
  return out;
}

Status bindShapeInputs(const Graph &model, const std::map<std::string, int64_t> &dims,
                       const std::map<std::string, Tensor> &inputs, JitOptions &opts) {
  DLC_ASSIGN_OR_RETURN(std::vector<std::string> names, shapeInputs(model, dims, inputs));
  for (const std::string &name : names)
    opts.shapeValues.emplace(name, inputs.at(name));
  return Status::ok();
}

bool codegenSupports(const Node &n, std::string *why) { return codegen::gpuSupports(n, why); }

Expected<std::unique_ptr<Graph>>
bindForGpu(const Graph &model, const std::map<std::string, int64_t> &dims, const JitOptions &opts) {
  DLC_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, specializeGraph(model, dims));
  DLC_RETURN_IF_ERROR(bindValues(*g, opts.shapeValues));
  return g;
}

Status runGpuPipeline(Graph &g, const JitOptions &opts) {
  GpuPipelineOptions gpo;
  gpo.strictPlacement = opts.strictPlacement;
  gpo.reuseMemory = !opts.lower.exposeIntermediates;
  gpo.precision = opts.precision;
  gpo.keepFp32 = opts.keepFp32;
  gpo.fuseAttention = opts.fuseAttention;
  gpo.fastRequantize = opts.lower.emit.fastRequantize;
  gpo.patchGemm = opts.lower.emit.patchGemm;
  gpo.kMajorWeights = opts.lower.emit.kMajorWeights && opts.lower.emit.hopperGemms();
  // Any target: where the Hopper kernel cannot normalize the rows, the group runs as the GEMM's
  // kernel and the layer norm's (codegen/gemm_norm.cc).
  gpo.gemmLayerNorm = opts.lower.emit.gemmLayerNorm;
  DLC_ASSIGN_OR_RETURN(Pipeline pipeline, parsePipeline(gpuPipeline(gpo)));
  PipelineOptions po = opts.pipeline;
  if (!po.gpuSupport)
    po.gpuSupport = codegenSupports;
  DLC_RETURN_IF_ERROR(runPipeline(g, pipeline, po));
  for (const Node *n : g.nodes())
    for (const Value *v : n->outputs())
      if (v && !v->shape().isStatic())
        return invalidArgument("{}: output '{}' has shape {} after specialisation; the GPU "
                               "backend needs static shapes (a data-dependent size?)",
                               n->describe(), v->name(), v->shape().str());
  return Status::ok();
}

Expected<std::unique_ptr<Graph>> prepareForGpu(const Graph &model,
                                               const std::map<std::string, int64_t> &dims,
                                               const JitOptions &opts) {
  DLC_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, bindForGpu(model, dims, opts));
  DLC_RETURN_IF_ERROR(runGpuPipeline(*g, opts));
  return g;
}

Expected<rt::Program> compileForGpu(const Graph &model, const std::map<std::string, int64_t> &dims,
                                    const JitOptions &opts) {
  DLC_ASSIGN_OR_RETURN(Segment seg, compileSegment(model, dims, opts));
  if (seg.point)
    return unimplemented(
        "the shapes after {} depend on values the model computes (a shape point): one program "
        "cannot hold the model, and an ahead-of-time library has no compiler for the part after "
        "it. `dlc run` and sessions (C++, Python) run such models on the GPU, compiling that part "
        "when the values are known (`dlc compile --no-gpu` makes a library that runs it on the "
        "CPU)",
        seg.point->waiting);
  return std::move(seg.program);
}

} // namespace dlc::jit
