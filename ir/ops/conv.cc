// Convolutions: Conv, ConvInteger, ConvTranspose. The window arithmetic is in conv_util.h.
#include "ir/ops/conv_util.h"
#include "ir/ops/nn_parts.h"
#include "ir/ops/nn_util.h"
#include "ir/ops/util.h"

namespace dlc::ops {

namespace {

std::vector<AttrSpec> convAttrs() {
  return {stringAttr("auto_pad", "NOTSET"),
          optionalAttr("dilations", AttrKind::kInts),
          intAttr("group", 1),
          optionalAttr("kernel_shape", AttrKind::kInts),
          optionalAttr("pads", AttrKind::kInts),
          optionalAttr("strides", AttrKind::kInts)};
}

/// The weight's spatial dims when it is ranked and they are all known.
std::optional<std::vector<int64_t>> weightKernel(const Shape &w) {
  if (!w.isRanked())
    return std::nullopt;
  std::vector<int64_t> k;
  for (int64_t i = 2; i < w.rank(); ++i) {
    if (!w[i].isKnown())
      return std::nullopt;
    k.push_back(w[i].value());
  }
  return k;
}

/// Checks that input X (0) and weight W (1) are ranked alike, rank >= 3.
Status checkConvRanks(const InferContext &ctx) {
  DLC_RETURN_IF_ERROR(expectMinRank(ctx, 0, 3, "input X"));
  const Shape &x = ctx.inputType(0).shape, &w = ctx.inputType(1).shape;
  if (x.isRanked() && w.isRanked() && w.rank() != x.rank())
    return ctx.error("weight W must have rank {} like input X, got rank {}", x.rank(), w.rank());
  return Status::ok();
}

/// An optional bias input of shape [M].
Status checkBias(const InferContext &ctx, int i, const Dim &outChannels) {
  DLC_RETURN_IF_ERROR(expectRank(ctx, i, 1, "bias B"));
  if (!ctx.hasInput(i) || !ctx.inputType(i).shape.isRanked())
    return Status::ok();
  const Dim &b = ctx.inputType(i).shape[0];
  if (!dimsCompatible(b, outChannels))
    return ctx.error("bias B has {} elements but there are {} output channels", b.str(),
                     outChannels.str());
  return Status::ok();
}

/// Conv and ConvInteger: Y = [N, M, spatial...] from X [N, C, ...] and W [M, C/group, k...]
/// (channels first; `x` and `w` are those shapes). Returns Y's shape.
Expected<Shape> convOutputShape(InferContext &ctx, const Shape &x, const Shape &w, int biasInput) {
  const Node &node = ctx.node();
  int64_t group = node.getInt("group");
  if (group < 1)
    return ctx.error("attribute 'group' must be positive, got {}", group);
  DLC_RETURN_IF_ERROR(checkConvRanks(ctx));
  Dim outChannels = w.isRanked() && w.rank() >= 1 ? w[0] : Dim::unknown();
  if (w.isRanked() && w.rank() >= 2) {
    const Dim &wc = w[1];
    if (x.isRanked() && x[1].isKnown() && wc.isKnown() && x[1].value() != wc.value() * group)
      return ctx.error("input channels ({}) must equal weight channels ({}) * group ({})",
                       x[1].value(), wc.value(), group);
    if (outChannels.isKnown() && outChannels.value() % group != 0)
      return ctx.error("output channels ({}) must be divisible by group ({})", outChannels.value(),
                       group);
  }
  if (biasInput >= 0)
    DLC_RETURN_IF_ERROR(checkBias(ctx, biasInput, outChannels));
  if (!x.isRanked())
    return Shape::unranked();
  std::optional<std::vector<int64_t>> wk = weightKernel(w);
  DLC_ASSIGN_OR_RETURN(WindowGeometry g,
                       readWindowGeometry(node, x.rank() - 2, wk ? &*wk : nullptr, {}));
  return windowOutputShape(g, x, outChannels);
}

/// `s` with dim `from` moved to position `to` (unranked stays unranked).
Shape moveDim(const Shape &s, int64_t from, int64_t to) {
  if (!s.isRanked() || s.rank() <= std::max(from, to))
    return s;
  std::vector<Dim> d = s.dims();
  Dim moved = d[static_cast<size_t>(from)];
  d.erase(d.begin() + from);
  d.insert(d.begin() + to, moved);
  return Shape(std::move(d));
}

/// Conv and ConvInteger: with channels_last = 1 (dlc's layout for its GPU kernels: set by the
/// layout pass on 16-bit Convs, by realize-int8 on int8 ones) X is [N, spatial..., C], W
/// [M, k..., C] and Y [N, spatial..., M], group 1. Y has dtype `out` (X's when kUnknown);
/// `biasInput`: the bias input's index, -1 for none.
Status inferConvLayout(InferContext &ctx, DType out, int biasInput) {
  const Shape &x = ctx.inputType(0).shape, &w = ctx.inputType(1).shape;
  if (out == DType::kUnknown)
    out = ctx.inputType(0).dtype;
  if (ctx.node().getInt("channels_last") == 0) {
    DLC_ASSIGN_OR_RETURN(Shape y, convOutputShape(ctx, x, w, biasInput));
    ctx.setOutputType(0, TensorType(out, std::move(y)));
    return Status::ok();
  }
  if (ctx.node().getInt("group") != 1)
    return ctx.error("channels_last supports group 1 only, got group {}",
                     ctx.node().getInt("group"));
  DLC_RETURN_IF_ERROR(checkConvRanks(ctx));
  const int64_t r = x.isRanked() ? x.rank() : w.rank();
  DLC_ASSIGN_OR_RETURN(Shape y,
                       convOutputShape(ctx, moveDim(x, r - 1, 1), moveDim(w, r - 1, 1), biasInput));
  ctx.setOutputType(0, TensorType(out, moveDim(y, 1, r - 1)));
  return Status::ok();
}

Status inferConv(InferContext &ctx) { return inferConvLayout(ctx, DType::kUnknown, 2); }

Status inferConvInteger(InferContext &ctx) { return inferConvLayout(ctx, DType::kI32, -1); }

/// ConvTranspose: X [N, C, ...], W [C, M/group, k...] -> Y [N, M, spatial...].
Status inferConvTranspose(InferContext &ctx) {
  const Node &node = ctx.node();
  DType dtype = ctx.inputType(0).dtype;
  int64_t group = node.getInt("group");
  if (group < 1)
    return ctx.error("attribute 'group' must be positive, got {}", group);
  DLC_RETURN_IF_ERROR(checkConvRanks(ctx));
  const Shape &x = ctx.inputType(0).shape, &w = ctx.inputType(1).shape;
  if (x.isRanked() && x[1].isKnown()) {
    if (w.isRanked() && w[0].isKnown() && w[0].value() != x[1].value())
      return ctx.error("input channels ({}) must equal weight dim 0 ({})", x[1].value(),
                       w[0].value());
    if (x[1].value() % group != 0)
      return ctx.error("input channels ({}) must be divisible by group ({})", x[1].value(), group);
  }
  Dim outChannels = w.isRanked() && w.rank() >= 2 ? scaleDim(w[1], group) : Dim::unknown();
  DLC_RETURN_IF_ERROR(checkBias(ctx, 2, outChannels));
  if (!x.isRanked()) {
    ctx.setOutputType(0, TensorType(dtype, Shape::unranked()));
    return Status::ok();
  }
  int64_t n = x.rank() - 2;
  std::optional<std::vector<int64_t>> wk = weightKernel(w);
  DLC_ASSIGN_OR_RETURN(WindowGeometry g, readWindowGeometry(node, n, wk ? &*wk : nullptr, {}));

  std::vector<int64_t> outputPadding(static_cast<size_t>(n), 0);
  if (node.hasAttr("output_padding")) {
    outputPadding = node.getInts("output_padding");
    if (static_cast<int64_t>(outputPadding.size()) != n)
      return ctx.error("attribute 'output_padding' has {} values, expected {}",
                       outputPadding.size(), n);
    for (int64_t p : outputPadding)
      if (p < 0)
        return ctx.error("attribute 'output_padding' must be non-negative, got {}",
                         formatInts(outputPadding));
  }

  std::vector<Dim> dims{x[0], outChannels};
  if (node.hasAttr("output_shape")) {
    // The spatial output sizes; a form that also lists N and C is accepted (last n used).
    std::vector<int64_t> os = node.getInts("output_shape");
    int64_t count = static_cast<int64_t>(os.size());
    if (count != n && count != n + 2)
      return ctx.error("attribute 'output_shape' has {} values, expected {}", count, n);
    for (int64_t i = count - n; i < count; ++i) {
      if (os[static_cast<size_t>(i)] <= 0)
        return ctx.error("attribute 'output_shape' must be positive, got {}", formatInts(os));
      dims.push_back(Dim(os[static_cast<size_t>(i)]));
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      if (g.kernel.empty()) {
        dims.push_back(Dim::unknown());
        continue;
      }
      DLC_ASSIGN_OR_RETURN(
          Dim d, g.transposedOutputDim(i, x[i + 2], outputPadding[static_cast<size_t>(i)]));
      dims.push_back(d);
    }
  }
  ctx.setOutputType(0, TensorType(dtype, Shape(std::move(dims))));
  return Status::ok();
}

} // namespace

std::vector<OpDef> convOps() {
  std::vector<AttrSpec> transposeAttrs = convAttrs();
  transposeAttrs.push_back(optionalAttr("output_padding", AttrKind::kInts));
  transposeAttrs.push_back(optionalAttr("output_shape", AttrKind::kInts));
  std::vector<AttrSpec> integerAttrs = convAttrs();
  integerAttrs.push_back(intAttr("channels_last", 0));
  return {
      {.op = Op::kConv,
       .minInputs = 2,
       .maxInputs = 3,
       .fusion = FusionKind::kOutFusable,
       .attrs = integerAttrs,
       .infer = inferConv},
      // (x, w, x_zero_point?, w_zero_point?) -> i32
      {.op = Op::kConvInteger,
       .minInputs = 2,
       .maxInputs = 4,
       .fusion = FusionKind::kOutFusable,
       .attrs = std::move(integerAttrs),
       .infer = inferConvInteger},
      {.op = Op::kConvTranspose,
       .minInputs = 2,
       .maxInputs = 3,
       .fusion = FusionKind::kOutFusable,
       .attrs = std::move(transposeAttrs),
       .infer = inferConvTranspose},
  };
}

} // namespace dlc::ops
