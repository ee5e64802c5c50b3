#include "ir/ops/conv_util.h"

#include <algorithm>

#include "ir/ops/nn_util.h"

namespace dlc::ops {

Expected<AutoPad> parseAutoPad(std::string_view s) {
  if (s == "NOTSET")
    return AutoPad::kNotSet;
  if (s == "SAME_UPPER")
    return AutoPad::kSameUpper;
  if (s == "SAME_LOWER")
    return AutoPad::kSameLower;
  if (s == "VALID")
    return AutoPad::kValid;
  return invalidArgument("invalid auto_pad '{}'; expected NOTSET, SAME_UPPER, SAME_LOWER or VALID",
                         s);
}

int64_t WindowGeometry::effectiveKernel(int64_t axis) const {
  size_t a = static_cast<size_t>(axis);
  return (kernel[a] - 1) * dilations[a] + 1;
}

std::pair<int64_t, int64_t> WindowGeometry::resolvePads(int64_t axis, int64_t in) const {
  size_t a = static_cast<size_t>(axis), n = static_cast<size_t>(spatialRank());
  switch (autoPad) {
  case AutoPad::kNotSet:
    return {pads[a], pads[a + n]};
  case AutoPad::kValid:
    return {0, 0};
  case AutoPad::kSameUpper:
  case AutoPad::kSameLower:
    break;
  }
  // Total padding so that output = ceil(in / stride).
  int64_t stride = strides[a], k = effectiveKernel(axis);
  int64_t residual = in % stride;
  int64_t total = std::max<int64_t>(0, residual == 0 ? k - stride : k - residual);
  int64_t small = total / 2, big = total - small;
  return autoPad == AutoPad::kSameUpper ? std::pair{small, big} : std::pair{big, small};
}

Expected<Dim> WindowGeometry::outputDim(int64_t axis, const Dim &in) const {
  size_t a = static_cast<size_t>(axis);
  int64_t stride = strides[a], k = effectiveKernel(axis);
  if (!in.isKnown()) {
    if (stride != 1)
      return Dim::unknown();
    // With stride 1 the output is in + totalPad - k + 1 for every input size.
    int64_t total = autoPad == AutoPad::kNotSet  ? pads[a] + pads[a + strides.size()]
                    : autoPad == AutoPad::kValid ? 0
                                                 : k - 1;
    return total == k - 1 ? in : Dim::unknown();
  }
  auto [begin, end] = resolvePads(axis, in.value());
  int64_t padded = in.value() + begin + end;
  if (padded < k)
    return invalidArgument("kernel extent {} on spatial axis {} exceeds the padded input size {}",
                           k, axis, padded);
  if (!ceilMode)
    return Dim((padded - k) / stride + 1);
  int64_t out = (padded - k + stride - 1) / stride + 1;
  if ((out - 1) * stride >= in.value() + begin)
    --out; // the last window would start in the right padding
  return Dim(out);
}

Expected<Dim> WindowGeometry::transposedOutputDim(int64_t axis, const Dim &in,
                                                  int64_t outputPadding) const {
  size_t a = static_cast<size_t>(axis), n = static_cast<size_t>(spatialRank());
  int64_t stride = strides[a], k = effectiveKernel(axis);
  if (autoPad == AutoPad::kSameUpper || autoPad == AutoPad::kSameLower)
    return scaleDim(in, stride);
  int64_t totalPad = autoPad == AutoPad::kValid ? 0 : pads[a] + pads[a + n];
  int64_t grow = outputPadding + k - 1 - totalPad; // out = stride * (in - 1) + 1 + grow
  if (!in.isKnown())
    return stride == 1 && grow == 0 ? in : Dim::unknown();
  int64_t out = stride * (in.value() - 1) + 1 + grow;
  if (out <= 0)
    return invalidArgument("output size {} on spatial axis {} is not positive", out, axis);
  return Dim(out);
}

std::vector<int64_t> WindowGeometry::transposedPadsBegin(const Node &node,
                                                         const std::vector<int64_t> &in,
                                                         const std::vector<int64_t> &out) const {
  const int64_t n = spatialRank();
  std::vector<int64_t> outputPadding(static_cast<size_t>(n), 0);
  if (node.hasAttr("output_padding"))
    outputPadding = node.getInts("output_padding");
  const bool fromOutput = node.hasAttr("output_shape") || autoPad == AutoPad::kSameUpper ||
                          autoPad == AutoPad::kSameLower;
  std::vector<int64_t> begin;
  for (int64_t a = 0; a < n; ++a) {
    const size_t i = static_cast<size_t>(a);
    if (!fromOutput) {
      begin.push_back(autoPad == AutoPad::kValid ? 0 : pads[i]);
      continue;
    }
    const int64_t total = strides[i] * (in[i] - 1) + outputPadding[i] + effectiveKernel(a) - out[i];
    const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2); // floor(total / 2)
    begin.push_back(autoPad == AutoPad::kSameUpper ? half : total - half);
  }
  return begin;
}

