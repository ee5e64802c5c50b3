#include "passes/util/qlinear_lower.h"

#include <fmt/format.h>

#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/match.h"
#include "passes/util/node_builder.h"

namespace dlc {

namespace {

/// NodeBuilder with the casts, clamps and rounding the quantized lowerings need.
class Builder : public NodeBuilder {
public:
  using NodeBuilder::NodeBuilder;

  Expected<Value *> cast(Value *v, DType to, const std::string &suffix) {
    if (v->dtype() == to)
      return v;
    return op(Op::kCast, {v}, suffix, {{"to", Attribute(to)}});
  }

  /// clip(v, lo, hi) in v's dtype.
  Expected<Value *> clip(Value *v, double lo, double hi, const std::string &suffix) {
    Value *l = scalar(suffix + "_lo", lo, v->dtype());
    Value *h = scalar(suffix + "_hi", hi, v->dtype());
    return op(Op::kClip, {v, l, h}, suffix);
  }

  /// round(v), half to even, with NaN -> 0 (the reference's storeQuantized).
  Expected<Value *> roundNanZero(Value *v, const std::string &suffix) {
    DLC_ASSIGN_OR_RETURN(Value * r, op(Op::kRound, {v}, suffix));
    DLC_ASSIGN_OR_RETURN(Value * nan, op(Op::kIsNaN, {r}, suffix + "_nan"));
    Value *zero = constant(suffix + "_zero", Tensor::zeros(v->dtype(), {}));
    return op(Op::kWhere, {nan, zero, r}, suffix + "_num");
  }
};

double lowest(DType t) { return t == DType::kI8 ? -128 : 0; }
double highest(DType t) { return t == DType::kI8 ? 127 : 255; }

bool scaleShapeOk(const Value *v) { return v && v->shape().isRanked() && v->shape().rank() <= 1; }

/// The reference's requantization of an int32 product: with the float32 multiplier
/// s1 * s2 / ys (s1, s2 float32, shaped to broadcast over acc), saturate(round_half_even(
/// double(acc) * double(multiplier)) + y_zero_point), NaN -> the zero point.
Expected<Value *> requantize(Builder &b, Value *acc, Value *s1, Value *s2, Value *ys, Value *yz,
                             DType yt) {
  DLC_ASSIGN_OR_RETURN(Value * y32, b.cast(ys, DType::kF32, "y_scale_f32"));
  DLC_ASSIGN_OR_RETURN(Value * s12, b.op(Op::kMul, {s1, s2}, "scales"));
  DLC_ASSIGN_OR_RETURN(Value * multiplier, b.op(Op::kDiv, {s12, y32}, "multiplier"));
  DLC_ASSIGN_OR_RETURN(Value * accd, b.cast(acc, DType::kF64, "acc_f64"));
  DLC_ASSIGN_OR_RETURN(Value * md, b.cast(multiplier, DType::kF64, "multiplier_f64"));
  DLC_ASSIGN_OR_RETURN(Value * p, b.op(Op::kMul, {accd, md}, "real"));
  DLC_ASSIGN_OR_RETURN(Value * r, b.roundNanZero(p, "level"));
  DLC_ASSIGN_OR_RETURN(Value * z, b.cast(yz, DType::kF64, "y_zero_f64"));
  DLC_ASSIGN_OR_RETURN(Value * s, b.op(Op::kAdd, {r, z}, "shifted"));
  DLC_ASSIGN_OR_RETURN(Value * c, b.clip(s, lowest(yt), highest(yt), "saturated"));
  return b.cast(c, yt, "y");
}

/// Replaces `n` by `y`, which takes the name of n's output (and its last node n's name, so
/// that errors still name the model's node); false, with `why`, when the shapes disagree
/// (the nodes built are then dead, and dce drops them).
bool replaceWith(Graph &g, Node *n, Value *y, std::string &why) {
  if (y->shape() != n->output(0)->shape()) {
    why = fmt::format("the lowered shape {} is not the node's {}", y->shape().str(),
                      n->output(0)->shape().str());
    return false;
  }
  const std::string name = n->output(0)->name();
  if (!n->name().empty())
    y->producer()->setName(n->name());
  replaceNode(g, n, {y});
  g.renameValue(y, name);
  return true;
}

/// `v` ([M] per output channel, or one element) shaped to broadcast over [N, M, spatial...].
Expected<Value *> perChannel(Builder &b, Value *v, int64_t rank, const std::string &suffix) {
  if (v->shape().rank() != 1 || v->shape().numElements() == std::optional<int64_t>(1))
    return v;
  std::vector<int64_t> shape(static_cast<size_t>(rank - 1), 1);
  shape[0] = -1;
  Value *s = b.constant(
      suffix + "_shape",
      Tensor::fromVector<int64_t>(DType::kI64, {static_cast<int64_t>(shape.size())}, shape));
  return b.op(Op::kReshape, {v, s}, suffix);
}

Expected<bool> lowerQLinearConv(Graph &g, Node *n, std::string &why) {
  const DType yt = n->output(0)->dtype();
  const Value *x = n->input(0);
  if ((yt != DType::kI8 && yt != DType::kU8) || !x->shape().isRanked() || x->shape().rank() < 3) {
    why = "its output is not 8-bit or its input's rank is unknown";
    return false;
  }
  for (int i : {1, 2, 6, 7})
    if (n->input(i)->shape().numElements() != std::optional<int64_t>(1)) {
      why = fmt::format("input {} is not one element", i);
      return false;
    }
  for (int i : {4, 5})
    if (!scaleShapeOk(n->input(i))) {
      why = fmt::format("input {} is not a scalar or a vector", i);
      return false;
    }
  const int64_t rank = x->shape().rank();
  Builder b(g, n);
  std::vector<std::pair<std::string, Attribute>> attrs;
  for (const auto &[k, a] : n->attrs())
    attrs.emplace_back(k, a);
  DLC_ASSIGN_OR_RETURN(
      Value * acc,
      b.op(Op::kConvInteger, {n->input(0), n->input(3), n->input(2), n->input(5)}, "acc", attrs));
  if (n->hasInput(8)) {
    DLC_ASSIGN_OR_RETURN(Value * bias, b.cast(n->input(8), DType::kI32, "bias_i32"));
    DLC_ASSIGN_OR_RETURN(bias, perChannel(b, bias, rank, "bias_channels"));
    DLC_ASSIGN_OR_RETURN(acc, b.op(Op::kAdd, {acc, bias}, "acc_bias"));
  }
  DLC_ASSIGN_OR_RETURN(Value * xs, b.cast(n->input(1), DType::kF32, "x_scale_f32"));
  DLC_ASSIGN_OR_RETURN(Value * ws, b.cast(n->input(4), DType::kF32, "w_scale_f32"));
  DLC_ASSIGN_OR_RETURN(ws, perChannel(b, ws, rank, "w_scale_channels"));
  DLC_ASSIGN_OR_RETURN(Value * y, requantize(b, acc, xs, ws, n->input(6), n->input(7), yt));
  return replaceWith(g, n, y, why);
}

Expected<bool> lowerQLinearMatMul(Graph &g, Node *n, std::string &why) {
  const DType yt = n->output(0)->dtype();
  if (yt != DType::kI8 && yt != DType::kU8) {
    why = fmt::format("its output is {}", dtypeName(yt));
    return false;
  }
  for (int i : {1, 2, 4, 5, 6, 7})
    if (!scaleShapeOk(n->input(i))) {
      why = fmt::format("input {} is not a scalar or a vector", i);
      return false;
    }
  auto single = [](const Value *v) {
    return v->shape().numElements() == std::optional<int64_t>(1);
  };
  if (!n->input(0)->shape().isRanked() ||
      (n->input(0)->shape().rank() != 2 && !(single(n->input(1)) && single(n->input(2))))) {
    why = "a is not a matrix and its scale or zero point is per row";
    return false;
  }
  Builder b(g, n);
  DLC_ASSIGN_OR_RETURN(
      Value * acc,
      b.op(Op::kMatMulInteger, {n->input(0), n->input(3), n->input(2), n->input(5)}, "acc"));
  DLC_ASSIGN_OR_RETURN(Value * as, b.cast(n->input(1), DType::kF32, "a_scale_f32"));
  if (as->shape().rank() == 1) { // per row: [M] -> [M, 1]
    Value *shape = b.constant("row", Tensor::fromVector<int64_t>(DType::kI64, {2}, {-1, 1}));
    DLC_ASSIGN_OR_RETURN(as, b.op(Op::kReshape, {as, shape}, "a_scale_rows"));
  }
  DLC_ASSIGN_OR_RETURN(Value * bs, b.cast(n->input(4), DType::kF32, "b_scale_f32"));
  DLC_ASSIGN_OR_RETURN(Value * y, requantize(b, acc, as, bs, n->input(6), n->input(7), yt));
  return replaceWith(g, n, y, why);
}

Expected<bool> lowerDynamicQuantizeLinear(Graph &g, Node *n, std::string &why) {
  Value *x = n->input(0);
  if (x->dtype() != DType::kF32) {
    why = fmt::format("its input is {}, not float32", dtypeName(x->dtype()));
    return false;
  }
  Builder b(g, n);
  Value *zero = b.constant("zero", Tensor::scalarF32(0.0f));
  DLC_ASSIGN_OR_RETURN(Value * mn, b.op(Op::kReduceMin, {x}, "min", {{"keepdims", Attribute(0)}}));
  DLC_ASSIGN_OR_RETURN(Value * mx, b.op(Op::kReduceMax, {x}, "max", {{"keepdims", Attribute(0)}}));
  DLC_ASSIGN_OR_RETURN(Value * lo, b.op(Op::kMin, {mn, zero}, "lo"));
  DLC_ASSIGN_OR_RETURN(Value * hi, b.op(Op::kMax, {mx, zero}, "hi"));
  DLC_ASSIGN_OR_RETURN(Value * span, b.op(Op::kSub, {hi, lo}, "span"));
  Value *levels = b.constant("levels", Tensor::scalarF32(255.0f));
  DLC_ASSIGN_OR_RETURN(Value * step, b.op(Op::kDiv, {span, levels}, "step"));
  DLC_ASSIGN_OR_RETURN(Value * flat, b.op(Op::kEqual, {hi, lo}, "flat"));
  Value *one = b.constant("one", Tensor::scalarF32(1.0f));
  DLC_ASSIGN_OR_RETURN(Value * scale, b.op(Op::kWhere, {flat, one, step}, "scale"));
  DLC_ASSIGN_OR_RETURN(Value * q, b.op(Op::kDiv, {lo, scale}, "lo_levels"));
  DLC_ASSIGN_OR_RETURN(Value * iz, b.op(Op::kSub, {zero, q}, "zero_real"));
  DLC_ASSIGN_OR_RETURN(Value * cz, b.clip(iz, 0, 255, "zero_clipped"));
  DLC_ASSIGN_OR_RETURN(Value * rz, b.roundNanZero(cz, "zero_level"));
  DLC_ASSIGN_OR_RETURN(Value * zp, b.cast(rz, DType::kU8, "zero_point"));
  DLC_ASSIGN_OR_RETURN(Value * y, b.op(Op::kQuantizeLinear, {x, scale, zp}, "y"));
  std::vector<std::string> names;
  for (int i = 0; i < 3; ++i)
    names.push_back(n->output(i) ? n->output(i)->name() : "");
  replaceNode(g, n, {y, scale, zp});
  Value *outs[] = {y, scale, zp};
  for (int i = 0; i < 3; ++i)
    if (!names[static_cast<size_t>(i)].empty())
      g.renameValue(outs[i], names[static_cast<size_t>(i)]);
  why.clear();
  return true;
}

} // namespace

Expected<bool> lowerQLinearOps(Graph &g, const PassOptions &options) {
  bool changed = false;
  for (Node *n : g.nodes()) {
    if (n->op() != Op::kQLinearMatMul && n->op() != Op::kQLinearConv &&
        n->op() != Op::kDynamicQuantizeLinear)
      continue;
    std::string why;
    const std::string what = n->describe();
    DLC_ASSIGN_OR_RETURN(bool done, n->op() == Op::kQLinearMatMul ? lowerQLinearMatMul(g, n, why)
                                    : n->op() == Op::kQLinearConv
                                        ? lowerQLinearConv(g, n, why)
                                        : lowerDynamicQuantizeLinear(g, n, why));
    if (done)
      options.debugf("{}: written as integer ops with GPU kernels", what);
    else
      options.debugf("{}: left to the reference backend: {}", what, why);
    changed = changed || done;
  }
  return changed;
}

} // namespace dlc
