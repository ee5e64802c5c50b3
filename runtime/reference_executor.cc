#include "runtime/reference_executor.h"

#include <algorithm>
#include <unordered_map>

#include "ir/eval/eval.h"

namespace dlc {

namespace {

std::string quotedList(const std::vector<std::string> &names) {
  std::string out;
  for (const std::string &n : names)
    out += (out.empty() ? "'" : ", '") + n + "'";
  return out.empty() ? "(none)" : out;
}

/// One error for every node whose op has no reference evaluation.
Status missingEvalError(const std::vector<Node *> &nodes) {
  if (nodes.size() == 1)
    return unimplemented("{}: no reference implementation yet", nodes[0]->describe());
  // Grouped by op, in order of first appearance.
  std::vector<std::pair<Op, std::vector<std::string>>> byOp;
  for (Node *n : nodes) {
    auto it =
        std::find_if(byOp.begin(), byOp.end(), [&](const auto &p) { return p.first == n->op(); });
    if (it == byOp.end()) {
      byOp.push_back({n->op(), {}});
      it = byOp.end() - 1;
    }
    it->second.push_back(n->name().empty() ? "(unnamed)" : "'" + n->name() + "'");
  }
  std::string lines;
  for (const auto &[op, names] : byOp) {
    std::string shown;
    for (size_t i = 0; i < names.size() && i < 5; ++i)
      shown += (i ? ", " : "") + names[i];
    if (names.size() > 5)
      shown += fmt::format(", ... ({} more)", names.size() - 5);
    lines += fmt::format("\n  {} ({} node{}: {})", opOnnxName(op), names.size(),
                         names.size() == 1 ? "" : "s", shown);
  }
  return unimplemented("{} nodes of {} ops have no reference implementation yet:{}", nodes.size(),
                       byOp.size(), lines);
}

} // namespace

Status checkTensorType(const Tensor &t, const TensorType &expected, const std::string &what,
                       DimBindings &bindings, std::map<std::string, std::string> &boundBy) {
  if (expected.dtype != DType::kUnknown && t.dtype() != expected.dtype)
    return invalidArgument("{}: expected dtype {}, got {}", what, dtypeName(expected.dtype),
                           dtypeName(t.dtype()));
  const Shape &shape = expected.shape;
  if (!shape.isRanked())
    return Status::ok();
  std::string got = Shape::fromSizes(t.shape()).str();
  if (shape.rank() != t.rank())
    return invalidArgument("{}: expected rank {} ({}), got rank {} ({})", what, shape.rank(),
                           expected.str(), t.rank(), got);
  for (int64_t i = 0; i < shape.rank(); ++i) {
    const Dim &d = shape[i];
    int64_t size = t.shape()[static_cast<size_t>(i)];
    if (d.isKnown() && d.value() != size)
      return invalidArgument("{}: dim {} expected {}, got {} (expected {}, got {})", what, i,
                             d.value(), size, expected.str(), got);
    if (!d.isSymbol())
      continue;
    auto [it, inserted] = bindings.emplace(d.symbolName(), size);
    if (inserted) {
      boundBy[d.symbolName()] = what;
    } else if (it->second != size) {
      return invalidArgument("{}: dim {} is {} = {} (from {}), got {}", what, i, d.symbolName(),
                             it->second, boundBy[d.symbolName()], size);
    }
  }
  return Status::ok();
}

Expected<ReferenceExecutor> ReferenceExecutor::create(const Graph &graph) {
  ReferenceExecutor ex(graph);
  ex.nodes_ = graph.nodes();
  std::vector<Node *> noEval;
  for (Node *n : ex.nodes_)
    if (!eval::hasEval(n->op()))
      noEval.push_back(n);
  if (!noEval.empty())
    return missingEvalError(noEval);

  // Last use of every node output that is not a graph output; an unused one is freed at once.
  std::unordered_map<const Value *, size_t> lastUse;
  for (size_t i = 0; i < ex.nodes_.size(); ++i) {
    for (Value *out : ex.nodes_[i]->outputs())
      if (out && !graph.isOutput(out))
        lastUse[out] = i;
    for (Value *in : ex.nodes_[i]->inputs())
      if (in && in->isNodeOutput() && lastUse.count(in))
        lastUse[in] = i;
  }
  ex.freeAfter_.resize(ex.nodes_.size());
  for (const auto &[v, i] : lastUse)
    ex.freeAfter_[i].push_back(v);
  return ex;
}

Status ReferenceExecutor::bind(const std::map<std::string, Tensor> &inputs, DimBindings &bindings,
                               std::map<std::string, std::string> &boundBy) const {
  std::vector<std::string> known;
  for (const Value *v : graph_->inputs())
    known.push_back(v->name());
  for (const auto &[name, t] : inputs) {
    if (std::find(known.begin(), known.end(), name) == known.end())
      return notFound("unknown input '{}'; the model's inputs are {}", name, quotedList(known));
  }
  std::vector<std::string> missing;
  for (const Value *v : graph_->inputs()) {
    if (!inputs.count(v->name()))
      missing.push_back(fmt::format("'{}' ({})", v->name(), v->type().str()));
  }
  if (!missing.empty()) {
    std::string list;
    for (const std::string &m : missing)
      list += (list.empty() ? "" : ", ") + m;
    return invalidArgument("missing input{} {}", missing.size() == 1 ? "" : "s", list);
  }
  for (const Value *v : graph_->inputs()) {
    const Tensor &t = inputs.at(v->name());
    std::string what = fmt::format("input '{}'", v->name());
    if (t.empty())
      return invalidArgument("{}: the tensor is empty (no dtype, no data)", what);
    DLC_RETURN_IF_ERROR(checkTensorType(t, v->type(), what, bindings, boundBy));
  }
  return Status::ok();
}

Expected<DimBindings>
ReferenceExecutor::bindInputs(const std::map<std::string, Tensor> &inputs) const {
  DimBindings bindings;
  std::map<std::string, std::string> boundBy;
  DLC_RETURN_IF_ERROR(bind(inputs, bindings, boundBy));
  return bindings;
}

Expected<std::vector<NamedTensor>>
ReferenceExecutor::run(const std::map<std::string, Tensor> &inputs) const {
  return run(inputs, ValueObserver());
}

Expected<std::vector<NamedTensor>>
ReferenceExecutor::run(const std::map<std::string, Tensor> &inputs,
                       const ValueObserver &observer) const {
  DimBindings bindings;
  std::map<std::string, std::string> boundBy;
  DLC_RETURN_IF_ERROR(bind(inputs, bindings, boundBy));

  std::unordered_map<const Value *, Tensor> env;
  for (const Value *v : graph_->inputs()) {
    env[v] = inputs.at(v->name());
    if (observer)
      observer(v, env[v]);
  }
  for (const Value *c : graph_->constants())
    env[c] = c->constant();

  std::vector<Tensor> args;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node &node = *nodes_[i];
    args.clear();
    for (const Value *in : node.inputs()) {
      if (!in) {
        args.emplace_back();
        continue;
      }
      auto it = env.find(in);
      if (it == env.end())
        return internalError("{}: input '{}' has no value (freed too early or never produced)",
                             node.describe(), in->name());
      args.push_back(it->second);
    }
    DLC_ASSIGN_OR_RETURN(std::vector<Tensor> results, eval::evaluate(node, args));
    if (static_cast<int>(results.size()) > node.numOutputs())
      return internalError("{}: reference evaluation returned {} outputs for {}", node.describe(),
                           results.size(), node.numOutputs());
    for (int k = 0; k < node.numOutputs(); ++k) {
      const Value *out = node.output(k);
      if (!out)
        continue;
      if (static_cast<size_t>(k) >= results.size() || results[static_cast<size_t>(k)].empty())
        return internalError("{}: reference evaluation produced no value for output {} ('{}')",
                             node.describe(), k, out->name());
      Tensor &r = results[static_cast<size_t>(k)];
      std::string what = fmt::format("{}: output {} ('{}')", node.describe(), k, out->name());
      Status st = checkTensorType(r, out->type(), what, bindings, boundBy);
      if (!st.isOk())
        return internalError("reference evaluation disagrees with shape inference: {}",
                             st.message());
      if (observer)
        observer(out, r);
      env[out] = std::move(r);
    }
    for (const Value *v : freeAfter_[i])
      env.erase(v);
  }

