// mixed-precision: runs a float32 graph in float16 (or bfloat16) where that is safe, after
// TVM's ToMixedPrecision: ops fall in three classes.
//  * always low: matrix products and convolutions (fusion kind out-fusable: MatMul, Gemm,
//    Conv, ConvTranspose, ...), where the speed is, accumulating in float32 inside the kernel;
//  * never low (kept float32): ops whose result float16 cannot carry — reductions that sum
//    (ReduceMean/Sum/SumSquare/L1/L2/LogSum/LogSumExp/Prod, CumSum), MeanVarianceNormalization
//    and LpNormalization, Exp, Log, Pow, the quantization ops (Q/DQ: an int8 layer's
//    requantization stays float32 from its int32 accumulator to its quantize_linear) — and
//    every node or op named in `keep-fp32`;
//  * the rest follows its inputs: low when every float input that is not a constant is low.
//    That includes Softmax, LogSoftmax and LayerNormalization, GroupNormalization,
//    InstanceNormalization: their kernels (codegen/reduction_rows.cc) and the reference
//    compute the statistics (max, sums, mean, variance) in float32 whatever the storage type,
//    and their results are bounded, so only their inputs and outputs go low. A float32 model
//    then keeps its residual stream in the low type as one exported in it does (BERT-base b8
//    from float32 on an H100: 1.096 ms with them kept float32, 1.016 ms following). Such an
//    op reading an int8 layer's DequantizeLinear output alone reads it through a Cast to the
//    low type, which the producing kernel's epilogue writes. A Gather from a float32 constant
//    (an embedding table) goes low, so that a residual stream starts low.
// A node goes low only when its shape inference accepts the low types (its float outputs then
// become low); float32 constants it reads are converted once (rounded to nearest even), other
// float32 inputs get one Cast per value. A float32 node reading a low value gets a Cast back,
// and so does every graph output, so the graph's interface stays float32.
//
// Last, a cast to the low type moves above the views feeding it (Reshape, Transpose, Squeeze,
// Unsqueeze, Flatten with no other reader): cast(view(x)) -> view(cast(x)), exact, so the
// cast follows x's producer, whose kernel can take it in its epilogue (an int8 GEMM's float32
// rescale reshaped into attention heads got a Cast kernel per operand before), and the view
// moves half the bytes.
//
// Before: types inferred. After: the same interface; casts only at class boundaries.
// Not done here: integer and bool values (untouched), Cast nodes (their target stays), graphs
// already in float16 (nothing is float32), accuracy checks (see `dlc run --verify`).
#include <set>
#include <unordered_map>

#include "passes/registry.h"
#include "passes/util/option_lists.h"

namespace dlc {

namespace {

/// The ops whose result float16 cannot carry (the quantization ops stay float32 too, for
/// their own reason: keptBecause).
const std::set<Op> &neverLow() {
  static const std::set<Op> ops = {Op::kReduceMean,
                                   Op::kReduceSum,
                                   Op::kReduceSumSquare,
                                   Op::kReduceL1,
                                   Op::kReduceL2,
                                   Op::kReduceLogSum,
                                   Op::kReduceLogSumExp,
                                   Op::kReduceProd,
                                   Op::kCumSum,
                                   Op::kMeanVarianceNormalization,
                                   Op::kLpNormalization,
                                   Op::kExp,
                                   Op::kLog,
                                   Op::kPow};
  return ops;
}

class MixedPrecision : public Pass {
public:
  std::vector<PassOptionSpec> options() const override {
    return {
        {"precision", PassOptionSpec::Kind::kString, "fp16 or bf16 (default fp16)"},
        {"keep-fp32", PassOptionSpec::Kind::kString,
         "node names or op text names ('|'-separated) kept in float32 (default none)"},
    };
  }

