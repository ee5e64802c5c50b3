// Windowed pools as the GPU runs them, on the host emulator against the reference backend: the
// padded taps (each loaded from its clamped index and replaced by the neutral value, pool.cc),
// float16 and int8, AveragePool with and without the padding in its divisor.
#include <gtest/gtest.h>

#include "unit/runtime/emulated_util.h"

namespace dlc {
namespace {

using testing::uniform;

TEST(PoolEmulated, PaddedWindowsMatchTheReference) {
  // 13 x 11 with a 3 x 3 window, stride 2, padding 1: every edge has taps in the padding; the
  // 2 x 3 window pads its rows only, on both sides.
  const char *text = R"(graph @g(%x: f16[2,5,13,11]) -> (a: ?, b: ?, c: ?) {
  %a = max_pool(%x) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]} : ?
  %b = average_pool(%x) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]} : ?
  %c = average_pool(%x) {kernel_shape = [2, 3], strides = [1, 2], pads = [1, 0, 1, 1], count_include_pad = 1} : ?
  return %a, %b, %c
})";
  testing::expectEmulatedMatches(text, {{"x", uniform({2, 5, 13, 11}, 4).castTo(DType::kF16)}},
                                 {1e-3, 1e-3});
}

TEST(PoolEmulated, Int8MaxPoolMatchesTheReference) {
  // ResNet-50's stem pool on int8 (the quantization and dequantization around it run as
  // elementwise kernels): a padded tap must not win over -128.
  const char *text = R"(graph @g(%x: f32[2,4,15,15]) -> (y: ?) {
  %s = constant f32[] dense<[0.01]>
  %z = constant i8[] dense<[-3]>
  %q = quantize_linear(%x, %s, %z) : ?
  %m = max_pool(%q) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]} : ?
  %y = dequantize_linear(%m, %s, %z) : ?
  return %y
})";
  // Mostly below -1.25 (the lowest level, -128, is -1.25): windows of clipped values.
  Tensor x = uniform({2, 4, 15, 15}, 5);
  for (int64_t i = 0; i < x.numElements(); ++i)
    x.mutableData<float>()[i] = x.data<float>()[i] * 2.0f - 1.0f;
  testing::expectEmulatedMatches(text, {{"x", x}}, {0, 0});
}

} // namespace
} // namespace dlc
