// insert-fake-quant: places int8 quantization in the canonical Q/DQ form (QuantizeLinear ->
// DequantizeLinear, ONNX semantics), the form TensorRT's explicit quantization and ONNX
// Runtime's QDQ models use, from the ranges calibration left (ir/annotations/quant_ranges.h).
//
// Conventions (TensorRT's): int8, symmetric (zero point 0).
//  * Activations per tensor: scale = max(|lo|, |hi|) / 127 over the producing value's range;
//    the edge gets quantize_linear -> dequantize_linear. Consumers of one value that want the
//    same scale share one pair.
//  * Weights (constant inputs) per output channel: scale[c] = max|w[c]| / 127, the data
//    quantized now (round half to even, saturating to the narrow range [-127, 127]) into an
//    int8 constant followed by dequantize_linear with the per-channel scale, as ONNX Runtime's
//    QDQ models store them. The channel axis: Conv 0 ([M, C, k...]), ConvTranspose 1
//    ([C, M/group, k...]: with groups one scale serves that column in every group), MatMul the
//    last axis of B (a 1-D B, and a constant A, get one scale), Gemm 0 with transB, else 1. An
//    all-zero channel gets scale 1.
// Placement:
//  1. The inputs of Conv, ConvTranspose, MatMul and Gemm (the compute nodes) are quantized;
//     a bias (Conv's B, Gemm's C) stays float. Q/DQ sit on the edge into the next compute
//     input, never right after a compute node, so its epilogue (bias add, ReLU, reshape) stays
//     between it and that Q/DQ and is never split.
//  2. Joins: Add, Concat and Mul whose inputs are all activations (no constant) get their
//     inputs and their output quantized with one shared scale constant (the largest max|.| of
//     inputs and output / 127): TensorRT's residual add, whose int8 inputs at one scale can
//     become the producing conv's epilogue in realize-int8. When the inputs' max|.| differ by
//     more than `range-ratio` (default 64), `range-mismatch` decides instead: `float` (default: the
//     join, its inputs and its output stay float; compute nodes reading that output leave it
//     float too; a warning names the node and the ranges), `requantize` (each input its own
//     scale, the output its own), `ignore` (one shared scale anyway, with the warning). A
//     join reading a join kept float stays float too.
//  3. An activation without a measured range stays float; the nodes concerned are counted in
//     one warning. So does a value whose range is [0, 0].
//  4. `only` and `exclude` ('|'-separated node names or op text names, `exclude=conv1|matmul`)
//     select the compute nodes and joins to quantize; `exclude` wins.
//  5. An input that arrives quantized (produced by DequantizeLinear or FakeQuant) is left
//     alone, as are non-float inputs.
//  5b. A MatMul or Gemm of two activations (attention's Q·Kᵀ and P·V) stays float unless
//     `activation-products=true`: fuse-attention then runs attention as one float kernel (with
//     Q/DQ on the scores, the probabilities and V it cannot, and BERT's int8 model ran its
//     attention as 24 MatMuls, 12 Softmax and 48 Transposes: 0.61 of 2.13 ms on an H100),
//     as TensorRT's int8 BERT keeps multi-head attention in fp16. So does a join read only by
//     Softmax (the mask added to the scores).
//  5c. A join whose inputs are all elementwise functions of one value (GELU's
//     x * 0.5 * (1 + erf(x / sqrt 2)), SiLU's x * sigmoid(x), written out by exporters) is an
//     activation function, not a join: it stays float, so that the function stays whole for
//     the fuser's GELU pattern and for the producer's epilogue.
//  6. Last, quantization moves across the ops that commute with it (MaxPool, Reshape,
//     Transpose, Flatten, Squeeze, Unsqueeze, Concat; passes/util/quant_commute.h): a Q on
//     such an op's output climbs to its input, so int8 flows through it and the DQ comes
//     after it; `commute=false` leaves every Q/DQ where steps 1-2 put it.
// Before: types inferred, BatchNorm folded (fold-batchnorm). After: the graph computes in float
// with quantization error; realize-int8 turns DQ -> op -> Q into int8 kernels. Every decision
// is in --debug-only=insert-fake-quant. Not done here: asymmetric or uint8 schemes, per-channel
// activations, propagating a kept-float join output through other nodes (a relu after it).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "ir/annotations/fusion_roles.h"
#include "ir/annotations/quant_ranges.h"
#include "ir/match.h"
#include "ir/quant_layout.h"
#include "passes/registry.h"
#include "passes/util/option_lists.h"
#include "passes/util/quant_commute.h"

