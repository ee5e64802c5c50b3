// canonicalize-quant: every fake_quant becomes Clip -> QuantizeLinear -> DequantizeLinear, the
// one form of quantization the passes after it see (DESIGN.md "Quantization").
//
// TensorFlow's FakeQuant (the IR's `fake_quant`, with min/max nudged so that 0 is exact) and
// ONNX's Q -> DQ pair describe the same grid: with TensorFlow's nudged range [nmin, nmax],
// scale s and zero point z (an integer level in [quantMin, quantMax]),
//     fake_quant(x) = (level - z) * s,   level = round((clamp(x, nmin, nmax) - nmin) / s) + qmin
//     DQ(Q(x'))     = (q - z) * s,       q = saturate(round(x' / s) + z)
// and with x' = clamp(x, nmin, nmax) the two levels agree; the clamp (a Max and a Min with the
// nudged bounds) keeps narrow_range (quantMin 1) and num_bits < 8 (quantMax < 255) inside
// their grid, which uint8's saturation alone would not. One difference stays: TensorFlow
// rounds ties up, QuantizeLinear to even, so a value exactly halfway between two levels can
// land one level apart.
//
// Per channel (1-D min/max over x's last dim) the Q/DQ pair is per axis (axis = rank - 1), the
// clamp bounds broadcast over that dim. The new DequantizeLinear takes the fake_quant's name
// and its output's name.
//
// Before: types inferred. After: no fake_quant with constant min/max, num_bits <= 8 and a
// float32 input is left. Kept as they are (each said in --debug-only=canonicalize-quant): a
// fake_quant whose min or max is computed at run time, num_bits above 8 (no 8-bit type holds
// the grid), a channel with min = max = 0 (no scale), a non-float32 input.
#include "ir/match.h"
#include "ir/quant_math.h"
#include "passes/registry.h"

namespace dlc {

namespace {

class CanonicalizeQuant : public Pass {
public:
  Expected<bool> run(Graph &g, const PassOptions &options) override {
    bool changed = false;
    for (Node *n : g.nodes()) {
      if (n->op() != Op::kFakeQuant)
        continue;
      std::string why;
      const std::string what = n->describe(); // n is gone once rewritten
      DLC_ASSIGN_OR_RETURN(bool done, rewrite(g, n, why));
      if (done)
        options.debugf("{}: now clamp -> quantize_linear -> dequantize_linear", what);
      else
        options.debugf("{}: kept: {}", what, why);
      changed = changed || done;
    }
    return changed;
  }

private:
  /// Rewrites `n` when it can (true), else sets `why` (false). Errors: a range TensorFlow
  /// itself refuses (min > max), naming the node.
  static Expected<bool> rewrite(Graph &g, Node *n, std::string &why) {
    const Tensor *lo = constantInput(*n, 1), *hi = constantInput(*n, 2);
    Value *x = n->input(0);
    const int64_t bits = n->getInt("num_bits");
    if (!lo || !hi) {
      why = "min or max is computed at run time";
      return false;
    }
    if (bits > 8) {
      why = fmt::format("num_bits {} does not fit an 8-bit quantized type", bits);
      return false;
    }
    if (x->dtype() != DType::kF32 || !x->shape().isRanked()) {
      why = "the input is not a ranked float32 tensor";
      return false;
    }
    const bool perChannel = lo->rank() == 1;
    const int64_t count = lo->numElements();
    std::vector<float> scale, nmin, nmax;
    std::vector<uint8_t> zero;
    for (int64_t c = 0; c < count; ++c) {
      auto nudged = nudgeFakeQuant(static_cast<float>(lo->elementAsDouble(c)),
                                   static_cast<float>(hi->elementAsDouble(c)), bits,
                                   n->getInt("narrow_range") != 0);
      if (!nudged)
        return invalidArgument("{}: {}", n->describe(), nudged.status().message());
      if (nudged->zero) {
        why = "a channel's min and max are both 0 (no scale)";
        return false;
      }
      scale.push_back(nudged->scale);
      zero.push_back(static_cast<uint8_t>(nudged->zeroPoint));
      nmin.push_back(nudged->min);
      nmax.push_back(nudged->max);
    }
    std::vector<int64_t> shape = perChannel ? std::vector<int64_t>{count} : std::vector<int64_t>{};
    auto constant = [&](const char *role, Tensor t) {
      return g.addConstant(g.uniqueName(n->name() + "/" + role), std::move(t));
    };
    Value *scaleV = constant("scale", Tensor::fromVector<float>(DType::kF32, shape, scale));
    Value *zeroV = constant("zero_point", Tensor::fromVector<uint8_t>(DType::kU8, shape, zero));
    Value *minV = constant("nudged_min", Tensor::fromVector<float>(DType::kF32, shape, nmin));
    Value *maxV = constant("nudged_max", Tensor::fromVector<float>(DType::kF32, shape, nmax));

    Node *atLeast = g.createNode(Op::kMax, {x, minV}, 1, n->name() + "/clamp_min", n);
    Node *atMost =
        g.createNode(Op::kMin, {atLeast->output(0), maxV}, 1, n->name() + "/clamp_max", n);
    Node *q = g.createNode(Op::kQuantizeLinear, {atMost->output(0), scaleV, zeroV}, 1,
                           n->name() + "/quantize", n);
    Node *dq = g.createNode(Op::kDequantizeLinear, {q->output(0), scaleV, zeroV}, 1, n->name(), n);
    for (Node *m : {atLeast, atMost, q, dq})
      m->setDevice(n->device());
    atLeast->setName(n->name() + "/clamp_min");
    atMost->setName(n->name() + "/clamp_max");
    q->setName(n->name() + "/quantize");
    dq->setName(n->name());
    if (perChannel) {
      const Attribute axis(x->shape().rank() - 1);
      q->setAttr("axis", axis);
      dq->setAttr("axis", axis);
    }
    atLeast->output(0)->setType(x->type());
    atMost->output(0)->setType(x->type());
    q->output(0)->setType(TensorType(DType::kU8, x->shape()));
    dq->output(0)->setType(n->output(0)->type());
    const std::string name = n->output(0)->name();
    Value *oldMin = n->input(1), *oldMax = n->input(2);
    replaceNode(g, n, {dq->output(0)});
    g.renameValue(dq->output(0), name);
    for (Value *c : {oldMin, oldMin == oldMax ? nullptr : oldMax})
      if (c && c->isConstant() && isUnused(c))
        g.eraseConstant(c);
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> createCanonicalizeQuant() { return std::make_unique<CanonicalizeQuant>(); }

} // namespace dlc
