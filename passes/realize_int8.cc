// realize-int8: turns quantized Conv/MatMul/Gemm into int8 products (DESIGN.md
// "Quantization"), the step from a graph that computes with quantization error in float to one
// whose kernels multiply int8 on tensor cores.
//
//     %xd = dequantize_linear(%xq, 0.02)            %acc = matmul_integer(%xq, %wt) {transB=1}
//     %wd = dequantize_linear(%wq, %ws) {axis=1} =>  %f   = cast(%acc) {to=f32}
//     %y  = matmul(%xd, %wd)                         %y   = mul(%f, %s)      s[n] = 0.02 * ws[n]
//
// A compute node is realized when its data input is a per-tensor int8 dequantize_linear with
// zero point 0 (what insert-fake-quant writes, and TensorRT-style QDQ models) and its weight
// an int8 constant dequantized per tensor or per output channel with zero point 0:
//  * MatMul with a 2-D weight [K, N] and Gemm (transA = 0) become matmul_integer with
//    transB = 1 on the weight stored [N, K] (both operands K-contiguous, as int8 tensor-core
//    fragments want them); Gemm's alpha folds into the scale, beta * C into the bias add.
//  * Conv (2-D, group 1) becomes conv_integer with channels_last = 1: input NHWC, weight OHWI,
//    output NHWC (int8 implicit GEMM wants channels innermost). A transpose to NHWC goes in
//    front and one back to NCHW after the bias; the layout then moves forward through
//    elementwise nodes (relu, the residual add, the next quantize_linear: any elementwise or
//    per-tensor Q/DQ node whose other inputs are NHWC already, single elements or constants),
//    so that consecutive int8 convolutions hand each other NHWC tensors and the transposes
//    between them cancel. What still needs NCHW reads it through one transpose.
// The int32 accumulator is cast to float and multiplied by x_scale * w_scale[channel] (then the
// bias added): the requantization the int8 kernels fuse into their epilogue with the
// following relu, residual add and quantize_linear. The reference backend evaluates the same
// nodes exactly (integer products, then float), so GPU and CPU agree.
// Not realized (said under --debug-only=realize-int8): a non-constant or non-int8 weight,
// uint8 or nonzero zero points, per-channel activations, grouped or non-2-D convolutions, a
// reduction length (K, or Conv's input channels) that is not a multiple of 16 (the kernels
// copy 16-byte chunks along it), batched MatMul weights. Dequantized constants left after the
// rewrite (weights of nodes not realized) are folded to float constants.
//
// First, QLinearMatMul, QLinearConv and DynamicQuantizeLinear are written as integer ops with GPU
// kernels, exactly as the reference computes them (passes/util/qlinear_lower.h).
// Last, a quantize_linear back to the grid its input was dequantized from (directly, or
// through a relu) is an integer identity (q, or max(q, zero point)) and is replaced by it.
// Before: types inferred, fake_quant canonicalized (canonicalize-quant). After: quantized
// compute nodes are integer; run dce to drop the transposes nothing reads.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "ir/annotations/fusion_roles.h"
#include "ir/eval/eval.h"
#include "ir/match.h"
#include "passes/registry.h"
#include "passes/util/nhwc.h"
#include "passes/util/qlinear_lower.h"
#include "passes/util/transpose_sink.h"

