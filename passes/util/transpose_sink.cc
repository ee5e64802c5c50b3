#include "passes/util/transpose_sink.h"

#include <numeric>

#include "ir/eval/eval_util.h"
#include "ir/match.h"

namespace dlc {

bool isIdentityPerm(const std::vector<int64_t> &perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i))
      return false;
  return true;
}

std::optional<std::vector<int64_t>> transposePerm(const Node &n) {
  std::optional<std::vector<int64_t>> perm = intsAttr(n, "perm");
  if (!perm) {
    const Value *in = n.input(0);
    if (n.hasAttr("perm") || !in || !in->shape().isRanked())
      return std::nullopt;
    perm.emplace(static_cast<size_t>(in->shape().rank()));
    std::iota(perm->rbegin(), perm->rend(), 0);
  }
  std::vector<bool> seen(perm->size(), false);
  for (int64_t p : *perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm->size()) || seen[static_cast<size_t>(p)])
      return std::nullopt; // malformed: the verifier reports it
    seen[static_cast<size_t>(p)] = true;
  }
  return perm;
}

Node *transposeWithPerm(const Value *v, const std::vector<int64_t> &perm) {
  Node *p = v && v->producer() && v->producer()->op() == Op::kTranspose ? v->producer() : nullptr;
  return p && transposePerm(*p) == perm ? p : nullptr;
}

Node *transposeOfWithPerm(const Value *v, const std::vector<int64_t> &perm) {
  Node *found = nullptr; // the last one, as sinkTranspose has always taken
  for (const Use &u : v->uses())
    if (u.node->op() == Op::kTranspose && transposePerm(*u.node) == perm)
      found = u.node;
  return found;
}

Expected<Tensor> permuted(const Tensor &t, const std::vector<int64_t> &perm) {
  std::vector<int64_t> padded(perm.size() - static_cast<size_t>(t.rank()), 1);
  padded.insert(padded.end(), t.shape().begin(), t.shape().end());
  return eval::permuted(t.reshaped(padded), perm);
}

namespace {

bool isOneElement(const Value *v) {
  const Shape &s = v->shape();
  if (!s.isRanked())
    return false;
  for (int64_t d = 0; d < s.rank(); ++d)
    if (!s[d].isKnown() || s[d].value() != 1)
      return false;
  return true;
}

} // namespace

/// Whether a transpose by `inverse` reads `v`, or reads the result of elementwise ops applied
/// to it: then sinking a transpose below v's producer lets the two meet and cancel. Without
/// such a meeting, sinking only moves the transpose, and a transpose that stays after an
/// elementwise op costs a kernel where one before it had the op as its fused epilogue.
bool reachesInverse(const Value *v, const std::vector<int64_t> &inverse, int depth = 0) {
  if (depth > 32)
    return false;
  for (const Use &u : v->uses()) {
    const Node *c = u.node;
    if (c->op() == Op::kTranspose && transposePerm(*c) == inverse)
      return true;
    const FusionKind kind = c->def().fusion;
    if ((kind == FusionKind::kElementwise || kind == FusionKind::kBroadcast) &&
        c->numOutputs() == 1 && c->output(0) && reachesInverse(c->output(0), inverse, depth + 1))
      return true;
  }
  return false;
}

bool sinkTranspose(Graph &g, Node *n, const PassOptions &options) {
  const FusionKind kind = n->def().fusion;
  if ((kind != FusionKind::kElementwise && kind != FusionKind::kBroadcast) ||
      n->numOutputs() != 1 || !n->output(0)->shape().isRanked())
    return false;
  const int64_t rank = n->output(0)->shape().rank();
  // The transpose to sink: a single-use operand transpose of the output's rank.
  std::optional<std::vector<int64_t>> perm;
  for (Value *in : n->inputs()) {
    Node *t =
        in && in->producer() && in->producer()->op() == Op::kTranspose ? in->producer() : nullptr;
    if (t && in->uses().size() == 1 && !g.isOutput(in) && (perm = transposePerm(*t)) &&
        static_cast<int64_t>(perm->size()) == rank)
      break;
    perm.reset();
  }
  if (!perm)
    return false;
  std::vector<int64_t> inverse(perm->size());
  for (size_t i = 0; i < perm->size(); ++i)
    inverse[static_cast<size_t>((*perm)[i])] = static_cast<int64_t>(i);
  if (!reachesInverse(n->output(0), inverse)) {
    options.debugf("{}: transpose not sunk: no inverse transpose below it to cancel with",
                   n->describe());
    return false;
  }

  std::vector<Value *> inputs;
  std::vector<Node *> reused;
  for (Value *in : n->inputs()) {
    if (!in || isOneElement(in)) {
      inputs.push_back(in);
    } else if (Node *t = transposeWithPerm(in, *perm)) {
      inputs.push_back(t->input(0));
    } else if (in->isConstant() && in->shape().isRanked() && in->shape().rank() <= rank) {
      Expected<Tensor> c = permuted(in->constant(), inverse);
      if (!c) {
        options.debugf("{}: transpose not sunk: {}", n->describe(), c.status().message());
        return false;
      }
      inputs.push_back(g.addConstant(g.uniqueName(in->name() + ".permuted"), std::move(*c)));
    } else {
      Node *existing = transposeOfWithPerm(in, inverse);
      if (!existing) {
        options.debugf("{}: transpose not sunk: operand '{}' would need a new transpose",
                       n->describe(), in->name());
        return false;
      }
      reused.push_back(existing);
      inputs.push_back(existing->output(0));
    }
  }
  Node *inner = g.createNode(n->op(), inputs, 1, n->name(), n);
  for (const auto &[k, v] : n->attrs())
    inner->setAttr(k, v);
  inner->setDevice(n->device());
  const Shape &out = n->output(0)->shape();
  std::vector<Dim> dims(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i)
    dims[static_cast<size_t>((*perm)[static_cast<size_t>(i)])] = out[i];
  inner->output(0)->setType(TensorType(n->output(0)->dtype(), Shape(std::move(dims))));
  Node *t = g.createNode(Op::kTranspose, {inner->output(0)}, 1, n->name() + "/transpose", n);
  t->setAttr("perm", Attribute(*perm));
  t->setDevice(n->device());
  t->output(0)->setType(n->output(0)->type());
  options.debugf("{}: transpose sunk below it", n->describe());
  replaceNode(g, n, {t->output(0)});
  // A reused inverse transpose may come after n; it reads an operand of n, so sorting
  // always succeeds.
  if (!reused.empty())
    DLC_CHECK(g.topologicalSort().isOk(), "sinking a transpose made a cycle");
  return true;
}

} // namespace dlc
