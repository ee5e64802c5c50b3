// Shape inference of the padding and layout ops: Pad, CenterCropPad, DepthToSpace,
// SpaceToDepth, Trilu, ReverseSequence.
#include <algorithm>

#include "ir/ops/tensor_internal.h"

namespace dlc::ops::tensor {

namespace {
std::vector<int64_t> allAxes(int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < rank; ++i)
    axes.push_back(i);
  return axes;
}

Status checkBlocksize(const InferContext &ctx, int64_t b) {
  int64_t square;
  if (b <= 0 || __builtin_mul_overflow(b, b, &square))
    return ctx.error("blocksize {} is not a positive size", b);
  return Status::ok();
}

/// The 4-D input of DepthToSpace / SpaceToDepth, or nullptr when its rank is unknown.
Expected<const Shape *> input4d(const InferContext &ctx) {
  const TensorType &in = ctx.inputType(0);
  if (!in.shape.isRanked())
    return static_cast<const Shape *>(nullptr);
  if (in.shape.rank() != 4)
    return ctx.error("input must be 4-D, got {}", in.str());
  return &in.shape;
}
} // namespace

Status inferPad(InferContext &ctx) {
  const std::string &mode = ctx.node().getString("mode");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    return ctx.error("unknown mode '{}' (expected constant, reflect, edge or wrap)", mode);
  DLC_RETURN_IF_ERROR(checkRankAtMost(ctx, 1, 1, "pads"));
  if (DType t = ctx.inputType(1).dtype; t != DType::kUnknown && t != DType::kI64)
    return ctx.error("pads must be i64, got {}", dtypeName(t));
  if (ctx.hasInput(3)) {
    DLC_RETURN_IF_ERROR(checkIndexType(ctx, 3, "axes"));
    DLC_RETURN_IF_ERROR(checkRankAtMost(ctx, 3, 1, "axes"));
  }
  const TensorType &in = ctx.inputType(0);
  if (!in.shape.isRanked()) {
    ctx.setOutputType(0, in);
    return Status::ok();
  }
  const int64_t r = in.shape.rank();
  std::optional<std::vector<int64_t>> axes = allAxes(r);
  if (ctx.hasInput(3)) {
    axes = inputInts(ctx, 3);
    if (axes) {
      DLC_ASSIGN_OR_RETURN(axes, normalizeAxes(*axes, r));
    }
  }
  std::vector<Dim> dims = in.shape.dims();
  auto pads = inputInts(ctx, 1);
  if (!axes) {
    dims = unknownDims(r);
  } else if (!pads) {
    for (int64_t a : *axes)
      dims[static_cast<size_t>(a)] = Dim::unknown();
  } else {
    const size_t n = axes->size();
    if (pads->size() != 2 * n)
      return ctx.error("pads has {} elements for {} axes (expected {})", pads->size(), n, 2 * n);
    for (size_t k = 0; k < n; ++k) {
      Dim &d = dims[static_cast<size_t>((*axes)[k])];
      int64_t begin = (*pads)[k], end = (*pads)[k + n], size;
      if (d.isKnown()) {
        if (__builtin_add_overflow(d.value(), begin, &size) ||
            __builtin_add_overflow(size, end, &size) || size < 0)
          return ctx.error("padding axis {} of size {} by {} and {} gives an invalid size",
                           (*axes)[k], d.value(), begin, end);
        d = Dim(size);
      } else if (begin != 0 || end != 0) {
        d = Dim::unknown();
      }
    }
  }
  ctx.setOutputType(0, TensorType(in.dtype, Shape(std::move(dims))));
  return Status::ok();
}

Status inferCenterCropPad(InferContext &ctx) {
  const TensorType &in = ctx.inputType(0);
  DLC_RETURN_IF_ERROR(checkIndexType(ctx, 1, "shape"));
  DLC_ASSIGN_OR_RETURN(auto target, targetDims(ctx, 1, "shape"));
  if (!in.shape.isRanked()) {
    ctx.setOutputType(0, in);
    return Status::ok();
  }
  const int64_t r = in.shape.rank();
  std::vector<int64_t> axes = allAxes(r);
  if (ctx.node().hasAttr("axes")) {
    DLC_ASSIGN_OR_RETURN(axes, normalizeAxes(ctx.node().getInts("axes"), r));
  }
  std::vector<Dim> dims = in.shape.dims();
  if (target && target->size() != axes.size())
    return ctx.error("shape has {} elements for {} axes", target->size(), axes.size());
  for (size_t k = 0; k < axes.size(); ++k)
    dims[static_cast<size_t>(axes[k])] = target ? (*target)[k] : Dim::unknown();
  ctx.setOutputType(0, TensorType(in.dtype, Shape(std::move(dims))));
  return Status::ok();
}