namespace dlc {

namespace {

using nhwc::kToNchw;
using nhwc::kToNhwc;

/// Element `i` of a tensor as float.
float at(const Tensor &t, int64_t i) { return static_cast<float>(t.elementAsDouble(i)); }

/// Whether `v` is absent or a constant whose every element is 0.
bool zeroOrAbsent(const Value *v) {
  if (!v)
    return true;
  if (!v->isConstant())
    return false;
  const Tensor &t = v->constant();
  for (int64_t i = 0; i < t.numElements(); ++i)
    if (t.elementAsInt64(i) != 0)
      return false;
  return true;
}

/// A per-tensor int8 dequantize_linear with zero point 0: the int8 value and its scale.
struct QuantizedInput {
  Value *q = nullptr;
  float scale = 0;
};

std::optional<QuantizedInput> quantizedInput(const Value *v, std::string &why) {
  const Node *dq = v ? v->producer() : nullptr;
  if (!dq || dq->op() != Op::kDequantizeLinear) {
    why = "its data input is not dequantized";
    return std::nullopt;
  }
  if (dq->input(0)->dtype() != DType::kI8) {
    why = fmt::format("its data input is {}, not int8", dtypeName(dq->input(0)->dtype()));
    return std::nullopt;
  }
  std::optional<double> s = scalarConstant(dq->input(1));
  if (!s || !zeroOrAbsent(dq->input(2)) || dq->input(1)->dtype() != DType::kF32) {
    why = "its data input is not quantized per tensor with a float32 scale and zero point 0";
    return std::nullopt;
  }
  return QuantizedInput{dq->input(0), static_cast<float>(*s)};
}

/// An int8 constant weight dequantized per tensor or along `axis` with zero point 0.
struct QuantizedWeight {
  const Tensor *q = nullptr;
  std::vector<float> scales; // one, or one per index of `axis`
};

std::optional<QuantizedWeight> quantizedWeight(const Value *v, int64_t axis, std::string &why) {
  const Node *dq = v ? v->producer() : nullptr;
  if (!dq || dq->op() != Op::kDequantizeLinear || !dq->input(0)->isConstant() ||
      dq->input(0)->dtype() != DType::kI8) {
    why = "its weight is not a dequantized int8 constant";
    return std::nullopt;
  }
  const Tensor &q = dq->input(0)->constant();
  const Value *s = dq->input(1);
  if (!s->isConstant() || s->dtype() != DType::kF32 || !zeroOrAbsent(dq->input(2))) {
    why = "its weight's scale is not a float32 constant with zero point 0";
    return std::nullopt;
  }
  const Tensor &st = s->constant();
  QuantizedWeight w{&q, {}};
  if (st.numElements() == 1) {
    w.scales = {at(st, 0)};
    return w;
  }
  const int64_t rank = q.rank(), a = dq->getInt("axis");
  if (st.rank() != 1 || (a + rank) % std::max<int64_t>(rank, 1) != axis ||
      st.numElements() != q.shape()[static_cast<size_t>(axis)] || dq->getInt("block_size") != 0) {
    why =
        fmt::format("its weight is not quantized per tensor or per output channel (axis {})", axis);
    return std::nullopt;
  }
  for (int64_t i = 0; i < st.numElements(); ++i)
    w.scales.push_back(at(st, i));
  return w;
}

class RealizeInt8 : public Pass {
public:
  Expected<bool> run(Graph &g, const PassOptions &options) override {
    DLC_ASSIGN_OR_RETURN(bool changed, lowerQLinearOps(g, options));
    for (Node *n : g.nodes()) {
      std::string why;
      const std::string what = n->describe();
      Expected<bool> done = false;
      switch (n->op()) {
      case Op::kMatMul:
      case Op::kGemm:
        done = realizeProduct(g, n, why);
        break;
      case Op::kConv:
        done = realizeConv(g, n, why);
        break;
      default:
        if (isElementwiseOp(n->op()) || n->op() == Op::kQuantizeLinear ||
            n->op() == Op::kDequantizeLinear) {
          DLC_ASSIGN_OR_RETURN(bool moved, nhwc::moveElementwise(g, n));
          changed = changed || moved;
        }
        continue;
      }
      if (!done.hasValue())
        return done.takeStatus();
      if (*done)
        options.debugf("{}: int8 ({})", what, why);
      else if (!why.empty())
        options.debugf("{}: stays float: {}", what, why);
      changed = changed || *done;
    }
    DLC_ASSIGN_OR_RETURN(bool folded, foldDequantizedConstants(g, options));
    DLC_ASSIGN_OR_RETURN(bool requant, foldRequantization(g, options));
    DLC_ASSIGN_OR_RETURN(bool fast, options.getBool("fast-requantize", false));
    bool scales = false;
    if (fast) {
      DLC_ASSIGN_OR_RETURN(scales, foldRequantScales(g, options));
    }
    return changed || folded || requant || scales;
  }

  std::vector<PassOptionSpec> options() const override {
    return {{"fast-requantize", PassOptionSpec::Kind::kBool,
             "fold each int8 product's rescale and bias into its output quantization (scale "
             "and bias divided by the output scale at compile time, the quantization then "
             "divides by 1), and have every other per-tensor quantization of a float "
             "multiply by the scale's reciprocal: no division per element, levels within "
             "one step of the exact requantization (default false)"}};
  }

private:
  static Expected<Value *> add(Graph &g, Op op, std::vector<Value *> inputs, const Node *at,
                               const std::string &name, Node *before,
                               const std::vector<std::pair<std::string, Attribute>> &attrs = {}) {
    return addTypedNode(g, op, std::move(inputs), name, before, *at, attrs);
  }

