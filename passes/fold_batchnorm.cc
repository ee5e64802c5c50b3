// fold-batchnorm: removes BatchNormalization in inference.
//
// With constant parameters a BatchNormalization is the per-channel affine map y = x * s + t,
// s = scale / sqrt(var + epsilon), t = B - mean * s (channel = dim 1 of x; a 1-D x has one
// channel). Two rewrites, tried in this order:
//  1. Fold: when x comes from a Conv, ConvTranspose or Gemm whose output only the BN uses, with
//     constant weights (and constant bias / C, or none), the map goes into new constant weights
//     and bias and the BN disappears:
//       Conv           W [C_out, C_in/group, k...]: W[o] *= s[o];        bias' = bias * s + t
//       ConvTranspose  W [C_in, C_out/group, k...]: W[i, j] *= s[g * C_out/group + j], g the
//                      group of input channel i;                         bias' = bias * s + t
//       Gemm           B column n (B[k, n], or B[n, k] with transB) *= s[n];
//                      C' = beta * C * s + t (shape [N], or [M, N] when C varies along M), beta 1
//  2. Otherwise the BN becomes mul(x, s) and add(_, t) with s and t constants shaped [C, 1, ...]
//     (rank of x minus one), so it broadcasts over x and is elementwise for fusion.
// The arithmetic is done in double and rounded once to the weights' dtype (x's dtype for the
// mul/add constants). The new value keeps the BN output's name and its measured range
// (quant.ranges of calibration, ir/annotations/quant_ranges.h): the folded Conv/Gemm or the add
// takes the BN's range, or loses its own when the BN had none (it measured the value before the
// BN). Constants left unused go.
//
// Before: types inferred, parameters folded to constants (fold-constants). After: no BN with
// constant parameters and training_mode=0 is left.
// Not done here: BN in training mode or whose running statistics outputs are used, BN with
// non-constant parameters (each refusal is in --debug-only=fold-batchnorm); folding into
// MatMul (its weights have no channel axis of their own).
#include <cmath>

#include "ir/annotations/quant_ranges.h"
#include "ir/dtype_bulk.h"
#include "ir/match.h"
#include "ir/parallel.h"
#include "passes/registry.h"

