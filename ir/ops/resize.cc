// Resampling: Resize (opset-19 form), GridSample, Col2Im.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <numeric>

#include "ir/ops/nn_parts.h"
#include "ir/ops/nn_util.h"
#include "ir/ops/util.h"

namespace dlc::ops {

namespace {

enum class AspectPolicy { kStretch, kNotLarger, kNotSmaller };

/// Whether Resize's optional input i (scales or sizes) is given: `definite` when it is
/// present and known to be non-empty, `possible` unless it is absent or known to be empty
/// (an empty scales / sizes tensor means "not given").
struct OptionalVector {
  bool definite = false;
  bool possible = false;
};

OptionalVector classify(const InferContext &ctx, int i, std::optional<size_t> knownCount) {
  if (!ctx.hasInput(i))
    return {};
  if (knownCount)
    return {*knownCount > 0, *knownCount > 0};
  const Shape &s = ctx.inputType(i).shape;
  if (s.isRanked() && s.rank() == 1 && s[0].isKnown())
    return {s[0].value() > 0, s[0].value() > 0};
  return {false, true};
}

Expected<std::vector<int64_t>> resizeAxes(const Node &node, int64_t rank) {
  std::vector<int64_t> axes;
  if (!node.hasAttr("axes")) {
    axes.resize(static_cast<size_t>(rank));
    std::iota(axes.begin(), axes.end(), 0);
    return axes;
  }
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t a : node.getInts("axes")) {
    Expected<int64_t> axis = normalizeAxis(a, rank);
    if (!axis)
      return invalidArgument("attribute 'axes' value {} is out of range for rank {}", a, rank);
    if (seen[static_cast<size_t>(*axis)])
      return invalidArgument("attribute 'axes' repeats axis {}", a);
    seen[static_cast<size_t>(*axis)] = true;
    axes.push_back(*axis);
  }
  return axes;
}

/// Resize(X, roi?, scales?, sizes?): exactly one of scales / sizes; output dims from constant
/// scales (floor(in * scale), computed in float as ONNX does) or from sizes (adjusted by
/// keep_aspect_ratio_policy), for the dims listed in `axes` (default: all).
Status inferResize(InferContext &ctx) {
  const Node &node = ctx.node();
  const TensorType &x = ctx.inputType(0);
  const std::string &policyName = node.getString("keep_aspect_ratio_policy");
  AspectPolicy policy;
  if (policyName == "stretch")
    policy = AspectPolicy::kStretch;
  else if (policyName == "not_larger")
    policy = AspectPolicy::kNotLarger;
  else if (policyName == "not_smaller")
    policy = AspectPolicy::kNotSmaller;
  else
    return ctx.error("invalid keep_aspect_ratio_policy '{}'; expected stretch, not_larger or "
                     "not_smaller",
                     policyName);

  std::optional<std::vector<float>> scales;
  if (const Tensor *t = ctx.hasInput(2) ? ctx.inputConstant(2) : nullptr) {
    scales.emplace();
    for (int64_t i = 0; i < t->numElements(); ++i)
      scales->push_back(static_cast<float>(t->elementAsDouble(i)));
  }
  std::optional<std::vector<Dim>> sizes = ctx.hasInput(3) ? ctx.inputAsDims(3) : std::nullopt;
  OptionalVector hasScales =
      classify(ctx, 2, scales ? std::optional(scales->size()) : std::nullopt);
  OptionalVector hasSizes = classify(ctx, 3, sizes ? std::optional(sizes->size()) : std::nullopt);
  if (hasScales.definite && hasSizes.definite)
    return ctx.error("only one of 'scales' and 'sizes' may be given");
  if (!hasScales.possible && !hasSizes.possible)
    return ctx.error("one of 'scales' and 'sizes' must be given");
  if (hasScales.definite && policy != AspectPolicy::kStretch)
    return ctx.error("'scales' cannot be used with keep_aspect_ratio_policy '{}'", policyName);

  if (!x.shape.isRanked()) {
    ctx.setOutputType(0, x);
    return Status::ok();
  }
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> axes, resizeAxes(node, x.shape.rank()));
  std::vector<Dim> out = x.shape.dims();
  auto dimAt = [&](size_t i) -> Dim & { return out[static_cast<size_t>(axes[i])]; };

