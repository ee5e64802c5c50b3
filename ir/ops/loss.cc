// Losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, computed as inference ops
// (the loss value, no gradient).
//
// Both take scores of shape [N, C, d1, ..., dk] (k >= 0), class indices of shape
// [N, d1, ..., dk] (i32 or i64) and optional per-class weights [C]. With reduction "none" the
// loss has the indices' shape; with "sum" or "mean" it is a scalar. SoftmaxCrossEntropyLoss
// may also return log_prob, the scores' log-softmax over C, with the scores' shape.
#include <optional>
#include <string>
#include <vector>

#include "ir/ops/nn_parts.h"
#include "ir/ops/nn_util.h"
#include "ir/ops/util.h"

namespace dlc::ops {

namespace {

/// The spec's input names, in the error messages.
struct LossNames {
  const char *scores, *labels, *weights;
};

LossNames lossNames(Op op) {
  if (op == Op::kSoftmaxCrossEntropyLoss)
    return {"scores", "labels", "weights"};
  return {"input", "target", "weight"};
}

/// The element type and shape rules shared by both losses; returns the batch and spatial dims
/// of the loss ([N, d1, ..., dk]) when the rank is known.
Expected<std::optional<std::vector<Dim>>> checkLossInputs(const InferContext &ctx) {
  const LossNames names = lossNames(ctx.node().op());
  const std::string &reduction = ctx.node().getString("reduction");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return ctx.error("attribute 'reduction' must be 'none', 'sum' or 'mean', got '{}'", reduction);
  const TensorType &x = ctx.inputType(0), &t = ctx.inputType(1);
  if (x.isKnown() && !isFloat(x.dtype))
    return ctx.error("{} must be a float tensor, got {}", names.scores, dtypeName(x.dtype));
  if (t.isKnown() && t.dtype != DType::kI32 && t.dtype != DType::kI64)
    return ctx.error("{} must be i32 or i64, got {}", names.labels, dtypeName(t.dtype));
  if (x.shape.isRanked() && x.shape.rank() < 2)
    return ctx.error("{} must have rank >= 2 ([N, C, d1, ..., dk]), got shape {}", names.scores,
                     x.shape.str());
  Dim classes = x.shape.isRanked() ? x.shape[1] : Dim::unknown();
  if (ctx.hasInput(2)) {
    const TensorType &w = ctx.inputType(2);
    if (w.isKnown() && !isFloat(w.dtype))
      return ctx.error("{} must be a float tensor, got {}", names.weights, dtypeName(w.dtype));
    if (w.isKnown() && x.isKnown() && w.dtype != x.dtype)
      return ctx.error("{} must have the dtype of {} ({}), got {}", names.weights, names.scores,
                       dtypeName(x.dtype), dtypeName(w.dtype));
    DLC_RETURN_IF_ERROR(expectRank(ctx, 2, 1, names.weights));
    if (w.shape.isRanked() && !dimsCompatible(w.shape[0], classes))
      return ctx.error("{} has {} elements but {} has {} classes", names.weights, w.shape[0].str(),
                       names.scores, classes.str());
  }
  using Result = std::optional<std::vector<Dim>>;
  if (!x.shape.isRanked())
    return t.shape.isRanked() ? Result(t.shape.dims()) : Result(std::nullopt);
  std::vector<Dim> dims = x.shape.dims();
  dims.erase(dims.begin() + 1);
  if (!t.shape.isRanked())
    return Result(std::move(dims));
  if (t.shape.rank() != x.shape.rank() - 1)
    return ctx.error("{} must have rank {} (the rank of {} minus 1), got shape {}", names.labels,
                     x.shape.rank() - 1, names.scores, t.shape.str());
  for (size_t i = 0; i < dims.size(); ++i) {
    if (!dimsCompatible(dims[i], t.shape.dims()[i]))
      return ctx.error("{} dim {} is {} but {} dim {} is {}", names.labels, i,
                       t.shape.dims()[i].str(), names.scores, i == 0 ? 0 : i + 1, dims[i].str());
    dims[i] = unifyDims(dims[i], t.shape.dims()[i]);
  }
  return Result(std::move(dims));
}

/// (scores, labels, weights?) -> (loss, log_prob?): the loss is a scalar unless reduction is
/// "none"; log_prob (SoftmaxCrossEntropyLoss only) has the scores' type.
Status inferLoss(InferContext &ctx) {
  DLC_ASSIGN_OR_RETURN(auto dims, checkLossInputs(ctx));
  const TensorType &x = ctx.inputType(0);
  DType dtype = x.isKnown() || !ctx.hasInput(2) ? x.dtype : ctx.inputType(2).dtype;
  Shape loss;
  if (ctx.node().getString("reduction") == "none")
    loss = dims ? Shape(std::move(*dims)) : Shape::unranked();
  ctx.setOutputType(0, TensorType(dtype, std::move(loss)));
  ctx.setOutputType(1, TensorType(dtype, x.shape));
  return Status::ok();
}

} // namespace

std::vector<OpDef> lossOps() {
  auto row = [](Op op, int maxOutputs) {
    return OpDef{
        .op = op,
        .minInputs = 2,
        .maxInputs = 3,
        .maxOutputs = maxOutputs,
        .attrs = {optionalAttr("ignore_index", AttrKind::kInt), stringAttr("reduction", "mean")},
        .infer = inferLoss};
  };
  return {
      // (input, target, weight?) -> loss
      row(Op::kNegativeLogLikelihoodLoss, 1),
      // (scores, labels, weights?) -> (output, log_prob?)
      row(Op::kSoftmaxCrossEntropyLoss, 2),
  };
}

} // namespace dlc::ops