namespace dlc {

namespace {

/// y = x * scale[c] + shift[c].
struct ChannelMap {
  std::vector<double> scale, shift;
};

Tensor fromDoubles(const std::vector<int64_t> &shape, const std::vector<double> &values,
                   DType dtype) {
  return Tensor::fromVector<double>(DType::kF64, shape, values).castTo(dtype);
}

/// `t` with each run of `block` consecutive elements multiplied by scaleOf(run index), in t's
/// dtype and rounded as fromDoubles rounds (each product in double, then float, then f16 or
/// bf16): fromDoubles(shape, products, dtype) without a double copy of the whole weight.
template <class F> Tensor scaleBlocks(const Tensor &t, int64_t block, F scaleOf) {
  const int64_t n = t.numElements();
  const DType dtype = t.dtype();
  if (dtype != DType::kF32 && dtype != DType::kF64 && dtype != DType::kF16 &&
      dtype != DType::kBF16) {
    std::vector<double> v = t.toDoubleVector();
    for (int64_t i = 0; i < n; ++i)
      v[static_cast<size_t>(i)] *= scaleOf(i / block);
    return fromDoubles(t.shape(), v, dtype);
  }
  Tensor out = Tensor::zeros(dtype, t.shape());
  const size_t bs = static_cast<size_t>(block);
  auto scaleRange = [&](int64_t first, int64_t last) { // blocks [first, last)
    std::vector<float> buf(bs);
    for (int64_t b = first; b < last; ++b) {
      const double s = scaleOf(b);
      const size_t at = static_cast<size_t>(b * block);
      if (dtype == DType::kF32) {
        const float *src = t.data<float>() + at;
        float *dst = out.mutableData<float>() + at;
        for (size_t i = 0; i < bs; ++i)
          dst[i] = static_cast<float>(src[i] * s);
      } else if (dtype == DType::kF64) {
        const double *src = t.data<double>() + at;
        double *dst = out.mutableData<double>() + at;
        for (size_t i = 0; i < bs; ++i)
          dst[i] = src[i] * s;
      } else { // f16, bf16: through float, as castTo from double rounds
        const bool half = dtype == DType::kF16;
        const uint16_t *src = t.data<uint16_t>() + at;
        uint16_t *dst = out.mutableData<uint16_t>() + at;
        half ? halfToFloat(src, buf.data(), bs) : bf16ToFloat(src, buf.data(), bs);
        for (float &v : buf)
          v = static_cast<float>(static_cast<double>(v) * s);
        half ? floatToHalf(buf.data(), dst, bs) : floatToBf16(buf.data(), dst, bs);
      }
    }
  };
  // A big weight (ResNet-50's 2.4M-element convolutions) on a few threads: each block is
  // scaled alone, so the result is the same bytes; `dlc compile` of a model folds every BN.
  if (n == 0 || block <= 0)
    return out;
  const int64_t blocks = n / block; // whole blocks: a weight is rows of `block` elements
  parallelRanges(blocks, threadsFor(static_cast<uint64_t>(t.byteSize()), uint64_t{2} << 20, blocks),
                 scaleRange);
  return out;
}

/// The BN's per-channel map, or a refusal.
Expected<ChannelMap> channelMap(const Node &bn) {
  if (bn.getInt("training_mode") != 0)
    return invalidArgument("training_mode is not 0");
  for (int i = 1; i < bn.numOutputs(); ++i)
    if (!isUnused(bn.output(i)))
      return invalidArgument("its running statistics output {} is used", i);
  const Value *x = bn.input(0);
  if (!x || !x->shape().isRanked() || x->shape().rank() == 0 || !isFloat(x->dtype()))
    return invalidArgument("input '{}' is not a float tensor of known rank",
                           x ? x->name() : std::string("?"));
  const char *names[] = {"", "scale", "B", "input_mean", "input_var"};
  std::vector<std::vector<double>> p(5);
  for (int i = 1; i <= 4; ++i) {
    const Tensor *t = constantInput(bn, i);
    if (!t)
      return invalidArgument("{} is not a constant", names[i]);
    p[static_cast<size_t>(i)] = t->toDoubleVector();
    if (p[static_cast<size_t>(i)].size() != p[1].size())
      return invalidArgument("{} has {} elements, scale has {}", names[i], p[i].size(),
                             p[1].size());
  }
  const Dim channels = x->shape().rank() == 1 ? Dim(1) : x->shape()[1];
  if (channels.isKnown() && channels.value() != static_cast<int64_t>(p[1].size()))
    return invalidArgument("x has {} channels, the parameters {}", channels.value(), p[1].size());
  const double eps = bn.getFloat("epsilon");
  ChannelMap m;
  for (size_t c = 0; c < p[1].size(); ++c) {
    double s = p[1][c] / std::sqrt(p[4][c] + eps);
    m.scale.push_back(s);
    m.shift.push_back(p[2][c] - p[3][c] * s);
  }
  return m;
}

/// The new weight and bias (or C) of a foldable producer; the producer is not changed yet.
struct Folded {
  Tensor weight, bias;
};

Expected<Folded> foldConv(const Node &p, const ChannelMap &m) {
  const Tensor &w = *constantInput(p, 1);
  const size_t channels = m.scale.size();
  if (w.rank() < 2)
    return invalidArgument("its weight has rank {}", w.rank());
  const bool transposed = p.op() == Op::kConvTranspose;
  const int64_t group = p.getInt("group");
  const int64_t outChannels = transposed ? w.shape()[1] * group : w.shape()[0];
  if (outChannels != static_cast<int64_t>(channels))
    return invalidArgument("it has {} output channels, the BN {}", outChannels, channels);
  const int64_t inner = w.numElements() / (w.shape()[0] * w.shape()[1]);
  const int64_t inPerGroup = w.shape()[0] / group, outPerGroup = w.shape()[1];
  // Element (i, j, k...) of the weight scales by the BN scale of its output channel: i for a
  // Conv (a whole row), (i / inPerGroup, j) for a ConvTranspose (one kernel window).
  Tensor folded =
      transposed
          ? scaleBlocks(w, inner,
                        [&](int64_t ij) {
                          const int64_t i = ij / w.shape()[1], j = ij % w.shape()[1];
                          return m.scale[static_cast<size_t>((i / inPerGroup) * outPerGroup + j)];
                        })
          : scaleBlocks(w, w.shape()[1] * inner,
                        [&](int64_t i) { return m.scale[static_cast<size_t>(i)]; });
  std::vector<double> bias(channels, 0.0);
  if (const Tensor *b = constantInput(p, 2))
    bias = b->toDoubleVector();
  if (bias.size() != channels)
    return invalidArgument("its bias has {} elements, not {}", bias.size(), channels);
  for (size_t c = 0; c < channels; ++c)
    bias[c] = bias[c] * m.scale[c] + m.shift[c];
  return Folded{std::move(folded), fromDoubles({static_cast<int64_t>(channels)}, bias, w.dtype())};
}

Expected<Folded> foldGemm(const Node &p, const ChannelMap &m) {
  const Tensor &b = *constantInput(p, 1);
  const bool transB = p.getInt("transB") != 0;
  const int64_t n = static_cast<int64_t>(m.scale.size());
  if (b.rank() != 2 || b.shape()[transB ? 0 : 1] != n)
    return invalidArgument("its B has shape [{}], not {} columns", fmt::join(b.shape(), ","), n);
  std::vector<double> bv = b.toDoubleVector();
  for (int64_t i = 0; i < b.numElements(); ++i)
    bv[static_cast<size_t>(i)] *= m.scale[static_cast<size_t>(transB ? i / b.shape()[1] : i % n)];

  // C' = beta * C * s + t, over [N] when C does not vary along M, else over [M, N].
  const Tensor *c = constantInput(p, 2);
  const double beta = p.getFloat("beta");
  std::vector<int64_t> cShape = c ? c->shape() : std::vector<int64_t>{};
  bool alongM = cShape.size() == 2 && cShape[0] != 1;
  int64_t rows = 1;
  if (alongM) {
    const Shape &y = p.output(0)->shape();
    if (!y.isRanked() || y.rank() != 2 || !y[0].isKnown() || y[0].value() != cShape[0])
      return invalidArgument("its C has shape [{}] and the output {}", fmt::join(cShape, ","),
                             y.str());
    rows = cShape[0];
  }
  std::vector<double> cv = c ? c->toDoubleVector() : std::vector<double>{};
  std::vector<double> out(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double value = 0;
      if (c) {
        int64_t cols = cShape.empty() ? 1 : cShape.back();
        int64_t at = (cShape.size() == 2 && cShape[0] != 1 ? r * cols : 0) + (cols == 1 ? 0 : j);
        value = beta * cv[static_cast<size_t>(at)];
      }
      size_t k = static_cast<size_t>(j);
      out[static_cast<size_t>(r * n + j)] = value * m.scale[k] + m.shift[k];
    }
  std::vector<int64_t> outShape = alongM ? std::vector<int64_t>{rows, n} : std::vector{n};
  return Folded{fromDoubles(b.shape(), bv, b.dtype()), fromDoubles(outShape, out, b.dtype())};
}

/// Why the BN's producer cannot absorb it; empty when it can.
std::string foldRefusal(const Node &bn, const Node *p) {
  if (!p)
    return "its input is not produced by a node";
  if (p->op() != Op::kConv && p->op() != Op::kConvTranspose && p->op() != Op::kGemm)
    return fmt::format("its input comes from {}, not Conv/ConvTranspose/Gemm", p->describe());
  const Value *out = bn.input(0);
  if (out->uses().size() != 1 || bn.graph()->isOutput(out))
    return fmt::format("%{} has {} uses", out->name(),
                       out->uses().size() + (bn.graph()->isOutput(out) ? 1 : 0));
  if (p->device() != bn.device())
    return fmt::format("{} is on another device", p->describe());
  if (!constantInput(*p, 1))
    return fmt::format("the weight of {} is not a constant", p->describe());
  if (p->hasInput(2) && !constantInput(*p, 2))
    return fmt::format("the bias of {} is not a constant", p->describe());
  return "";
}

/// Points input `i` of `n` at `v` (appending absent trailing inputs); erases the old input if
/// it was a constant that nothing else uses.
void replaceInput(Graph &g, Node &n, int i, Value *v) {
  while (n.numInputs() <= i)
    n.appendInput(nullptr);
  Value *old = n.input(i);
  n.setInput(i, v);
  if (old && old->isConstant() && isUnused(old))
    g.eraseConstant(old);
}

/// Replaces `bn` by `to`, which takes over the BN output's name; its parameters go when
/// nothing else uses them.
void replaceBn(Graph &g, Node *bn, Value *to) {
  std::string name = bn->output(0)->name();
  Node *producer = to->producer();
  const Attribute *range = bn->findAttr(kQuantRangesAttr);
  if (range && range->kind() == AttrKind::kFloats && range->floats().size() >= 2)
    producer->setAttr(
        std::string(kQuantRangesAttr),
        Attribute(std::vector<float>(range->floats().begin(), range->floats().begin() + 2)));
  else
    producer->removeAttr(kQuantRangesAttr);
  std::vector<Value *> params(bn->inputs().begin() + 1, bn->inputs().end());
  replaceNode(g, bn, {to});
  g.renameValue(to, name);
  for (Value *v : params)
    if (v && v->isConstant() && isUnused(v))
      g.eraseConstant(v);
}

class FoldBatchNorm : public Pass {
public:
  Expected<bool> run(Graph &g, const PassOptions &options) override {
    bool changed = false;
    for (Node *bn : g.nodes()) {
      if (bn->op() != Op::kBatchNormalization)
        continue;
      Expected<ChannelMap> m = channelMap(*bn);
      if (!m) {
        options.debugf("{}: not folded: {}", bn->describe(), m.status().message());
        continue;
      }
      Node *p = bn->input(0)->producer();
      std::string refusal = foldRefusal(*bn, p);
      if (refusal.empty()) {
        Expected<Folded> f = p->op() == Op::kGemm ? foldGemm(*p, *m) : foldConv(*p, *m);
        if (f) {
          options.debugf("{}: folded into {}", bn->describe(), p->describe());
          fold(g, bn, p, *f);
          changed = true;
          continue;
        }
        refusal = fmt::format("{}: {}", p->describe(), f.status().message());
      }
      options.debugf("{}: not folded into its producer: {}; rewritten as mul + add", bn->describe(),
                     refusal);
      toMulAdd(g, bn, *m); // erases bn
      changed = true;
    }
    return changed;
  }

private:
  static void fold(Graph &g, Node *bn, Node *p, const Folded &f) {
    Value *w = g.addConstant(g.uniqueName(p->input(1)->name() + ".bn"), f.weight);
    std::string biasName =
        p->hasInput(2) ? p->input(2)->name() + ".bn" : p->output(0)->name() + ".bias";
    Value *b = g.addConstant(g.uniqueName(biasName), f.bias);
    replaceInput(g, *p, 1, w);
    replaceInput(g, *p, 2, b);
    if (p->op() == Op::kGemm)
      p->setAttr("beta", Attribute(1.0f));
    replaceBn(g, bn, p->output(0));
  }

  static void toMulAdd(Graph &g, Node *bn, const ChannelMap &m) {
    Value *x = bn->input(0);
    std::vector<int64_t> shape(static_cast<size_t>(std::max<int64_t>(x->shape().rank() - 1, 1)), 1);
    shape[0] = static_cast<int64_t>(m.scale.size());
    std::string base = bn->output(0)->name();
    Value *s =
        g.addConstant(g.uniqueName(base + ".scale"), fromDoubles(shape, m.scale, x->dtype()));
    Value *t =
        g.addConstant(g.uniqueName(base + ".shift"), fromDoubles(shape, m.shift, x->dtype()));
    Node *mul = g.createNode(Op::kMul, {x, s}, 1, bn->name() + ".mul", bn);
    Node *add = g.createNode(Op::kAdd, {mul->output(0), t}, 1, bn->name() + ".add", bn);
    for (Node *n : {mul, add}) {
      n->output(0)->setType(x->type());
      n->setDevice(bn->device());
    }
    replaceBn(g, bn, add->output(0));
  }
};

} // namespace

std::unique_ptr<Pass> createFoldBatchNorm() { return std::make_unique<FoldBatchNorm>(); }

} // namespace dlc