  Expected<bool> run(Graph &g, const PassOptions &options) override {
    const std::string precision = options.getString("precision", "fp16");
    if (precision != "fp16" && precision != "bf16")
      return invalidArgument("option 'precision': expected fp16 or bf16, got '{}'", precision);
    low_ = precision == "fp16" ? DType::kF16 : DType::kBF16;
    const std::vector<std::string> keep = splitBars(options.getString("keep-fp32", ""));
    keep_ = std::set<std::string, std::less<>>(keep.begin(), keep.end());
    for (const std::string &k : keep_)
      if (parseOpName(k) == std::nullopt && !hasNodeNamed(g, k))
        return invalidArgument("option 'keep-fp32': '{}' is neither a node of the graph nor an "
                               "op text name (such as 'softmax')",
                               k);
    castTo_.clear();
    constants_.clear();
    int lowered = 0;
    for (Node *n : g.nodes()) {
      if (n->op() == Op::kCast || !hasFloat32(n->outputs()))
        continue;
      if (const char *why = keptBecause(*n)) {
        options.debugf("{}: float32: {}", n->describe(), why);
        restoreInputs(g, n);
        continue;
      }
      if (!followsLow(*n)) {
        options.debugf("{}: float32: an input is float32", n->describe());
        restoreInputs(g, n);
        continue;
      }
      if (!lower(g, n)) {
        options.debugf("{}: float32: its shape inference refuses {} inputs", n->describe(),
                       dtypeName(low_));
        restoreInputs(g, n);
        continue;
      }
      options.debugf("{}: {}", n->describe(), dtypeName(low_));
      ++lowered;
    }
    // The interface stays float32.
    for (size_t i = 0; i < g.outputs().size(); ++i) {
      Value *v = g.outputs()[i].value;
      if (v->dtype() == low_ && wasFloat32_.count(v))
        g.setOutputValue(i, castOf(g, v, DType::kF32, nullptr));
    }
    options.debugf("{} node(s) in {}", lowered, dtypeName(low_));
    const int hoisted = hoistCastsAboveViews(g, options);
    return lowered > 0 || hoisted > 0;
  }

private:
  static bool isView(Op op) {
    return op == Op::kReshape || op == Op::kTranspose || op == Op::kSqueeze ||
           op == Op::kUnsqueeze || op == Op::kFlatten;
  }

  /// cast(view(x)) -> view(cast(x)) for casts from float32 to the low type whose view has no
  /// other reader and is no graph output; each cast climbs its chain of views in one walk.
  /// Returns the moves.
  int hoistCastsAboveViews(Graph &g, const PassOptions &options) {
    int moved = 0;
    for (Node *c : g.nodes()) {
      const Attribute *to = c->op() == Op::kCast ? c->findAttr("to") : nullptr;
      if (!to || to->kind() != AttrKind::kDType || to->dtype() != low_)
        continue;
      for (Value *vv = c->input(0); vv && vv->isNodeOutput() && vv->dtype() == DType::kF32;
           vv = c->input(0)) {
        Node *view = vv->producer();
        Value *x = view->input(0);
        if (!isView(view->op()) || view->numOutputs() != 1 || vv->uses().size() != 1 ||
            g.isOutput(vv) || !x || x->dtype() != DType::kF32)
          break;
        Value *cv = c->output(0);
        options.debugf("{}: moved above {}", c->describe(), view->describe());
        g.replaceAllUsesWith(cv, vv);
        c->setInput(0, x);
        cv->setType(TensorType(low_, x->shape()));
        view->setInput(0, cv);
        vv->setType(TensorType(low_, vv->shape()));
        g.moveNode(c, view);
        ++moved;
      }
    }
    return moved;
  }

  static bool hasNodeNamed(const Graph &g, std::string_view name) {
    for (const Node *n : g.nodes())
      if (n->name() == name)
        return true;
    return false;
  }
  static bool hasFloat32(const std::vector<Value *> &values) {
    for (const Value *v : values)
      if (v && v->dtype() == DType::kF32)
        return true;
    return false;
  }

  /// Why `n` stays float32 by its class or the user's list, or nullptr.
  const char *keptBecause(const Node &n) const {
    if (keep_.count(n.name()) || keep_.count(n.opName()))
      return "named in keep-fp32";
    if (n.op() == Op::kQuantizeLinear || n.op() == Op::kDequantizeLinear ||
        scalesForQuantization(n))
      return "an int8 layer's requantization stays float32";
    if (neverLow().count(n.op()))
      return "its op needs float32 (a sum, mean-variance or Lp normalisation, exp/log/pow)";
    return nullptr;
  }

  /// Whether `n` multiplies by a constant only for quantize_linear nodes to read: the inverse
  /// scale realize-int8's fast-requantize puts in front of a quantization, which a 16-bit
  /// product would round by up to 1/32 of a level.
  static bool scalesForQuantization(const Node &n) {
    if (n.op() != Op::kMul || n.numInputs() != 2 || !n.output(0) || !n.output(0)->hasUses() ||
        !(n.input(0)->isConstant() || n.input(1)->isConstant()))
      return false;
    for (const Use &u : n.output(0)->uses())
      if (u.node->op() != Op::kQuantizeLinear || u.index != 0)
        return false;
    return true;
  }

