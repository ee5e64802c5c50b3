#include "runtime/jit/value_runner.h"

#include <set>
#include <sstream>

#include <fmt/format.h>

#include "ir/clone.h"
#include "passes/pass_manager.h"

namespace dlc::jit {

Expected<ValueRunner> ValueRunner::create(const Graph &graph,
                                          const std::vector<const Value *> &watched,
                                          const ValueRunnerOptions &opts) {
  ValueRunner r;
  r.graph_ = &graph;
  std::set<const Value *> inputs(graph.inputs().begin(), graph.inputs().end());
  std::set<std::string> names;
  for (const Value *v : watched) {
    if (!v || v->isConstant() || !isFloat(v->dtype()))
      continue;
    if (inputs.count(v))
      r.watchedInputs_.push_back(v);
    else
      names.insert(v->name());
  }
  // Graph inputs in graph order, as the reference backend observes them.
  std::vector<const Value *> ordered;
  for (const Value *in : graph.inputs())
    for (const Value *w : r.watchedInputs_)
      if (w == in)
        ordered.push_back(in);
  r.watchedInputs_ = ordered;

  std::unique_ptr<Graph> clone = cloneGraph(graph);
  const bool gpu = opts.backend != Backend::kCpu && gpuUnavailableReason().empty();
  if (opts.backend == Backend::kGpu && !gpu)
    return unavailable("no GPU: {}", gpuUnavailableReason());
  if (gpu) {
    int k = 0;
    for (const Node *n : graph.nodes())
      for (const Value *v : n->outputs())
        if (v && names.count(v->name())) {
          const std::string pub = fmt::format("dlc.watch.{}", k++);
          clone->addOutput(pub, clone->findValue(v->name()), v->type());
          r.watchedOutputs_.emplace_back(pub, v);
        }
    ModelOptions mo;
    mo.optLevel = 0; // infer-shapes only: the values keep their names
    DLC_ASSIGN_OR_RETURN(Model model, Model::fromGraph(std::move(clone), mo));
    r.model_ = std::make_shared<Model>(std::move(model));
    SessionOptions so;
    so.backend = Backend::kGpu;
    so.cpuFallback = opts.cpuFallback;
    so.precision = opts.precision;
    so.keepFp32 = opts.keepFp32;
    DLC_ASSIGN_OR_RETURN(Session session, r.model_->createSession(so));
    r.session_ = std::make_shared<Session>(std::move(session));
    r.backend_ = Backend::kGpu;
    return r;
  }
  if (!opts.precision.empty()) {
    DLC_ASSIGN_OR_RETURN(Pipeline p,
                         parsePipeline(fmt::format("mixed-precision{{precision={},keep-fp32={}}}",
                                                   opts.precision, opts.keepFp32)));
    std::ostringstream sink;
    PipelineOptions po;
    po.out = &sink;
    po.err = &sink;
    DLC_RETURN_IF_ERROR(runPipeline(*clone, p, po));
  }
  for (const Node *n : clone->nodes())
    for (const Value *v : n->outputs())
      if (v && names.count(v->name()))
        r.original_[v] = graph.findValue(v->name());
  r.clone_ = std::shared_ptr<Graph>(std::move(clone));
  DLC_ASSIGN_OR_RETURN(ReferenceExecutor ex, ReferenceExecutor::create(*r.clone_));
  r.executor_ = std::make_shared<ReferenceExecutor>(std::move(ex));
  r.backend_ = Backend::kCpu;
  return r;
}

Status ValueRunner::run(const std::map<std::string, Tensor> &inputs,
                        const ValueObserver &observer) const {
  if (executor_) {
    std::set<std::string> inputNames;
    for (const Value *v : watchedInputs_)
      inputNames.insert(v->name());
    auto out = executor_->run(inputs, [&](const Value *v, const Tensor &t) {
      if (auto it = original_.find(v); it != original_.end())
        observer(it->second, t);
      else if (!v->isNodeOutput() && inputNames.count(v->name()))
        observer(graph_->findValue(v->name()), t);
    });
    return out.status();
  }
  DLC_ASSIGN_OR_RETURN(auto outputs, session_->run(inputs));
  for (const Value *v : watchedInputs_)
    if (auto it = inputs.find(v->name()); it != inputs.end())
      observer(v, it->second);
  for (const auto &[pub, v] : watchedOutputs_)
    if (auto it = outputs.find(pub); it != outputs.end())
      observer(v, it->second);
  return Status::ok();
}

} // namespace dlc::jit
