#include "runtime/model.h"

#include <sstream>

#include "ir/verifier.h"
#include "passes/pass_manager.h"

namespace dlc {

Model::Model(std::shared_ptr<const Graph> graph) : graph_(std::move(graph)) {
  for (const Value *v : graph_->inputs())
    inputs_.push_back({v->name(), v->type()});
  for (const Graph::Output &o : graph_->outputs())
    outputs_.push_back({o.name, o.value->type()});
}

Expected<Model> Model::fromGraph(std::unique_ptr<Graph> graph, const ModelOptions &opts,
                                 const std::string &displayName) {
  if (opts.optLevel < 0 || opts.optLevel > 3)
    return invalidArgument("optimization level {} is not in [0, 3]", opts.optLevel);
  auto pipeline = parsePipeline(defaultPipeline(opts.optLevel));
  if (!pipeline)
    return pipeline.status();
  std::ostringstream sink; // the default options print nothing; keep stray output off stdout
  PipelineOptions po;
  po.out = &sink;
  po.err = &sink;
  Status st = runPipeline(*graph, *pipeline, po);
  if (st.isOk()) // the executor relies on what the verifier checks (topological order, arity)
    st = verifyGraph(*graph);
  if (!st.isOk())
    return displayName.empty() ? st : st.withContext(displayName);
  return Model(std::shared_ptr<const Graph>(std::move(graph)));
}

Expected<Session> Model::createSession(const SessionOptions &opts) const {
  if (opts.backend == Backend::kGpu)
    return unavailable("the GPU backend is not built yet; run on the CPU reference backend");
  DLC_ASSIGN_OR_RETURN(ReferenceExecutor ex, ReferenceExecutor::create(*graph_));
  return Session(graph_, std::move(ex));
}

Expected<std::vector<NamedTensor>>
Session::runOrdered(const std::map<std::string, Tensor> &inputs) const {
  return executor_.run(inputs);
}

Expected<std::map<std::string, Tensor>>
Session::run(const std::map<std::string, Tensor> &inputs) const {
  DLC_ASSIGN_OR_RETURN(std::vector<NamedTensor> outs, executor_.run(inputs));
  std::map<std::string, Tensor> byName;
  for (NamedTensor &o : outs)
    byName.emplace(o.name, std::move(o.tensor));
  return byName;
}

} // namespace dlc
