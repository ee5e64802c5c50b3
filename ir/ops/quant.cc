// Quantization family: QuantizeLinear / DequantizeLinear (opset 21 attributes),
// DynamicQuantizeLinear and QLinearConv. The element type of a quantized result comes from
// its zero point (QuantizeLinear: else `output_dtype`, else u8).
#include "ir/ops/families.h"
#include "ir/ops/infer_checks.h"
#include "ir/ops/util.h"

namespace dlc::ops {

namespace {

using TC = TypeClass;

// --- Convolution output size (QLinearConv; Conv's rule, kept private to this family) -------

struct ConvParams {
  std::string autoPad;
  int64_t group = 1;
  std::vector<int64_t> kernelShape, strides, dilations, pads; // empty: not given
};

/// Error unless `v` is empty or has `n` entries, each >= `min`.
Status checkConvAttr(const std::vector<int64_t> &v, size_t n, int64_t min, const char *name) {
  if (!v.empty() && v.size() != n)
    return invalidArgument("attribute '{}' has {} values, expected {}", name, v.size(), n);
  for (int64_t x : v)
    if (x < min)
      return invalidArgument("attribute '{}' has value {}, must be >= {}", name, x, min);
  return Status::ok();
}

/// One spatial output size. Symbols survive when the window cannot change them.
Expected<Dim> convOutputDim(const Dim &in, const Dim &k, int64_t stride, int64_t dilation,
                            int64_t padTotal, const std::string &autoPad, size_t i) {
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    if (in.isKnown())
      return Dim((in.value() + stride - 1) / stride);
    return stride == 1 ? in : Dim::unknown();
  }
  if (autoPad == "VALID")
    padTotal = 0;
  if (!k.isKnown())
    return Dim::unknown();
  int64_t effective = dilation * (k.value() - 1) + 1;
  if (!in.isKnown())
    return effective == 1 && padTotal == 0 && stride == 1 ? in : Dim::unknown();
  int64_t span = in.value() + padTotal - effective;
  if (span < 0)
    return invalidArgument(
        "spatial dim {}: input size {} with padding {} is smaller than the kernel extent {}", i,
        in.value(), padTotal, effective);
  return Dim(span / stride + 1);
}

/// Conv output shape [N, M, spatial...] for input `x` [N, C, D...] and weights `w`
/// [M, C/group, k...].
Expected<Shape> convOutputShape(const Shape &x, const Shape &w, const ConvParams &p) {
  if (p.autoPad != "NOTSET" && p.autoPad != "SAME_UPPER" && p.autoPad != "SAME_LOWER" &&
      p.autoPad != "VALID")
    return invalidArgument("attribute 'auto_pad' has unknown value \"{}\"", p.autoPad);
  if (p.group < 1)
    return invalidArgument("attribute 'group' must be >= 1, got {}", p.group);
  if (x.isRanked() && x.rank() < 3)
    return invalidArgument("input x must have rank >= 3, got shape {}", x.str());
  if (w.isRanked() && w.rank() < 3)
    return invalidArgument("input w must have rank >= 3, got shape {}", w.str());
  if (x.isRanked() && w.isRanked() && x.rank() != w.rank())
    return invalidArgument("inputs x {} and w {} must have the same rank", x.str(), w.str());
  if (!x.isRanked() && !w.isRanked())
    return Shape::unranked();
  int64_t rank = x.isRanked() ? x.rank() : w.rank();
  size_t spatial = static_cast<size_t>(rank - 2);
  DLC_RETURN_IF_ERROR(checkConvAttr(p.kernelShape, spatial, 1, "kernel_shape"));
  DLC_RETURN_IF_ERROR(checkConvAttr(p.strides, spatial, 1, "strides"));
  DLC_RETURN_IF_ERROR(checkConvAttr(p.dilations, spatial, 1, "dilations"));
  DLC_RETURN_IF_ERROR(checkConvAttr(p.pads, 2 * spatial, 0, "pads"));
  Shape xs = x.isRanked() ? x : unknownDims(rank);
  Shape ws = w.isRanked() ? w : unknownDims(rank);
  if (xs[1].isKnown() && ws[1].isKnown() && xs[1].value() != ws[1].value() * p.group)
    return invalidArgument("x has {} channels, but w expects {} x group {}", xs[1].value(),
                           ws[1].value(), p.group);
  if (ws[0].isKnown() && ws[0].value() % p.group != 0)
    return invalidArgument("w has {} output channels, not a multiple of group {}", ws[0].value(),
                           p.group);
  std::vector<Dim> out = {xs[0], ws[0]};
  for (size_t i = 0; i < spatial; ++i) {
    Dim k = p.kernelShape.empty() ? ws[static_cast<int64_t>(i) + 2] : Dim(p.kernelShape[i]);
    int64_t stride = p.strides.empty() ? 1 : p.strides[i];
    int64_t dilation = p.dilations.empty() ? 1 : p.dilations[i];
    int64_t pad = p.pads.empty() ? 0 : p.pads[i] + p.pads[i + spatial];
    DLC_ASSIGN_OR_RETURN(Dim d, convOutputDim(xs[static_cast<int64_t>(i) + 2], k, stride, dilation,
                                              pad, p.autoPad, i));
    out.push_back(std::move(d));
  }
  return Shape(std::move(out));
}

/// Per-axis quantization: a 1-D scale of known length must match the size of x along `axis`.
Status checkPerAxis(const InferContext &ctx, int scaleInput, const char *scaleName) {
  const Shape &x = ctx.inputType(0).shape;
  const Shape &scale = ctx.inputType(scaleInput).shape;
  if (!x.isRanked() || !scale.isRanked() || scale.rank() != 1)
    return Status::ok();
  if (ctx.node().getInt("block_size") != 0)
    return Status::ok();
  DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(ctx.node().getInt("axis"), x.rank()));
  if (!dimsCompatible(scale[0], x[axis]) && !(scale[0].isKnown() && scale[0].value() == 1))
    return ctx.error("{} has {} elements but axis {} of x has size {}", scaleName, scale[0].str(),
                     axis, x[axis].str());
  return Status::ok();
}

