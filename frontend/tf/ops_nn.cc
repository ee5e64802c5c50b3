// TensorFlow ops -> dlc IR (see convert.h): matmul, convolution, pooling, normalization,
// activations, resizing and fake quantization.
//
// TensorFlow's spatial ops are channels-last by default; the IR's are channels-first (ONNX).
// A channels-last node becomes to_channels_first -> op -> to_channels_last, and `simplify`
// cancels the pairs between neighbouring ops. Window attributes (strides, dilations, ksize,
// explicit_paddings) list every dim in the layout's order; the batch and channel entries must
// be 1 (0 for paddings), as TensorFlow's kernels require.
#include "frontend/tf/convert.h"

#include <cmath>

#include <fmt/ranges.h>

namespace dlc::tf::detail {

namespace {

/// The spatial entries of a per-dim window attribute (or of `v` when given).
Expected<std::vector<int64_t>> spatialEntries(const NodeConverter &c, std::string_view what,
                                              const std::vector<int64_t> &v, int64_t rank,
                                              bool last) {
  if (static_cast<int64_t>(v.size()) != rank)
    return c.error("{} has {} entries, expected {}", what, v.size(), rank);
  const int64_t channel = last ? v.back() : v[1];
  if (v[0] != 1 || channel != 1)
    return c.unsupported("{} [{}] must be 1 in the batch and channel dims", what,
                         fmt::join(v, ", "));
  return std::vector<int64_t>(v.begin() + (last ? 1 : 2), v.end() - (last ? 1 : 0));
}

Expected<std::vector<int64_t>> spatialAttr(const NodeConverter &c, std::string_view name,
                                           int64_t rank, bool last, bool defaultOnes = false) {
  std::optional<std::vector<int64_t>> def;
  if (defaultOnes)
    def = std::vector<int64_t>(static_cast<size_t>(rank), 1);
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> v, c.attrInts(name, def));
  return spatialEntries(c, fmt::format("attribute '{}'", name), v, rank, last);
}

/// Explicit per-side pads (IR order: all begins, then all ends) from `explicit_paddings`.
Expected<std::vector<int64_t>> explicitPads(const NodeConverter &c, int64_t rank, bool last) {
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> p, c.attrInts("explicit_paddings"));
  if (static_cast<int64_t>(p.size()) != 2 * rank)
    return c.error("attribute 'explicit_paddings' has {} entries, expected {}", p.size(), 2 * rank);
  const int64_t channel = last ? rank - 1 : 1;
  if (p[0] || p[1] || p[2 * channel] || p[2 * channel + 1])
    return c.unsupported("explicit_paddings [{}] pad the batch or channel dim", fmt::join(p, ", "));
  std::vector<int64_t> begins, ends;
  for (int64_t d = 0; d < rank; ++d)
    if (d != 0 && d != channel) {
      begins.push_back(p[static_cast<size_t>(2 * d)]);
      ends.push_back(p[static_cast<size_t>(2 * d + 1)]);
    }
  begins.insert(begins.end(), ends.begin(), ends.end());
  return begins;
}

/// `padding` SAME / VALID / EXPLICIT as the IR's auto_pad or pads.
Status setPadding(const NodeConverter &c, AttrMap &attrs, int64_t rank, bool last) {
  DLC_ASSIGN_OR_RETURN(std::string padding, c.attrString("padding"));
  if (padding == "SAME") {
    attrs["auto_pad"] = Attribute("SAME_UPPER"); // TensorFlow puts the odd pad at the end
  } else if (padding == "VALID") {
    attrs["auto_pad"] = Attribute("VALID");
  } else if (padding == "EXPLICIT") {
    DLC_ASSIGN_OR_RETURN(std::vector<int64_t> pads, explicitPads(c, rank, last));
    attrs["pads"] = Attribute(std::move(pads));
  } else {
    return c.error("unknown padding '{}' (SAME, VALID or EXPLICIT)", padding);
  }
  return Status::ok();
}