namespace dlc {

namespace {

enum class Mismatch : uint8_t { kFloat, kRequantize, kIgnore };

struct Config {
  int64_t rangeRatio = 64;
  Mismatch mismatch = Mismatch::kFloat;
  std::string mismatchText = "float";
  std::vector<std::string> only, exclude;
  std::string onlyText, excludeText;
  bool commute = true;
  bool activationProducts = false;
};

bool isCompute(Op op) {
  return op == Op::kConv || op == Op::kConvTranspose || op == Op::kMatMul || op == Op::kGemm;
}

bool isJoin(Op op) { return op == Op::kAdd || op == Op::kConcat || op == Op::kMul; }

float maxAbs(ValueRange r) { return std::max(std::abs(r.lo), std::abs(r.hi)); }

std::string rangeText(const Value *v, ValueRange r) {
  return fmt::format("%{} [{}, {}]", v->name(), r.lo, r.hi);
}

/// The axis of the output channels of constant input `i` of compute node `n`, or -1 for one
/// scale over the whole tensor.
int64_t weightAxis(const Node &n, int i, const Tensor &w) {
  if (i != 1 || w.rank() < 2)
    return -1;
  switch (n.op()) {
  case Op::kConv:
    return 0;
  case Op::kConvTranspose:
    return 1;
  case Op::kGemm:
    return n.getInt("transB") ? 0 : 1;
  default: // MatMul
    return w.rank() - 1;
  }
}

/// The value `v` is an elementwise function of, following ops whose other operands are all
/// constants (x / c, erf, + 1, * 0.5, sigmoid ...) up to the first other op.
const Value *elementwiseRoot(const Value *v) {
  for (int hops = 0; hops < 16; ++hops) {
    const Node *p = v->producer();
    if (!p || !isElementwiseOp(p->op()) || isQdqNode(*p))
      return v;
    const Value *only = nullptr;
    for (const Value *in : p->inputs()) {
      if (!in || in->isConstant())
        continue;
      if (only)
        return v;
      only = in;
    }
    if (!only || only->shape() != v->shape())
      return v;
    v = only;
  }
  return v;
}

/// The one value that all of `n`'s inputs are elementwise functions of (GELU's
/// x * 0.5 * (1 + erf(x / sqrt 2)), SiLU's x * sigmoid(x)), or nullptr: such a node computes
/// an activation function piecewise and joins nothing.
const Value *sharedRoot(const Node &n) {
  const Value *root = nullptr;
  for (const Value *in : n.inputs()) {
    const Value *r = elementwiseRoot(in);
    if (root && r != root)
      return nullptr;
    root = r;
  }
  return root;
}

/// Whether every reader of `n`'s output is a Softmax (attention's mask Add).
bool feedsSoftmaxOnly(const Node &n) {
  const Value *y = n.output(0);
  if (!y || y->uses().empty())
    return false;
  return std::all_of(y->uses().begin(), y->uses().end(),
                     [](const Use &u) { return u.node->op() == Op::kSoftmax; });
}

/// Why `v` counts as already quantized ("" when it does not).
std::string arrivedQuantized(const Value *v) {
  const Node *p = v->producer();
  if (p && (p->op() == Op::kDequantizeLinear || p->op() == Op::kFakeQuant))
    return fmt::format("already quantized (produced by {})", p->describe());
  return "";
}

class Inserter {
public:
  Inserter(Graph &g, const PassOptions &options, Config config, RangeMap ranges)
      : g_(g), options_(options), config_(std::move(config)), ranges_(std::move(ranges)) {}

