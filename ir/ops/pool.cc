// Pooling: windowed (AveragePool, MaxPool, LpPool), global, MaxUnpool and RoI pooling
// (MaxRoiPool, RoiAlign). The window arithmetic is in conv_util.h.
#include "ir/ops/conv_util.h"
#include "ir/ops/nn_parts.h"
#include "ir/ops/nn_util.h"
#include "ir/ops/util.h"

namespace dlc::ops {

namespace {

/// Attributes every windowed pool has (AveragePool, MaxPool, LpPool at opset 18+).
std::vector<AttrSpec> poolAttrs() {
  return {stringAttr("auto_pad", "NOTSET"),           intAttr("ceil_mode", 0),
          optionalAttr("dilations", AttrKind::kInts), requiredAttr("kernel_shape", AttrKind::kInts),
          optionalAttr("pads", AttrKind::kInts),      optionalAttr("strides", AttrKind::kInts)};
}

/// AveragePool, MaxPool, LpPool: Y (and MaxPool's Indices, i64) = [N, C, spatial...].
Status inferPool(InferContext &ctx) {
  const TensorType &x = ctx.inputType(0);
  if (!x.shape.isRanked()) {
    ctx.setOutputType(0, x);
    ctx.setOutputType(1, TensorType(DType::kI64, Shape::unranked()));
    return Status::ok();
  }
  DLC_RETURN_IF_ERROR(expectMinRank(ctx, 0, 2, "input X"));
  if (!ctx.node().hasAttr("kernel_shape"))
    return ctx.error("attribute 'kernel_shape' is required");
  DLC_ASSIGN_OR_RETURN(WindowGeometry g, readWindowGeometry(ctx.node(), x.shape.rank() - 2, nullptr,
                                                            {.dilations = true, .ceilMode = true}));
  // ONNX: AveragePool's explicit pads must be smaller than the (dilated) kernel: a window
  // wholly in the padding has no taps to average (it divided by zero: NaN). MaxPool defines
  // such a window (-inf, the reference's and the GPU's) and keeps it.
  const bool average = ctx.node().op() == Op::kAveragePool;
  for (int64_t a = 0; average && a < g.spatialRank(); ++a)
    for (int64_t side : {a, a + g.spatialRank()}) {
      const size_t i = static_cast<size_t>(side);
      if (i < g.pads.size() && g.pads[i] >= g.effectiveKernel(a))
        return ctx.error("pads {} must be smaller than the kernel ({} along axis {}): a window "
                         "could lie wholly in the padding",
                         formatInts(g.pads), g.effectiveKernel(a), a + 2);
    }
  DLC_ASSIGN_OR_RETURN(Shape y, windowOutputShape(g, x.shape, x.shape[1]));
  ctx.setOutputType(0, TensorType(x.dtype, y));
  ctx.setOutputType(1, TensorType(DType::kI64, y));
  return Status::ok();
}

/// GlobalAveragePool, GlobalMaxPool, GlobalLpPool: [N, C, 1, ..., 1]. With channels_last = 1
/// (dlc's: set by the layout pass on a pool of a channels-last convolution's output) X is
/// [N, spatial..., C] and Y still [N, C, 1, ..., 1].
Status inferGlobalPool(InferContext &ctx) {
  const TensorType &x = ctx.inputType(0);
  if (!x.shape.isRanked()) {
    ctx.setOutputType(0, x);
    return Status::ok();
  }
  const bool last = ctx.node().getInt("channels_last") != 0;
  DLC_RETURN_IF_ERROR(expectMinRank(ctx, 0, last ? 3 : 2, "input X"));
  std::vector<Dim> dims(static_cast<size_t>(x.shape.rank()), Dim(1));
  dims[0] = x.shape[0];
  dims[1] = x.shape[last ? x.shape.rank() - 1 : 1];
  ctx.setOutputType(0, TensorType(x.dtype, Shape(std::move(dims))));
  return Status::ok();
}

/// MaxUnpool(X, I, output_shape?): output_shape when known, else
/// (in - 1) * stride + kernel - pad_begin - pad_end per spatial axis.
Status inferMaxUnpool(InferContext &ctx) {
  const TensorType &x = ctx.inputType(0);
  const Node &node = ctx.node();
  if (!x.shape.isRanked()) {
    ctx.setOutputType(0, x);
    return Status::ok();
  }
  DLC_RETURN_IF_ERROR(expectMinRank(ctx, 0, 2, "input X"));
  int64_t rank = x.shape.rank(), n = rank - 2;
  if (ctx.hasInput(2)) {
    DLC_RETURN_IF_ERROR(expectRank(ctx, 2, 1, "input output_shape"));
    std::optional<std::vector<Dim>> os = ctx.inputAsDims(2);
    if (os && static_cast<int64_t>(os->size()) != rank)
      return ctx.error("input output_shape has {} values, expected {} (the rank of X)", os->size(),
                       rank);
    ctx.setOutputType(
        0,
        TensorType(x.dtype, os ? Shape(*os) : Shape(std::vector<Dim>(static_cast<size_t>(rank)))));
    return Status::ok();
  }
  // MaxUnpool has no auto_pad, dilations or ceil_mode; read its three attributes directly.
  std::vector<int64_t> kernel = node.getInts("kernel_shape");
  if (static_cast<int64_t>(kernel.size()) != n)
    return ctx.error("attribute 'kernel_shape' has {} values, expected {}", kernel.size(), n);
  std::vector<int64_t> strides =
      node.hasAttr("strides") ? node.getInts("strides") : std::vector<int64_t>(kernel.size(), 1);
  std::vector<int64_t> pads =
      node.hasAttr("pads") ? node.getInts("pads") : std::vector<int64_t>(2 * kernel.size(), 0);
  if (strides.size() != kernel.size())
    return ctx.error("attribute 'strides' has {} values, expected {}", strides.size(), n);
  if (pads.size() != 2 * kernel.size())
    return ctx.error("attribute 'pads' has {} values, expected {}", pads.size(), 2 * n);
  std::vector<Dim> dims{x.shape[0], x.shape[1]};
  for (size_t i = 0; i < kernel.size(); ++i) {
    const Dim &in = x.shape[static_cast<int64_t>(i) + 2];
    if (!in.isKnown()) {
      dims.push_back(Dim::unknown());
      continue;
    }
    int64_t out = (in.value() - 1) * strides[i] + kernel[i] - pads[i] - pads[i + kernel.size()];
    if (out <= 0)
      return ctx.error("output size {} on spatial axis {} is not positive", out, i);
    dims.push_back(Dim(out));
  }
  ctx.setOutputType(0, TensorType(x.dtype, Shape(std::move(dims))));
  return Status::ok();
}

/// MaxRoiPool(X [N, C, H, W], rois [num_rois, 5]) -> [num_rois, C, pooled_h, pooled_w].
Status inferMaxRoiPool(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(expectRank(ctx, 0, 4, "input X"));
  DLC_RETURN_IF_ERROR(expectRank(ctx, 1, 2, "input rois"));
  std::vector<int64_t> pooled = ctx.node().getInts("pooled_shape");
  if (pooled.size() != 2)
    return ctx.error("attribute 'pooled_shape' has {} values, expected 2", pooled.size());
  if (pooled[0] < 1 || pooled[1] < 1)
    return ctx.error("attribute 'pooled_shape' must be positive, got {}", formatInts(pooled));
  const Shape &x = ctx.inputType(0).shape, &rois = ctx.inputType(1).shape;
  Dim numRois = rois.isRanked() ? rois[0] : Dim::unknown();
  Dim channels = x.isRanked() ? x[1] : Dim::unknown();
  ctx.setOutputType(0, TensorType(ctx.inputType(0).dtype,
                                  Shape({numRois, channels, Dim(pooled[0]), Dim(pooled[1])})));
  return Status::ok();
}

/// RoiAlign(X [N, C, H, W], rois [num_rois, 4], batch_indices [num_rois])
///   -> [num_rois, C, output_height, output_width].
Status inferRoiAlign(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(expectRank(ctx, 0, 4, "input X"));
  DLC_RETURN_IF_ERROR(expectRank(ctx, 1, 2, "input rois"));
  DLC_RETURN_IF_ERROR(expectRank(ctx, 2, 1, "input batch_indices"));
  const Shape &x = ctx.inputType(0).shape, &rois = ctx.inputType(1).shape,
              &batch = ctx.inputType(2).shape;
  Dim numRois = rois.isRanked() ? rois[0] : Dim::unknown();
  if (batch.isRanked()) {
    if (!dimsCompatible(numRois, batch[0]))
      return ctx.error("rois has {} rows but batch_indices has {} elements", numRois.str(),
                       batch[0].str());
    numRois = unifyDims(numRois, batch[0]);
  }
  if (rois.isRanked() && rois[1].isKnown() && rois[1].value() != 4)
    return ctx.error("input rois must have 4 columns, got {}", rois[1].value());
  Dim channels = x.isRanked() ? x[1] : Dim::unknown();
  int64_t height = ctx.node().getInt("output_height"), width = ctx.node().getInt("output_width");
  if (height < 1 || width < 1)
    return ctx.error("output_height and output_width must be positive, got {} and {}", height,
                     width);
  ctx.setOutputType(
      0, TensorType(ctx.inputType(0).dtype, Shape({numRois, channels, Dim(height), Dim(width)})));
  return Status::ok();
}

} // namespace

std::vector<OpDef> poolOps() {
  std::vector<AttrSpec> avgAttrs = poolAttrs();
  avgAttrs.push_back(intAttr("count_include_pad", 0));
  std::vector<AttrSpec> maxAttrs = poolAttrs();
  maxAttrs.push_back(intAttr("storage_order", 0));
  std::vector<AttrSpec> lpAttrs = poolAttrs();
  lpAttrs.push_back(intAttr("p", 2));
  return {
      {.op = Op::kAveragePool, .attrs = std::move(avgAttrs), .infer = inferPool},
      // (X) -> (Y, Indices?)
      {.op = Op::kMaxPool, .maxOutputs = 2, .attrs = std::move(maxAttrs), .infer = inferPool},
      {.op = Op::kLpPool, .attrs = std::move(lpAttrs), .infer = inferPool},
      {.op = Op::kGlobalAveragePool,
       .attrs = {intAttr("channels_last", 0)},
       .infer = inferGlobalPool},
      {.op = Op::kGlobalMaxPool, .attrs = {intAttr("channels_last", 0)}, .infer = inferGlobalPool},
      {.op = Op::kGlobalLpPool,
       .attrs = {intAttr("p", 2), intAttr("channels_last", 0)},
       .infer = inferGlobalPool},
      // (X, I, output_shape?)
      {.op = Op::kMaxUnpool,
       .minInputs = 2,
       .maxInputs = 3,
       .attrs = {requiredAttr("kernel_shape", AttrKind::kInts),
                 optionalAttr("pads", AttrKind::kInts), optionalAttr("strides", AttrKind::kInts)},
       .infer = inferMaxUnpool},
      // (X, rois)
      {.op = Op::kMaxRoiPool,
       .minInputs = 2,
       .maxInputs = 2,
       .attrs = {requiredAttr("pooled_shape", AttrKind::kInts), floatAttr("spatial_scale", 1.0f)},
       .infer = inferMaxRoiPool},
      // (X, rois, batch_indices)
      {.op = Op::kRoiAlign,
       .minInputs = 3,
       .maxInputs = 3,
       .attrs = {stringAttr("coordinate_transformation_mode", "half_pixel"),
                 stringAttr("mode", "avg"), intAttr("output_height", 1), intAttr("output_width", 1),
                 intAttr("sampling_ratio", 0), floatAttr("spatial_scale", 1.0f)},
       .infer = inferRoiAlign},
  };
}

} // namespace dlc::ops
