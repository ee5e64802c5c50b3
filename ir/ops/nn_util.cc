#include "ir/ops/nn_util.h"

namespace dlc::ops {

std::string formatInts(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

Status expectRank(const InferContext &ctx, int i, int64_t rank, std::string_view what) {
  if (!ctx.hasInput(i) || !ctx.inputType(i).shape.isRanked())
    return Status::ok();
  int64_t r = ctx.inputType(i).shape.rank();
  if (r != rank)
    return ctx.error("{} must have rank {}, got rank {}", what, rank, r);
  return Status::ok();
}

Status expectMinRank(const InferContext &ctx, int i, int64_t rank, std::string_view what) {
  if (!ctx.hasInput(i) || !ctx.inputType(i).shape.isRanked())
    return Status::ok();
  int64_t r = ctx.inputType(i).shape.rank();
  if (r < rank)
    return ctx.error("{} must have rank >= {}, got rank {}", what, rank, r);
  return Status::ok();
}

Status expectPerChannel(const InferContext &ctx, int i, const Dim &channels,
                        std::string_view what) {
  DLC_RETURN_IF_ERROR(expectRank(ctx, i, 1, what));
  if (!ctx.hasInput(i) || !ctx.inputType(i).shape.isRanked())
    return Status::ok();
  const Dim &d = ctx.inputType(i).shape[0];
  if (!dimsCompatible(d, channels))
    return ctx.error("{} has {} elements but the input has {} channels", what, d.str(),
                     channels.str());
  return Status::ok();
}

Dim unifyDims(const Dim &a, const Dim &b) {
  if (a.isKnown())
    return a;
  if (b.isKnown())
    return b;
  return a.isSymbol() ? a : b;
}

std::optional<int64_t> constantScalarInt(const InferContext &ctx, int i) {
  if (!ctx.hasInput(i))
    return std::nullopt;
  const Tensor *t = ctx.inputConstant(i);
  if (!t || !isInteger(t->dtype()) || t->numElements() != 1)
    return std::nullopt;
  return t->elementAsInt64(0);
}

Dim scalarInputAsDim(const InferContext &ctx, int i) {
  if (!ctx.hasInput(i))
    return Dim::unknown();
  std::optional<std::vector<Dim>> dims = ctx.inputAsDims(i);
  if (!dims || dims->size() != 1)
    return Dim::unknown();
  return (*dims)[0];
}

Expected<int64_t> requiredInt(const Node &node, std::string_view name) {
  if (!node.hasAttr(name))
    return invalidArgument("attribute '{}' is required", name);
  return node.getInt(name);
}

Expected<DType> stashTypeToDType(int64_t stashType) {
  switch (stashType) {
  case 1:
    return DType::kF32;
  case 10:
    return DType::kF16;
  case 11:
    return DType::kF64;
  case 16:
    return DType::kBF16;
  default:
    break;
  }
  return invalidArgument("attribute 'stash_type' {} is not a floating-point type", stashType);
}

} // namespace dlc::ops