  bool run() {
    std::vector<Node *> nodes = g_.nodes();
    for (size_t k = 0; k < nodes.size(); ++k) {
      Node *n = nodes[k];
      if (!isCompute(n->op()) && !isJoin(n->op()))
        continue;
      if (isJoin(n->op()) && !allActivations(*n))
        continue;
      if (std::string why = deselected(*n); !why.empty()) {
        options_.debugf("{}: not quantized: {}", n->describe(), why);
        continue;
      }
      if ((n->op() == Op::kMatMul || n->op() == Op::kGemm) && !config_.activationProducts &&
          n->numInputs() >= 2 && !n->input(0)->isConstant() && !n->input(1)->isConstant()) {
        options_.debugf("{}: not quantized: both operands are activations (attention's "
                        "products stay float for the fused attention kernel; "
                        "activation-products=true quantizes them)",
                        n->describe());
        continue;
      }
      if (std::string why = joinLeftFloat(*n); !why.empty()) {
        options_.debugf("{}: not quantized: {}", n->describe(), why);
        continue;
      }
      if (isCompute(n->op()))
        quantizeCompute(*n);
      else
        quantizeJoin(*n, k + 1 < nodes.size() ? nodes[k + 1] : nullptr);
    }
    if (!missing_.empty())
      options_.warnf("{} node(s) keep an activation input float for want of a measured range "
                     "(see --debug-only=insert-fake-quant): {}",
                     missing_.size(), fmt::join(missing_, ", "));
    shareOneScalePerValue();
    if (config_.commute)
      changed_ |= commuteQuantization(g_, options_);
    return changed_;
  }

private:
  /// A value quantized for a compute input (its own scale) and for a join (a larger scale)
  /// would leave its producer twice, once per scale: two exits, which no fused epilogue has.
  /// The compute input takes the join's pair instead (one int8 tensor, read by both; the
  /// larger scale covers the value's range too), as TensorRT quantizes a tensor once.
  void shareOneScalePerValue() {
    std::map<const Value *, std::vector<std::pair<float, Value *>>> byValue;
    for (const auto &[key, dq] : pairs_)
      byValue[key.first].emplace_back(key.second, dq);
    bool moved = false;
    for (auto &[x, list] : byValue) {
      if (list.size() < 2)
        continue;
      auto widest = std::max_element(list.begin(), list.end());
      for (auto &[scale, dq] : list) {
        Node *q = dq->producer()->input(0)->producer();
        if (dq == widest->second || !computePairs_.count(dq))
          continue;
        options_.debugf("%{}: quantized once with scale {} (shared with a join) instead of also "
                        "with {}: one int8 tensor for all its readers",
                        x->name(), widest->first, scale);
        g_.replaceAllUsesWith(dq, widest->second);
        Value *scaleConst = q->input(1), *zeroConst = q->input(2);
        g_.eraseNode(dq->producer());
        g_.eraseNode(q);
        for (Value *c : {scaleConst, zeroConst})
          if (c && c->isConstant() && isUnused(c))
            g_.eraseConstant(c);
        moved = true;
      }
    }
    if (moved) {
      (void)g_.topologicalSort();
      changed_ = true;
    }
  }

  /// Why join `n` stays float although its inputs are activations ("" when it does not, or
  /// when `n` is no join).
  std::string joinLeftFloat(const Node &n) const {
    if (!isJoin(n.op()))
      return "";
    if (const Value *root = sharedRoot(n))
      return fmt::format("not a join, an elementwise function of %{} alone (an activation such "
                         "as GELU or SiLU written out)",
                         root->name());
    if (!config_.activationProducts && feedsSoftmaxOnly(n))
      return "its output is a Softmax's input (attention's masked scores stay float with its "
             "products)";
    return "";
  }

