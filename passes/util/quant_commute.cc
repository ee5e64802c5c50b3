#include "passes/util/quant_commute.h"

#include <optional>
#include <set>
#include <string>

#include "passes/util/transpose_sink.h"

namespace dlc {

namespace {

bool commutes(Op op) {
  switch (op) {
  case Op::kMaxPool:
  case Op::kReshape:
  case Op::kTranspose:
  case Op::kFlatten:
  case Op::kSqueeze:
  case Op::kUnsqueeze:
  case Op::kConcat:
    return true;
  default:
    return false;
  }
}

/// The inputs of `op` that carry data (the others are shapes and axes).
int dataInputs(const Node &op) { return op.op() == Op::kConcat ? op.numInputs() : 1; }

bool sameConstant(const Value *a, const Value *b) {
  if (a == b)
    return true;
  if (!a || !b || !a->isConstant() || !b->isConstant())
    return false;
  const Tensor &x = a->constant(), &y = b->constant();
  if (x.dtype() != y.dtype() || x.shape() != y.shape())
    return false;
  for (int64_t i = 0; i < x.numElements(); ++i)
    if (x.elementAsDouble(i) != y.elementAsDouble(i))
      return false;
  return true;
}

bool perAxis(const Node &q) {
  return q.input(1) && q.input(1)->isConstant() && q.input(1)->constant().rank() > 0;
}

int64_t axisOf(const Node &q) {
  const int64_t rank = q.input(0) ? q.input(0)->shape().rank() : 0;
  int64_t a = q.hasAttr("axis") ? q.getInt("axis") : 1;
  return a < 0 ? a + rank : a;
}

/// Same scale, zero point and (per axis) axis.
bool sameParams(const Node &a, const Node &b) {
  if (!sameConstant(a.input(1), b.input(1)))
    return false;
  const Value *za = a.numInputs() > 2 ? a.input(2) : nullptr;
  const Value *zb = b.numInputs() > 2 ? b.input(2) : nullptr;
  if ((za || zb) && !sameConstant(za, zb))
    return false;
  return !perAxis(a) || axisOf(a) == axisOf(b);
}

/// The axis the per-axis Q `q` on op's output has on op's input, or nullopt with `why`.
std::optional<int64_t> axisThrough(const Node &op, const Node &q, std::string &why) {
  const int64_t axis = axisOf(q);
  switch (op.op()) {
  case Op::kMaxPool:
    return axis; // pooling keeps N and C, and every axis
  case Op::kConcat: {
    const int64_t rank = op.output(0)->shape().rank();
    int64_t cat = op.getInt("axis");
    if (cat < 0)
      cat += rank;
    if (cat == axis) {
      why = fmt::format("per-axis Q/DQ along axis {}, the axis it concatenates", axis);
      return std::nullopt;
    }
    return axis;
  }
  case Op::kTranspose: {
    auto perm = transposePerm(op);
    if (!perm || axis < 0 || axis >= static_cast<int64_t>(perm->size())) {
      why = "per-axis Q/DQ across a transpose whose permutation is unknown";
      return std::nullopt;
    }
    return (*perm)[static_cast<size_t>(axis)]; // output axis a is input axis perm[a]
  }
  default:
    why = fmt::format("per-axis Q/DQ (axis {}) cannot follow a {}", axis, op.opName());
    return std::nullopt;
  }
}

class Commuter {
public:
  Commuter(Graph &g, const PassOptions &options) : g_(g), options_(options) {}