  static Value *floatConstant(Graph &g, const std::string &name, const std::vector<float> &v,
                              std::vector<int64_t> shape) {
    return g.addConstant(g.uniqueName(name), Tensor::fromVector<float>(DType::kF32, shape, v));
  }

  /// acc (int32) -> cast f32 -> mul by the per-channel scale -> add `bias` (may be null);
  /// the scale runs along the last axis of acc.
  static Expected<Value *> rescale(Graph &g, Node *n, Value *acc, float xScale,
                                   const std::vector<float> &wScales, float alpha, Value *bias) {
    const std::string base = n->name().empty() ? std::string(n->opName()) : n->name();
    DLC_ASSIGN_OR_RETURN(Value * f, add(g, Op::kCast, {acc}, n, base + "/acc_f32", n,
                                        {{"to", Attribute(DType::kF32)}}));
    std::vector<float> s;
    for (float w : wScales)
      s.push_back(alpha * xScale * w);
    std::vector<int64_t> shape =
        s.size() == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{(int64_t)s.size()};
    Value *sc = floatConstant(g, base + "/requant_scale", s, shape);
    DLC_ASSIGN_OR_RETURN(Value * y, add(g, Op::kMul, {f, sc}, n, base + "/rescaled", n));
    if (bias) {
      DLC_ASSIGN_OR_RETURN(y, add(g, Op::kAdd, {y, bias}, n, base + "/biased", n));
    }
    return y;
  }

  /// MatMul [.., M, K] x [K, N] and Gemm.
  static Expected<bool> realizeProduct(Graph &g, Node *n, std::string &why) {
    const bool gemm = n->op() == Op::kGemm;
    if (n->output(0)->dtype() != DType::kF32) {
      why = "its output is not float32";
      return false;
    }
    if (gemm && n->getInt("transA") != 0) {
      why = "Gemm with transA";
      return false;
    }
    const Shape &ws = n->input(1)->shape();
    if (!ws.isStatic() || ws.rank() != 2) {
      why = "its weight is not a 2-D matrix of known shape";
      return false;
    }
    const bool transB = gemm && n->getInt("transB") != 0;
    const int64_t k = transB ? ws[1].value() : ws[0].value();
    if (k % 16 != 0) {
      why = fmt::format("its reduction length {} is not a multiple of 16", k);
      return false;
    }
    auto x = quantizedInput(n->input(0), why);
    if (!x)
      return false;
    auto w = quantizedWeight(n->input(1), transB ? 0 : 1, why);
    if (!w)
      return false;
    if (n->input(0)->shape().rank() < 2) {
      why = "its data input is a vector";
      return false;
    }
    Value *bias = nullptr;
    float alpha = 1.0f;
    if (gemm) {
      alpha = n->getFloat("alpha");
      const float beta = n->getFloat("beta");
      if (n->hasInput(2) && beta != 0.0f) {
        bias = n->input(2);
        if (beta != 1.0f) {
          if (!bias->isConstant() || bias->dtype() != DType::kF32) {
            why = "Gemm's C is scaled by beta but is not a float32 constant";
            return false;
          }
          // A new tensor: constants share their data, and C may be read elsewhere.
          const Tensor &orig = bias->constant();
          Tensor c = Tensor::zeros(DType::kF32, orig.shape());
          for (int64_t i = 0; i < c.numElements(); ++i)
            c.mutableData<float>()[i] = beta * static_cast<float>(orig.elementAsDouble(i));
          bias = g.addConstant(g.uniqueName(bias->name() + ".beta"), c);
        }
      }
    }
    const std::string base = n->name().empty() ? std::string(n->opName()) : n->name();
    Tensor wnk = *w->q;
    if (!transB) {
      DLC_ASSIGN_OR_RETURN(wnk, permuted(*w->q, {1, 0}));
    }
    Value *wt = g.addConstant(g.uniqueName(base + "/weight_nk"), std::move(wnk));
    DLC_ASSIGN_OR_RETURN(Value * acc, add(g, Op::kMatMulInteger, {x->q, wt}, n, base + "/int8", n,
                                          {{"transB", Attribute(int64_t{1})}}));
    DLC_ASSIGN_OR_RETURN(Value * y, rescale(g, n, acc, x->scale, w->scales, alpha, bias));
    replaceOutputNamed(g, n, y);
    why = fmt::format("matmul_integer, K {}", k);
    return true;
  }

