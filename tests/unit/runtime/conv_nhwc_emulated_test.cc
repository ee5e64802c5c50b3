// Channels-last 1x1 convolutions (stride 1, no padding) on the host emulator against the
// reference backend. float16: A is the input itself, a plain [pixels, channels] matrix
// (conv.cc), read by the mma.sync kernels' strided loader (the emulator has no wgmma; the
// Hopper kernels' TMA path is checked on the GPU by ConvNhwc.*), with a bias, a residual and
// ReLU (the residual prefetched before the main loop where K is at most 64), over pixel counts
// that leave partial row tiles and channels that leave a partial K tile. int8 (its A the
// im2col rows) through realize-int8's requantizing epilogue (rescale, bias, an int8 residual,
// ReLU, the output quantized), compared exactly, and the same on a plain A
// (`--int8-pointwise-plain`). Each in both orders of the staged epilogue:
// whole 16-byte output chunks and sub-chunks of 4 accumulators (EmitOptions::epilogueSubChunks).
#include <gtest/gtest.h>

#include "runtime/jit/model.h"
#include "runtime/tensor_compare.h"
#include "unit/codegen/host_emulator.h"
#include "unit/int8_text_util.h"
#include "unit/runtime/emulated_util.h"

namespace dlc {
namespace {

using testing::dense;

struct PointwiseCase {
  int64_t n, h, w, c, m;
};

void PrintTo(const PointwiseCase &t, std::ostream *os) {
  *os << fmt::format("[{},{},{},{}] -> {} channels", t.n, t.h, t.w, t.c, t.m);
}

class PointwiseConvEmulated : public ::testing::TestWithParam<std::tuple<PointwiseCase, bool>> {
protected:
  static jit::JitOptions options() {
    jit::JitOptions jo = testing::emulatedJitOptions();
    jo.lower.emit.epilogueSubChunks = std::get<1>(GetParam());
    // Sub-chunks need a grid of two blocks per SM: these grids are, on a GPU of one SM.
    jo.lower.emit.numSms = 1;
    return jo;
  }
};

TEST_P(PointwiseConvEmulated, HalfWithResidualMatchesTheReference) {
  const PointwiseCase &t = std::get<0>(GetParam());
  const std::string y = fmt::format("f16[{},{},{},{}]", t.n, t.h, t.w, t.m);
  const std::string text = fmt::format(
      R"(graph @pw(%x: f16[{0},{1},{2},{3}], %r: {5}) -> (y: {5}) {{
  %w = constant f16[{4},1,1,{3}] {6}
  %b = constant f16[{4}] {7}
  %c = conv(%x, %w, %b) {{channels_last = 1}} : {5}
  %a = add(%c, %r) : {5}
  %y = relu(%a) : {5}
  return %y
}})",
      t.n, t.h, t.w, t.c, t.m, y, dense(t.m * t.c, 5, 0.25f), dense(t.m, 6, 0.5f));
  testing::expectEmulatedMatches(text,
                                 {{"x", testing::halfUniform({t.n, t.h, t.w, t.c}, 1)},
                                  {"r", testing::halfUniform({t.n, t.h, t.w, t.m}, 2)}},
                                 {2e-2, 2e-2}, options());
}

/// The int8 case's graph: realize-int8's requantizing epilogue with an int8 residual.
std::string int8Text(const PointwiseCase &t) {
  const std::string s = fmt::format("[{},{},{},{}]", t.n, t.h, t.w, t.m);
  return fmt::format(
      R"(graph @pw(%x: i8[{0},{1},{2},{3}], %r: i8{5}) -> (y: i8{5}) {{
  %w = constant i8[{4},1,1,{3}] {6}
  %s = constant f32[{4}] {7}
  %b = constant f32[{4}] {8}
  %rs = constant f32[] dense<[37.5]>
  %qs = constant f32[] dense<[97.25]>
  %qz = constant i8[] dense<[-3]>
  %acc = conv_integer(%x, %w) {{channels_last = 1}} : i32{5}
  %f = cast(%acc) {{to = f32}} : f32{5}
  %m = mul(%f, %s) : f32{5}
  %a = add(%m, %b) : f32{5}
  %rd = dequantize_linear(%r, %rs) : f32{5}
  %sum = add(%a, %rd) : f32{5}
  %u = relu(%sum) : f32{5}
  %y = quantize_linear(%u, %qs, %qz) : i8{5}
  return %y
}})",
      t.n, t.h, t.w, t.c, t.m, s, testing::int8Dense(t.m * t.c, 21), dense(t.m, 22, 1.0f),
      dense(t.m, 23, 50.0f));
}

TEST_P(PointwiseConvEmulated, Int8RequantizedMatchesTheReference) {
  const PointwiseCase &t = std::get<0>(GetParam());
  if (t.c % 16 != 0)
    GTEST_SKIP() << "int8 channels-last convolutions take whole 16-byte chunks";
  testing::expectEmulatedMatches(int8Text(t),
                                 {{"x", testing::int8Tensor({t.n, t.h, t.w, t.c}, 3)},
                                  {"r", testing::int8Tensor({t.n, t.h, t.w, t.m}, 4)}},
                                 {0.0, 1.0}, options());
}

TEST_P(PointwiseConvEmulated, Int8OnAPlainAMatchesTheReference) {
  // --int8-pointwise-plain: the input read as the plain [pixels, channels] matrix (here by the
  // mma.sync kernels' strided loader; the Hopper kernels' TMA path runs on the GPU only).
  const PointwiseCase &t = std::get<0>(GetParam());
  if (t.c % 16 != 0)
    GTEST_SKIP() << "int8 channels-last convolutions take whole 16-byte chunks";
  jit::JitOptions jo = options();
  jo.lower.emit.int8PointwisePlain = true;
  auto g = parseGraph(int8Text(t));
  ASSERT_TRUE(g) << g.status().message();
  auto program = jit::compileForGpu(**g, {}, jo);
  ASSERT_TRUE(program) << program.status().message();
  int plain = 0;
  for (const auto &[name, source] : program->sources)
    plain += source.find("// A: K-contiguous tile") != std::string::npos &&
             source.find("im2col") == std::string::npos;
  EXPECT_EQ(plain, 1) << "the conv's kernel reads A as a plain matrix";
  testing::expectEmulatedMatches(int8Text(t),
                                 {{"x", testing::int8Tensor({t.n, t.h, t.w, t.c}, 3)},
                                  {"r", testing::int8Tensor({t.n, t.h, t.w, t.m}, 4)}},
                                 {0.0, 1.0}, jo);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, PointwiseConvEmulated,
    ::testing::Combine(
        ::testing::Values(PointwiseCase{3, 14, 14, 64, 256}, // 588 pixels: a partial row tile
                          PointwiseCase{2, 9, 7, 40, 72},    // a partial K tile, odd column tiles
                          PointwiseCase{1, 7, 7, 128, 48}),  // K of two tiles, 49 pixels
        ::testing::Bool()),
    [](const auto &info) {
      const PointwiseCase &t = std::get<0>(info.param);
      return fmt::format("n{}_{}x{}_c{}_m{}{}", t.n, t.h, t.w, t.c, t.m,
                         std::get<1>(info.param) ? "_subchunks" : "");
    });

} // namespace
} // namespace dlc