Status inferDepthToSpace(InferContext &ctx) {
  const int64_t b = ctx.node().getInt("blocksize");
  DLC_RETURN_IF_ERROR(checkBlocksize(ctx, b));
  const std::string &mode = ctx.node().getString("mode");
  if (mode != "DCR" && mode != "CRD")
    return ctx.error("unknown mode '{}' (expected DCR or CRD)", mode);
  DLC_ASSIGN_OR_RETURN(const Shape *s, input4d(ctx));
  const DType dtype = ctx.inputType(0).dtype;
  if (!s) {
    ctx.setOutputType(0, TensorType(dtype, Shape(unknownDims(4))));
    return Status::ok();
  }
  Dim c = Dim::unknown();
  if ((*s)[1].isKnown()) {
    if ((*s)[1].value() % (b * b) != 0)
      return ctx.error("{} channels are not divisible by blocksize^2 = {}", (*s)[1].value(), b * b);
    c = Dim((*s)[1].value() / (b * b));
  }
  ctx.setOutputType(0,
                    TensorType(dtype, Shape({(*s)[0], c, dimMul((*s)[2], b), dimMul((*s)[3], b)})));
  return Status::ok();
}

Status inferSpaceToDepth(InferContext &ctx) {
  const int64_t b = ctx.node().getInt("blocksize");
  DLC_RETURN_IF_ERROR(checkBlocksize(ctx, b));
  DLC_ASSIGN_OR_RETURN(const Shape *s, input4d(ctx));
  const DType dtype = ctx.inputType(0).dtype;
  if (!s) {
    ctx.setOutputType(0, TensorType(dtype, Shape(unknownDims(4))));
    return Status::ok();
  }
  std::vector<Dim> dims = {(*s)[0], dimMul((*s)[1], dimMul(Dim(b), Dim(b)))};
  for (int64_t i = 2; i < 4; ++i) {
    const Dim &d = (*s)[i];
    if (d.isKnown() && d.value() % b != 0)
      return ctx.error("dim {} of size {} is not divisible by blocksize {}", i, d.value(), b);
    dims.push_back(d.isKnown() ? Dim(d.value() / b) : (b == 1 ? d : Dim::unknown()));
  }
  ctx.setOutputType(0, TensorType(dtype, Shape(std::move(dims))));
  return Status::ok();
}

Status inferTrilu(InferContext &ctx) {
  const TensorType &in = ctx.inputType(0);
  if (in.shape.isRanked() && in.shape.rank() < 2)
    return ctx.error("input must have rank >= 2, got {}", in.str());
  DLC_RETURN_IF_ERROR(checkRankAtMost(ctx, 1, 0, "k"));
  ctx.setOutputType(0, in);
  return Status::ok();
}

Status inferReverseSequence(InferContext &ctx) {
  const TensorType &in = ctx.inputType(0);
  const int64_t batch = ctx.node().getInt("batch_axis"), time = ctx.node().getInt("time_axis");
  if ((batch != 0 && batch != 1) || (time != 0 && time != 1) || batch == time)
    return ctx.error("batch_axis {} and time_axis {} must be 0 and 1 in some order", batch, time);
  if (in.shape.isRanked() && in.shape.rank() < 2)
    return ctx.error("input must have rank >= 2, got {}", in.str());
  DLC_RETURN_IF_ERROR(checkRankAtMost(ctx, 1, 1, "sequence_lens"));
  const Shape &lens = ctx.inputType(1).shape;
  if (in.shape.isRanked() && lens.isRanked() && lens.rank() == 1 &&
      !dimsCompatible(lens[0], in.shape[batch]))
    return ctx.error("sequence_lens {} does not match the batch size {}", ctx.inputType(1).str(),
                     in.shape[batch].str());
  ctx.setOutputType(0, in);
  return Status::ok();
}

} // namespace dlc::ops::tensor
