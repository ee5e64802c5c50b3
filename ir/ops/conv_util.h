// Window geometry shared by convolutions and pooling: kernel, strides, dilations, pads and
// auto_pad resolved for N spatial axes, and the output size of each axis.
//
// The rules are ONNX's (onnx/defs/nn/defs.cc, convPoolShapeInference and
// convTransposeShapeInference) with one deliberate difference: when auto_pad is not NOTSET it
// wins over an explicit `pads` attribute (ONNX forbids using both; onnxruntime ignores `pads`
// then, and so does dlc). Windows in ceil mode that would start in the right padding are
// dropped (PyTorch's rule, adopted by ONNX).
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/shape.h"
#include "ir/status.h"

namespace dlc::ops {

enum class AutoPad : uint8_t { kNotSet, kSameUpper, kSameLower, kValid };

/// Parses an ONNX auto_pad string; the error names the accepted values.
Expected<AutoPad> parseAutoPad(std::string_view s);

/// The window attributes of one conv / pool node, one entry per spatial axis.
struct WindowGeometry {
  std::vector<int64_t> kernel;    // undilated kernel extent
  std::vector<int64_t> strides;   // default 1
  std::vector<int64_t> dilations; // default 1
  std::vector<int64_t> pads;      // [begin..., end...]; explicit pads (NOTSET) or zeros
  AutoPad autoPad = AutoPad::kNotSet;
  bool ceilMode = false;

  int64_t spatialRank() const { return static_cast<int64_t>(strides.size()); }
  /// (kernel - 1) * dilation + 1.
  int64_t effectiveKernel(int64_t axis) const;
  /// The padding applied at the begin and end of `axis` for an input of size `in` (auto_pad
  /// resolved; SAME_* depends on `in` only when the stride is > 1).
  std::pair<int64_t, int64_t> resolvePads(int64_t axis, int64_t in) const;
  /// The output size of a convolution / pooling window along `axis`. Unknown input sizes give
  /// unknown output sizes, except that an axis where output == input for every input size
  /// (stride 1 with "same" padding) passes a symbolic size through.
  Expected<Dim> outputDim(int64_t axis, const Dim &in) const;
  /// The output size of a transposed convolution along `axis` (no output_shape attribute).
  Expected<Dim> transposedOutputDim(int64_t axis, const Dim &in, int64_t outputPadding) const;
  /// ConvTranspose (`node`, its spatial sizes `in` and `out`): the padding before each axis as
  /// ONNX resolves it: the explicit pads, 0 for VALID, or, with output_shape or SAME_*, from
  /// the output size: total = stride * (in - 1) + output_padding + effective kernel - out,
  /// SAME_UPPER putting the smaller half first, every other mode the larger half. Output
  /// position o takes input i through kernel tap j where o = i * stride - padBegin + j * dilation.
  std::vector<int64_t> transposedPadsBegin(const Node &node, const std::vector<int64_t> &in,
                                           const std::vector<int64_t> &out) const;
};

/// What readWindowGeometry reads besides kernel_shape / strides / pads / auto_pad.
struct WindowAttrOptions {
  bool dilations = true; // the op has a `dilations` attribute
  bool ceilMode = false; // the op has a `ceil_mode` attribute
};

/// Reads and checks the window attributes of `node` for `spatialRank` axes. `weightKernel`
/// gives the kernel from the weight's shape (Conv): used when kernel_shape is absent, and
/// checked against it when present; nullptr when there is no weight or its spatial dims are
/// not all known. Returns an empty kernel when it cannot be known.
Expected<WindowGeometry> readWindowGeometry(const Node &node, int64_t spatialRank,
                                            const std::vector<int64_t> *weightKernel,
                                            WindowAttrOptions opts);

/// The output shape [N, channels, spatial...] of a conv / pool on input shape `x` (ranked,
/// rank >= 2). Spatial dims are unknown when the kernel is unknown (empty).
Expected<Shape> windowOutputShape(const WindowGeometry &g, const Shape &x, const Dim &channels);

/// `d * factor`: known when d is known, d itself when factor is 1, else unknown.
Dim scaleDim(const Dim &d, int64_t factor);

/// The permutation from channels-last [N, spatial..., C] to channels-first [N, C, spatial...]
/// for a tensor of `rank` (>= 2): {0, rank - 1, 1, ..., rank - 2}.
std::vector<int64_t> channelsFirstPerm(int64_t rank);

/// GlobalAveragePool, GlobalMaxPool or GlobalLpPool (which take channels_last = 1 from the
/// layout pass).
bool isGlobalPool(Op op);

} // namespace dlc::ops