  static bool allActivations(const Node &n) {
    return n.numInputs() >= 2 && std::all_of(n.inputs().begin(), n.inputs().end(), [](Value *v) {
             return v && !v->isConstant() && isFloat(v->dtype());
           });
  }

  std::string deselected(const Node &n) const {
    auto named = [&](const std::vector<std::string> &list) {
      return std::any_of(list.begin(), list.end(),
                         [&](const std::string &s) { return s == n.name() || s == n.opName(); });
    };
    if (named(config_.exclude))
      return fmt::format("excluded (exclude={})", config_.excludeText);
    if (!config_.only.empty() && !named(config_.only))
      return fmt::format("not selected (only={})", config_.onlyText);
    return "";
  }

  const ValueRange *rangeOf(const Value *v) const {
    auto it = ranges_.find(v);
    return it == ranges_.end() ? nullptr : &it->second;
  }

  void noteMissing(const Node &n) {
    std::string d = n.name().empty() ? n.describe() : "'" + n.name() + "'";
    if (missing_.empty() || missing_.back() != d)
      missing_.push_back(d);
  }

  void quantizeCompute(Node &n) {
    for (int i = 0; i < n.numInputs(); ++i) {
      Value *v = n.input(i);
      if (!v)
        continue;
      std::string at = fmt::format("{}: input {} (%{})", n.describe(), i, v->name());
      if (i >= 2) {
        options_.debugf("{}: bias stays float", at);
        continue;
      }
      if (auto it = joinOutputs_.find(v); it != joinOutputs_.end()) {
        options_.debugf("{}: takes the Q/DQ on the output of {}", at, it->second.join->describe());
        continue;
      }
      if (std::string why = arrivedQuantized(v); !why.empty()) {
        options_.debugf("{}: left alone: {}", at, why);
        continue;
      }
      if (!isFloat(v->dtype())) {
        options_.debugf("{}: left alone: not a float tensor", at);
        continue;
      }
      if (v->isConstant()) {
        int64_t axis = weightAxis(n, i, v->constant());
        n.setInput(i, quantizedWeight(v, axis, &n));
        if (isUnused(v))
          g_.eraseConstant(v);
        options_.debugf("{}: weight quantized {}", at,
                        axis < 0 ? std::string("per tensor")
                                 : fmt::format("per channel along axis {}", axis));
        continue;
      }
      if (keptFloat_.count(v)) {
        options_.debugf("{}: left float: its producer is a join kept float", at);
        continue;
      }
      const ValueRange *r = rangeOf(v);
      if (!r || maxAbs(*r) == 0) {
        options_.debugf("{}: left float: {}", at,
                        r ? "its measured range is [0, 0]" : "no measured range");
        noteMissing(n);
        continue;
      }
      float scale = maxAbs(*r) / 127;
      n.setInput(i, qdq(v, scale, &n));
      computePairs_.insert(n.input(i));
      options_.debugf("{}: Q/DQ per tensor, scale {} from range [{}, {}]", at, scale, r->lo, r->hi);
    }
  }

