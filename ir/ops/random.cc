// Random generators: RandomNormal, RandomUniform (shape from an attribute), their *Like
// forms and Bernoulli (shape of the input), Multinomial ([batch, sample_size]). Element types
// are `dtype` attributes (AttrKind::kDType).
#include "ir/ops/misc_parts.h"
#include "ir/ops/nn_util.h"
#include "ir/ops/util.h"

namespace dlc::ops {

namespace {

/// RandomNormal, RandomUniform: dtype and the `shape` attribute.
Status inferRandomFromShape(InferContext &ctx) {
  const Node &node = ctx.node();
  if (!node.hasAttr("shape"))
    return ctx.error("attribute 'shape' is required");
  std::vector<int64_t> shape = node.getInts("shape");
  for (int64_t d : shape)
    if (d < 0)
      return ctx.error("attribute 'shape' must be non-negative, got {}", formatInts(shape));
  ctx.setOutputType(0, TensorType(node.getDType("dtype"), Shape::fromSizes(shape)));
  return Status::ok();
}

/// RandomNormalLike, RandomUniformLike, Bernoulli: the input's shape; the `dtype` attribute
/// when set, else the input's element type.
Status inferRandomLike(InferContext &ctx) {
  const TensorType &x = ctx.inputType(0);
  DType dtype = ctx.node().hasAttr("dtype") ? ctx.node().getDType("dtype") : x.dtype;
  ctx.setOutputType(0, TensorType(dtype, x.shape));
  return Status::ok();
}

/// Multinomial(input [batch, classes]) -> [batch, sample_size] of i32 or i64.
Status inferMultinomial(InferContext &ctx) {
  const Node &node = ctx.node();
  DType dtype = node.getDType("dtype");
  if (dtype != DType::kI32 && dtype != DType::kI64)
    return ctx.error("attribute 'dtype' must be i32 or i64, got {}", dtypeName(dtype));
  int64_t samples = node.getInt("sample_size");
  if (samples < 1)
    return ctx.error("attribute 'sample_size' must be positive, got {}", samples);
  DLC_RETURN_IF_ERROR(expectRank(ctx, 0, 2, "input"));
  const Shape &x = ctx.inputType(0).shape;
  ctx.setOutputType(0, TensorType(dtype, Shape({x.isRanked() ? x[0] : Dim(), Dim(samples)})));
  return Status::ok();
}

} // namespace

std::vector<OpDef> randomOps() {
  AttrSpec seed = optionalAttr("seed", AttrKind::kFloat);
  AttrSpec likeDType = optionalAttr("dtype", AttrKind::kDType);
  return {
      {.op = Op::kRandomNormal,
       .minInputs = 0,
       .maxInputs = 0,
       .attrs = {dtypeAttr("dtype", DType::kF32), floatAttr("mean", 0.0f), floatAttr("scale", 1.0f),
                 seed, requiredAttr("shape", AttrKind::kInts)},
       .infer = inferRandomFromShape,
       .random = true},
      {.op = Op::kRandomUniform,
       .minInputs = 0,
       .maxInputs = 0,
       .attrs = {dtypeAttr("dtype", DType::kF32), floatAttr("high", 1.0f), floatAttr("low", 0.0f),
                 seed, requiredAttr("shape", AttrKind::kInts)},
       .infer = inferRandomFromShape,
       .random = true},
      {.op = Op::kRandomNormalLike,
       .attrs = {likeDType, floatAttr("mean", 0.0f), floatAttr("scale", 1.0f), seed},
       .infer = inferRandomLike,
       .random = true},
      {.op = Op::kRandomUniformLike,
       .attrs = {likeDType, floatAttr("high", 1.0f), floatAttr("low", 0.0f), seed},
       .infer = inferRandomLike,
       .random = true},
      {.op = Op::kBernoulli, .attrs = {likeDType, seed}, .infer = inferRandomLike, .random = true},
      {.op = Op::kMultinomial,
       .attrs = {dtypeAttr("dtype", DType::kI32), intAttr("sample_size", 1), seed},
       .infer = inferMultinomial,
       .random = true},
  };
}

} // namespace dlc::ops
