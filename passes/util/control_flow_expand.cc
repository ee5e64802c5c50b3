#include "passes/util/control_flow_expand.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "ir/clone.h"
#include "ir/eval/eval.h"
#include "ir/match.h"
#include "ir/ops/body.h"
#include "ir/ops/control_flow.h"
#include "passes/util/node_builder.h"

namespace dlc {

namespace {

using ops::bodyOf;
using ops::control_flow::intsOrZeros;
using ops::control_flow::LoopParts;
using ops::control_flow::loopParts;
using ops::control_flow::ScanParts;
using ops::control_flow::scanParts;

/// The truth of a one-element constant, or nullopt for anything else.
std::optional<bool> constantTruth(const Value *v) {
  if (!v || !v->isConstant() || v->constant().numElements() != 1)
    return std::nullopt;
  return v->constant().elementAsInt64(0) != 0;
}

/// Whether the body's condition output is its condition input (directly or through Identity)
/// or a constant true: the loop then runs exactly its trip count.
bool returnsItsCondition(const Graph &body) {
  if (body.inputs().size() < 2 || body.outputs().empty())
    return false;
  const Value *v = body.outputs()[0].value;
  while (v->isNodeOutput() && v->producer()->op() == Op::kIdentity)
    v = v->producer()->input(0);
  if (v == body.inputs()[1])
    return true;
  std::optional<bool> truth = constantTruth(v);
  return truth && *truth;
}

Status checkSteps(int64_t steps, int64_t maxSteps, const char *what) {
  if (steps < 1 || steps > maxSteps)
    return invalidArgument("{} {}; expand-ops inlines 1 to {} (max-steps)", what, steps, maxSteps);
  return Status::ok();
}

/// The sequence length of Scan `n`: the static size of its scan inputs along their axes.
Expected<int64_t> scanLength(const Node &n) {
  ScanParts p = scanParts(n);
  std::vector<int64_t> axes = intsOrZeros(n, "scan_input_axes", p.scanInputs);
  int64_t len = -1;
  for (int j = 0; j < p.scanInputs; ++j) {
    const Value *x = n.input(p.states + j);
    if (!x->shape().isRanked())
      return invalidArgument("scan input '{}' has an unknown rank", x->name());
    DLC_ASSIGN_OR_RETURN(int64_t a, normalizeAxis(axes[static_cast<size_t>(j)], x->shape().rank()));
    const Dim &d = x->shape().dims()[static_cast<size_t>(a)];
    if (!d.isKnown())
      return invalidArgument("scan input '{}' has shape {}: its sequence length is not known",
                             x->name(), x->shape().str());
    if (len >= 0 && d.value() != len)
      return invalidArgument("scan inputs disagree on the sequence length: {} and {}", len,
                             d.value());
    len = d.value();
  }
  return len;
}

class Inliner {
public:
  Inliner(Graph &g, Node *at, int64_t maxSteps) : g_(g), at_(at), b_(g, at), maxSteps_(maxSteps) {}

  /// `body` inlined on `args`, control flow nested in it expanded in turn.
  Expected<std::vector<Value *>> body(const Graph &body, const std::vector<Value *> &args,
                                      const std::string &prefix) {
    std::vector<Node *> created;
    DLC_ASSIGN_OR_RETURN(std::vector<Value *> outs,
                         inlineGraph(g_, body, args, at_, base() + "/" + prefix, &created));
    // In order, so that each node sees what folded before it: typed from its inputs now (a
    // Slice whose start folded gets its size; the body's recorded type where inference knows
    // less), folded when small and constant, expanded when it is control flow that can be.
    for (Node *inner : created) {
      std::vector<TensorType> recorded;
      for (const Value *v : inner->outputs())
        recorded.push_back(v ? v->type() : TensorType());
      DLC_RETURN_IF_ERROR(inferNewNode(inner));
      for (int k = 0; k < inner->numOutputs(); ++k)
        if (Value *v = inner->output(k))
          if (auto t = refineType(v->type(), recorded[static_cast<size_t>(k)]))
            v->setType(*t);
      DLC_ASSIGN_OR_RETURN(bool folded, foldSmall(inner, outs));
      if (folded || !isControlFlow(inner->op()) || !checkControlFlow(*inner, maxSteps_).isOk())
        continue;
      DLC_ASSIGN_OR_RETURN(std::vector<Value *> repl, expandControlFlow(g_, inner, maxSteps_));
      for (int k = 0; k < inner->numOutputs(); ++k) {
        Value *old = inner->output(k);
        if (!old)
          continue;
        g_.replaceAllUsesWith(old, repl[static_cast<size_t>(k)]);
        std::replace(outs.begin(), outs.end(), old, repl[static_cast<size_t>(k)]);
      }
      g_.eraseNode(inner);
    }
    return outs;
  }