  static Expected<bool> realizeConv(Graph &g, Node *n, std::string &why) {
    const Shape &xs = n->input(0)->shape(), &ws = n->input(1)->shape();
    if (n->output(0)->dtype() != DType::kF32) {
      why = "its output is not float32";
      return false;
    }
    if (!xs.isRanked() || xs.rank() != 4 || !ws.isStatic() || n->getInt("group") != 1) {
      why = "only 2-D convolutions with group 1 and a known weight shape run in int8";
      return false;
    }
    const int64_t cin = ws[1].value();
    if (cin % 16 != 0) {
      why = fmt::format("its {} input channels are not a multiple of 16", cin);
      return false;
    }
    // The data input, dequantized in NCHW or (moved there by an earlier rewrite) in NHWC.
    Value *x0 = n->input(0), *x0Nhwc = nhwc::sourceOf(x0);
    const bool fromNhwc = x0Nhwc != nullptr;
    auto x = quantizedInput(fromNhwc ? x0Nhwc : x0, why);
    if (!x)
      return false;
    auto w = quantizedWeight(n->input(1), 0, why);
    if (!w)
      return false;
    const std::string base = n->name().empty() ? std::string(n->opName()) : n->name();
    Value *xt = x->q;
    if (!fromNhwc) {
      DLC_ASSIGN_OR_RETURN(xt, nhwc::of(g, x->q, n));
    }
    DLC_ASSIGN_OR_RETURN(Tensor wohwi, permuted(*w->q, kToNhwc));
    Value *wt = g.addConstant(g.uniqueName(base + "/weight_ohwi"), std::move(wohwi));
    const auto attrs = nhwc::channelsLastAttrs(*n);
    DLC_ASSIGN_OR_RETURN(Value * acc,
                         add(g, Op::kConvInteger, {xt, wt}, n, base + "/int8", n, attrs));
    DLC_ASSIGN_OR_RETURN(Value * y, rescale(g, n, acc, x->scale, w->scales, 1.0f, n->input(2)));
    DLC_ASSIGN_OR_RETURN(Value * back, add(g, Op::kTranspose, {y}, n, base + "/nchw", n,
                                           {{"perm", Attribute(kToNchw)}}));
    replaceOutputNamed(g, n, back);
    why = fmt::format("conv_integer channels-last, {} input channels", cin);
    return true;
  }

  /// The same per-tensor grid: one-element constant scales equal and positive (and normal),
  /// zero points equal (absent: 0 of the quantized type).
  static bool sameGrid(const Node *dq, const Node *q) {
    auto scalar = [](const Value *v) -> std::optional<double> {
      return v && v->isConstant() && v->constant().numElements() == 1
                 ? std::optional<double>(v->constant().elementAsDouble(0))
                 : std::nullopt;
    };
    const std::optional<double> a = scalar(dq->input(1)), b = scalar(q->input(1));
    if (!a || !b || *a != *b || !(*a > 0) || !std::isnormal(static_cast<float>(*a)) ||
        dq->input(1)->dtype() != DType::kF32 || q->input(1)->dtype() != DType::kF32)
      return false;
    auto zero = [&](const Node *n) -> std::optional<int64_t> {
      const Value *z = n->input(2);
      if (!z)
        return 0;
      if (!z->isConstant() || z->constant().numElements() != 1)
        return std::nullopt;
      return z->constant().elementAsInt64(0);
    };
    const std::optional<int64_t> za = zero(dq), zb = zero(q);
    return za && zb && *za == *zb && dq->input(0)->dtype() == q->output(0)->dtype();
  }