  void quantizeJoin(Node &n, Node *next) {
    for (Value *v : n.inputs())
      if (keptFloat_.count(v)) {
        options_.debugf("{}: left float: its input %{} comes from a join kept float", n.describe(),
                        v->name());
        keptFloat_.insert(n.output(0));
        return;
      }
    std::vector<const ValueRange *> in;
    for (Value *v : n.inputs())
      in.push_back(rangeOf(v));
    const ValueRange *out = rangeOf(n.output(0));
    if (std::count(in.begin(), in.end(), nullptr) || !out) {
      options_.debugf("{}: left float: {} has no measured range", n.describe(),
                      out ? "an input" : "its output");
      noteMissing(n);
      return;
    }
    size_t small = 0, large = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      small = maxAbs(*in[i]) < maxAbs(*in[small]) ? i : small;
      large = maxAbs(*in[i]) > maxAbs(*in[large]) ? i : large;
    }
    float shared = maxAbs(*out);
    for (const ValueRange *r : in)
      shared = std::max(shared, maxAbs(*r));
    if (shared == 0) {
      options_.debugf("{}: left float: every range is [0, 0]", n.describe());
      return;
    }
    const double lo = maxAbs(*in[small]), hi = maxAbs(*in[large]);
    bool mismatch = hi > lo * static_cast<double>(config_.rangeRatio);
    std::string ratio = lo == 0 ? std::string("inf") : fmt::format("{:.4g}", hi / lo);
    if (mismatch) {
      std::string what = fmt::format(
          "input ranges {} and {} differ by a factor of {} (more than range-ratio={})",
          rangeText(n.input(static_cast<int>(small)), *in[small]),
          rangeText(n.input(static_cast<int>(large)), *in[large]), ratio, config_.rangeRatio);
      const char *action = config_.mismatch == Mismatch::kFloat ? "the join stays float"
                           : config_.mismatch == Mismatch::kRequantize
                               ? "each input and the output get their own scale"
                               : "one shared scale anyway";
      options_.warnf("{}: {}; {} (range-mismatch={})", n.describe(), what, action,
                     config_.mismatchText);
      // For `dlc quantize --report`, which names it as the reason of the layers it feeds.
      n.setAttr(
          std::string(kQuantRangeMismatchAttr),
          Attribute(fmt::format("{}; {} (range-mismatch={})", what, action, config_.mismatchText)));
      options_.debugf("{}: {}; {} (range-mismatch={})", n.describe(), what, action,
                      config_.mismatchText);
      if (config_.mismatch == Mismatch::kFloat) {
        keptFloat_.insert(n.output(0));
        return;
      }
    }
    bool own = mismatch && config_.mismatch == Mismatch::kRequantize;
    if (!own)
      options_.debugf("{}: inputs and output share scale {} ({})", n.describe(), shared / 127,
                      mismatch ? std::string("range-mismatch=ignore")
                               : fmt::format("input ranges within a factor of {}", ratio));
    // The shared scale is one constant that every pair of the join reads.
    Value *sharedScale =
        own ? nullptr
            : constant(n.output(0)->name() + ".scale", n.output(0)->dtype(), {}, {shared / 127});
    for (int i = 0; i < n.numInputs(); ++i) {
      Value *v = n.input(i);
      float scale = own ? maxAbs(*in[static_cast<size_t>(i)]) / 127 : shared / 127;
      if (auto it = joinOutputs_.find(v); it != joinOutputs_.end()) {
        // The Q/DQ on another join's output: requantized to this join's scale if it differs.
        if (it->second.scale != scale)
          n.setInput(i, qdq(v, scale, &n, sharedScale));
        options_.debugf("{}: input {} (%{}): the output pair of {}{}", n.describe(), i, v->name(),
                        it->second.join->describe(),
                        it->second.scale != scale ? ", requantized" : "");
        continue;
      }
      if (std::string why = arrivedQuantized(v); !why.empty()) {
        options_.debugf("{}: input {} (%{}): left alone: {}", n.describe(), i, v->name(), why);
        continue;
      }
      if (scale == 0) {
        options_.debugf("{}: input {} (%{}): left float: its range is [0, 0]", n.describe(), i,
                        v->name());
        continue;
      }
      n.setInput(i, qdq(v, scale, &n, sharedScale));
      if (own)
        options_.debugf("{}: input {} (%{}): own scale {}", n.describe(), i, v->name(), scale);
    }
    float outScale = own ? maxAbs(*out) / 127 : shared / 127;
    Value *y = n.output(0);
    std::vector<Use> uses = y->uses();
    if (outScale != 0 && !uses.empty()) {
      Value *dq = qdq(y, outScale, next, sharedScale);
      for (const Use &u : uses)
        u.node->setInput(u.index, dq);
      joinOutputs_[dq] = {&n, outScale};
      ranges_[dq] = *out; // later joins reading it ask for its range
    }
    if (sharedScale && isUnused(sharedScale))
      g_.eraseConstant(sharedScale);
    if (outScale == 0 || uses.empty())
      return;
    if (own)
      options_.debugf("{}: output (%{}): own scale {}", n.describe(), y->name(), outScale);
  }