namespace {

/// Reads a per-axis ints attribute of `count` values, each >= minValue; `dflt` when absent.
Status readPerAxis(const Node &node, const char *name, size_t count, int64_t dflt, int64_t minValue,
                   std::vector<int64_t> &out) {
  if (!node.hasAttr(name)) {
    out.assign(count, dflt);
    return Status::ok();
  }
  out = node.getInts(name);
  if (out.size() != count)
    return invalidArgument("attribute '{}' has {} values, expected {}", name, out.size(), count);
  for (int64_t v : out)
    if (v < minValue)
      return invalidArgument("attribute '{}' must be {}, got {}", name,
                             minValue == 0 ? "non-negative" : "positive", formatInts(out));
  return Status::ok();
}

} // namespace

Expected<WindowGeometry> readWindowGeometry(const Node &node, int64_t spatialRank,
                                            const std::vector<int64_t> *weightKernel,
                                            WindowAttrOptions opts) {
  size_t n = static_cast<size_t>(spatialRank);
  WindowGeometry g;
  DLC_ASSIGN_OR_RETURN(g.autoPad, parseAutoPad(node.getString("auto_pad")));
  DLC_RETURN_IF_ERROR(readPerAxis(node, "strides", n, 1, 1, g.strides));
  if (opts.dilations)
    DLC_RETURN_IF_ERROR(readPerAxis(node, "dilations", n, 1, 1, g.dilations));
  else
    g.dilations.assign(n, 1);
  DLC_RETURN_IF_ERROR(readPerAxis(node, "pads", 2 * n, 0, 0, g.pads));
  if (g.autoPad != AutoPad::kNotSet)
    g.pads.assign(2 * n, 0);
  g.ceilMode = opts.ceilMode && node.getInt("ceil_mode") != 0;

  if (node.hasAttr("kernel_shape")) {
    DLC_RETURN_IF_ERROR(readPerAxis(node, "kernel_shape", n, 1, 1, g.kernel));
    if (weightKernel && *weightKernel != g.kernel)
      return invalidArgument("attribute 'kernel_shape' {} does not match the weight's spatial "
                             "dims {}",
                             formatInts(g.kernel), formatInts(*weightKernel));
  } else if (weightKernel) {
    for (int64_t k : *weightKernel)
      if (k < 1)
        return invalidArgument("weight spatial dims must be positive, got {}",
                               formatInts(*weightKernel));
    g.kernel = *weightKernel;
  }
  return g;
}

Expected<Shape> windowOutputShape(const WindowGeometry &g, const Shape &x, const Dim &channels) {
  std::vector<Dim> dims{x[0], channels};
  for (int64_t i = 0; i + 2 < x.rank(); ++i) {
    if (g.kernel.empty()) {
      dims.push_back(Dim::unknown());
      continue;
    }
    DLC_ASSIGN_OR_RETURN(Dim d, g.outputDim(i, x[i + 2]));
    dims.push_back(d);
  }
  return Shape(std::move(dims));
}

std::vector<int64_t> channelsFirstPerm(int64_t rank) {
  std::vector<int64_t> perm{0, rank - 1};
  for (int64_t a = 1; a + 1 < rank; ++a)
    perm.push_back(a);
  return perm;
}

bool isGlobalPool(Op op) {
  return op == Op::kGlobalAveragePool || op == Op::kGlobalMaxPool || op == Op::kGlobalLpPool;
}

Dim scaleDim(const Dim &d, int64_t factor) {
  if (factor == 1)
    return d;
  if (d.isKnown())
    return Dim(d.value() * factor);
  return Dim::unknown();
}

} // namespace dlc::ops