  /// Requantization to the grid a value came from is an integer identity, which the epilogue
  /// would otherwise compute in float (a division and a rounding per element):
  ///     quantize_linear(dequantize_linear(q, s, z), s, z)        == q
  ///     quantize_linear(relu(dequantize_linear(q, s, z)), s, z)  == max(q, z)
  /// (8-bit q: (q - z) * s rounded once, divided by s, is within 2^-15 of q - z; and
  /// dequantization is increasing with DQ(z) = 0 when s > 0, so relu(DQ(q)) = DQ(max(q, z))).
  /// Quantizers write these pairs around the relu after a residual add.
  static Expected<bool> foldRequantization(Graph &g, const PassOptions &options) {
    bool changed = false;
    for (Node *q : g.nodes()) {
      if (q->op() != Op::kQuantizeLinear || !q->output(0))
        continue;
      const DType t = q->output(0)->dtype();
      if (t != DType::kI8 && t != DType::kU8)
        continue;
      Node *p = q->input(0)->producer();
      DLC_ASSIGN_OR_RETURN(bool sum, foldQuantizedAdd(g, q, p, options));
      if (sum) {
        changed = true;
        continue;
      }
      const bool relu = p && p->op() == Op::kRelu;
      Node *dq = relu ? p->input(0)->producer() : p;
      if (!dq || dq->op() != Op::kDequantizeLinear || !sameGrid(dq, q))
        continue;
      Value *y = dq->input(0);
      if (relu) {
        Value *z = q->input(2);
        if (!z)
          z = g.addConstant(g.uniqueName(q->output(0)->name() + ".zero"), Tensor::zeros(t, {}));
        DLC_ASSIGN_OR_RETURN(y, add(g, Op::kMax, {y, z}, q, q->output(0)->name() + "/max", q));
        y->producer()->setName(q->name()); // errors still name the model's node
      }
      options.debugf("{}: requantizes its own grid: {}", q->describe(),
                     relu ? "max with the zero point" : "removed");
      if (relu)
        replaceOutputNamed(g, q, y);
      else
        replaceNode(g, q, {y}); // y keeps its own name: others may read it
      changed = true;
    }
    return changed;
  }

  /// quantize_linear(add(dequantize_linear(a, s, z), dequantize_linear(b, s, z)), s, z) ==
  /// saturate(a + b - z): the residual add of two int8 tensors on one grid, in integers. (The
  /// float sum of (a - z) * s and (b - z) * s, each rounded once, divided by s is within
  /// 2^-13 of a + b - 2z for 8-bit a, b; s at most 2^100 keeps it finite.)
  static Expected<bool> foldQuantizedAdd(Graph &g, Node *q, Node *add0,
                                         const PassOptions &options) {
    if (!add0 || add0->op() != Op::kAdd || add0->numInputs() != 2)
      return false;
    Node *da = add0->input(0)->producer(), *db = add0->input(1)->producer();
    for (Node *d : {da, db})
      if (!d || d->op() != Op::kDequantizeLinear || !sameGrid(d, q) ||
          !(d->input(1)->constant().elementAsDouble(0) <= 0x1p100))
        return false;
    const DType t = q->output(0)->dtype();
    const std::string base = q->output(0)->name();
    auto i32 = [&](int64_t v, const char *what) {
      return g.addConstant(g.uniqueName(base + what),
                           Tensor::fromVector<int32_t>(DType::kI32, {}, {int32_t(v)}));
    };
    const Value *zv = q->input(2);
    const int64_t z = zv ? zv->constant().elementAsInt64(0) : 0;
    const int64_t lo = t == DType::kI8 ? -128 : 0, hi = t == DType::kI8 ? 127 : 255;
    auto cast = [&](Value *v, DType to, const char *what) {
      return add(g, Op::kCast, {v}, q, base + what, q, {{"to", Attribute(to)}});
    };
    DLC_ASSIGN_OR_RETURN(Value * a, cast(da->input(0), DType::kI32, "/a_i32"));
    DLC_ASSIGN_OR_RETURN(Value * b, cast(db->input(0), DType::kI32, "/b_i32"));
    DLC_ASSIGN_OR_RETURN(Value * sum, add(g, Op::kAdd, {a, b}, q, base + "/sum", q));
    DLC_ASSIGN_OR_RETURN(Value * c, add(g, Op::kSub, {sum, i32(z, "/zero")}, q, base + "/c", q));
    DLC_ASSIGN_OR_RETURN(Value * top, add(g, Op::kMin, {c, i32(hi, "/hi")}, q, base + "/top", q));
    DLC_ASSIGN_OR_RETURN(Value * sat, add(g, Op::kMax, {top, i32(lo, "/lo")}, q, base + "/sat", q));
    DLC_ASSIGN_OR_RETURN(Value * y, cast(sat, t, "/int"));
    y->producer()->setName(q->name());
    options.debugf("{}: requantizes a sum on its own grid: an integer add", q->describe());
    replaceOutputNamed(g, q, y);
    return true;
  }

