// The misc family: RNNs, random generators and signal ops (one file each, see misc_parts.h)
// and NonMaxSuppression and TfIdfVectorizer, which live here.
#include "ir/ops/families.h"
#include "ir/ops/infer_checks.h"
#include "ir/ops/misc_parts.h"
#include "ir/ops/nn_util.h"
#include "ir/ops/util.h"

namespace dlc::ops {

namespace {

/// NonMaxSuppression(boxes [batches, boxes, 4], scores [batches, classes, boxes], ...)
///   -> selected_indices i64 [?, 3].
/// With dlc's `slots` > 0 (expand-ops' fixed-size form, passes/util/sized_by_data.h), per
///   batch and class: the selected boxes' indices in selection order i64 [batches, classes,
///   slots] (-1 past the count), and the count i64 [batches, classes].
Status inferNonMaxSuppression(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(expectRank(ctx, 0, 3, "input boxes"));
  DLC_RETURN_IF_ERROR(expectRank(ctx, 1, 3, "input scores"));
  const Shape &boxes = ctx.inputType(0).shape, &scores = ctx.inputType(1).shape;
  if (boxes.isRanked() && boxes[2].isKnown() && boxes[2].value() != 4)
    return ctx.error("input boxes must have 4 coordinates per box, got {}", boxes[2].value());
  if (boxes.isRanked() && scores.isRanked() &&
      (!dimsCompatible(boxes[0], scores[0]) || !dimsCompatible(boxes[1], scores[2])))
    return ctx.error("boxes {} and scores {} disagree on batches or boxes", boxes.str(),
                     scores.str());
  const int64_t slots = ctx.node().getInt("slots");
  if (slots < 0)
    return ctx.error("attribute 'slots' must be 0 or more, got {}", slots);
  if (slots == 0) {
    if (ctx.node().numOutputs() > 1)
      return ctx.error("only the fixed-size form (slots > 0) has a second output");
    ctx.setOutputType(0, TensorType(DType::kI64, Shape({Dim::unknown(), Dim(3)})));
    return Status::ok();
  }
  const Dim b = boxes.isRanked() ? boxes[0] : Dim::unknown();
  const Dim c = scores.isRanked() ? scores[1] : Dim::unknown();
  ctx.setOutputType(0, TensorType(DType::kI64, Shape({b, c, Dim(slots)})));
  if (ctx.node().numOutputs() > 1)
    ctx.setOutputType(1, TensorType(DType::kI64, Shape({b, c})));
  return Status::ok();
}

/// TfIdfVectorizer(X i32/i64 [C] or [N, C]) -> f32 [W] or [N, W], W = max(ngram_indexes) + 1.
Status inferTfIdfVectorizer(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkInputDType(ctx, 0, TypeClass::kInteger));
  const DType in = ctx.inputType(0).dtype;
  if (in != DType::kUnknown && in != DType::kI32 && in != DType::kI64)
    return ctx.error("input X must be i32 or i64, got {}", dtypeName(in));
  auto pool = ngramPool(ctx.node());
  if (!pool)
    return ctx.error("{}", pool.status().message());
  const Shape &x = ctx.inputType(0).shape;
  if (!x.isRanked()) {
    ctx.setOutputType(0, TensorType(DType::kF32, Shape::unranked()));
    return Status::ok();
  }
  if (x.rank() != 1 && x.rank() != 2)
    return ctx.error("input X must be 1-D or 2-D, got shape {}", x.str());
  ctx.setOutputType(0, TensorType(DType::kF32, x.rank() == 1 ? Shape({Dim(pool->width)})
                                                             : Shape({x[0], Dim(pool->width)})));
  return Status::ok();
}

} // namespace

std::vector<OpDef> miscOps() {
  std::vector<OpDef> all;
  for (auto part : {rnnOps, randomOps, signalOps, trainingOps})
    for (OpDef &d : part())
      all.push_back(std::move(d));
  // (boxes, scores, max_output_boxes_per_class?, iou_threshold?, score_threshold?)
  all.push_back({.op = Op::kNonMaxSuppression,
                 .minInputs = 2,
                 .maxInputs = 5,
                 .maxOutputs = 2,
                 .attrs = {intAttr("center_point_box", 0), intAttr("slots", 0)},
                 .infer = inferNonMaxSuppression});
  all.push_back({.op = Op::kTfIdfVectorizer,
                 .attrs = {requiredAttr("max_gram_length", AttrKind::kInt),
                           requiredAttr("max_skip_count", AttrKind::kInt),
                           requiredAttr("min_gram_length", AttrKind::kInt),
                           requiredAttr("mode", AttrKind::kString),
                           requiredAttr("ngram_counts", AttrKind::kInts),
                           requiredAttr("ngram_indexes", AttrKind::kInts),
                           optionalAttr("pool_int64s", AttrKind::kInts),
                           optionalAttr("pool_strings", AttrKind::kStrings),
                           optionalAttr("weights", AttrKind::kFloats)},
                 .infer = inferTfIdfVectorizer});
  return all;
}

} // namespace dlc::ops