  if (sizes && !sizes->empty()) {
    if (sizes->size() != axes.size())
      return ctx.error("input 'sizes' has {} values, expected {}", sizes->size(), axes.size());
    bool allKnown = true;
    for (size_t i = 0; i < axes.size(); ++i)
      allKnown = allKnown && (*sizes)[i].isKnown() && dimAt(i).isKnown();
    if (policy == AspectPolicy::kStretch) {
      for (size_t i = 0; i < axes.size(); ++i)
        dimAt(i) = (*sizes)[i];
    } else if (!allKnown) {
      for (size_t i = 0; i < axes.size(); ++i)
        dimAt(i) = Dim::unknown();
    } else {
      // One scale for all axes: the smallest (not_larger) or largest (not_smaller) ratio.
      float scale = policy == AspectPolicy::kNotLarger ? FLT_MAX : FLT_MIN;
      for (size_t i = 0; i < axes.size(); ++i) {
        float s = static_cast<float>((*sizes)[i].value()) / static_cast<float>(dimAt(i).value());
        scale = policy == AspectPolicy::kNotLarger ? std::min(scale, s) : std::max(scale, s);
      }
      for (size_t i = 0; i < axes.size(); ++i)
        dimAt(i) =
            Dim(static_cast<int64_t>(std::roundf(scale * static_cast<float>(dimAt(i).value()))));
    }
  } else if (scales && !scales->empty()) {
    if (scales->size() != axes.size())
      return ctx.error("input 'scales' has {} values, expected {}", scales->size(), axes.size());
    for (size_t i = 0; i < axes.size(); ++i) {
      float s = (*scales)[i];
      if (!(s > 0))
        return ctx.error("input 'scales' must be positive, got {}", s);
      Dim &d = dimAt(i);
      if (s == 1.0f)
        continue;
      d = d.isKnown() ? Dim(static_cast<int64_t>(std::floor(static_cast<float>(d.value()) * s)))
                      : Dim::unknown();
    }
  } else {
    for (size_t i = 0; i < axes.size(); ++i)
      dimAt(i) = Dim::unknown();
  }
  ctx.setOutputType(0, TensorType(x.dtype, Shape(std::move(out))));
  return Status::ok();
}

/// GridSample(X [N, C, D1..Dk], grid [N, O1..Ok, k]) -> [N, C, O1..Ok].
Status inferGridSample(InferContext &ctx) {
  const TensorType &x = ctx.inputType(0);
  const Shape &grid = ctx.inputType(1).shape;
  DLC_RETURN_IF_ERROR(expectMinRank(ctx, 0, 3, "input X"));
  DLC_RETURN_IF_ERROR(expectMinRank(ctx, 1, 3, "input grid"));
  if (!x.shape.isRanked() && !grid.isRanked()) {
    ctx.setOutputType(0, x);
    return Status::ok();
  }
  int64_t rank = x.shape.isRanked() ? x.shape.rank() : grid.rank();
  if (x.shape.isRanked() && grid.isRanked() && grid.rank() != rank)
    return ctx.error("input X and grid must have the same rank, got {} and {}", rank, grid.rank());
  std::vector<Dim> out(static_cast<size_t>(rank));
  if (x.shape.isRanked()) {
    out[0] = x.shape[0];
    out[1] = x.shape[1];
  }
  if (grid.isRanked()) {
    const Dim &last = grid[rank - 1];
    if (last.isKnown() && last.value() != rank - 2)
      return ctx.error("the last dim of grid must be {} (the number of spatial axes), got {}",
                       rank - 2, last.value());
    if (!dimsCompatible(out[0], grid[0]))
      return ctx.error("input X has batch {} but grid has batch {}", out[0].str(), grid[0].str());
    out[0] = unifyDims(out[0], grid[0]);
    for (int64_t i = 1; i + 1 < rank; ++i)
      out[static_cast<size_t>(i) + 1] = grid[i];
  }
  ctx.setOutputType(0, TensorType(x.dtype, Shape(std::move(out))));
  return Status::ok();
}

/// Checks Col2Im's per-axis attribute `name` (count values, each >= minValue) and returns it.
Expected<std::vector<int64_t>> col2imAttr(const Node &node, const char *name, size_t count,
                                          int64_t dflt, int64_t minValue) {
  if (!node.hasAttr(name))
    return std::vector<int64_t>(count, dflt);
  std::vector<int64_t> v = node.getInts(name);
  if (v.size() != count)
    return invalidArgument("attribute '{}' has {} values, expected {}", name, v.size(), count);
  for (int64_t e : v)
    if (e < minValue)
      return invalidArgument("attribute '{}' must be {}, got {}", name,
                             minValue == 0 ? "non-negative" : "positive", formatInts(v));
  return v;
}