  std::vector<NamedTensor> outputs;
  for (const Graph::Output &o : graph_->outputs()) {
    auto it = env.find(o.value);
    if (it == env.end())
      return internalError("output '{}' was never computed", o.name);
    outputs.push_back({o.name, it->second});
  }
  return outputs;
}

Expected<std::map<std::string, int64_t>>
bindInputShapes(const Graph &graph, const std::map<std::string, std::vector<int64_t>> &inputs) {
  std::map<std::string, int64_t> dims;
  for (const Value *in : graph.inputs()) {
    auto it = inputs.find(in->name());
    if (it == inputs.end())
      return invalidArgument("missing input '{}' ({})", in->name(), in->type().str());
    const Shape &s = in->shape();
    const std::vector<int64_t> &shape = it->second;
    const auto rank = static_cast<int64_t>(shape.size());
    if (!s.isRanked())
      continue;
    if (rank != s.rank())
      return invalidArgument("input '{}': expected rank {} ({}), got rank {}", in->name(), s.rank(),
                             in->type().str(), rank);
    for (int64_t i = 0; i < s.rank(); ++i) {
      const Dim &d = s[i];
      const int64_t size = shape[static_cast<size_t>(i)];
      if (d.isKnown() && d.value() != size)
        return invalidArgument("input '{}': dim {} must be {} ({}), got {}", in->name(), i,
                               d.value(), in->type().str(), size);
      if (!d.isSymbol())
        continue;
      auto [pos, fresh] = dims.emplace(d.symbolName(), size);
      if (!fresh && pos->second != size)
        return invalidArgument("input '{}': dim {} is '{}' = {}, but an earlier input has "
                               "'{}' = {}",
                               in->name(), i, d.symbolName(), size, d.symbolName(), pos->second);
    }
  }
  for (const auto &[name, shape] : inputs) {
    (void)shape;
    if (!graph.findValue(name) || !graph.findValue(name)->isInput())
      return invalidArgument("unknown input '{}'", name);
  }
  return dims;
}

} // namespace dlc