int64_t spatialRankOf(const NodeConverter &c) {
  return c.opType().find("3D") != std::string::npos ? 3 : 2;
}

Expected<Value *> channelsFirstIf(NodeConverter &c, Value *v, bool last) {
  return last ? c.toChannelsFirst(v) : Expected<Value *>(v);
}

Status setOutputChannelsLastIf(NodeConverter &c, Value *y, bool last) {
  if (last) {
    DLC_ASSIGN_OR_RETURN(y, c.toChannelsLast(y));
  }
  c.setOutputs({y});
  return Status::ok();
}

/// The static size of dim `d` of v, or nullopt.
std::optional<int64_t> staticDim(const Value *v, int64_t d) {
  const Shape &s = v->shape();
  if (!s.isRanked() || d >= s.rank() || !s[d].isKnown())
    return std::nullopt;
  return s[d].value();
}

// --- Matmul and bias ---------------------------------------------------------------------------

/// Swaps the last two dims of input i when `attr` (transpose_a, adj_x, ...) is set.
Expected<Value *> maybeSwapLast(NodeConverter &c, int i, std::string_view attr) {
  DLC_ASSIGN_OR_RETURN(bool swap, c.attrBool(attr, false));
  if (!swap)
    return c.input(i);
  DLC_ASSIGN_OR_RETURN(int64_t rank, c.inputRank(i, attr));
  if (rank < 2)
    return c.error("input {} has rank {}; '{}' needs at least 2", i, rank, attr);
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank - 2; ++d)
    perm.push_back(d);
  perm.push_back(rank - 1);
  perm.push_back(rank - 2);
  return c.transpose(c.input(i), perm, attr);
}

Status convertMatMul(NodeConverter &c) {
  const bool batch = c.opType() != "MatMul";
  DLC_ASSIGN_OR_RETURN(Value * a, maybeSwapLast(c, 0, batch ? "adj_x" : "transpose_a"));
  DLC_ASSIGN_OR_RETURN(Value * b, maybeSwapLast(c, 1, batch ? "adj_y" : "transpose_b"));
  if (c.opType() == "BatchMatMulV3") {
    DLC_ASSIGN_OR_RETURN(DType out, c.attrType("Tout", a->dtype()));
    DLC_ASSIGN_OR_RETURN(a, c.cast(a, out, "cast_x"));
    DLC_ASSIGN_OR_RETURN(b, c.cast(b, out, "cast_y"));
  }
  DLC_ASSIGN_OR_RETURN(Value * y, c.op(Op::kMatMul, {a, b}));
  c.setOutputs({y});
  return Status::ok();
}

Status convertBiasAdd(NodeConverter &c) {
  bool last = true;
  if (c.opType() == "BiasAdd") {
    DLC_ASSIGN_OR_RETURN(last, c.channelsLast());
  }
  Value *bias = c.input(1);
  if (!last) {
    DLC_ASSIGN_OR_RETURN(int64_t rank, c.inputRank(0, "BiasAdd with data_format NCHW"));
    std::vector<int64_t> shape(static_cast<size_t>(std::max<int64_t>(rank - 1, 1)), 1);
    shape[0] = -1;
    DLC_ASSIGN_OR_RETURN(
        bias, c.op(Op::kReshape, {bias, c.constI64(shape, "bias_shape")}, {}, "bias_per_channel"));
  }
  DLC_ASSIGN_OR_RETURN(Value * y, c.op(Op::kAdd, {c.input(0), bias}));
  c.setOutputs({y});
  return Status::ok();
}

// --- Convolution -------------------------------------------------------------------------------

/// The filter [spatial..., I, O] as the IR's [O, I, spatial...].
Expected<Value *> filterToOI(NodeConverter &c, Value *filter, int64_t spatialRank, bool swapIO) {
  const int64_t rank = spatialRank + 2;
  std::vector<int64_t> perm =
      swapIO ? std::vector<int64_t>{rank - 2, rank - 1} : std::vector<int64_t>{rank - 1, rank - 2};
  for (int64_t d = 0; d < spatialRank; ++d)
    perm.push_back(d);
  return c.transpose(filter, perm, "filter");
}

