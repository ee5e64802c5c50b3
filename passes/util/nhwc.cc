#include "passes/util/nhwc.h"

#include <algorithm>

#include "ir/match.h"
#include "passes/util/transpose_sink.h"

namespace dlc::nhwc {
namespace {

Expected<Value *> add(Graph &g, Op op, std::vector<Value *> inputs, Node *at,
                      const std::string &name,
                      const std::vector<std::pair<std::string, Attribute>> &attrs = {}) {
  return addTypedNode(g, op, std::move(inputs), name, at, *at, attrs);
}

/// For moveElementwise: the NHWC form of operand `v` when it costs no transpose: an existing
/// one, or a per-tensor dequantize_linear of a value that has one (made again in NHWC).
Expected<Value *> freeNhwc(Graph &g, Value *v, Node *before) {
  if (Value *t = existing(v))
    return t;
  const Node *p = v->producer();
  if (!p || p->op() != Op::kDequantizeLinear)
    return static_cast<Value *>(nullptr);
  for (int i = 1; i < p->numInputs(); ++i)
    if (p->input(i) && p->input(i)->shape().numElements() != std::optional<int64_t>(1))
      return static_cast<Value *>(nullptr);
  Value *q = existing(p->input(0));
  if (!q)
    return static_cast<Value *>(nullptr);
  std::vector<Value *> ins = p->inputs();
  ins[0] = q;
  std::vector<std::pair<std::string, Attribute>> attrs(p->attrs().begin(), p->attrs().end());
  return add(g, Op::kDequantizeLinear, ins, before, v->name() + "/nhwc", attrs);
}

} // namespace

Value *sourceOf(const Value *v) {
  const Node *t = transposeWithPerm(v, kToNchw);
  return t ? t->input(0) : nullptr;
}

Value *existing(Value *v) {
  if (Value *x = sourceOf(v))
    return x;
  const Node *t = transposeOfWithPerm(v, kToNhwc);
  return t ? t->output(0) : nullptr;
}

Expected<Value *> of(Graph &g, Value *v, Node *before) {
  if (Value *t = existing(v))
    return t;
  return add(g, Op::kTranspose, {v}, before, v->name() + "/nhwc", {{"perm", Attribute(kToNhwc)}});
}

std::vector<std::pair<std::string, Attribute>> channelsLastAttrs(const Node &n) {
  std::vector<std::pair<std::string, Attribute>> attrs = ownAttributes(n);
  attrs.emplace_back("channels_last", Attribute(int64_t{1}));
  return attrs;
}

Expected<bool> moveElementwise(Graph &g, Node *n) {
  if (n->numOutputs() != 1 || !n->output(0) || !n->output(0)->shape().isRanked() ||
      n->output(0)->shape().rank() != 4)
    return false;
  const bool quant = n->op() == Op::kQuantizeLinear || n->op() == Op::kDequantizeLinear;
  // Q/DQ move when their data comes from NHWC; other ops when any operand does.
  auto backTransposed = [](const Value *v) { return v && sourceOf(v) != nullptr; };
  if (!backTransposed(n->input(0)) &&
      (quant || std::none_of(n->inputs().begin(), n->inputs().end(), backTransposed)))
    return false;
  std::vector<Value *> inputs;
  for (int i = 0; i < n->numInputs(); ++i) {
    Value *v = n->input(i);
    if (!v) {
      inputs.push_back(nullptr);
    } else if (Value *x = sourceOf(v)) {
      inputs.push_back(x);
    } else if (v->shape().numElements() == std::optional<int64_t>(1)) {
      inputs.push_back(v);
    } else if (!quant && v->isConstant() && v->shape().rank() <= 4) {
      DLC_ASSIGN_OR_RETURN(Tensor c, permuted(v->constant(), kToNhwc));
      inputs.push_back(g.addConstant(g.uniqueName(v->name() + ".nhwc"), std::move(c)));
    } else if (!quant) {
      DLC_ASSIGN_OR_RETURN(Value * t, freeNhwc(g, v, n));
      if (!t)
        return false; // an input that would need a transpose of its own
      inputs.push_back(t);
    } else {
      return false;
    }
  }
  Node *m = g.createNode(n->op(), inputs, 1, g.uniqueName(n->output(0)->name() + "/nhwc"), n);
  m->setName(n->name());
  for (const auto &[k, a] : n->attrs())
    m->setAttr(k, a);
  m->setDevice(n->device());
  DLC_RETURN_IF_ERROR(inferNewNode(m));
  DLC_ASSIGN_OR_RETURN(Value * back,
                       add(g, Op::kTranspose, {m->output(0)}, n, n->output(0)->name() + "/nchw",
                           {{"perm", Attribute(kToNchw)}}));
  replaceOutputNamed(g, n, back);
  return true;
}

} // namespace dlc::nhwc