/// Col2Im(input [N, C * prod(block_shape), L], image_shape, block_shape) -> [N, C, image...].
Status inferCol2Im(InferContext &ctx) {
  const TensorType &x = ctx.inputType(0);
  DLC_RETURN_IF_ERROR(expectRank(ctx, 0, 3, "input"));
  DLC_RETURN_IF_ERROR(expectRank(ctx, 1, 1, "input image_shape"));
  DLC_RETURN_IF_ERROR(expectRank(ctx, 2, 1, "input block_shape"));
  std::optional<std::vector<Dim>> image = ctx.inputAsDims(1), block = ctx.inputAsDims(2);
  if (image && block && image->size() != block->size())
    return ctx.error("image_shape has {} values but block_shape has {}", image->size(),
                     block->size());
  std::optional<size_t> n;
  if (image)
    n = image->size();
  else if (block)
    n = block->size();
  else if (const Shape &s = ctx.inputType(1).shape; s.isRanked() && s[0].isKnown())
    n = static_cast<size_t>(s[0].value());
  if (!n) {
    ctx.setOutputType(0, TensorType(x.dtype, Shape::unranked()));
    return Status::ok();
  }
  const Node &node = ctx.node();
  DLC_ASSIGN_OR_RETURN(auto pads, col2imAttr(node, "pads", 2 * *n, 0, 0));
  DLC_ASSIGN_OR_RETURN(auto strides, col2imAttr(node, "strides", *n, 1, 1));
  DLC_ASSIGN_OR_RETURN(auto dilations, col2imAttr(node, "dilations", *n, 1, 1));

  Dim batch = x.shape.isRanked() ? x.shape[0] : Dim::unknown();
  Dim cols = x.shape.isRanked() ? x.shape[1] : Dim::unknown();
  Dim blocks = x.shape.isRanked() ? x.shape[2] : Dim::unknown();
  Dim channels = Dim::unknown();
  bool blockKnown =
      block && std::all_of(block->begin(), block->end(), [](const Dim &d) { return d.isKnown(); });
  if (blockKnown) {
    int64_t product = 1;
    for (const Dim &d : *block)
      product *= d.value();
    if (product < 1)
      return ctx.error("block_shape must be positive");
    if (cols.isKnown() && cols.value() % product != 0)
      return ctx.error("input dim 1 ({}) must be divisible by the block size ({})", cols.value(),
                       product);
    channels = product == 1 ? cols : cols.isKnown() ? Dim(cols.value() / product) : Dim();
  }
  bool imageKnown =
      image && std::all_of(image->begin(), image->end(), [](const Dim &d) { return d.isKnown(); });
  if (imageKnown && blockKnown && blocks.isKnown()) {
    int64_t expected = 1;
    for (size_t i = 0; i < *n; ++i) {
      int64_t extent = dilations[i] * ((*block)[i].value() - 1) + 1;
      int64_t padded = (*image)[i].value() + pads[i] + pads[i + *n];
      expected *= padded < extent ? 0 : (padded - extent) / strides[i] + 1;
    }
    if (expected != blocks.value())
      return ctx.error("input has {} blocks but image_shape, block_shape, pads, strides and "
                       "dilations give {}",
                       blocks.value(), expected);
  }
  std::vector<Dim> out{batch, channels};
  for (size_t i = 0; i < *n; ++i)
    out.push_back(image ? (*image)[i] : Dim::unknown());
  ctx.setOutputType(0, TensorType(x.dtype, Shape(std::move(out))));
  return Status::ok();
}

} // namespace

std::vector<OpDef> samplingOps() {
  return {
      // (X, roi?, scales?, sizes?)
      {.op = Op::kResize,
       .maxInputs = 4,
       .attrs = {intAttr("antialias", 0), optionalAttr("axes", AttrKind::kInts),
                 stringAttr("coordinate_transformation_mode", "half_pixel"),
                 floatAttr("cubic_coeff_a", -0.75f), intAttr("exclude_outside", 0),
                 floatAttr("extrapolation_value", 0.0f),
                 stringAttr("keep_aspect_ratio_policy", "stretch"), stringAttr("mode", "nearest"),
                 stringAttr("nearest_mode", "round_prefer_floor")},
       .infer = inferResize},
      // (X, grid)
      {.op = Op::kGridSample,
       .minInputs = 2,
       .maxInputs = 2,
       .attrs = {intAttr("align_corners", 0), stringAttr("mode", "linear"),
                 stringAttr("padding_mode", "zeros")},
       .infer = inferGridSample},
      // (input, image_shape, block_shape)
      {.op = Op::kCol2Im,
       .minInputs = 3,
       .maxInputs = 3,
       .attrs = {optionalAttr("dilations", AttrKind::kInts), optionalAttr("pads", AttrKind::kInts),
                 optionalAttr("strides", AttrKind::kInts)},
       .infer = inferCol2Im},
  };
}

} // namespace dlc::ops