Status convertConv(NodeConverter &c) {
  const int64_t sr = spatialRankOf(c), rank = sr + 2;
  DLC_ASSIGN_OR_RETURN(bool last, c.channelsLast());
  AttrMap attrs;
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> strides, spatialAttr(c, "strides", rank, last));
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> dilations,
                       spatialAttr(c, "dilations", rank, last, true));
  attrs["strides"] = Attribute(strides);
  attrs["dilations"] = Attribute(dilations);
  DLC_RETURN_IF_ERROR(setPadding(c, attrs, rank, last));
  // A filter with fewer input channels than x has is a grouped convolution.
  std::optional<int64_t> channels = staticDim(c.input(0), last ? rank - 1 : 1);
  std::optional<int64_t> filterIn = staticDim(c.input(1), rank - 2);
  if (channels && filterIn && *channels != *filterIn) {
    if (*filterIn <= 0 || *channels % *filterIn)
      return c.error("input has {} channels, not a multiple of the filter's {}", *channels,
                     *filterIn);
    attrs["group"] = Attribute(*channels / *filterIn);
  }
  DLC_ASSIGN_OR_RETURN(Value * x, channelsFirstIf(c, c.input(0), last));
  DLC_ASSIGN_OR_RETURN(Value * w, filterToOI(c, c.input(1), sr, false));
  DLC_ASSIGN_OR_RETURN(Value * y, c.op(Op::kConv, {x, w}, std::move(attrs)));
  return setOutputChannelsLastIf(c, y, last);
}

Status convertDepthwiseConv(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(bool last, c.channelsLast());
  AttrMap attrs;
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> strides, spatialAttr(c, "strides", 4, last));
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> dilations, spatialAttr(c, "dilations", 4, last, true));
  attrs["strides"] = Attribute(strides);
  attrs["dilations"] = Attribute(dilations);
  DLC_RETURN_IF_ERROR(setPadding(c, attrs, 4, last));
  std::optional<int64_t> channels = staticDim(c.input(1), 2);
  if (!channels)
    channels = staticDim(c.input(0), last ? 3 : 1);
  if (!channels)
    return c.unsupported("the channel count (the filter's dim 2) must be static");
  attrs["group"] = Attribute(*channels);
  // [H, W, C, M] -> [C, M, H, W] -> [C*M, 1, H, W]: output channel c*M + m, as TensorFlow's.
  DLC_ASSIGN_OR_RETURN(Value * w, c.transpose(c.input(1), {2, 3, 0, 1}, "filter"));
  DLC_ASSIGN_OR_RETURN(
      w, c.op(Op::kReshape, {w, c.constI64({-1, 1, 0, 0}, "filter_shape")}, {}, "filter_grouped"));
  DLC_ASSIGN_OR_RETURN(Value * x, channelsFirstIf(c, c.input(0), last));
  DLC_ASSIGN_OR_RETURN(Value * y, c.op(Op::kConv, {x, w}, std::move(attrs)));
  return setOutputChannelsLastIf(c, y, last);
}