  /// The node reading `v`, when `v` has exactly one use and is not a graph output. Uses by
  /// nodes whose results nothing reads (the transposes back to NCHW that moving the layout
  /// left for dce) do not count.
  static Node *onlyUser(const Graph &g, const Value *v) {
    if (!v || g.isOutput(v))
      return nullptr;
    Node *user = nullptr;
    for (const Use &u : v->uses()) {
      bool live = false;
      for (const Value *out : u.node->outputs())
        live = live || (out && (out->hasUses() || g.isOutput(out)));
      if (!live)
        continue;
      if (user)
        return nullptr;
      user = u.node;
    }
    return user;
  }

  /// Which input of the binary `n` is a float32 constant (0 or 1), or -1.
  static int constantOperand(const Node *n) {
    for (int i = 0; i < 2 && n->numInputs() == 2; ++i)
      if (n->input(i) && n->input(i)->isConstant() && n->input(i)->dtype() == DType::kF32)
        return i;
    return -1;
  }

  /// fast-requantize: quantize_linear(y, s, z) with y = [relu](mul(cast_f32(acc), a) [+ b]),
  /// acc an int32 product, a, b and the per-tensor s float32 constants, s > 0. Becomes the
  /// same chain with a / s and b / s (each rounded once) and a scale of 1, which the kernels
  /// quantize without dividing (relu(x) / s == relu(x / s) for s > 0). The level can differ
  /// from the exact one by one step, where (acc * a + b) / s lies within a few roundings of a
  /// half-integer: what TensorRT's int8 kernels do. Off by default, as the rest of dlc
  /// reproduces the reference's quantization exactly.
  /// Any other per-tensor quantization of a float (after a GELU, a layer norm, an attention,
  /// a float conv; the model's input) becomes quantize_linear(mul(x, RN(1/s)), 1, z): one
  /// multiply per element instead of the correctly rounded division (dlc_quant_div, 8
  /// instructions), its level within one step of the exact one in the same way.
  static Expected<bool> foldRequantScales(Graph &g, const PassOptions &options) {
    bool changed = false;
    Value *one = nullptr;
    const std::function<Value *()> unitScale = [&]() {
      if (!one)
        one = g.addConstant(g.uniqueName("unit_scale"),
                            Tensor::fromVector<float>(DType::kF32, {}, {1.0f}));
      return one;
    };
    for (Node *q : g.nodes()) {
      if (q->op() != Op::kQuantizeLinear || !q->output(0) || q->numInputs() < 2)
        continue;
      const Value *sv = q->input(1);
      if (!sv || !sv->isConstant() || sv->dtype() != DType::kF32 ||
          sv->constant().numElements() != 1)
        continue;
      const double s = sv->constant().elementAsDouble(0);
      if (!(s > 0) || !std::isfinite(s) || s == 1.0)
        continue;
      if (foldIntoProduct(g, q, s, unitScale, options)) {
        changed = true;
        continue;
      }
      DLC_ASSIGN_OR_RETURN(bool scaled, multiplyByInverse(g, q, s, unitScale, options));
      changed = changed || scaled;
    }
    return changed;
  }