  /// Always-low ops, and followers whose non-constant float inputs are all low already. A
  /// gather from a float constant (an embedding table) goes low too, so that the stream it
  /// starts (a transformer's residual stream) is low from the first layer.
  bool followsLow(const Node &n) const {
    if (n.def().fusion == FusionKind::kOutFusable)
      return true;
    if ((n.op() == Op::kGather || n.op() == Op::kGatherElements || n.op() == Op::kGatherND) &&
        n.input(0) && n.input(0)->isConstant() && n.input(0)->dtype() == DType::kF32)
      return true;
    bool any = false;
    for (const Value *v : n.inputs()) {
      if (!v || v->isConstant() || !isFloat(v->dtype()))
        continue;
      if (v->dtype() != low_ && !dequantizedForStatistics(n, *v))
        return false;
      any = true;
    }
    return any;
  }

  /// Whether float32 `v` is an int8 layer's dequantized output (DequantizeLinear stays float32
  /// for its scale) read by `n` alone, `n` an op that keeps its statistics in float32
  /// (LayerNormalization...): `n` then reads it in the low type through a Cast, which the
  /// producing kernel takes into its epilogue, writing half the bytes (an int8 BERT's
  /// LayerNorms read the residual sum in float32 otherwise).
  static bool dequantizedForStatistics(const Node &n, const Value &v) {
    static const std::set<Op> statistics = {Op::kLayerNormalization, Op::kGroupNormalization,
                                            Op::kInstanceNormalization, Op::kSoftmax,
                                            Op::kLogSoftmax};
    return statistics.count(n.op()) && v.producer() &&
           v.producer()->op() == Op::kDequantizeLinear && v.uses().size() == 1;
  }

  /// Moves `n` to the low type when its inference accepts it.
  bool lower(Graph &g, Node *n) {
    std::vector<TensorType> types;
    std::vector<const Tensor *> consts;
    for (const Value *v : n->inputs()) {
      TensorType t = v ? v->type() : TensorType();
      if (v && v->dtype() == DType::kF32)
        t.dtype = low_;
      types.push_back(t);
      consts.push_back(nullptr);
    }
    std::vector<const std::vector<Dim> *> shapeValues(types.size(), nullptr);
    InferContext ctx(*n, types, consts, shapeValues);
    if (!inferNode(ctx).isOk())
      return false;
    for (int i = 0; i < n->numOutputs(); ++i) {
      const Value *out = n->output(i);
      if (out && out->dtype() == DType::kF32 && ctx.outputType(i).dtype != low_)
        return false;
    }
    for (int i = 0; i < n->numInputs(); ++i) {
      Value *v = n->input(i);
      if (v && v->dtype() == DType::kF32)
        n->setInput(i, castOf(g, v, low_, n));
    }
    for (int i = 0; i < n->numOutputs(); ++i) {
      Value *out = n->output(i);
      if (out && out->dtype() == DType::kF32) {
        wasFloat32_.insert(out);
        out->setType(TensorType(low_, out->shape()));
      }
    }
    return true;
  }

  /// A float32 node reading low values gets them back in float32.
  void restoreInputs(Graph &g, Node *n) {
    for (int i = 0; i < n->numInputs(); ++i) {
      Value *v = n->input(i);
      if (v && v->dtype() == low_ && wasFloat32_.count(v))
        n->setInput(i, castOf(g, v, DType::kF32, n));
    }
  }

  /// `v` in dtype `to`: a converted constant, or one Cast per (value, dtype), placed before
  /// its first reader `user` (nodes are visited in order, so later readers come after it; a
  /// graph output's cast, with no user, goes last).
  Value *castOf(Graph &g, Value *v, DType to, Node *user) {
    const auto key = std::make_pair(v, to);
    auto &cache = v->isConstant() ? constants_ : castTo_;
    if (auto it = cache.find(key); it != cache.end())
      return it->second;
    const std::string name = v->name() + "." + std::string(dtypeName(to));
    if (v->isConstant())
      return cache[key] = g.addConstant(g.uniqueName(name), v->constant().castTo(to));
    Node *c = g.createNode(Op::kCast, {v}, 1, name, user);
    c->setAttr("to", Attribute(to));
    c->setName(name);
    c->output(0)->setType(TensorType(to, v->shape()));
    if (v->isNodeOutput())
      c->setDevice(v->producer()->device());
    return cache[key] = c->output(0);
  }

  struct PairHash {
    size_t operator()(const std::pair<Value *, DType> &p) const {
      return std::hash<const void *>()(p.first) * 31 + static_cast<size_t>(p.second);
    }
  };
  DType low_ = DType::kF16;
  std::set<std::string, std::less<>> keep_;
  std::unordered_map<std::pair<Value *, DType>, Value *, PairHash> castTo_, constants_;
  std::set<const Value *> wasFloat32_;
};

} // namespace

std::unique_ptr<Pass> createMixedPrecision() { return std::make_unique<MixedPrecision>(); }

} // namespace dlc