  bool run() {
    bool changed = false;
    for (bool again = true; again;) {
      again = false;
      erased_.clear(); // the snapshot below holds no erased node
      for (Node *n : g_.nodes())
        if (!erased_.count(n) && n->op() == Op::kQuantizeLinear)
          again |= collapse(*n) || moveUp(*n);
      changed |= again;
    }
    return changed;
  }

private:
  /// A Q reading a DQ of the same parameters: the identity.
  bool collapse(Node &q) {
    Value *in = q.input(0);
    Node *dq = in && in->isNodeOutput() ? in->producer() : nullptr;
    if (!dq || dq->op() != Op::kDequantizeLinear || !sameParams(q, *dq) ||
        dq->input(0)->dtype() != q.output(0)->dtype() || g_.isOutput(q.output(0)))
      return false;
    options_.debugf("{}: quantizes what {} dequantized, with the same scale: removed, %{} flows "
                    "on in {}",
                    q.describe(), dq->describe(), dq->input(0)->name(),
                    dtypeName(q.output(0)->dtype()));
    g_.replaceAllUsesWith(q.output(0), dq->input(0));
    erase(&q);
    if (dq->output(0)->uses().empty() && !g_.isOutput(dq->output(0)))
      erase(dq);
    return true;
  }

  /// x -> op -> Q  =>  x -> Q -> op.
  bool moveUp(Node &q) {
    Value *y = q.input(0);
    Node *op = y && y->isNodeOutput() ? y->producer() : nullptr;
    if (!op || !commutes(op->op()) || op->output(0) != y)
      return false;
    const std::string at = fmt::format("{} on the output of {}", q.describe(), op->describe());
    auto refuse = [&](const std::string &why) {
      if (refused_.insert(q.name()).second)
        options_.debugf("{}: stays after it: {}", at, why);
      return false;
    };
    if (g_.isOutput(y))
      return refuse(fmt::format("%{} is a graph output, needed in float", y->name()));
    if (y->uses().size() != 1)
      return refuse(fmt::format("%{} has other readers, which need it in float", y->name()));
    for (int i = 1; i < op->numOutputs(); ++i)
      if (op->output(i) && (!op->output(i)->uses().empty() || g_.isOutput(op->output(i))))
        return refuse("its Indices output is read");
    for (int i = 0; i < dataInputs(*op); ++i)
      if (!op->input(i) || op->input(i)->dtype() != y->dtype())
        return refuse(fmt::format("its input {} is not {}", i, dtypeName(y->dtype())));
    std::optional<int64_t> axis;
    if (perAxis(q)) {
      std::string why;
      axis = axisThrough(*op, q, why);
      if (!axis)
        return refuse(why);
    }
    // The move: a Q of the same parameters on every data input, the op on the quantized data.
    std::string how;
    for (int i = 0; i < dataInputs(*op); ++i) {
      Value *x = op->input(i);
      std::vector<Value *> ins = q.inputs();
      ins[0] = x;
      Node *nq = g_.createNode(Op::kQuantizeLinear, ins, 1, g_.uniqueName(x->name() + ".q"), op);
      for (const auto &[name, a] : q.attrs())
        nq->setAttr(name, a);
      if (axis)
        nq->setAttr("axis", Attribute(*axis));
      nq->setDevice(op->device());
      nq->output(0)->setType(TensorType(q.output(0)->dtype(), x->shape()));
      op->setInput(i, nq->output(0));
      const Node *p = x->isNodeOutput() ? x->producer() : nullptr;
      if (op->op() == Op::kConcat)
        how += fmt::format(
            "; input {} %{}: {}", i, x->name(),
            p && p->op() == Op::kDequantizeLinear
                ? (sameParams(q, *p) ? "same scale" : "requantized to the output's scale")
                : "quantized with the output's scale");
    }
    y->setType(TensorType(q.output(0)->dtype(), y->shape()));
    options_.debugf("{}: moves to its input{} (quantization commutes with {}){}: {} runs on {}", at,
                    dataInputs(*op) > 1 ? "s" : "", op->opName(), how, op->describe(),
                    dtypeName(y->dtype()));
    g_.replaceAllUsesWith(q.output(0), y);
    erase(&q);
    return true;
  }

  void erase(Node *n) {
    erased_.insert(n);
    g_.eraseNode(n);
  }

  Graph &g_;
  const PassOptions &options_;
  std::set<const Node *> erased_;
  std::set<std::string> refused_; // refusals are logged once, by node name
};

} // namespace

bool commuteQuantization(Graph &g, const PassOptions &options) {
  return Commuter(g, options).run();
}

} // namespace dlc