/// Conv2DBackpropInput(input_sizes, filter [H, W, in, out], out_backprop): the gradient of a
/// convolution with respect to its input, a ConvTranspose whose pads and output_padding give
/// exactly input_sizes.
Status convertConvBackpropInput(NodeConverter &c) {
  const int64_t sr = spatialRankOf(c), rank = sr + 2;
  DLC_ASSIGN_OR_RETURN(bool last, c.channelsLast());
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, c.constInts(0, "input_sizes"));
  // The full shape in the layout's order, or (newer TensorFlow) the spatial dims only.
  std::vector<int64_t> outSize = sizes;
  if (static_cast<int64_t>(sizes.size()) == rank)
    outSize.assign(sizes.begin() + (last ? 1 : 2), sizes.end() - (last ? 1 : 0));
  else if (static_cast<int64_t>(sizes.size()) != sr)
    return c.error("input_sizes has {} entries, expected {}", sizes.size(), rank);
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> strides, spatialAttr(c, "strides", rank, last));
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> dilations,
                       spatialAttr(c, "dilations", rank, last, true));
  DLC_ASSIGN_OR_RETURN(std::string padding, c.attrString("padding"));
  std::vector<int64_t> explicitP;
  if (padding == "EXPLICIT") {
    DLC_ASSIGN_OR_RETURN(explicitP, explicitPads(c, rank, last));
  } else if (padding != "SAME" && padding != "VALID") {
    return c.error("unknown padding '{}' (SAME, VALID or EXPLICIT)", padding);
  }
  std::vector<int64_t> pads(static_cast<size_t>(2 * sr)), outPad(static_cast<size_t>(sr));
  for (int64_t i = 0; i < sr; ++i) {
    const size_t u = static_cast<size_t>(i);
    std::optional<int64_t> k = staticDim(c.input(1), i);
    if (!k)
      return c.unsupported("the filter's spatial dims must be static");
    const int64_t extent = dilations[u] * (*k - 1) + 1, s = strides[u], out = outSize[u];
    // The forward convolution's output size: what out_backprop must hold.
    std::optional<int64_t> in = staticDim(c.input(2), last ? i + 1 : i + 2);
    if (padding == "SAME") {
      in = in.value_or((out + s - 1) / s);
      const int64_t total = std::max<int64_t>((*in - 1) * s + extent - out, 0);
      pads[u] = total / 2;
      pads[u + static_cast<size_t>(sr)] = total - total / 2;
    } else if (padding == "VALID") {
      in = in.value_or((out - extent + s) / s);
    } else {
      if (!in)
        return c.unsupported("EXPLICIT padding needs out_backprop's spatial dims static");
      pads[u] = explicitP[u];
      pads[u + static_cast<size_t>(sr)] = explicitP[u + static_cast<size_t>(sr)];
    }
    outPad[u] = out - ((*in - 1) * s + extent - pads[u] - pads[u + static_cast<size_t>(sr)]);
    if (outPad[u] < 0 || outPad[u] >= std::max(s, dilations[u]))
      return c.error("input_sizes [{}] do not match out_backprop '{}' ({}) for this filter, "
                     "strides and padding",
                     fmt::join(sizes, ", "), c.input(2)->name(), c.input(2)->type().str());
  }
  AttrMap attrs{{"strides", Attribute(strides)},
                {"dilations", Attribute(dilations)},
                {"pads", Attribute(pads)}};
  if (std::any_of(outPad.begin(), outPad.end(), [](int64_t p) { return p != 0; }))
    attrs["output_padding"] = Attribute(outPad);
  DLC_ASSIGN_OR_RETURN(Value * dy, channelsFirstIf(c, c.input(2), last));
  // [spatial..., in, out] -> [out, in, spatial...]: ConvTranspose's [C_in, C_out, ...].
  DLC_ASSIGN_OR_RETURN(Value * w, filterToOI(c, c.input(1), sr, false));
  DLC_ASSIGN_OR_RETURN(Value * y, c.op(Op::kConvTranspose, {dy, w}, std::move(attrs)));
  return setOutputChannelsLastIf(c, y, last);
}

// --- Pooling -----------------------------------------------------------------------------------