  /// A scalar or 1-D constant of `dtype` holding `values`.
  Value *constant(const std::string &name, DType dtype, std::vector<int64_t> shape,
                  const std::vector<double> &values) {
    return g_.addConstant(g_.uniqueName(name),
                          Tensor::fromVector<double>(DType::kF64, shape, values).castTo(dtype));
  }

  /// x -> quantize_linear -> dequantize_linear with `scale` and zero point 0, placed before
  /// `before`; one pair per (value, scale). The scale constant is `s` when given.
  Value *qdq(Value *x, float scale, Node *before, Value *s = nullptr) {
    auto key = std::make_pair(static_cast<const Value *>(x), scale);
    if (auto it = pairs_.find(key); it != pairs_.end())
      return it->second;
    if (!s)
      s = constant(x->name() + ".scale", x->dtype(), {}, {scale});
    Value *zp = constant(x->name() + ".zp", DType::kI8, {}, {0});
    Node *q =
        g_.createNode(Op::kQuantizeLinear, {x, s, zp}, 1, g_.uniqueName(x->name() + ".q"), before);
    q->output(0)->setType(TensorType(DType::kI8, x->shape()));
    Node *dq = g_.createNode(Op::kDequantizeLinear, {q->output(0), s, zp}, 1,
                             g_.uniqueName(x->name() + ".dq"), before);
    dq->output(0)->setType(x->type());
    Device d = before ? before->device() : x->producer() ? x->producer()->device() : Device();
    q->setDevice(d);
    dq->setDevice(d);
    changed_ = true;
    return pairs_[key] = dq->output(0);
  }

  /// An int8 copy of constant `w` (narrow range) and its dequantize_linear, per channel along
  /// `axis` (-1: per tensor); one per (constant, axis).
  Value *quantizedWeight(Value *w, int64_t axis, Node *before) {
    auto key = std::make_pair(static_cast<const Value *>(w), axis);
    if (auto it = weights_.find(key); it != weights_.end())
      return it->second;
    const Tensor &t = w->constant();
    int64_t len = axis < 0 ? 1 : t.shape()[static_cast<size_t>(axis)];
    int64_t inner = 1;
    for (int64_t a = axis + 1; axis >= 0 && a < t.rank(); ++a)
      inner *= t.shape()[static_cast<size_t>(a)];
    auto channel = [&](int64_t i) { return axis < 0 ? 0 : (i / inner) % len; };
    std::vector<double> peak(static_cast<size_t>(len), 0.0);
    for (int64_t i = 0; i < t.numElements(); ++i) {
      double &p = peak[static_cast<size_t>(channel(i))];
      p = std::max(p, std::abs(t.elementAsDouble(i)));
    }
    std::vector<double> scales;
    for (double p : peak)
      scales.push_back(p == 0 ? 1.0 : static_cast<double>(static_cast<float>(p / 127)));
    std::vector<int64_t> shape = axis < 0 ? std::vector<int64_t>{} : std::vector<int64_t>{len};
    Value *s = constant(w->name() + ".scale", w->dtype(), shape, scales);
    const Tensor &st = s->constant(); // the scale as stored, which the quantization must use
    std::vector<double> q(static_cast<size_t>(t.numElements()));
    for (int64_t i = 0; i < t.numElements(); ++i) {
      double level = std::nearbyint(t.elementAsDouble(i) / st.elementAsDouble(channel(i)));
      q[static_cast<size_t>(i)] = std::clamp(level, -127.0, 127.0);
    }
    Value *wq = constant(w->name() + ".q", DType::kI8, t.shape(), q);
    Value *zp = constant(w->name() + ".zp", DType::kI8, shape,
                         std::vector<double>(static_cast<size_t>(len), 0.0));
    Node *dq = g_.createNode(Op::kDequantizeLinear, {wq, s, zp}, 1,
                             g_.uniqueName(w->name() + ".dq"), before);
    if (axis >= 0)
      dq->setAttr("axis", Attribute(axis));
    dq->output(0)->setType(w->type());
    dq->setDevice(before->device());
    changed_ = true;
    return weights_[key] = dq->output(0);
  }

