// The int8 tensor-core kernels (mma.sync m16n8k32) against the reference backend: conv_integer
// in realize-int8's channels-last form and matmul_integer with B stored [N, K], on random int8
// data over shapes that leave partial tiles, with strides, padding and dilation. The int32
// accumulators are graph outputs, compared exactly (verify poisons the arena first); the
// rescale -> bias -> relu epilogue after them is compared at float32 tolerance; a requantized
// int8 output exactly. Skips without a GPU.
#include <gtest/gtest.h>

#include "gpu_test_util.h"
#include "tests/unit/int8_text_util.h"

namespace dlc {
namespace {

using testing::int8Dense;

using testing::int8Tensor;

using rt::testing::ConvCase;

std::string convText(const ConvCase &t) {
  const std::string y = t.outShape();
  return fmt::format(R"(graph @conv(%x: i8[{0},{1},{2},{3}]) -> (acc: i32{5}, y: f32{5}) {{
  %w = constant i8[{4},{6},{6},{3}] {7}
  %s = constant f32[{4}] {8}
  %b = constant f32[{4}] {9}
  %acc = conv_integer(%x, %w) {{channels_last = 1, strides = [{10}, {10}], pads = [{11}, {11}, {11}, {11}], dilations = [{12}, {12}]}} : i32{5}
  %f = cast(%acc) {{to = f32}} : f32{5}
  %r = mul(%f, %s) : f32{5}
  %a = add(%r, %b) : f32{5}
  %y = relu(%a) : f32{5}
  return %acc, %y
}})",
                     t.n, t.h, t.w, t.c, t.m, y, t.k, int8Dense(t.m * t.k * t.k * t.c, 7),
                     rt::testing::denseText(static_cast<size_t>(t.m), 3),
                     rt::testing::denseText(static_cast<size_t>(t.m), 4), t.stride, t.pad,
                     t.dilation);
}

TEST(Int8Gemm, ConvChannelsLastMatchesTheReference) {
  DLC_REQUIRE_GPU(driver);
  const ConvCase cases[] = {
      {2, 9, 9, 32, 48, 3, 1, 1, 1},    // partial row and column tiles
      {3, 14, 14, 64, 128, 1, 2, 0, 1}, // ResNet's strided 1x1 downsample
      {1, 23, 23, 16, 64, 7, 2, 3, 1},  // a 7x7 stem over 16 channels
      {2, 12, 12, 32, 32, 3, 1, 2, 2},  // dilation 2
      {4, 7, 7, 512, 96, 3, 1, 1, 1},   // K = 4608: int32 sums past 2^24
      // Pointwise (ConvEmit.PointwiseChannelsLastConvReadsAPlainMatrix): partial row tiles, K
      // of 64, 128 and 192 on the im2col rows; K of 1024 and 2048 on a plain A.
      {7, 28, 28, 128, 512, 1, 1, 0, 1},
      {7, 28, 28, 192, 256, 1, 1, 0, 1},
      {7, 28, 28, 64, 256, 1, 1, 0, 1},
      {3, 14, 14, 1024, 256, 1, 1, 0, 1},
      {5, 7, 7, 2048, 512, 1, 1, 0, 1},
  };
  for (const ConvCase &c : cases) {
    SCOPED_TRACE(fmt::format("conv {}x{}x{}x{} -> {} k{} s{} p{} d{}", c.n, c.h, c.w, c.c, c.m, c.k,
                             c.stride, c.pad, c.dilation));
    rt::testing::expectGpuMatchesReference(convText(c), int8Tensor({c.n, c.h, c.w, c.c}, 11));
  }
}

TEST(Int8Gemm, MatMulIntegerTransBMatchesTheReference) {
  DLC_REQUIRE_GPU(driver);
  const std::vector<std::array<int64_t, 4>> cases = {
      {3, 37, 64, 80},     // batch x rows, N not a multiple of the tile
      {1, 256, 1024, 512}, // a square-ish layer
      {8, 128, 768, 3072}, // BERT's FFN up-projection at batch 8, sequence 128
      {8, 128, 768, 768},  // its output projection (128 x 48 tiles where allowed, sm_90)
      {1, 5, 4096, 16},    // long K, few rows
      {1, 1, 2048, 256},   // a classifier at batch 1: 4 blocks unsplit
  };
  for (const auto &[b, m, k, n] : cases) {
    for (bool split : {false, true}) {
      SCOPED_TRACE(fmt::format("matmul [{},{},{}] x [{},{}]^T{}", b, m, k, n, k,
                               split ? ", int8 split-K and 128 x 48 tiles allowed" : ""));
      const std::string y = fmt::format("[{},{},{}]", b, m, n);
      const std::string text = fmt::format(
          R"(graph @mm(%x: i8[{0},{1},{2}]) -> (acc: i32{4}, y: f32{4}) {{
  %w = constant i8[{3},{2}] {5}
  %s = constant f32[{3}] {6}
  %acc = matmul_integer(%x, %w) {{transB = 1}} : i32{4}
  %f = cast(%acc) {{to = f32}} : f32{4}
  %r = mul(%f, %s) : f32{4}
  %y = relu(%r) : f32{4}
  return %acc, %y
}})",
          b, m, k, n, y, int8Dense(n * k, 5), rt::testing::denseText(static_cast<size_t>(n), 6));
      SessionOptions so;
      so.kernels.int8SplitK = split;
      so.kernels.hopperNarrowTiles = split;
      rt::testing::expectGpuMatchesReference(text, int8Tensor({b, m, k}, 13), 2, so);
    }
  }
}

TEST(Int8Gemm, RequantizingEpilogueMatchesTheReferenceExactly) {
  // What realize-int8 leaves between two int8 layers, in one kernel: the int32 product rescaled
  // per channel, plus the bias and an int8 residual (dequantized), relu, then quantized to int8
  // with a one-element scale and zero point (hoisted with its reciprocal before the epilogue).
  // The int8 output is compared exactly: the quotient x / scale must round as the reference's.
  DLC_REQUIRE_GPU(driver);
  for (const int64_t c : {64, 256}) {
    SCOPED_TRACE(fmt::format("1x1 conv, {} channels", c));
    const std::string shape = fmt::format("[2,14,14,{}]", c);
    const std::string text = fmt::format(
        R"(graph @rq(%x: i8{0}) -> (y: i8{0}) {{
  %w = constant i8[{1},1,1,{1}] {2}
  %s = constant f32[{1}] {3}
  %b = constant f32[{1}] {4}
  %rs = constant f32[] dense<[37.5]>
  %qs = constant f32[] dense<[{5}]>
  %qz = constant i8[] dense<[-3]>
  %acc = conv_integer(%x, %w) {{channels_last = 1}} : i32{0}
  %f = cast(%acc) {{to = f32}} : f32{0}
  %r = mul(%f, %s) : f32{0}
  %a = add(%r, %b) : f32{0}
  %rd = dequantize_linear(%x, %rs) : f32{0}
  %sum = add(%a, %rd) : f32{0}
  %u = relu(%sum) : f32{0}
  %y = quantize_linear(%u, %qs, %qz) : i8{0}
  return %y
}})",
        shape, c, int8Dense(c * c, 21), rt::testing::denseText(static_cast<size_t>(c), 22),
        rt::testing::denseText(static_cast<size_t>(c), 23), c == 64 ? 97.25 : 193.5);
    rt::testing::expectGpuMatchesReference(text, int8Tensor({2, 14, 14, c}, 24),
                                           1); // one kernel, one value
  }
}

} // namespace
} // namespace dlc