Status convertPool(NodeConverter &c) {
  const int64_t rank = spatialRankOf(c) + 2;
  DLC_ASSIGN_OR_RETURN(bool last, c.channelsLast());
  std::vector<int64_t> ksize, strides;
  if (c.opType() == "MaxPoolV2") {
    DLC_ASSIGN_OR_RETURN(std::vector<int64_t> k, c.constInts(1, "ksize"));
    DLC_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.constInts(2, "strides"));
    DLC_ASSIGN_OR_RETURN(ksize, spatialEntries(c, "input 1 (ksize)", k, rank, last));
    DLC_ASSIGN_OR_RETURN(strides, spatialEntries(c, "input 2 (strides)", s, rank, last));
  } else {
    DLC_ASSIGN_OR_RETURN(ksize, spatialAttr(c, "ksize", rank, last));
    DLC_ASSIGN_OR_RETURN(strides, spatialAttr(c, "strides", rank, last));
  }
  AttrMap attrs{{"kernel_shape", Attribute(ksize)}, {"strides", Attribute(strides)}};
  DLC_RETURN_IF_ERROR(setPadding(c, attrs, rank, last));
  const bool isMax = c.opType().rfind("Max", 0) == 0;
  if (!isMax)
    attrs["count_include_pad"] = Attribute(0); // TensorFlow averages over the real elements
  DLC_ASSIGN_OR_RETURN(Value * x, channelsFirstIf(c, c.input(0), last));
  DLC_ASSIGN_OR_RETURN(Value * y,
                       c.op(isMax ? Op::kMaxPool : Op::kAveragePool, {x}, std::move(attrs)));
  return setOutputChannelsLastIf(c, y, last);
}

// --- Normalization -----------------------------------------------------------------------------

Status convertFusedBatchNorm(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(bool training, c.attrBool("is_training", true));
  if (training)
    return c.unsupported("training mode (is_training=true) computes batch statistics; dlc "
                         "imports inference graphs (freeze the graph with is_training=false)");
  DLC_ASSIGN_OR_RETURN(float epsilon, c.attrFloat("epsilon", 1e-4f));
  DLC_ASSIGN_OR_RETURN(bool last, c.channelsLast());
  DLC_ASSIGN_OR_RETURN(Value * x, channelsFirstIf(c, c.input(0), last));
  DLC_ASSIGN_OR_RETURN(Value * y, c.op(Op::kBatchNormalization,
                                       {x, c.input(1), c.input(2), c.input(3), c.input(4)},
                                       {{"epsilon", Attribute(epsilon)}}));
  if (last) {
    DLC_ASSIGN_OR_RETURN(y, c.toChannelsLast(y));
  }
  // In inference the statistics outputs are the given mean and variance.
  std::vector<Value *> outs = {y, c.input(3), c.input(4), c.input(3), c.input(4)};
  if (c.opType() == "FusedBatchNormV3")
    outs.push_back(c.input(3));
  c.setOutputs(outs);
  return Status::ok();
}

Status convertLrn(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(int64_t radius, c.attrInt("depth_radius", 5));
  DLC_ASSIGN_OR_RETURN(float bias, c.attrFloat("bias", 1.0f));
  DLC_ASSIGN_OR_RETURN(float alpha, c.attrFloat("alpha", 1.0f));
  DLC_ASSIGN_OR_RETURN(float beta, c.attrFloat("beta", 0.5f));
  // TensorFlow sums alpha * x^2 over the window; ONNX divides alpha by the window size.
  const int64_t size = 2 * radius + 1;
  DLC_ASSIGN_OR_RETURN(Value * x, c.toChannelsFirst(c.input(0)));
  DLC_ASSIGN_OR_RETURN(Value * y, c.op(Op::kLRN, {x},
                                       {{"size", Attribute(size)},
                                        {"alpha", Attribute(alpha * static_cast<float>(size))},
                                        {"beta", Attribute(beta)},
                                        {"bias", Attribute(bias)}}));
  return setOutputChannelsLastIf(c, y, true);
}

// --- Activations -------------------------------------------------------------------------------

template <Op kOp> Status convertUnary(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(Value * y, c.op(kOp, {c.input(0)}));
  c.setOutputs({y});
  return Status::ok();
}