  /// The product form of foldRequantScales: whether q's chain was folded.
  static bool foldIntoProduct(Graph &g, Node *q, double s,
                              const std::function<Value *()> &unitScale,
                              const PassOptions &options) {
    Node *n = q->input(0)->producer();
    Node *relu = n && n->op() == Op::kRelu ? n : nullptr;
    if (relu)
      n = onlyUser(g, relu->input(0)) == relu ? relu->input(0)->producer() : nullptr;
    Node *bias = n && n->op() == Op::kAdd && constantOperand(n) >= 0 ? n : nullptr;
    if (bias) {
      Value *other = bias->input(1 - constantOperand(bias));
      n = onlyUser(g, other) == bias ? other->producer() : nullptr;
    }
    Node *mul = n && n->op() == Op::kMul && constantOperand(n) >= 0 ? n : nullptr;
    if (!mul || onlyUser(g, mul->output(0)) != (bias ? bias : relu ? relu : q))
      return false;
    const Node *cast = mul->input(1 - constantOperand(mul))->producer();
    if (!cast || cast->op() != Op::kCast || cast->input(0)->dtype() != DType::kI32 ||
        cast->output(0)->dtype() != DType::kF32)
      return false;
    auto divided = [&](Node *at, const char *what) {
      const int i = constantOperand(at);
      const Tensor &c = at->input(i)->constant();
      std::vector<float> v(static_cast<size_t>(c.numElements()));
      for (size_t j = 0; j < v.size(); ++j)
        v[j] = static_cast<float>(c.elementAsDouble(static_cast<int64_t>(j)) / s);
      at->setInput(i, g.addConstant(g.uniqueName(at->output(0)->name() + what),
                                    Tensor::fromVector<float>(DType::kF32, c.shape(), v)));
    };
    divided(mul, "/over_scale");
    if (bias)
      divided(bias, "/over_scale");
    q->setInput(1, unitScale());
    options.debugf("{}: scale {} folded into {}{}", q->describe(), s, mul->describe(),
                   bias ? " and " + bias->describe() : std::string());
    return true;
  }

  /// The other form of foldRequantScales: q(x, s, z) of a float x becomes
  /// q(mul(x, RN(1/s)), 1, z), the multiply in float32 (a 16-bit x is cast first, as the
  /// kernels quantize in float). Integer levels of 8 or 16 bits only, and not where 1/s would
  /// leave float's normal range.
  static Expected<bool> multiplyByInverse(Graph &g, Node *q, double s,
                                          const std::function<Value *()> &unitScale,
                                          const PassOptions &options) {
    Value *x = q->input(0);
    const DType level = q->output(0)->dtype();
    if (level != DType::kI8 && level != DType::kU8 && level != DType::kI16 && level != DType::kU16)
      return false;
    if (!x || !isFloat(x->dtype()) || x->dtype() == DType::kF64 || !(s > 0x1p-60) || !(s < 0x1p60))
      return false;
    const std::string base = q->output(0)->name();
    if (x->dtype() != DType::kF32) {
      DLC_ASSIGN_OR_RETURN(
          x, add(g, Op::kCast, {x}, q, base + "/f32", q, {{"to", Attribute(DType::kF32)}}));
      x->producer()->setName(q->name());
    }
    const float inverse = static_cast<float>(1.0 / s);
    Value *c = g.addConstant(g.uniqueName(base + "/inverse_scale"),
                             Tensor::fromVector<float>(DType::kF32, {}, {inverse}));
    DLC_ASSIGN_OR_RETURN(Value * y, add(g, Op::kMul, {x, c}, q, base + "/scaled", q));
    y->producer()->setName(q->name()); // profiles and errors still name the model's node
    q->setInput(0, y);
    q->setInput(1, unitScale());
    options.debugf("{}: scale {} becomes a multiply by {}", q->describe(), static_cast<float>(s),
                   inverse);
    return true;
  }

  /// Folds dequantize_linear nodes whose inputs are all constants (the weights of nodes that
  /// stay float) into float constants.
  static Expected<bool> foldDequantizedConstants(Graph &g, const PassOptions &options) {
    bool changed = false;
    for (Node *n : g.nodes()) {
      if (n->op() != Op::kDequantizeLinear || !n->output(0) || !n->output(0)->hasUses())
        continue;
      std::vector<Tensor> in;
      bool constant = true;
      for (const Value *v : n->inputs()) {
        constant = constant && (!v || v->isConstant());
        in.push_back(v && v->isConstant() ? v->constant() : Tensor());
      }
      if (!constant)
        continue;
      auto out = eval::evaluate(*n, in);
      if (!out.hasValue()) {
        options.debugf("{}: not folded: {}", n->describe(), out.takeStatus().message());
        continue;
      }
      Value *c = g.addConstant(g.uniqueName(n->output(0)->name() + ".f32"), (*out)[0]);
      replaceOutputNamed(g, n, c);
      changed = true;
    }
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createRealizeInt8() { return std::make_unique<RealizeInt8>(); }

} // namespace dlc