  /// The values of one scan output's steps stacked along a new axis `axis` (may be negative).
  Expected<Value *> stack(const std::vector<Value *> &parts, int64_t axis, int k) {
    const Value *first = parts.front();
    if (!first->shape().isRanked())
      return unimplemented("scan output {} ('{}') has an unknown rank", k, first->name());
    DLC_ASSIGN_OR_RETURN(int64_t a, normalizeAxis(axis, first->shape().rank() + 1));
    std::vector<Value *> rows;
    for (size_t t = 0; t < parts.size(); ++t) {
      DLC_ASSIGN_OR_RETURN(Value * r,
                           b_.unsqueeze(parts[t], {a}, fmt::format("scan{}_step{}", k, t)));
      rows.push_back(r);
    }
    return b_.concat(std::move(rows), a, fmt::format("scan{}", k));
  }

  /// The replacement for `v`, an output of the inlined node: a value that existed before the
  /// expansion (an argument the body returns unchanged) goes through an Identity, so that
  /// renaming the replacement after the node's output never renames the model's own value.
  Expected<Value *> fresh(Value *v, const std::unordered_set<const Value *> &before) {
    if (!before.count(v))
      return v;
    return b_.op(Op::kIdentity, {v}, "result");
  }

  NodeBuilder &builder() { return b_; }

private:
  /// Evaluates `n` when its inputs are constants and its outputs small (the iteration number's
  /// arithmetic: a Slice's start, a nested If's condition), so that what reads it is typed and
  /// expanded with the value known; `outs` follows the replacement.
  Expected<bool> foldSmall(Node *n, std::vector<Value *> &outs) {
    if (isControlFlow(n->op()) || opDef(n->op()).random)
      return false;
    std::vector<Tensor> args;
    for (Value *v : n->inputs()) {
      if (v && !v->isConstant())
        return false;
      args.push_back(v ? v->constant() : Tensor());
    }
    for (Value *v : n->outputs()) {
      auto numel = v ? v->shape().numElements() : std::optional<int64_t>(0);
      if (!numel || *numel > 64)
        return false;
    }
    DLC_ASSIGN_OR_RETURN(std::vector<Tensor> results, eval::evaluate(*n, args));
    for (int k = 0; k < n->numOutputs(); ++k) {
      Value *old = n->output(k);
      if (!old || static_cast<size_t>(k) >= results.size())
        continue;
      Value *c = g_.addConstant(g_.uniqueName(old->name()), results[static_cast<size_t>(k)]);
      g_.replaceAllUsesWith(old, c);
      std::replace(outs.begin(), outs.end(), old, c);
    }
    g_.eraseNode(n);
    return true;
  }

  std::string base() const {
    for (int i = 0; i < at_->numOutputs(); ++i)
      if (at_->output(i))
        return at_->output(i)->name();
    return at_->name();
  }

