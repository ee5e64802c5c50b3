// MeanVarianceNormalization and the training optimizers as ops with GPU kernels (see
// more_expansions.h).
#include "passes/util/more_expansions.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "ir/match.h"
#include "ir/ops/util.h"
#include "passes/util/node_builder.h"

namespace dlc {

namespace {

Status checkMvn(const Node &n) {
  const Value *x = n.input(0);
  if (!x->shape().isRanked())
    return invalidArgument("its input's rank is not known");
  if (!isFloat(x->dtype()))
    return invalidArgument("its input is {}", dtypeName(x->dtype()));
  const int64_t rank = x->shape().rank();
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t a : n.getInts("axes")) {
    const int64_t axis = a < 0 ? a + rank : a;
    if (axis < 0 || axis >= rank || seen[static_cast<size_t>(axis)])
      return invalidArgument("axes [{}] do not name distinct axes of a rank-{} input",
                             fmt::join(n.getInts("axes"), ", "), rank);
    seen[static_cast<size_t>(axis)] = true;
  }
  return Status::ok();
}

Expected<std::vector<Value *>> expandMvn(Graph &g, Node *n) {
  NodeBuilder b(g, n);
  Value *x = n->input(0);
  const std::vector<std::pair<std::string, Attribute>> keep = {{"keepdims", Attribute(1)}};
  const std::vector<int64_t> axes = n->getInts("axes");
  DLC_ASSIGN_OR_RETURN(Value * mean,
                       b.op(Op::kReduceMean, {x, b.ints("axes", axes)}, "mean", keep));
  DLC_ASSIGN_OR_RETURN(Value * dev, b.op(Op::kSub, {x, mean}, "dev"));
  DLC_ASSIGN_OR_RETURN(Value * sq, b.op(Op::kMul, {dev, dev}, "dev_sq"));
  DLC_ASSIGN_OR_RETURN(Value * var,
                       b.op(Op::kReduceMean, {sq, b.ints("axes2", axes)}, "var", keep));
  DLC_ASSIGN_OR_RETURN(Value * sd, b.op(Op::kSqrt, {var}, "stddev"));
  DLC_ASSIGN_OR_RETURN(Value * den,
                       b.op(Op::kAdd, {sd, b.scalar("epsilon", 1e-9, x->dtype())}, "den"));
  DLC_ASSIGN_OR_RETURN(Value * y, b.op(Op::kDiv, {dev, den}, "output"));
  return std::vector<Value *>{y};
}

/// Per-tensor input groups of an optimizer (X, G, then its states).
int groupsOf(Op op) { return op == Op::kAdam ? 4 : 3; }

Status checkOptimizer(const Node &n) {
  const int groups = groupsOf(n.op());
  if (n.numInputs() < 2 + groups || (n.numInputs() - 2) % groups != 0)
    return invalidArgument("it has {} inputs: R, T, then {} per optimized tensor", n.numInputs(),
                           groups);
  const DType t = n.input(2)->dtype();
  if (!isFloat(t))
    return invalidArgument("it optimizes {} tensors", dtypeName(t));
  for (int i = 2; i < n.numInputs(); ++i)
    if (n.input(i)->dtype() != t || !n.input(i)->shape().isStatic())
      return invalidArgument("its tensors are not all {} of static shapes", dtypeName(t));
  for (int i : {0, 1})
    if (!n.input(i)->shape().isStatic() || n.input(i)->shape().numElements() != 1)
      return invalidArgument("{} is not one element", i == 0 ? "R" : "T");
  if (!isFloat(n.input(0)->dtype()) || !isInteger(n.input(1)->dtype()))
    return invalidArgument("R is {} and T {}: a float and an integer are expected",
                           dtypeName(n.input(0)->dtype()), dtypeName(n.input(1)->dtype()));
  if (n.op() == Op::kMomentum && n.getString("mode") != "standard" &&
      n.getString("mode") != "nesterov")
    return invalidArgument("mode '{}' is neither 'standard' nor 'nesterov'", n.getString("mode"));
  return Status::ok();
}

Expected<std::vector<Value *>> expandOptimizer(Graph &g, Node *n) {
  NodeBuilder b(g, n);
  const int groups = groupsOf(n->op());
  const int count = (n->numInputs() - 2) / groups;
  const DType t = n->input(2)->dtype();
  auto c = [&](const std::string &name, double v) { return b.scalar(name, v, t); };
  auto attr = [&](const char *name) { return static_cast<double>(n->getFloat(name)); };
  // R and T as scalars of the tensors' type, and whether T > 0.
  DLC_ASSIGN_OR_RETURN(Value * r0, b.reshape(n->input(0), {}, "r_scalar"));
  DLC_ASSIGN_OR_RETURN(Value * r, b.op(Op::kCast, {r0}, "r", {{"to", Attribute(t)}}));
  DLC_ASSIGN_OR_RETURN(Value * t0, b.reshape(n->input(1), {}, "t_scalar"));
  DLC_ASSIGN_OR_RETURN(Value * tf, b.op(Op::kCast, {t0}, "t", {{"to", Attribute(t)}}));
  DLC_ASSIGN_OR_RETURN(Value * started, b.op(Op::kGreater, {tf, c("zero", 0)}, "t_positive"));
  // The learning rate of this step.
  Value *lr = r;
  if (n->op() == Op::kAdagrad) {
    DLC_ASSIGN_OR_RETURN(Value * td, b.op(Op::kMul, {tf, c("decay", attr("decay_factor"))}, "td"));
    DLC_ASSIGN_OR_RETURN(Value * den, b.op(Op::kAdd, {td, c("one", 1)}, "lr_den"));
    DLC_ASSIGN_OR_RETURN(lr, b.op(Op::kDiv, {r, den}, "lr"));
  } else if (n->op() == Op::kAdam) {
    DLC_ASSIGN_OR_RETURN(Value * pb, b.op(Op::kPow, {c("beta", attr("beta")), tf}, "beta_t"));
    DLC_ASSIGN_OR_RETURN(Value * pa, b.op(Op::kPow, {c("alpha", attr("alpha")), tf}, "alpha_t"));
    DLC_ASSIGN_OR_RETURN(Value * nb, b.op(Op::kSub, {c("one", 1), pb}, "one_minus_beta_t"));
    DLC_ASSIGN_OR_RETURN(Value * na, b.op(Op::kSub, {c("one_a", 1), pa}, "one_minus_alpha_t"));
    DLC_ASSIGN_OR_RETURN(Value * sb, b.op(Op::kSqrt, {nb}, "sqrt_one_minus_beta_t"));
    DLC_ASSIGN_OR_RETURN(Value * num, b.op(Op::kMul, {r, sb}, "lr_num"));
    DLC_ASSIGN_OR_RETURN(Value * corrected, b.op(Op::kDiv, {num, na}, "lr_corrected"));
    DLC_ASSIGN_OR_RETURN(lr, b.op(Op::kWhere, {started, corrected, r}, "lr"));
  }
  std::vector<Value *> outs(static_cast<size_t>((groups - 1) * count), nullptr);
  for (int i = 0; i < count; ++i) {
    const std::string s = fmt::format("_{}", i);
    Value *x = n->input(2 + i), *grad = n->input(2 + count + i);
    // G' = norm_coefficient * X + G.
    DLC_ASSIGN_OR_RETURN(
        Value * nx, b.op(Op::kMul, {x, c("norm" + s, attr("norm_coefficient"))}, "norm_x" + s));
    DLC_ASSIGN_OR_RETURN(Value * gr, b.op(Op::kAdd, {nx, grad}, "grad" + s));
    Value *newX = nullptr;
    std::vector<Value *> states;
    // Adagrad's and Adam's step: x - lr * num / (sqrt(h) + epsilon).
    auto descend = [&](Value *num, Value *h, const std::string &result) -> Expected<Value *> {
      DLC_ASSIGN_OR_RETURN(Value * sh, b.op(Op::kSqrt, {h}, "sqrt_h" + s));
      DLC_ASSIGN_OR_RETURN(Value * den,
                           b.op(Op::kAdd, {sh, c("eps" + s, attr("epsilon"))}, "den" + s));
      DLC_ASSIGN_OR_RETURN(Value * step, b.op(Op::kMul, {lr, num}, "step" + s));
      DLC_ASSIGN_OR_RETURN(Value * q, b.op(Op::kDiv, {step, den}, "update" + s));
      return b.op(Op::kSub, {x, q}, result + s);
    };
    if (n->op() == Op::kAdagrad) {
      Value *h = n->input(2 + 2 * count + i);
      DLC_ASSIGN_OR_RETURN(Value * g2, b.op(Op::kMul, {gr, gr}, "grad_sq" + s));
      DLC_ASSIGN_OR_RETURN(Value * h2, b.op(Op::kAdd, {h, g2}, "h_new" + s));
      DLC_ASSIGN_OR_RETURN(newX, descend(gr, h2, "x_new"));
      states = {h2};
    } else if (n->op() == Op::kAdam) {
      Value *v = n->input(2 + 2 * count + i), *h = n->input(2 + 3 * count + i);
      const double alpha = attr("alpha"), beta = attr("beta");
      DLC_ASSIGN_OR_RETURN(Value * av, b.op(Op::kMul, {v, c("alpha" + s, alpha)}, "av" + s));
      DLC_ASSIGN_OR_RETURN(Value * ag,
                           b.op(Op::kMul, {gr, c("one_minus_alpha" + s, 1 - alpha)}, "ag" + s));
      DLC_ASSIGN_OR_RETURN(Value * v2, b.op(Op::kAdd, {av, ag}, "v_new" + s));
      DLC_ASSIGN_OR_RETURN(Value * g2, b.op(Op::kMul, {gr, gr}, "grad_sq" + s));
      DLC_ASSIGN_OR_RETURN(Value * bh, b.op(Op::kMul, {h, c("beta" + s, beta)}, "bh" + s));
      DLC_ASSIGN_OR_RETURN(Value * bg,
                           b.op(Op::kMul, {g2, c("one_minus_beta" + s, 1 - beta)}, "bg" + s));
      DLC_ASSIGN_OR_RETURN(Value * h2, b.op(Op::kAdd, {bh, bg}, "h_new" + s));
      DLC_ASSIGN_OR_RETURN(Value * moved, descend(v2, h2, "x_moved"));
      DLC_ASSIGN_OR_RETURN(
          newX,
          b.op(Op::kMul, {moved, c("post" + s, 1 - attr("norm_coefficient_post"))}, "x_new" + s));
      states = {v2, h2};
    } else {
      Value *v = n->input(2 + 2 * count + i);
      const double alpha = attr("alpha");
      // V' = alpha V + b G', b = beta once T > 0, 1 on the first step.
      DLC_ASSIGN_OR_RETURN(
          Value * bt,
          b.op(Op::kWhere, {started, c("beta" + s, attr("beta")), c("first" + s, 1)}, "b" + s));
      DLC_ASSIGN_OR_RETURN(Value * av, b.op(Op::kMul, {v, c("alpha" + s, alpha)}, "av" + s));
      DLC_ASSIGN_OR_RETURN(Value * bg, b.op(Op::kMul, {gr, bt}, "bg" + s));
      DLC_ASSIGN_OR_RETURN(Value * v2, b.op(Op::kAdd, {av, bg}, "v_new" + s));
      Value *dir = v2;
      if (n->getString("mode") == "nesterov") {
        DLC_ASSIGN_OR_RETURN(Value * av2, b.op(Op::kMul, {v2, c("alpha2" + s, alpha)}, "av2" + s));
        DLC_ASSIGN_OR_RETURN(dir, b.op(Op::kAdd, {gr, av2}, "direction" + s));
      }
      DLC_ASSIGN_OR_RETURN(Value * step, b.op(Op::kMul, {lr, dir}, "step" + s));
      DLC_ASSIGN_OR_RETURN(newX, b.op(Op::kSub, {x, step}, "x_new" + s));
      states = {v2};
    }
    outs[static_cast<size_t>(i)] = newX;
    for (size_t k = 0; k < states.size(); ++k)
      outs[static_cast<size_t>((k + 1) * static_cast<size_t>(count) + static_cast<size_t>(i))] =
          states[k];
  }
  return outs;
}

Status checkReverseSequence(const Node &n) {
  const Value *x = n.input(0), *lens = n.input(1);
  if (!x->shape().isStatic() || x->shape().rank() < 2)
    return invalidArgument("its input's shape is not static of rank 2 or more");
  if (!lens->shape().isStatic() || !isInteger(lens->dtype()))
    return invalidArgument("sequence_lens is not an integer tensor of static shape");
  const int64_t b = n.getInt("batch_axis"), t = n.getInt("time_axis");
  if (b == t || b < 0 || b > 1 || t < 0 || t > 1)
    return invalidArgument("batch_axis {} and time_axis {} are not 0 and 1", b, t);
  return Status::ok();
}

/// y[.., t, .., b, ..] = x[.., t < len[b] ? len[b] - 1 - t : t, .., b, ..]: a GatherElements
/// along the time axis with that index (lengths outside [0, T] are not checked: the GPU's
/// gathers clamp indices; the reference backend refuses them).
Expected<std::vector<Value *>> expandReverseSequence(Graph &g, Node *n) {
  NodeBuilder b(g, n);
  Value *x = n->input(0);
  const std::vector<int64_t> shape = x->shape().sizes();
  const int64_t ba = n->getInt("batch_axis"), ta = n->getInt("time_axis");
  const int64_t steps = shape[static_cast<size_t>(ta)];
  std::vector<int64_t> timeShape(shape.size(), 1), batchShape(shape.size(), 1);
  timeShape[static_cast<size_t>(ta)] = steps;
  batchShape[static_cast<size_t>(ba)] = shape[static_cast<size_t>(ba)];
  std::vector<int64_t> iota(static_cast<size_t>(steps));
  for (int64_t i = 0; i < steps; ++i)
    iota[static_cast<size_t>(i)] = i;
  Value *t = b.constant("time", Tensor::vectorI64(iota).reshaped(timeShape));
  DLC_ASSIGN_OR_RETURN(
      Value * l64, b.op(Op::kCast, {n->input(1)}, "lens_i64", {{"to", Attribute(DType::kI64)}}));
  DLC_ASSIGN_OR_RETURN(Value * len, b.reshape(l64, batchShape, "lens"));
  DLC_ASSIGN_OR_RETURN(Value * inside, b.op(Op::kLess, {t, len}, "reversed"));
  DLC_ASSIGN_OR_RETURN(Value * last, b.op(Op::kSub, {len, b.ints("one", {1})}, "last"));
  DLC_ASSIGN_OR_RETURN(Value * from, b.op(Op::kSub, {last, t}, "from_reversed"));
  DLC_ASSIGN_OR_RETURN(Value * idx, b.op(Op::kWhere, {inside, from, t}, "from"));
  DLC_ASSIGN_OR_RETURN(Value * full, b.op(Op::kExpand, {idx, b.ints("shape", shape)}, "index"));
  DLC_ASSIGN_OR_RETURN(Value * y,
                       b.op(Op::kGatherElements, {x, full}, "output", {{"axis", Attribute(ta)}}));
  return std::vector<Value *>{y};
}

Status checkMaxUnpool(const Node &n) {
  if (n.numInputs() > 2 && n.input(2) && !n.input(2)->isConstant())
    return invalidArgument("output_shape is not a constant (a model input is bound as a shape "
                           "input when a GPU session runs it)");
  if (!n.input(0)->shape().isStatic() || !n.output(0)->shape().isStatic())
    return invalidArgument("its shapes are not static");
  if (n.input(1)->dtype() != DType::kI64 || n.input(1)->shape() != n.input(0)->shape())
    return invalidArgument("I is not i64 of X's shape");
  return Status::ok();
}

/// Y = zeros with Y.flat[I.flat[i]] = X.flat[i] (MaxPool's indices address the whole
/// unpooled tensor): a ScatterElements over the flattened tensors.
Expected<std::vector<Value *>> expandMaxUnpool(Graph &g, Node *n) {
  NodeBuilder b(g, n);
  Value *x = n->input(0);
  const std::vector<int64_t> outShape = n->output(0)->shape().sizes();
  // With output_shape, the indices address the shape the attributes give (pads ignored), and
  // that block sits at the start of every axis of the output (ir/eval/pool_eval.cc): the
  // scatter fills it, a Pad at the axes' ends makes the output.
  std::vector<int64_t> yShape = outShape;
  const bool given = n->numInputs() > 2 && n->input(2);
  if (given) {
    const std::vector<int64_t> xs = x->shape().sizes(), kernel = n->getInts("kernel_shape");
    const size_t k = kernel.size();
    const std::vector<int64_t> strides =
        n->hasAttr("strides") ? n->getInts("strides") : std::vector<int64_t>(k, 1);
    for (size_t a = 0; a < k; ++a) {
      yShape[a + 2] = (xs[a + 2] - 1) * strides[a] + kernel[a];
      if (yShape[a + 2] > outShape[a + 2])
        return invalidArgument("output_shape is smaller than the unpooled shape");
    }
  }
  int64_t elements = 1;
  for (int64_t d : yShape)
    elements *= d;
  DLC_ASSIGN_OR_RETURN(
      Value * zeros,
      b.op(Op::kExpand, {b.scalar("zero", 0, x->dtype()), b.ints("flat", {elements})}, "zeros"));
  DLC_ASSIGN_OR_RETURN(Value * xf, b.reshape(x, {-1}, "x_flat"));
  DLC_ASSIGN_OR_RETURN(Value * idx, b.reshape(n->input(1), {-1}, "i_flat"));
  DLC_ASSIGN_OR_RETURN(Value * scattered, b.op(Op::kScatterElements, {zeros, idx, xf}, "scattered",
                                               {{"axis", Attribute(int64_t{0})}}));
  DLC_ASSIGN_OR_RETURN(Value * y, b.reshape(scattered, yShape, given ? "unpooled" : "output"));
  if (!given || yShape == outShape)
    return std::vector<Value *>{y};
  std::vector<int64_t> pads(2 * outShape.size(), 0);
  for (size_t a = 0; a < outShape.size(); ++a)
    pads[outShape.size() + a] = outShape[a] - yShape[a];
  DLC_ASSIGN_OR_RETURN(Value * padded, b.op(Op::kPad, {y, b.ints("pads", pads)}, "output"));
  return std::vector<Value *>{padded};
}

/// DFT's axis (input 2, default -2) and transform length (input 1, default the axis's size),
/// when both are known.
struct DftPlan {
  int64_t axis, len, n, bins, c;
};

Expected<DftPlan> dftPlan(const Node &n) {
  const Value *x = n.input(0);
  if (!x->shape().isStatic() || x->shape().rank() < 2 || !n.output(0)->shape().isStatic())
    return invalidArgument("its shapes are not static");
  if (!isFloat(x->dtype()) || x->dtype() == DType::kF64)
    return invalidArgument("its input is {} (f32, f16 and bf16 are expanded)",
                           dtypeName(x->dtype()));
  const std::vector<int64_t> shape = x->shape().sizes();
  const int64_t rank = static_cast<int64_t>(shape.size());
  DftPlan p{-2, 0, 0, 0, shape.back()};
  if (p.c != 1 && p.c != 2)
    return invalidArgument("its last dim is {}, not 1 (real) or 2 (complex)", p.c);
  if (n.numInputs() > 2 && n.input(2)) {
    auto a = constantInts(n.input(2));
    if (!a || a->size() != 1)
      return invalidArgument("its axis is not a constant");
    p.axis = (*a)[0];
  }
  p.axis = p.axis < 0 ? p.axis + rank : p.axis;
  if (p.axis < 0 || p.axis >= rank - 1)
    return invalidArgument("axis {} is not a signal axis", p.axis);
  p.len = shape[static_cast<size_t>(p.axis)];
  p.n = p.len;
  if (n.numInputs() > 1 && n.input(1)) {
    auto l = constantInts(n.input(1));
    if (!l || l->size() != 1)
      return invalidArgument("dft_length is not a constant");
    p.n = (*l)[0];
  }
  p.bins = n.output(0)->shape().sizes()[static_cast<size_t>(p.axis)];
  if (p.n < 1 || p.len * p.c * 2 * p.bins > (int64_t{1} << 24))
    return invalidArgument("its transform matrix would be {} x {}", p.len * p.c, 2 * p.bins);
  return p;
}

Status checkDft(const Node &n) { return dftPlan(n).status(); }

/// The constant [len * c, 2 * bins] whose product with a signal of `len` samples (c = 1:
/// real; 2: complex, interleaved) gives bins [0, bins) of its length-n transform, re and im
/// interleaved, as the reference computes them (zero rows past n: the truncation).
Value *twiddles(NodeBuilder &b, int64_t len, int64_t c, int64_t n, int64_t bins, bool inverse,
                DType dtype) {
  const double sign = inverse ? 1.0 : -1.0, scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
  std::vector<double> m(static_cast<size_t>(len * c * 2 * bins), 0.0);
  auto at = [&](int64_t row, int64_t col) -> double & {
    return m[static_cast<size_t>(row * 2 * bins + col)];
  };
  for (int64_t t = 0; t < std::min(len, n); ++t)
    for (int64_t k = 0; k < bins; ++k) {
      const double angle =
          2 * std::numbers::pi * static_cast<double>((k * t) % n) / static_cast<double>(n);
      const double cs = std::cos(angle) * scale, sn = sign * std::sin(angle) * scale;
      at(t * c, 2 * k) = cs; // re -> re, re -> im
      at(t * c, 2 * k + 1) = sn;
      if (c == 2) { // im -> re, im -> im
        at(t * c + 1, 2 * k) = -sn;
        at(t * c + 1, 2 * k + 1) = cs;
      }
    }
  return b.constant("twiddles",
                    Tensor::fromVector<double>(DType::kF64, {len * c, 2 * bins}, m).castTo(dtype));
}

/// The transform as one product: the signal moved to rows [.., len * c] (re, im interleaved)
/// times the constant [len * c, 2 * bins] of the reference's twiddles (zero rows past the
/// transform length: the truncation; the padding adds nothing), back to [.., bins, 2].
Expected<std::vector<Value *>> expandDft(Graph &g, Node *n) {
  DLC_ASSIGN_OR_RETURN(DftPlan p, dftPlan(*n));
  NodeBuilder b(g, n);
  Value *x = n->input(0);
  const std::vector<int64_t> shape = x->shape().sizes();
  const int64_t rank = static_cast<int64_t>(shape.size());
  Value *w = twiddles(b, p.len, p.c, p.n, p.bins, n->getInt("inverse") != 0, x->dtype());
  // The signal axis next to the last.
  std::vector<int64_t> perm, moved;
  for (int64_t a = 0; a < rank - 1; ++a)
    if (a != p.axis)
      perm.push_back(a);
  perm.push_back(p.axis);
  perm.push_back(rank - 1);
  Value *v = x;
  int64_t rows = 1;
  for (int64_t a : perm)
    if (a != p.axis && a != rank - 1) {
      rows *= shape[static_cast<size_t>(a)];
      moved.push_back(shape[static_cast<size_t>(a)]);
    }
  const bool transposed = p.axis != rank - 2;
  if (transposed) {
    DLC_ASSIGN_OR_RETURN(v, b.transpose(v, perm, "signal_last"));
  }
  DLC_ASSIGN_OR_RETURN(v, b.reshape(v, {rows, p.len * p.c}, "rows"));
  DLC_ASSIGN_OR_RETURN(v, b.op(Op::kMatMul, {v, w}, "spectrum"));
  moved.push_back(p.bins);
  moved.push_back(2);
  DLC_ASSIGN_OR_RETURN(v, b.reshape(v, moved, transposed ? "spectrum_moved" : "output"));
  if (transposed) {
    std::vector<int64_t> back(perm.size());
    for (size_t i = 0; i < perm.size(); ++i)
      back[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
    DLC_ASSIGN_OR_RETURN(v, b.transpose(v, back, "output"));
  }
  return std::vector<Value *>{v};
}

Status checkStft(const Node &n) {
  const Value *x = n.input(0);
  if (!x->shape().isStatic() || x->shape().rank() != 3 || !n.output(0)->shape().isStatic())
    return invalidArgument("its shapes are not static (frame_step and frame_length constant)");
  if (!isFloat(x->dtype()) || x->dtype() == DType::kF64)
    return invalidArgument("its signal is {} (f32, f16 and bf16 are expanded)",
                           dtypeName(x->dtype()));
  auto step = constantInts(n.input(1));
  if (!step || step->size() != 1 || (*step)[0] < 1)
    return invalidArgument("frame_step is not a positive constant");
  if (n.numInputs() > 2 && n.input(2) && !n.input(2)->shape().isStatic())
    return invalidArgument("the window's shape is not static");
  const int64_t c = x->shape().sizes()[2];
  if (c != 1 && c != 2)
    return invalidArgument("its last dim is {}, not 1 (real) or 2 (complex)", c);
  return Status::ok();
}

/// The frames gathered by a constant index [frames, F], windowed, then one MatMul by the
/// length-F twiddles.
Expected<std::vector<Value *>> expandStft(Graph &g, Node *n) {
  NodeBuilder b(g, n);
  Value *x = n->input(0);
  const std::vector<int64_t> xs = x->shape().sizes(), out = n->output(0)->shape().sizes();
  const int64_t batch = xs[0], c = xs[2], frames = out[1], bins = out[2];
  const int64_t step = (*constantInts(n->input(1)))[0];
  Value *window = n->numInputs() > 2 ? n->input(2) : nullptr;
  int64_t frame = 0;
  if (n->numInputs() > 3 && n->input(3)) {
    auto f = constantInts(n->input(3));
    if (!f || f->size() != 1)
      return invalidArgument("frame_length is not a constant");
    frame = (*f)[0];
  } else if (window) {
    frame = window->shape().sizes()[0];
  } else {
    frame = xs[1];
  }
  std::vector<int64_t> index;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t j = 0; j < frame; ++j)
      index.push_back(f * step + j);
  Value *idx = b.constant("frames_index", Tensor::vectorI64(index).reshaped({frames, frame}));
  DLC_ASSIGN_OR_RETURN(Value * v,
                       b.op(Op::kGather, {x, idx}, "frames", {{"axis", Attribute(int64_t{1})}}));
  if (window) {
    Value *wv = window;
    if (wv->dtype() != x->dtype()) {
      DLC_ASSIGN_OR_RETURN(wv,
                           b.op(Op::kCast, {wv}, "window_cast", {{"to", Attribute(x->dtype())}}));
    }
    DLC_ASSIGN_OR_RETURN(wv, b.reshape(wv, {frame, 1}, "window_column"));
    DLC_ASSIGN_OR_RETURN(v, b.op(Op::kMul, {v, wv}, "windowed"));
  }
  DLC_ASSIGN_OR_RETURN(v, b.reshape(v, {batch * frames, frame * c}, "rows"));
  DLC_ASSIGN_OR_RETURN(
      v, b.op(Op::kMatMul, {v, twiddles(b, frame, c, frame, bins, false, x->dtype())}, "spectrum"));
  DLC_ASSIGN_OR_RETURN(v, b.reshape(v, {batch, frames, bins, 2}, "output"));
  return std::vector<Value *>{v};
}

Status checkGatherNd(const Node &n) {
  const Value *data = n.input(0), *idx = n.input(1);
  if (!data->shape().isStatic() || !idx->shape().isStatic() || !n.output(0)->shape().isStatic())
    return invalidArgument("its shapes are not static");
  if (!isInteger(idx->dtype()))
    return invalidArgument("its indices are {}", dtypeName(idx->dtype()));
  const std::vector<int64_t> ds = data->shape().sizes(), is = idx->shape().sizes();
  const int64_t b = n.getInt("batch_dims");
  if (is.empty() || b < 0 || b >= static_cast<int64_t>(is.size()) ||
      b + is.back() > static_cast<int64_t>(ds.size()) || is.back() < 1)
    return invalidArgument("indices {} do not index data {} with batch_dims {}", idx->shape().str(),
                           data->shape().str(), b);
  return Status::ok();
}

/// A Gather along the first axis of the data flattened over its batch and indexed axes: each
/// index tuple becomes one linear index (negative entries wrapped, as the reference wraps
/// them; the GPU's Gather clamps what stays out of range), plus its batch's offset.
Expected<std::vector<Value *>> expandGatherNd(Graph &g, Node *n) {
  NodeBuilder b(g, n);
  Value *data = n->input(0);
  const std::vector<int64_t> ds = data->shape().sizes(), is = n->input(1)->shape().sizes();
  const int64_t batch = n->getInt("batch_dims"), k = is.back();
  const size_t q = is.size();
  DLC_ASSIGN_OR_RETURN(
      Value * idx, b.op(Op::kCast, {n->input(1)}, "indices_i64", {{"to", Attribute(DType::kI64)}}));
  // Wrap negative entries: idx + dim where idx < 0.
  std::vector<int64_t> dims(ds.begin() + batch, ds.begin() + batch + k), strides(dims.size(), 1);
  for (size_t j = dims.size(); j-- > 1;)
    strides[j - 1] = strides[j] * dims[j];
  DLC_ASSIGN_OR_RETURN(Value * neg, b.op(Op::kLess, {idx, b.ints("zero", {0})}, "negative"));
  DLC_ASSIGN_OR_RETURN(Value * up, b.op(Op::kAdd, {idx, b.ints("dims", dims)}, "wrapped"));
  DLC_ASSIGN_OR_RETURN(idx, b.op(Op::kWhere, {neg, up, idx}, "indices_wrapped"));
  DLC_ASSIGN_OR_RETURN(Value * scaled, b.op(Op::kMul, {idx, b.ints("strides", strides)}, "scaled"));
  DLC_ASSIGN_OR_RETURN(Value * lin, b.op(Op::kReduceSum, {scaled, b.ints("last", {-1})}, "linear",
                                         {{"keepdims", Attribute(int64_t{0})}}));
  int64_t block = 1; // elements of the indexed axes
  for (int64_t d : dims)
    block *= d;
  int64_t batches = 1;
  for (int64_t d = 0; d < batch; ++d)
    batches *= ds[static_cast<size_t>(d)];
  if (batch > 0) {
    // Each tuple's batch: its position's first batch_dims coordinates, linearized.
    std::vector<int64_t> tupleShape(is.begin(), is.end() - 1), offsets;
    int64_t perBatch = 1;
    for (size_t d = static_cast<size_t>(batch); d + 1 < q; ++d)
      perBatch *= is[d];
    for (int64_t t = 0; t < batches * perBatch; ++t)
      offsets.push_back((t / perBatch) * block);
    Value *off = b.constant("batch_offsets", Tensor::vectorI64(offsets).reshaped(tupleShape));
    DLC_ASSIGN_OR_RETURN(lin, b.op(Op::kAdd, {lin, off}, "linear_batched"));
  }
  std::vector<int64_t> flat = {batches * block};
  for (size_t d = static_cast<size_t>(batch + k); d < ds.size(); ++d)
    flat.push_back(ds[d]);
  DLC_ASSIGN_OR_RETURN(Value * table, b.reshape(data, flat, "table"));
  DLC_ASSIGN_OR_RETURN(
      Value * y, b.op(Op::kGather, {table, lin}, "output", {{"axis", Attribute(int64_t{0})}}));
  return std::vector<Value *>{y};
}

Status checkDet(const Node &n) {
  const Value *x = n.input(0);
  if (!x->shape().isStatic() || x->shape().rank() < 2 || !isFloat(x->dtype()))
    return invalidArgument("its input is not a float tensor of static shape, rank 2 or more");
  const std::vector<int64_t> s = x->shape().sizes();
  const int64_t m = s.back();
  if (s[s.size() - 2] != m || m < 1 || m > 3)
    return invalidArgument("its matrices are {} x {} (1 x 1 to 3 x 3 are expanded; larger ones "
                           "need an LU factorization)",
                           s[s.size() - 2], m);
  return Status::ok();
}

/// The determinant by cofactors: the entries picked from the flattened matrices, the terms
/// of the Leibniz formula (Sarrus's rule for 3 x 3) multiplied and summed.
Expected<std::vector<Value *>> expandDet(Graph &g, Node *n) {
  NodeBuilder b(g, n);
  Value *x = n->input(0);
  std::vector<int64_t> s = x->shape().sizes();
  const int64_t m = s.back();
  s.pop_back();
  s.back() = m * m; // [..., m * m]
  DLC_ASSIGN_OR_RETURN(Value * flat, b.reshape(x, s, "entries"));
  std::vector<Value *> e(static_cast<size_t>(m * m));
  for (int64_t i = 0; i < m * m; ++i) {
    DLC_ASSIGN_OR_RETURN(e[static_cast<size_t>(i)],
                         b.pick(flat, i, -1, fmt::format("e{}{}", i / m, i % m)));
  }
  if (m == 1)
    return std::vector<Value *>{e[0]};
  // Each term: (sign, the column of rows 0, 1, 2).
  const std::vector<std::pair<int, std::vector<int>>> terms =
      m == 2 ? std::vector<std::pair<int, std::vector<int>>>{{1, {0, 1}}, {-1, {1, 0}}}
             : std::vector<std::pair<int, std::vector<int>>>{{1, {0, 1, 2}},  {1, {1, 2, 0}},
                                                             {1, {2, 0, 1}},  {-1, {2, 1, 0}},
                                                             {-1, {1, 0, 2}}, {-1, {0, 2, 1}}};
  Value *sum = nullptr;
  for (size_t t = 0; t < terms.size(); ++t) {
    Value *prod = nullptr;
    for (size_t r = 0; r < terms[t].second.size(); ++r) {
      Value *f = e[r * static_cast<size_t>(m) + static_cast<size_t>(terms[t].second[r])];
      if (!prod) {
        prod = f;
        continue;
      }
      DLC_ASSIGN_OR_RETURN(prod, b.op(Op::kMul, {prod, f}, fmt::format("term{}", t)));
    }
    if (!sum) {
      sum = prod; // the first term is positive
      continue;
    }
    DLC_ASSIGN_OR_RETURN(
        sum, b.op(terms[t].first > 0 ? Op::kAdd : Op::kSub, {sum, prod}, fmt::format("sum{}", t)));
  }
  return std::vector<Value *>{sum};
}

Status checkRoiAlign(const Node &n) {
  const Value *x = n.input(0), *rois = n.input(1);
  if (!x->shape().isStatic() || x->shape().rank() != 4 || !rois->shape().isStatic() ||
      !n.output(0)->shape().isStatic())
    return invalidArgument("its shapes are not static");
  if (!isFloat(x->dtype()) || rois->dtype() != x->dtype())
    return invalidArgument("X and rois are {} and {}", dtypeName(x->dtype()),
                           dtypeName(rois->dtype()));
  if (n.getString("mode") != "avg")
    return invalidArgument("mode '{}' (avg is expanded)", n.getString("mode"));
  const std::string &ctm = n.getString("coordinate_transformation_mode");
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    return invalidArgument("coordinate_transformation_mode '{}'", ctm);
  const int64_t s = n.getInt("sampling_ratio");
  if (s <= 0)
    return invalidArgument("sampling_ratio {}: the adaptive grid's size depends on each ROI", s);
  const std::vector<int64_t> xs = x->shape().sizes();
  const int64_t r = rois->shape().sizes()[0];
  const int64_t samples = n.getInt("output_height") * n.getInt("output_width") * s * s * r * xs[1];
  if (samples > (int64_t{1} << 26))
    return invalidArgument("its {} samples would be gathered four times", samples);
  return Status::ok();
}

/// Bilinear sampling as gathers: each ROI's sample coordinates along one axis from its box
/// (ONNX's formula: start + (bin + (i + 0.5) / grid) * bin size), the two neighbours and
/// their weights (0 outside [-1, size]); then X channels-last, the four neighbours of every
/// sample gathered, weighted and summed, and the grid averaged per bin.
Expected<std::vector<Value *>> expandRoiAlign(Graph &g, Node *n) {
  NodeBuilder b(g, n);
  Value *x = n->input(0), *rois = n->input(1);
  const DType t = x->dtype();
  const std::vector<int64_t> xs = x->shape().sizes();
  const int64_t batches = xs[0], channels = xs[1], height = xs[2], width = xs[3];
  const int64_t numRois = rois->shape().sizes()[0], grid = n->getInt("sampling_ratio");
  const int64_t outH = n->getInt("output_height"), outW = n->getInt("output_width");
  const bool halfPixel = n->getString("coordinate_transformation_mode") == "half_pixel";
  const double scale = n->getFloat("spatial_scale");
  auto c = [&](const std::string &name, double v) { return b.scalar(name, v, t); };
  // One axis: the low and high neighbours [R, S] (i64) and their weights [R, S].
  struct Axis {
    Value *low, *high, *wLow, *wHigh;
  };
  auto axis = [&](int64_t col, int64_t bins, int64_t size, const std::string &a) -> Expected<Axis> {
    DLC_ASSIGN_OR_RETURN(Value * p0, b.pick(rois, col, 1, a + "_start_box"));
    DLC_ASSIGN_OR_RETURN(Value * p1, b.pick(rois, col + 2, 1, a + "_end_box"));
    DLC_ASSIGN_OR_RETURN(Value * s0,
                         b.op(Op::kMul, {p0, c(a + "_scale", scale)}, a + "_start_scaled"));
    DLC_ASSIGN_OR_RETURN(Value * s1,
                         b.op(Op::kMul, {p1, c(a + "_scale1", scale)}, a + "_end_scaled"));
    DLC_ASSIGN_OR_RETURN(
        Value * start, b.op(Op::kSub, {s0, c(a + "_offset", halfPixel ? 0.5 : 0.0)}, a + "_start"));
    DLC_ASSIGN_OR_RETURN(Value * len, b.op(Op::kSub, {s1, s0}, a + "_length"));
    if (!halfPixel) {
      DLC_ASSIGN_OR_RETURN(len, b.op(Op::kMax, {len, c(a + "_one", 1.0)}, a + "_length_min1"));
    }
    DLC_ASSIGN_OR_RETURN(
        Value * bin, b.op(Op::kDiv, {len, c(a + "_bins", static_cast<double>(bins))}, a + "_bin"));
    std::vector<double> steps;
    for (int64_t k = 0; k < bins; ++k)
      for (int64_t i = 0; i < grid; ++i)
        steps.push_back(static_cast<double>(k) +
                        (static_cast<double>(i) + 0.5) / static_cast<double>(grid));
    Value *steps1 = b.constant(
        a + "_steps", Tensor::fromVector<double>(DType::kF64, {1, bins * grid}, steps).castTo(t));
    DLC_ASSIGN_OR_RETURN(Value * start2, b.unsqueeze(start, {1}, a + "_start_col"));
    DLC_ASSIGN_OR_RETURN(Value * bin2, b.unsqueeze(bin, {1}, a + "_bin_col"));
    DLC_ASSIGN_OR_RETURN(Value * off, b.op(Op::kMul, {steps1, bin2}, a + "_offsets"));
    DLC_ASSIGN_OR_RETURN(Value * v, b.op(Op::kAdd, {start2, off}, a + "_samples"));
    DLC_ASSIGN_OR_RETURN(Value * ge,
                         b.op(Op::kGreaterOrEqual, {v, c(a + "_minus1", -1.0)}, a + "_ge"));
    DLC_ASSIGN_OR_RETURN(
        Value * le,
        b.op(Op::kLessOrEqual, {v, c(a + "_size", static_cast<double>(size))}, a + "_le"));
    DLC_ASSIGN_OR_RETURN(Value * inside, b.op(Op::kAnd, {ge, le}, a + "_inside"));
    DLC_ASSIGN_OR_RETURN(Value * valid,
                         b.op(Op::kCast, {inside}, a + "_valid", {{"to", Attribute(t)}}));
    DLC_ASSIGN_OR_RETURN(Value * pos, b.op(Op::kMax, {v, c(a + "_zero", 0.0)}, a + "_clamped"));
    DLC_ASSIGN_OR_RETURN(Value * fl, b.op(Op::kFloor, {pos}, a + "_floor"));
    const double last = static_cast<double>(size - 1);
    DLC_ASSIGN_OR_RETURN(Value * edge,
                         b.op(Op::kGreaterOrEqual, {fl, c(a + "_last", last)}, a + "_edge"));
    DLC_ASSIGN_OR_RETURN(Value * lowF,
                         b.op(Op::kWhere, {edge, c(a + "_last1", last), fl}, a + "_low_f"));
    DLC_ASSIGN_OR_RETURN(Value * next, b.op(Op::kAdd, {fl, c(a + "_one2", 1.0)}, a + "_next"));
    DLC_ASSIGN_OR_RETURN(Value * highF,
                         b.op(Op::kWhere, {edge, c(a + "_last2", last), next}, a + "_high_f"));
    DLC_ASSIGN_OR_RETURN(Value * frac, b.op(Op::kSub, {pos, fl}, a + "_frac"));
    DLC_ASSIGN_OR_RETURN(Value * l, b.op(Op::kWhere, {edge, c(a + "_zero2", 0.0), frac}, a + "_l"));
    DLC_ASSIGN_OR_RETURN(Value * h, b.op(Op::kSub, {c(a + "_one3", 1.0), l}, a + "_h"));
    Axis out;
    DLC_ASSIGN_OR_RETURN(out.wLow, b.op(Op::kMul, {h, valid}, a + "_w_low"));
    DLC_ASSIGN_OR_RETURN(out.wHigh, b.op(Op::kMul, {l, valid}, a + "_w_high"));
    DLC_ASSIGN_OR_RETURN(out.low,
                         b.op(Op::kCast, {lowF}, a + "_low", {{"to", Attribute(DType::kI64)}}));
    DLC_ASSIGN_OR_RETURN(out.high,
                         b.op(Op::kCast, {highF}, a + "_high", {{"to", Attribute(DType::kI64)}}));
    return out;
  };
  DLC_ASSIGN_OR_RETURN(Axis ya, axis(1, outH, height, "y"));
  DLC_ASSIGN_OR_RETURN(Axis xa, axis(0, outW, width, "x"));
  const int64_t sy = outH * grid, sx = outW * grid;
  // X channels-last, one row per pixel of every image: [N * H * W, C].
  DLC_ASSIGN_OR_RETURN(Value * xt, b.transpose(x, {0, 2, 3, 1}, "channels_last"));
  DLC_ASSIGN_OR_RETURN(Value * table,
                       b.reshape(xt, {batches * height * width, channels}, "pixels"));
  DLC_ASSIGN_OR_RETURN(Value * bi, b.reshape(n->input(2), {numRois, 1, 1}, "batch_col"));
  DLC_ASSIGN_OR_RETURN(Value * base,
                       b.op(Op::kMul, {bi, b.ints("plane", {height * width})}, "image_base"));
  Value *sum = nullptr;
  int k = 0;
  for (auto [yi, wy] : {std::pair{ya.low, ya.wLow}, std::pair{ya.high, ya.wHigh}})
    for (auto [xi, wx] : {std::pair{xa.low, xa.wLow}, std::pair{xa.high, xa.wHigh}}) {
      const std::string s = fmt::format("_{}", k++);
      DLC_ASSIGN_OR_RETURN(Value * row, b.reshape(yi, {numRois, sy, 1}, "row" + s));
      DLC_ASSIGN_OR_RETURN(Value * col, b.reshape(xi, {numRois, 1, sx}, "col" + s));
      DLC_ASSIGN_OR_RETURN(Value * rw,
                           b.op(Op::kMul, {row, b.ints("width" + s, {width})}, "row_base" + s));
      DLC_ASSIGN_OR_RETURN(Value * at, b.op(Op::kAdd, {rw, col}, "pixel" + s));
      DLC_ASSIGN_OR_RETURN(Value * lin, b.op(Op::kAdd, {at, base}, "index" + s));
      DLC_ASSIGN_OR_RETURN(Value * vals, b.op(Op::kGather, {table, lin}, "values" + s,
                                              {{"axis", Attribute(int64_t{0})}}));
      DLC_ASSIGN_OR_RETURN(Value * wr, b.reshape(wy, {numRois, sy, 1, 1}, "w_row" + s));
      DLC_ASSIGN_OR_RETURN(Value * wc, b.reshape(wx, {numRois, 1, sx, 1}, "w_col" + s));
      DLC_ASSIGN_OR_RETURN(Value * w, b.op(Op::kMul, {wr, wc}, "weight" + s));
      DLC_ASSIGN_OR_RETURN(Value * term, b.op(Op::kMul, {vals, w}, "term" + s));
      if (!sum) {
        sum = term;
        continue;
      }
      DLC_ASSIGN_OR_RETURN(sum, b.op(Op::kAdd, {sum, term}, "sum" + s));
    }
  // [R, SY, SX, C] -> bins and grid apart, the grid averaged, channels first.
  DLC_ASSIGN_OR_RETURN(Value * split,
                       b.reshape(sum, {numRois, outH, grid, outW, grid, channels}, "grid"));
  DLC_ASSIGN_OR_RETURN(Value * mean, b.op(Op::kReduceMean, {split, b.ints("grid_axes", {2, 4})},
                                          "bins", {{"keepdims", Attribute(int64_t{0})}}));
  DLC_ASSIGN_OR_RETURN(Value * y, b.transpose(mean, {0, 3, 1, 2}, "output"));
  return std::vector<Value *>{y};
}

constexpr OpExpansion kExpansions[] = {
    {Op::kRoiAlign, checkRoiAlign, expandRoiAlign},
    {Op::kDet, checkDet, expandDet},
    {Op::kGatherND, checkGatherNd, expandGatherNd},
    {Op::kSTFT, checkStft, expandStft},
    {Op::kDFT, checkDft, expandDft},
    {Op::kMaxUnpool, checkMaxUnpool, expandMaxUnpool},
    {Op::kReverseSequence, checkReverseSequence, expandReverseSequence},
    {Op::kMeanVarianceNormalization, checkMvn, expandMvn},
    {Op::kAdagrad, checkOptimizer, expandOptimizer},
    {Op::kAdam, checkOptimizer, expandOptimizer},
    {Op::kMomentum, checkOptimizer, expandOptimizer},
};

} // namespace

const OpExpansion *findOpExpansion(Op op) {
  for (const OpExpansion &e : kExpansions)
    if (e.op == op)
      return &e;
  return nullptr;
}

} // namespace dlc