Status inferQuantize(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkInputDType(ctx, 0, TC::kNumeric));
  DLC_RETURN_IF_ERROR(checkInputDType(ctx, 1, TC::kFloat));
  DLC_RETURN_IF_ERROR(checkPerAxis(ctx, 1, "y_scale"));
  const Attribute *attr = ctx.node().findAttr("output_dtype");
  DType requested = attr ? attr->dtype() : DType::kUnknown;
  DType dtype = requested;
  if (ctx.hasInput(2)) {
    DType zp = ctx.inputType(2).dtype;
    if (zp != DType::kUnknown && requested != DType::kUnknown && zp != requested)
      return ctx.error("output_dtype {} does not match y_zero_point's dtype {}",
                       dtypeName(requested), dtypeName(zp));
    if (zp != DType::kUnknown)
      dtype = zp;
  } else if (dtype == DType::kUnknown) {
    dtype = DType::kU8;
  }
  ctx.setOutputType(0, TensorType(dtype, ctx.inputType(0).shape));
  return Status::ok();
}

Status inferDequantize(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkInputDType(ctx, 1, TC::kFloat));
  DType x = ctx.inputType(0).dtype, zp = inputDType(ctx, 2);
  if (x != DType::kUnknown && zp != DType::kUnknown && x != zp)
    return ctx.error("x_zero_point has dtype {}, but x has dtype {}", dtypeName(zp), dtypeName(x));
  DLC_RETURN_IF_ERROR(checkPerAxis(ctx, 1, "x_scale"));
  ctx.setOutputType(0, TensorType(ctx.inputType(1).dtype, ctx.inputType(0).shape));
  return Status::ok();
}

Status inferDynamicQuantize(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkInputDType(ctx, 0, TC::kFloat));
  ctx.setOutputType(0, TensorType(DType::kU8, ctx.inputType(0).shape));
  ctx.setOutputType(1, TensorType(DType::kF32, Shape()));
  ctx.setOutputType(2, TensorType(DType::kU8, Shape()));
  return Status::ok();
}

// Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B?.
Status inferQLinearConv(InferContext &ctx) {
  for (int i : {0, 3, 7})
    DLC_RETURN_IF_ERROR(checkInputDType(ctx, i, TC::kInteger));
  for (auto [data, zp] : {std::pair{0, 2}, std::pair{3, 5}}) {
    DType d = inputDType(ctx, data), z = inputDType(ctx, zp);
    if (d != DType::kUnknown && z != DType::kUnknown && d != z)
      return ctx.error("zero point (input {}) has dtype {}, but input {} has dtype {}", zp,
                       dtypeName(z), data, dtypeName(d));
  }
  if (ctx.hasInput(8))
    DLC_RETURN_IF_ERROR(checkInputDType(ctx, 8, TC::kInteger));
  ConvParams p;
  const Node &n = ctx.node();
  p.autoPad = n.getString("auto_pad");
  p.group = n.getInt("group");
  p.kernelShape = n.getInts("kernel_shape");
  p.strides = n.getInts("strides");
  p.dilations = n.getInts("dilations");
  p.pads = n.getInts("pads");
  auto shape = convOutputShape(ctx.inputType(0).shape, ctx.inputType(3).shape, p);
  if (!shape)
    return ctx.error("{}", shape.status().message());
  ctx.setOutputType(0, TensorType(ctx.inputType(7).dtype, std::move(*shape)));
  return Status::ok();
}

// FakeQuant(x, min, max): TensorFlow's fake quantization. min and max are scalars (per tensor)
// or 1-D with one entry per element of x's last dimension (per channel).
Status inferFakeQuant(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkInputDType(ctx, 0, TC::kFloat));
  for (int i : {1, 2})
    DLC_RETURN_IF_ERROR(checkInputDType(ctx, i, TC::kFloat));
  int64_t bits = ctx.node().getInt("num_bits");
  if (bits < 2 || bits > 16)
    return ctx.error("num_bits must be between 2 and 16, got {}", bits);
  const Shape &x = ctx.inputType(0).shape;
  for (int i : {1, 2}) {
    const Shape &s = ctx.inputType(i).shape;
    if (!s.isRanked())
      continue;
    const char *name = i == 1 ? "min" : "max";
    if (s.rank() > 1)
      return ctx.error("{} must be a scalar or 1-D (per channel), got shape {}", name, s.str());
    if (s.rank() == 1 && x.isRanked()) {
      if (x.rank() == 0)
        return ctx.error("per-channel {} needs x of rank >= 1", name);
      if (!dimsCompatible(s[0], x[x.rank() - 1]))
        return ctx.error("{} has {} entries but the last dim of x is {}", name, s[0].str(),
                         x[x.rank() - 1].str());
    }
  }
  ctx.setOutputType(0, ctx.inputType(0));
  return Status::ok();
}

OpDef row(Op op, int minIn, int maxIn, int numOut, InferFn infer,
          std::vector<AttrSpec> attrs = {}) {
  OpDef d;
  d.op = op;
  d.minInputs = minIn;
  d.maxInputs = maxIn;
  d.minOutputs = d.maxOutputs = numOut;
  d.fusion = FusionKind::kOpaque;
  d.attrs = std::move(attrs);
  d.infer = infer;
  return d;
}

} // namespace

std::vector<OpDef> quantOps() {
  return {
      row(Op::kQuantizeLinear, 2, 3, 1, inferQuantize,
          {intAttr("axis", 1), intAttr("block_size", 0),
           optionalAttr("output_dtype", AttrKind::kDType), intAttr("saturate", 1)}),
      row(Op::kDequantizeLinear, 2, 3, 1, inferDequantize,
          {intAttr("axis", 1), intAttr("block_size", 0)}),
      row(Op::kDynamicQuantizeLinear, 1, 1, 3, inferDynamicQuantize),
      row(Op::kFakeQuant, 3, 3, 1, inferFakeQuant,
          {intAttr("num_bits", 8), intAttr("narrow_range", 0)}),
      row(Op::kQLinearConv, 8, 9, 1, inferQLinearConv,
          {stringAttr("auto_pad", "NOTSET"), optionalAttr("dilations", AttrKind::kInts),
           intAttr("group", 1), optionalAttr("kernel_shape", AttrKind::kInts),
           optionalAttr("pads", AttrKind::kInts), optionalAttr("strides", AttrKind::kInts)}),
  };
}

} // namespace dlc::ops