Status convertRelu6(NodeConverter &c) {
  const DType t = c.input(0)->dtype();
  DLC_ASSIGN_OR_RETURN(
      Value * y, c.op(Op::kClip, {c.input(0), c.scalar(t, 0.0, "zero"), c.scalar(t, 6.0, "six")}));
  c.setOutputs({y});
  return Status::ok();
}

Status convertLeakyRelu(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(float alpha, c.attrFloat("alpha", 0.2f));
  DLC_ASSIGN_OR_RETURN(Value * y,
                       c.op(Op::kLeakyRelu, {c.input(0)}, {{"alpha", Attribute(alpha)}}));
  c.setOutputs({y});
  return Status::ok();
}

// --- Resampling and data rearrangement --------------------------------------------------------

/// ResizeBilinear / ResizeNearestNeighbor(images NHWC, size [2]) as a Resize of dims 1 and 2.
/// TensorFlow's source coordinates (resize_nearest_neighbor_op.cc, image_resizer_state.h):
///   align_corners:       x * (in-1)/(out-1), nearest rounds half up  -> align_corners
///   half_pixel_centers:  bilinear (x+0.5)*in/out - 0.5               -> half_pixel
///                        nearest floor((x+0.5)*in/out)
///                          = round half up of the half_pixel coordinate
///   neither:             x * in/out, nearest floors                  -> asymmetric
Status convertResize(NodeConverter &c) {
  const bool bilinear = c.opType() == "ResizeBilinear";
  DLC_ASSIGN_OR_RETURN(bool align, c.attrBool("align_corners", false));
  DLC_ASSIGN_OR_RETURN(bool half, c.attrBool("half_pixel_centers", false));
  if (align && half)
    return c.error("align_corners and half_pixel_centers cannot both be true");
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> size, c.constInts(1, "size"));
  if (size.size() != 2)
    return c.error("size has {} entries, expected 2 (height, width)", size.size());
  DLC_ASSIGN_OR_RETURN(int64_t rank, c.inputRank(0, "a resize"));
  if (rank != 4)
    return c.error("images must have rank 4 (NHWC), got {}", rank);
  Value *x = c.input(0);
  if (bilinear) { // TensorFlow's bilinear resize always returns float32
    DLC_ASSIGN_OR_RETURN(x, c.cast(x, DType::kF32));
  }
  AttrMap attrs{{"axes", Attribute(std::vector<int64_t>{1, 2})},
                {"mode", Attribute(bilinear ? "linear" : "nearest")},
                {"coordinate_transformation_mode", Attribute(align  ? "align_corners"
                                                             : half ? "half_pixel"
                                                                    : "asymmetric")},
                {"nearest_mode", Attribute(align || half ? "round_prefer_ceil" : "floor")}};
  DLC_ASSIGN_OR_RETURN(Value * y, c.op(Op::kResize, {x, nullptr, nullptr, c.constI64(size, "size")},
                                       std::move(attrs)));
  c.setOutputs({y});
  return Status::ok();
}

/// SpaceToDepth / DepthToSpace: TensorFlow's channel order (block row, block column, channel)
/// is ONNX's DCR.
Status convertSpaceDepth(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(int64_t block, c.attrInt("block_size"));
  DLC_ASSIGN_OR_RETURN(bool last, c.channelsLast());
  const bool toSpace = c.opType() == "DepthToSpace";
  AttrMap attrs{{"blocksize", Attribute(block)}};
  if (toSpace)
    attrs["mode"] = Attribute("DCR");
  DLC_ASSIGN_OR_RETURN(Value * x, channelsFirstIf(c, c.input(0), last));
  DLC_ASSIGN_OR_RETURN(
      Value * y, c.op(toSpace ? Op::kDepthToSpace : Op::kSpaceToDepth, {x}, std::move(attrs)));
  return setOutputChannelsLastIf(c, y, last);
}

// --- Fake quantization ---------------------------------------------------------------------------

