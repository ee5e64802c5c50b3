// The channels-last f16/bf16 convolution (the layout pass's form: NHWC input through the NHWC
// im2col loader, OHWI weight, the staged epilogue's bias row) against the reference backend on
// random data, over shapes that leave partial tiles, with strides, padding and dilation; and
// an NCHW f16 block (1x1 -> 3x3 -> 1x1 with a residual, as ResNet's bottleneck) that the GPU
// pipeline's layout turns channels-last. Skips without a GPU.
#include <gtest/gtest.h>

#include <random>

#include "gpu_test_util.h"

namespace dlc {
namespace {

using rt::testing::denseText;

using rt::testing::randomTensor;

using rt::testing::ConvCase;

TEST(ConvNhwc, ChannelsLastMatchesTheReference) {
  DLC_REQUIRE_GPU(driver);
  const ConvCase cases[] = {
      {2, 9, 9, 32, 48, 3, 1, 1, 1},    // partial row and column tiles
      {3, 14, 14, 64, 128, 1, 2, 0, 1}, // ResNet's strided 1x1 downsample
      {1, 23, 23, 8, 64, 7, 2, 3, 1},   // a 7x7 window over 8 channels
      {2, 12, 12, 24, 40, 3, 1, 2, 2},  // dilation 2; 40 output channels: chunks of 8
      {2, 7, 7, 512, 36, 3, 1, 1, 1},   // K = 4608; 36 output channels: chunks of 4
      // Pointwise: A is the input itself, loaded by TMA on the Hopper kernels (ConvEmit.
      // PointwiseChannelsLastConvReadsAPlainMatrix checks that these shapes take them), with a
      // partial row tile, a partial K tile (40 of 64) and 96-column tiles.
      {7, 28, 28, 40, 200, 1, 1, 0, 1},
      {7, 28, 28, 64, 256, 1, 1, 0, 1},
  };
  for (DType t : {DType::kF16, DType::kBF16}) {
    for (const ConvCase &c : cases) {
      SCOPED_TRACE(fmt::format("{} conv {}x{}x{}x{} -> {} k{} s{} p{} d{}", dtypeName(t), c.n, c.h,
                               c.w, c.c, c.m, c.k, c.stride, c.pad, c.dilation));
      const std::string dt(dtypeName(t)), y = c.outShape();
      // Weights scaled so that sums over K stay well inside the 16-bit range.
      const std::string text = fmt::format(
          R"(graph @conv(%x: {0}[{1},{2},{3},{4}]) -> (y: {0}{6}) {{
  %w = constant {0}[{5},{7},{7},{4}] {8}
  %ws = constant {0}[] dense<[0.0625]>
  %wsc = mul(%w, %ws) : {0}[{5},{7},{7},{4}]
  %b = constant {0}[{5}] {9}
  %c = conv(%x, %wsc, %b) {{channels_last = 1, strides = [{10}, {10}], pads = [{11}, {11}, {11}, {11}], dilations = [{12}, {12}]}} : {0}{6}
  %y = relu(%c) : {0}{6}
  return %y
}})",
          dt, c.n, c.h, c.w, c.c, c.m, y, c.k,
          denseText(static_cast<size_t>(c.m * c.k * c.k * c.c), 7),
          denseText(static_cast<size_t>(c.m), 3), c.stride, c.pad, c.dilation);
      rt::testing::expectGpuMatchesReference(text, randomTensor(t, {c.n, c.h, c.w, c.c}, 11), 1);
    }
  }
}

TEST(ConvNhwc, BottleneckBlockRunsChannelsLast) {
  DLC_REQUIRE_GPU(driver);
  // x [2, 64, 14, 14] -> 1x1 (16) -> relu -> 3x3 (16) -> relu -> 1x1 (64) -> + x -> relu.
  const std::string text = fmt::format(
      R"(graph @block(%x: f16[2,64,14,14]) -> (y: f16[2,64,14,14]) {{
  %s = constant f16[] dense<[0.125]>
  %w1r = constant f16[16,64,1,1] {0}
  %w2r = constant f16[16,16,3,3] {1}
  %w3r = constant f16[64,16,1,1] {2}
  %b1 = constant f16[16] {3}
  %w1 = mul(%w1r, %s) : f16[16,64,1,1]
  %w2 = mul(%w2r, %s) : f16[16,16,3,3]
  %w3 = mul(%w3r, %s) : f16[64,16,1,1]
  %c1 = conv(%x, %w1, %b1) : f16[2,16,14,14]
  %r1 = relu(%c1) : f16[2,16,14,14]
  %c2 = conv(%r1, %w2) {{pads = [1, 1, 1, 1]}} : f16[2,16,14,14]
  %r2 = relu(%c2) : f16[2,16,14,14]
  %c3 = conv(%r2, %w3) : f16[2,64,14,14]
  %a = add(%c3, %x) : f16[2,64,14,14]
  %y = relu(%a) : f16[2,64,14,14]
  return %y
}})",
      denseText(16 * 64, 1), denseText(16 * 16 * 9, 2), denseText(64 * 16, 3), denseText(16, 4));
  rt::testing::expectGpuMatchesReference(text, randomTensor(DType::kF16, {2, 64, 14, 14}, 5), 1);
}

} // namespace
} // namespace dlc
