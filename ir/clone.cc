#include "ir/clone.h"

#include <unordered_map>

namespace dlc {

namespace {

using ValueMap = std::unordered_map<const Value *, Value *>;

/// Appends a copy of `n` reading `inputs` to `out` (in front of `before`, or at the end); its
/// outputs keep their types and are recorded in `map`. Names are kept, or with a `prefix`
/// become `prefix/<name>` (made unique; an unnamed node by its first output's name).
Node *copyNode(Graph &out, const Node &n, std::vector<Value *> inputs, ValueMap &map,
               Node *before = nullptr, const std::string &prefix = "") {
  // Outputs get scratch names first (createNode names them after the node), then the original
  // ones; a scratch base no model uses keeps them from taking a later value's name.
  Node *nn = out.createNode(n.op(), std::move(inputs), n.numOutputs(), "$clone", before);
  if (prefix.empty()) {
    nn->setName(n.name());
  } else {
    std::string name = n.name();
    for (int i = 0; name.empty() && i < n.numOutputs(); ++i)
      if (n.output(i))
        name = n.output(i)->name();
    nn->setName(out.uniqueName(prefix + "/" + name));
  }
  for (const auto &[name, attr] : n.attrs())
    nn->setAttr(name, attr);
  nn->setDevice(n.device());
  for (int i = 0; i < n.numOutputs(); ++i) {
    Value *ov = n.output(i);
    if (!ov) {
      nn->removeOutput(i);
      continue;
    }
    Value *nv = nn->output(i);
    out.renameValue(nv, prefix.empty() ? ov->name() : prefix + "/" + ov->name());
    nv->setType(ov->type());
    map[ov] = nv;
  }
  return nn;
}

} // namespace

std::unique_ptr<Graph> cloneGraph(const Graph &g) {
  auto out = std::make_unique<Graph>(g.name());
  for (const auto &[name, a] : g.annotations())
    out->setAnnotation(name, a);
  ValueMap map;
  for (Value *in : g.inputs())
    map[in] = out->addInput(in->name(), in->type());
  for (Value *c : g.constants()) {
    Value *nc = out->addConstant(c->name(), c->constant());
    nc->setType(c->type());
    map[c] = nc;
  }
  for (Node *n : g.nodes()) {
    std::vector<Value *> inputs;
    inputs.reserve(n->inputs().size());
    for (Value *v : n->inputs())
      inputs.push_back(v ? map.at(v) : nullptr);
    copyNode(*out, *n, std::move(inputs), map);
  }
  for (const Graph::Output &o : g.outputs())
    out->addOutput(o.name, map.at(o.value), o.declared);
  return out;
}

Expected<std::unique_ptr<Graph>>
extractGraph(const Graph &g, const std::function<bool(const Node &)> &keep,
             const std::vector<std::pair<const Value *, std::string>> &inputs,
             const std::vector<std::pair<std::string, const Value *>> &outputs) {
  auto out = std::make_unique<Graph>(g.name());
  for (const auto &[name, a] : g.annotations())
    out->setAnnotation(name, a);
  ValueMap map;
  for (const auto &[v, name] : inputs)
    map[v] = out->addInput(name, v->type());
  auto mapped = [&](const Value *v) -> Value * {
    auto it = map.find(v);
    if (it != map.end())
      return it->second;
    if (!v->isConstant())
      return nullptr;
    Value *c = out->addConstant(out->uniqueName(v->name()), v->constant());
    c->setType(v->type());
    return map[v] = c;
  };
  for (Node *n : g.nodes()) {
    if (!keep(*n))
      continue;
    std::vector<Value *> ins;
    ins.reserve(n->inputs().size());
    for (Value *v : n->inputs()) {
      Value *m = v ? mapped(v) : nullptr;
      if (v && !m)
        return internalError("extracting part of graph '{}': {} reads '{}', which is neither "
                             "an input of the part nor computed in it",
                             g.name(), n->describe(), v->name());
      ins.push_back(m);
    }
    copyNode(*out, *n, std::move(ins), map);
  }
  for (const auto &[name, v] : outputs) {
    Value *m = mapped(v);
    if (!m)
      return internalError("extracting part of graph '{}': output '{}' ('{}') is not computed "
                           "in the part",
                           g.name(), name, v->name());
    out->addOutput(name, m);
  }
  return out;
}

Expected<std::vector<Value *>> inlineGraph(Graph &g, const Graph &body,
                                           const std::vector<Value *> &args, Node *before,
                                           const std::string &prefix,
                                           std::vector<Node *> *created) {
  if (args.size() != body.inputs().size())
    return internalError("inlining body '{}': {} arguments for {} inputs", body.name(), args.size(),
                         body.inputs().size());
  ValueMap map;
  for (size_t k = 0; k < args.size(); ++k)
    map[body.inputs()[k]] = args[k];
  for (Value *c : body.constants())
    map[c] = g.addConstant(g.uniqueName(prefix + "/" + c->name()), c->constant());
  for (Node *n : body.nodes()) {
    std::vector<Value *> inputs;
    inputs.reserve(n->inputs().size());
    for (Value *v : n->inputs()) {
      auto it = v ? map.find(v) : map.end();
      if (v && it == map.end())
        return internalError("inlining body '{}': {} reads '{}', which the body does not define",
                             body.name(), n->describe(), v->name());
      inputs.push_back(v ? it->second : nullptr);
    }
    Node *nn = copyNode(g, *n, std::move(inputs), map, before, prefix);
    nn->setDevice(before->device());
    if (created)
      created->push_back(nn);
  }
  std::vector<Value *> outs;
  for (const Graph::Output &o : body.outputs())
    outs.push_back(map.at(o.value));
  return outs;
}

} // namespace dlc