  Graph &g_;
  Node *at_;
  NodeBuilder b_;
  int64_t maxSteps_;
};

Expected<std::vector<Value *>> expandIf(Inliner &in, Node *n) {
  const bool cond = *constantTruth(n->input(0));
  const char *name = cond ? "then_branch" : "else_branch";
  std::vector<Value *> captures(n->inputs().begin() + 1, n->inputs().end());
  return in.body(bodyOf(*n, name), captures, cond ? "then" : "else");
}

Expected<std::vector<Value *>> expandScan(Inliner &in, Node *n) {
  ScanParts p = scanParts(*n);
  std::vector<int64_t> inDirs = intsOrZeros(*n, "scan_input_directions", p.scanInputs);
  std::vector<int64_t> inAxes = intsOrZeros(*n, "scan_input_axes", p.scanInputs);
  std::vector<int64_t> outDirs = intsOrZeros(*n, "scan_output_directions", p.scanOutputs);
  std::vector<int64_t> outAxes = intsOrZeros(*n, "scan_output_axes", p.scanOutputs);
  DLC_ASSIGN_OR_RETURN(int64_t len, scanLength(*n));
  const std::vector<Value *> &ins = n->inputs();
  std::vector<Value *> states(ins.begin(), ins.begin() + p.states);
  std::vector<std::vector<Value *>> scans(static_cast<size_t>(p.scanOutputs));
  for (int64_t t = 0; t < len; ++t) {
    std::vector<Value *> args = states;
    for (int j = 0; j < p.scanInputs; ++j) {
      Value *x = ins[static_cast<size_t>(p.states + j)];
      DLC_ASSIGN_OR_RETURN(int64_t axis,
                           normalizeAxis(inAxes[static_cast<size_t>(j)], x->shape().rank()));
      int64_t index = inDirs[static_cast<size_t>(j)] ? len - 1 - t : t;
      DLC_ASSIGN_OR_RETURN(Value * e,
                           in.builder().pick(x, index, axis, fmt::format("in{}_step{}", j, t)));
      args.push_back(e);
    }
    args.insert(args.end(), ins.begin() + p.states + p.scanInputs, ins.end());
    DLC_ASSIGN_OR_RETURN(std::vector<Value *> outs,
                         in.body(bodyOf(*n, "body"), args, fmt::format("step{}", t)));
    std::copy(outs.begin(), outs.begin() + p.states, states.begin());
    for (int k = 0; k < p.scanOutputs; ++k)
      scans[static_cast<size_t>(k)].push_back(outs[static_cast<size_t>(p.states + k)]);
  }
  std::vector<Value *> results = states;
  for (int k = 0; k < p.scanOutputs; ++k) {
    std::vector<Value *> &parts = scans[static_cast<size_t>(k)];
    if (outDirs[static_cast<size_t>(k)])
      std::reverse(parts.begin(), parts.end());
    DLC_ASSIGN_OR_RETURN(Value * s, in.stack(parts, outAxes[static_cast<size_t>(k)], k));
    results.push_back(s);
  }
  return results;
}

Expected<std::vector<Value *>> expandLoop(Inliner &in, Node *n) {
  LoopParts p = loopParts(*n);
  const int64_t trips = n->input(0)->constant().elementAsInt64(0);
  const std::vector<Value *> &ins = n->inputs();
  std::vector<Value *> carried(ins.begin() + 2, ins.begin() + 2 + p.carried);
  std::vector<std::vector<Value *>> scans(static_cast<size_t>(p.scanOutputs));
  Value *go = in.builder().scalar("cond", 1, DType::kBool);
  for (int64_t i = 0; i < trips; ++i) {
    std::vector<Value *> args = {in.builder().scalar(fmt::format("iter{}", i), i, DType::kI64), go};
    args.insert(args.end(), carried.begin(), carried.end());
    args.insert(args.end(), ins.begin() + 2 + p.carried, ins.end());
    DLC_ASSIGN_OR_RETURN(std::vector<Value *> outs,
                         in.body(bodyOf(*n, "body"), args, fmt::format("iter{}", i)));
    std::copy(outs.begin() + 1, outs.begin() + 1 + p.carried, carried.begin());
    for (int k = 0; k < p.scanOutputs; ++k)
      scans[static_cast<size_t>(k)].push_back(outs[static_cast<size_t>(1 + p.carried + k)]);
  }
  std::vector<Value *> results = carried;
  for (int k = 0; k < p.scanOutputs; ++k) {
    DLC_ASSIGN_OR_RETURN(Value * s, in.stack(scans[static_cast<size_t>(k)], 0, k));
    results.push_back(s);
  }
  return results;
}

} // namespace

bool loopRunsItsTripCount(const Node &n) {
  return n.op() == Op::kLoop && returnsItsCondition(bodyOf(n, "body"));
}

bool isControlFlow(Op op) { return op == Op::kIf || op == Op::kLoop || op == Op::kScan; }

Status checkControlFlow(const Node &n, int64_t maxSteps) {
  switch (n.op()) {
  case Op::kIf:
    if (!constantTruth(n.input(0)))
      return invalidArgument("its condition '{}' is computed from the data", n.input(0)->name());
    return Status::ok();
  case Op::kScan: {
    DLC_ASSIGN_OR_RETURN(int64_t len, scanLength(n));
    // A scan output stacked on a negative axis needs its rank (the stacked steps' rank + 1).
    ScanParts p = scanParts(n);
    std::vector<int64_t> outAxes = intsOrZeros(n, "scan_output_axes", p.scanOutputs);
    for (int k = 0; k < p.scanOutputs; ++k) {
      const Value *out = n.output(p.states + k);
      if (outAxes[static_cast<size_t>(k)] < 0 && out && !out->shape().isRanked())
        return invalidArgument("scan output '{}' is stacked on axis {} but its rank is unknown",
                               out->name(), outAxes[static_cast<size_t>(k)]);
    }
    return checkSteps(len, maxSteps, "its sequence length is");
  }
  case Op::kLoop: {
    const Value *m = n.hasInput(0) ? n.input(0) : nullptr;
    if (!m || !m->isConstant() || m->constant().numElements() != 1)
      return invalidArgument("its trip count is {}", m ? "computed from the data" : "absent");
    DLC_RETURN_IF_ERROR(checkSteps(m->constant().elementAsInt64(0), maxSteps, "its trip count is"));
    if (n.hasInput(1)) {
      std::optional<bool> go = constantTruth(n.input(1));
      if (!go || !*go)
        return invalidArgument("its condition input '{}' is {}", n.input(1)->name(),
                               go ? "false" : "computed from the data");
    }
    if (!loopRunsItsTripCount(n))
      return invalidArgument("its body computes the condition: how many times it runs is the "
                             "data's");
    return Status::ok();
  }
  default:
    return invalidArgument("not control flow");
  }
}

Expected<std::vector<Value *>> expandControlFlow(Graph &g, Node *n, int64_t maxSteps) {
  std::unordered_set<const Value *> before(n->inputs().begin(), n->inputs().end());
  Inliner in(g, n, maxSteps);
  Expected<std::vector<Value *>> outs = n->op() == Op::kIf     ? expandIf(in, n)
                                        : n->op() == Op::kScan ? expandScan(in, n)
                                                               : expandLoop(in, n);
  if (!outs)
    return outs;
  std::vector<Value *> results;
  for (int k = 0; k < n->numOutputs(); ++k) {
    if (!n->output(k)) {
      results.push_back(nullptr);
      continue;
    }
    DLC_ASSIGN_OR_RETURN(Value * v, in.fresh((*outs)[static_cast<size_t>(k)], before));
    results.push_back(v);
  }
  return results;
}

} // namespace dlc