Status convertFakeQuant(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(int64_t bits, c.attrInt("num_bits", 8));
  DLC_ASSIGN_OR_RETURN(bool narrow, c.attrBool("narrow_range", false));
  if (bits < 2 || bits > 16)
    return c.error("num_bits is {}; TensorFlow allows 2 to 16", bits);
  Value *lo = nullptr, *hi = nullptr;
  if (c.opType() == "FakeQuantWithMinMaxArgs") {
    DLC_ASSIGN_OR_RETURN(float mn, c.attrFloat("min", -6.0f));
    DLC_ASSIGN_OR_RETURN(float mx, c.attrFloat("max", 6.0f));
    if (!(mn < mx))
      return c.error("min ({}) must be smaller than max ({})", mn, mx);
    lo = c.constant(Tensor::scalarF32(mn), "min");
    hi = c.constant(Tensor::scalarF32(mx), "max");
  } else {
    lo = c.input(1);
    hi = c.input(2);
  }
  DLC_ASSIGN_OR_RETURN(Value * y, c.op(Op::kFakeQuant, {c.input(0), lo, hi},
                                       {{"num_bits", Attribute(bits)},
                                        {"narrow_range", Attribute(narrow ? 1 : 0)}}));
  c.setOutputs({y});
  return Status::ok();
}

} // namespace

std::vector<ConverterRow> nnConverters() {
  return {
      {"MatMul", 2, 2, convertMatMul},
      {"BatchMatMul", 2, 2, convertMatMul},
      {"BatchMatMulV2", 2, 2, convertMatMul},
      {"BatchMatMulV3", 2, 2, convertMatMul},
      {"BiasAdd", 2, 2, convertBiasAdd},
      {"BiasAddV1", 2, 2, convertBiasAdd},
      {"Conv2D", 2, 2, convertConv},
      {"Conv3D", 2, 2, convertConv},
      {"DepthwiseConv2dNative", 2, 2, convertDepthwiseConv},
      {"Conv2DBackpropInput", 3, 3, convertConvBackpropInput},
      {"Conv3DBackpropInputV2", 3, 3, convertConvBackpropInput},
      {"MaxPool", 1, 1, convertPool},
      {"MaxPoolV2", 3, 3, convertPool},
      {"AvgPool", 1, 1, convertPool},
      {"MaxPool3D", 1, 1, convertPool},
      {"AvgPool3D", 1, 1, convertPool},
      {"FusedBatchNorm", 5, 5, convertFusedBatchNorm},
      {"FusedBatchNormV2", 5, 5, convertFusedBatchNorm},
      {"FusedBatchNormV3", 5, 5, convertFusedBatchNorm},
      {"LRN", 1, 1, convertLrn},
      {"Relu", 1, 1, convertUnary<Op::kRelu>},
      {"Relu6", 1, 1, convertRelu6},
      {"Elu", 1, 1, convertUnary<Op::kElu>},
      {"Selu", 1, 1, convertUnary<Op::kSelu>},
      {"LeakyRelu", 1, 1, convertLeakyRelu},
      {"Sigmoid", 1, 1, convertUnary<Op::kSigmoid>},
      {"Tanh", 1, 1, convertUnary<Op::kTanh>},
      {"Softplus", 1, 1, convertUnary<Op::kSoftplus>},
      {"Softsign", 1, 1, convertUnary<Op::kSoftsign>},
      {"Erf", 1, 1, convertUnary<Op::kErf>},
      {"ResizeBilinear", 2, 2, convertResize},
      {"ResizeNearestNeighbor", 2, 2, convertResize},
      {"SpaceToDepth", 1, 1, convertSpaceDepth},
      {"DepthToSpace", 1, 1, convertSpaceDepth},
      {"FakeQuantWithMinMaxArgs", 1, 1, convertFakeQuant},
      {"FakeQuantWithMinMaxVars", 3, 3, convertFakeQuant},
      {"FakeQuantWithMinMaxVarsPerChannel", 3, 3, convertFakeQuant},
  };
}

} // namespace dlc::tf::detail
