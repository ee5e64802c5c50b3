#include "ir/ops/body.h"

#include <unordered_map>

namespace dlc::ops {

const Graph &bodyOf(const Node &node, std::string_view name) {
  const Attribute *a = node.findAttr(name);
  DLC_CHECK(a && a->kind() == AttrKind::kGraph, "{}: no body '{}'", node.describe(), name);
  return a->graph();
}

Expected<std::vector<TensorType>>
inferBodyOutputs(const Graph &body, const std::vector<TensorType> &inputTypes,
                 const std::vector<const Tensor *> &inputConstants) {
  if (inputTypes.size() != body.inputs().size())
    return internalError("{} input types for a body of {} inputs", inputTypes.size(),
                         body.inputs().size());
  std::unordered_map<const Value *, TensorType> types;
  std::unordered_map<const Value *, const Tensor *> data;
  for (size_t i = 0; i < inputTypes.size(); ++i) {
    types[body.inputs()[i]] = inputTypes[i];
    if (i < inputConstants.size() && inputConstants[i])
      data[body.inputs()[i]] = inputConstants[i];
  }
  for (const Value *c : body.constants()) {
    types[c] = c->type();
    data[c] = &c->constant();
  }
  auto typeOf = [&](const Value *v) {
    auto it = types.find(v);
    return it == types.end() ? v->type() : it->second;
  };
  for (const Node *n : body.nodes()) {
    bool inferable = n->def().infer != nullptr;
    std::vector<TensorType> ins;
    std::vector<const Tensor *> constants;
    for (const Value *in : n->inputs()) {
      TensorType t = in ? typeOf(in) : TensorType();
      inferable = inferable && (!in || t.isKnown());
      ins.push_back(std::move(t));
      auto it = in ? data.find(in) : data.end();
      constants.push_back(it == data.end() ? nullptr : it->second);
    }
    if (!inferable) {
      for (const Value *out : n->outputs())
        if (out)
          types[out] = out->type();
      continue;
    }
    InferContext ctx(*n, std::move(ins), std::move(constants), {});
    DLC_RETURN_IF_ERROR(inferNode(ctx));
    for (int i = 0; i < n->numOutputs(); ++i) {
      const Value *out = n->output(i);
      if (!out)
        continue;
      std::optional<TensorType> t = refineType(ctx.outputType(i), out->type());
      if (!t)
        return invalidArgument("{}: output '{}' is inferred as {} but its type was given as {}",
                               n->describe(), out->name(), ctx.outputType(i).str(),
                               out->type().str());
      types[out] = std::move(*t);
    }
  }
  std::vector<TensorType> out;
  for (const Graph::Output &o : body.outputs()) {
    std::optional<TensorType> t = refineType(typeOf(o.value), o.declared);
    if (!t)
      return invalidArgument("output '{}' is inferred as {} but declared {}", o.name,
                             typeOf(o.value).str(), o.declared.str());
    out.push_back(std::move(*t));
  }
  return out;
}

} // namespace dlc::ops
