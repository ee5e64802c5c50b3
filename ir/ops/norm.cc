// Normalisations (BatchNormalization, InstanceNormalization, GroupNormalization,
// LayerNormalization, LRN, LpNormalization, MeanVarianceNormalization) and Dropout.
#include "ir/ops/families.h"
#include "ir/ops/nn_parts.h"
#include "ir/ops/nn_util.h"
#include "ir/ops/util.h"

namespace dlc::ops {

namespace {

/// The channel dim of an [N, C, ...] input; a 1-D input has C = 1 (BatchNormalization).
Dim channelDim(const Shape &x) {
  if (!x.isRanked() || x.rank() == 0)
    return Dim::unknown();
  return x.rank() == 1 ? Dim(1) : x[1];
}

/// BatchNormalization(X, scale, B, mean, var) -> (Y, running_mean?, running_var?).
Status inferBatchNorm(InferContext &ctx) {
  const TensorType &x = ctx.inputType(0);
  Dim channels = channelDim(x.shape);
  const char *names[] = {"", "scale", "B", "input_mean", "input_var"};
  for (int i = 1; i <= 4; ++i) {
    DLC_RETURN_IF_ERROR(expectPerChannel(ctx, i, channels, names[i]));
    if (ctx.inputType(i).shape.isRanked())
      channels = unifyDims(channels, ctx.inputType(i).shape[0]);
  }
  ctx.setOutputType(0, x);
  ctx.setOutputType(1, TensorType(ctx.inputType(3).dtype, Shape({channels})));
  ctx.setOutputType(2, TensorType(ctx.inputType(4).dtype, Shape({channels})));
  return Status::ok();
}

/// InstanceNormalization(input, scale, B): same as input; scale and B are [C].
Status inferInstanceNorm(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(expectMinRank(ctx, 0, 2, "input"));
  Dim channels = channelDim(ctx.inputType(0).shape);
  DLC_RETURN_IF_ERROR(expectPerChannel(ctx, 1, channels, "scale"));
  DLC_RETURN_IF_ERROR(expectPerChannel(ctx, 2, channels, "B"));
  ctx.setOutputType(0, ctx.inputType(0));
  return Status::ok();
}

/// GroupNormalization(X, scale, bias) (opset 21: scale and bias per channel).
Status inferGroupNorm(InferContext &ctx) {
  const Node &node = ctx.node();
  DLC_ASSIGN_OR_RETURN(int64_t groups, requiredInt(node, "num_groups"));
  if (groups < 1)
    return ctx.error("attribute 'num_groups' must be positive, got {}", groups);
  DLC_RETURN_IF_ERROR(stashTypeToDType(node.getInt("stash_type")).status());
  DLC_RETURN_IF_ERROR(expectMinRank(ctx, 0, 2, "input X"));
  Dim channels = channelDim(ctx.inputType(0).shape);
  if (channels.isKnown() && channels.value() % groups != 0)
    return ctx.error("channels ({}) must be divisible by num_groups ({})", channels.value(),
                     groups);
  DLC_RETURN_IF_ERROR(expectPerChannel(ctx, 1, channels, "scale"));
  DLC_RETURN_IF_ERROR(expectPerChannel(ctx, 2, channels, "bias"));
  ctx.setOutputType(0, ctx.inputType(0));
  return Status::ok();
}

/// LayerNormalization(X, Scale, B?) -> (Y, Mean?, InvStdDev?); Mean and InvStdDev have X's
/// shape with the normalised axes [axis, rank) set to 1, and the stash_type element type.
Status inferLayerNorm(InferContext &ctx) {
  const Node &node = ctx.node();
  const TensorType &x = ctx.inputType(0);
  DLC_ASSIGN_OR_RETURN(DType stash, stashTypeToDType(node.getInt("stash_type")));
  ctx.setOutputType(0, x);
  if (!x.shape.isRanked()) {
    ctx.setOutputType(1, TensorType(stash, Shape::unranked()));
    ctx.setOutputType(2, TensorType(stash, Shape::unranked()));
    return Status::ok();
  }
  Expected<int64_t> axis = normalizeAxis(node.getInt("axis"), x.shape.rank());
  if (!axis)
    return ctx.error("attribute 'axis' {} is out of range for rank {}", node.getInt("axis"),
                     x.shape.rank());
  std::vector<Dim> stats = x.shape.dims();
  for (int64_t d = *axis; d < x.shape.rank(); ++d)
    stats[static_cast<size_t>(d)] = Dim(1);
  ctx.setOutputType(1, TensorType(stash, Shape(stats)));
  ctx.setOutputType(2, TensorType(stash, Shape(stats)));
  return Status::ok();
}

/// LpNormalization: same as input; p must be 1 or 2 and axis within the rank.
Status inferLpNorm(InferContext &ctx) {
  const Node &node = ctx.node();
  int64_t p = node.getInt("p");
  if (p != 1 && p != 2)
    return ctx.error("attribute 'p' must be 1 or 2, got {}", p);
  const Shape &x = ctx.inputType(0).shape;
  if (x.isRanked() && !normalizeAxis(node.getInt("axis"), x.rank()))
    return ctx.error("attribute 'axis' {} is out of range for rank {}", node.getInt("axis"),
                     x.rank());
  ctx.setOutputType(0, ctx.inputType(0));
  return Status::ok();
}

/// LRN: same as input; size must be positive.
Status inferLrn(InferContext &ctx) {
  DLC_ASSIGN_OR_RETURN(int64_t size, requiredInt(ctx.node(), "size"));
  if (size < 1)
    return ctx.error("attribute 'size' must be positive, got {}", size);
  ctx.setOutputType(0, ctx.inputType(0));
  return Status::ok();
}

/// Dropout(data, ratio?, training_mode?) -> (output, mask?): ratio and training_mode are
/// scalars; mask is bool with data's shape.
Status inferDropout(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(expectRank(ctx, 1, 0, "input ratio"));
  DLC_RETURN_IF_ERROR(expectRank(ctx, 2, 0, "input training_mode"));
  const TensorType &x = ctx.inputType(0);
  ctx.setOutputType(0, x);
  ctx.setOutputType(1, TensorType(DType::kBool, x.shape));
  return Status::ok();
}

} // namespace

std::vector<OpDef> normOps() {
  return {
      // (X, scale, B, input_mean, input_var) -> (Y, running_mean?, running_var?)
      {.op = Op::kBatchNormalization,
       .minInputs = 5,
       .maxInputs = 5,
       .maxOutputs = 3,
       .attrs = {floatAttr("epsilon", 1e-5f), floatAttr("momentum", 0.9f),
                 intAttr("training_mode", 0)},
       .infer = inferBatchNorm},
      {.op = Op::kInstanceNormalization,
       .minInputs = 3,
       .maxInputs = 3,
       .attrs = {floatAttr("epsilon", 1e-5f)},
       .infer = inferInstanceNorm},
      {.op = Op::kGroupNormalization,
       .minInputs = 3,
       .maxInputs = 3,
       .attrs = {floatAttr("epsilon", 1e-5f), requiredAttr("num_groups", AttrKind::kInt),
                 intAttr("stash_type", 1)},
       .infer = inferGroupNorm},
      // (X, Scale, B?) -> (Y, Mean?, InvStdDev?)
      {.op = Op::kLayerNormalization,
       .minInputs = 2,
       .maxInputs = 3,
       .maxOutputs = 3,
       .attrs = {intAttr("axis", -1), floatAttr("epsilon", 1e-5f), intAttr("stash_type", 1)},
       .infer = inferLayerNorm},
      {.op = Op::kLRN,
       .attrs = {floatAttr("alpha", 1e-4f), floatAttr("beta", 0.75f), floatAttr("bias", 1.0f),
                 requiredAttr("size", AttrKind::kInt)},
       .infer = inferLrn},
      {.op = Op::kLpNormalization,
       .attrs = {intAttr("axis", -1), intAttr("p", 2)},
       .infer = inferLpNorm},
      {.op = Op::kMeanVarianceNormalization,
       .attrs = {intsAttr("axes", {0, 2, 3})},
       .infer = inferSameAsInput},
      // (data, ratio?, training_mode?) -> (output, mask?)
      {.op = Op::kDropout,
       .maxInputs = 3,
       .maxOutputs = 2,
       .fusion = FusionKind::kElementwise,
       .attrs = {optionalAttr("seed", AttrKind::kInt)},
       .infer = inferDropout},
  };
}

} // namespace dlc::ops
