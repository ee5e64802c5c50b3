// Quantizations in realize-int8's fast-requantize form (a multiply by the scale's reciprocal,
// then a scale of 1) as the GPU runs them, on the host emulator against the reference backend
// running the model as given (the exact division): every int8 level within one step.
#include <gtest/gtest.h>

#include "unit/runtime/emulated_util.h"

namespace dlc {
namespace {

TEST(QuantEpilogueEmulated, GeluQuantizedToInt8WithinOneLevel) {
  // A GELU read only by an int8 quantization runs dlc_gelu16 (its host form), and a layer
  // norm's int8 copy multiplies too; the values cross the int8 range and saturate at its top.
  const std::string text =
      fmt::format(R"(graph @g(%x: f32[16,256], %h: f32[16,256]) -> (q: ?, n: ?) {{
  %g = gelu(%x) : f32[16,256]
  %s = constant f32[] dense<[0.0137]>
  %z = constant i8[] dense<[-20]>
  %q = quantize_linear(%g, %s, %z) : i8[16,256]
  %w = constant f32[256] {}
  %b = constant f32[256] {}
  %l = layer_normalization(%h, %w, %b) {{axis = -1}} : f32[16,256]
  %t = constant f32[] dense<[0.031]>
  %n = quantize_linear(%l, %t, %z) : i8[16,256]
  return %q, %n
}})",
                  testing::dense(256, 7, 2.0f), testing::dense(256, 8, 0.5f));
  Tensor x = testing::uniform({16, 256}, 5);
  for (int64_t i = 0; i < x.numElements(); ++i)
    x.mutableData<float>()[i] *= 4.0f;
  testing::expectEmulatedMatches(text, {{"x", x}, {"h", testing::uniform({16, 256}, 6)}},
                                 {0.0, 1.0});
}

} // namespace
} // namespace dlc
