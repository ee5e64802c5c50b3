// TensorFlow's fake-quantization parameters (fake_quant_ops_functor.h), shared by the
// reference kernel of `fake_quant` (ir/eval) and the pass that rewrites it as
// QuantizeLinear -> DequantizeLinear (passes/canonicalize_quant.cc).
#pragma once

#include <cmath>
#include <cstdint>

#include "ir/status.h"

namespace dlc {

/// One [min, max] after TensorFlow's nudging, so that 0 is exactly representable.
struct FakeQuantNudge {
  float min = 0, max = 0; // the nudged range
  float scale = 0;        // (max - min) / (quantMax - quantMin)
  float invScale = 0;     // (quantMax - quantMin) / (max - min), as TensorFlow computes it
  float zeroPoint = 0;    // the integer level of 0, in [quantMin, quantMax]
  float quantMin = 0, quantMax = 0;
  bool zero = false; // min = max = 0: every output is 0
};

/// TensorFlow's Nudge(): quant range [narrow ? 1 : 0, 2^numBits - 1]; the zero point is
/// quantMin - min / scale rounded (std::round) and clamped to it. Errors for min > max, or
/// min = max other than 0 (TensorFlow returns NaN there).
inline Expected<FakeQuantNudge> nudgeFakeQuant(float min, float max, int64_t numBits,
                                               bool narrowRange) {
  FakeQuantNudge n;
  n.quantMin = narrowRange ? 1.0f : 0.0f;
  n.quantMax = static_cast<float>((int64_t{1} << numBits) - 1);
  if (min == 0.0f && max == 0.0f) {
    n.zero = true;
    return n;
  }
  if (!(min < max))
    return invalidArgument("min ({}) must be smaller than max ({})", min, max);
  n.scale = (max - min) / (n.quantMax - n.quantMin);
  n.invScale = (n.quantMax - n.quantMin) / (max - min);
  const float zeroFromMin = n.quantMin - min / n.scale;
  n.zeroPoint = zeroFromMin < n.quantMin   ? n.quantMin
                : zeroFromMin > n.quantMax ? n.quantMax
                                           : std::round(zeroFromMin);
  n.min = (n.quantMin - n.zeroPoint) * n.scale;
  n.max = (n.quantMax - n.zeroPoint) * n.scale;
  return n;
}

} // namespace dlc
