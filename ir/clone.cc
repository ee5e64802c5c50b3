#include "ir/clone.h"

#include <unordered_map>

namespace dlc {

std::unique_ptr<Graph> cloneGraph(const Graph &g) {
  auto out = std::make_unique<Graph>(g.name());
  for (const auto &[name, a] : g.annotations())
    out->setAnnotation(name, a);
  std::unordered_map<const Value *, Value *> map;
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
    // Outputs get scratch names first (createNode names them after the node), then the
    // original ones; a scratch base no model uses keeps them from taking a later value's name.
    Node *nn = out->createNode(n->op(), std::move(inputs), n->numOutputs(), "$clone");
    nn->setName(n->name());
    for (const auto &[name, attr] : n->attrs())
      nn->setAttr(name, attr);
    nn->setDevice(n->device());
    for (int i = 0; i < n->numOutputs(); ++i) {
      Value *ov = n->output(i);
      if (!ov) {
        nn->removeOutput(i);
        continue;
      }
      Value *nv = nn->output(i);
      out->renameValue(nv, ov->name());
      nv->setType(ov->type());
      map[ov] = nv;
    }
  }
  for (const Graph::Output &o : g.outputs())
    out->addOutput(o.name, map.at(o.value), o.declared);
  return out;
}

} // namespace dlc
