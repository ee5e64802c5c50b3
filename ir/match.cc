#include "ir/match.h"

namespace dlc {

bool isUnused(const Value *v) { return !v || (!v->hasUses() && !v->graph()->isOutput(v)); }

const Tensor *constantInput(const Node &n, int i) {
  const Value *v = n.input(i);
  return v && v->isConstant() ? &v->constant() : nullptr;
}

std::optional<std::vector<int64_t>> constantInts(const Value *v) {
  if (!v || !v->isConstant())
    return std::nullopt;
  const Tensor &t = v->constant();
  if (!isInteger(t.dtype()) || t.rank() > 1)
    return std::nullopt;
  return t.toInt64Vector();
}

std::optional<double> scalarConstant(const Value *v) {
  if (!v || !v->isConstant() || v->constant().numElements() != 1)
    return std::nullopt;
  return v->constant().elementAsDouble(0);
}

bool isConstantFalse(const Value *v) { return scalarConstant(v) == 0.0; }

std::optional<std::vector<int64_t>> intsAttr(const Node &n, std::string_view name) {
  const Attribute *a = n.findAttr(name);
  if (!a || a->kind() != AttrKind::kInts)
    return std::nullopt;
  return a->ints();
}

void replaceNode(Graph &g, Node *n, const std::vector<Value *> &replacements) {
  for (int i = 0; i < n->numOutputs(); ++i) {
    Value *out = n->output(i);
    Value *to = i < static_cast<int>(replacements.size()) ? replacements[i] : nullptr;
    if (out && to)
      g.replaceAllUsesWith(out, to);
  }
  g.eraseNode(n);
}

void replaceOutputNamed(Graph &g, Node *n, Value *y) {
  const std::string name = n->output(0)->name();
  replaceNode(g, n, {y});
  g.renameValue(y, name);
}

Status inferNewNode(Node *n) {
  std::vector<TensorType> types;
  std::vector<const Tensor *> consts;
  for (const Value *v : n->inputs()) {
    types.push_back(v ? v->type() : TensorType());
    consts.push_back(v && v->isConstant() ? &v->constant() : nullptr);
  }
  std::vector<const std::vector<Dim> *> shapeValues(types.size(), nullptr);
  InferContext ctx(*n, types, consts, shapeValues);
  DLC_RETURN_IF_ERROR(inferNode(ctx));
  for (int i = 0; i < n->numOutputs(); ++i)
    if (Value *out = n->output(i))
      out->setType(ctx.outputType(i));
  return Status::ok();
}

std::vector<std::pair<std::string, Attribute>> ownAttributes(const Node &n) {
  std::vector<std::pair<std::string, Attribute>> attrs;
  for (const auto &[k, a] : n.attrs())
    if (k.find('.') == std::string::npos)
      attrs.emplace_back(k, a);
  return attrs;
}

Expected<Value *> addTypedNode(Graph &g, Op op, std::vector<Value *> inputs,
                               const std::string &name, Node *before, const Node &like,
                               const std::vector<std::pair<std::string, Attribute>> &attrs) {
  Node *n = g.createNode(op, std::move(inputs), 1, g.uniqueName(name), before);
  for (const auto &[k, a] : attrs)
    n->setAttr(k, a);
  n->setDevice(like.device());
  if (Status st = inferNewNode(n); !st.isOk()) {
    g.eraseNode(n); // an untyped node left behind would hold its inputs' uses
    return st;
  }
  return n->output(0);
}

} // namespace dlc