  Graph &g_;
  const PassOptions &options_;
  Config config_;
  RangeMap ranges_;
  std::map<std::pair<const Value *, float>, Value *> pairs_;
  std::map<std::pair<const Value *, int64_t>, Value *> weights_;
  std::set<const Value *> computePairs_; // DQ outputs made for compute inputs (own scale)
  std::set<const Value *> keptFloat_;    // outputs of joins kept float (range-mismatch=float)
  struct JoinOutput {
    const Node *join;
    float scale;
  };
  std::map<const Value *, JoinOutput> joinOutputs_; // the DQ on a join's output
  std::vector<std::string> missing_;                // nodes left float for want of a range
  bool changed_ = false;
};

class InsertFakeQuant : public Pass {
public:
  std::vector<PassOptionSpec> options() const override {
    return {
        {"range-ratio", PassOptionSpec::Kind::kInt,
         "inputs of a join whose max|.| differ by more than this factor do not share a scale "
         "(default 64)"},
        {"range-mismatch", PassOptionSpec::Kind::kString,
         "such a join: float (keep it float), requantize (a scale per input and one for the "
         "output) or ignore (share one scale anyway) (default float)"},
        {"only", PassOptionSpec::Kind::kString,
         "quantize only these nodes: node names or op text names, '|'-separated (default all)"},
        {"exclude", PassOptionSpec::Kind::kString,
         "do not quantize these nodes: node names or op text names, '|'-separated (default "
         "none)"},
        {"commute", PassOptionSpec::Kind::kBool,
         "move Q/DQ across MaxPool/Reshape/Transpose/Flatten/Squeeze/Unsqueeze/Concat so that "
         "int8 flows through them (default true)"},
        {"activation-products", PassOptionSpec::Kind::kBool,
         "quantize MatMul/Gemm of two activations too (attention's products; default false: "
         "they stay float for the fused attention kernel)"},
    };
  }

  Expected<bool> run(Graph &g, const PassOptions &options) override {
    Config config;
    DLC_ASSIGN_OR_RETURN(config.rangeRatio, options.getInt("range-ratio", 64));
    if (config.rangeRatio < 1)
      return invalidArgument("option 'range-ratio': expected a factor >= 1, got {}",
                             config.rangeRatio);
    config.mismatchText = options.getString("range-mismatch", "float");
    if (config.mismatchText == "float")
      config.mismatch = Mismatch::kFloat;
    else if (config.mismatchText == "requantize")
      config.mismatch = Mismatch::kRequantize;
    else if (config.mismatchText == "ignore")
      config.mismatch = Mismatch::kIgnore;
    else
      return invalidArgument(
          "option 'range-mismatch': expected float, requantize or ignore, got '{}'",
          config.mismatchText);
    config.onlyText = options.getString("only", "");
    config.excludeText = options.getString("exclude", "");
    config.only = splitBars(config.onlyText);
    config.exclude = splitBars(config.excludeText);
    DLC_ASSIGN_OR_RETURN(config.commute, options.getBool("commute", true));
    DLC_ASSIGN_OR_RETURN(config.activationProducts, options.getBool("activation-products", false));
    DLC_ASSIGN_OR_RETURN(RangeMap ranges, readRanges(g));
    return Inserter(g, options, std::move(config), std::move(ranges)).run();
  }
};

} // namespace

std::unique_ptr<Pass> createInsertFakeQuant() { return std::make_unique<InsertFakeQuant>(); }

} // namespace dlc
