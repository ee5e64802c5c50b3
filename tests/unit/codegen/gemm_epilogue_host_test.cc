// The GEMM epilogue's variants run on the host emulator against the reference: the staged
// epilogue with its full-size operand (a residual) prefetched before the main loop
// (EmitOptions::prefetchEpilogue, or for short products EmitOptions::prefetchShortEpilogues),
// on tiles that divide the output and tiles that do not; split-K's reduction kernel with the
// epilogue, 16 bytes of outputs per thread or one output where the size allows no more.
#include "host_check.h"

namespace dlc::codegen::testing {
namespace {

EmitOptions prefetching() {
  EmitOptions o;
  o.sm90a = false; // the mma.sync kernels, whose staged epilogue prefetches
  o.prefetchEpilogue = true;
  o.numSms = 2; // few SMs: the cost model takes tiles of 128 rows (slabs in two passes)
  return o;
}

std::string residualGemm(int m, int k, int n) {
  return fmt::format(
      R"(graph @g(%a: f16[{0},{1}], %b: f16[{1},{2}], %c: f16[{2}], %r: f16[{0},{2}]) -> (y: ?) {{
  %m = matmul(%a, %b) : ?
  %y0 = add(%m, %c) : ?
  %y1 = add(%y0, %r) : ?
  %y = relu(%y1) : ?
  return %y
}})",
      m, k, n);
}

TEST(GemmEpilogueHost, PrefetchedResidualMatchesTheReference) {
  // The residual is loaded before the main loop (dlc_epl) for both slab passes of a 128-row
  // tile, two chunks per lane each, and used after it; 1000 rows end inside a tile.
  for (const std::string &text : {residualGemm(1024, 32, 64), residualGemm(1000, 32, 64)}) {
    auto g = parseInfer(text);
    ASSERT_TRUE(g);
    KernelSet set;
    emitSource(wholeGraph(*g, "pf"), &set, prefetching());
    ASSERT_FALSE(set.kernels.empty());
    EXPECT_NE(set.kernels[0].source.find("dlc_epre pf[2][2];"), std::string::npos)
        << set.kernels[0].source;
    EXPECT_NE(set.kernels[0].source.find("dlc_epl(ob"), std::string::npos);
  }
  // Values in [-1, 1): distinctData's ramps would overflow f16 in the product.
  expectHostRunsMatchReference({{residualGemm(1024, 32, 64), {}, 1e-2, prefetching(), true},
                                {residualGemm(1000, 32, 64), {}, 1e-2, prefetching(), true}});
}

/// The first kernel's source for `text` on the mma.sync kernels with `o`.
std::string mmaSyncSource(const std::string &text, EmitOptions o) {
  auto g = parseInfer(text);
  EXPECT_TRUE(g);
  if (!g)
    return {};
  o.sm90a = false;
  KernelSet set;
  emitSource(wholeGraph(*g, "k"), &set, o);
  EXPECT_FALSE(set.kernels.empty());
  return set.kernels.empty() ? std::string() : set.kernels[0].source;
}

/// Whether that kernel loads its residual before the main loop.
bool prefetches(const std::string &text, const EmitOptions &o) {
  return mmaSyncSource(text, o).find("dlc_epl") != std::string::npos;
}

// Off by default; with EmitOptions::prefetchShortEpilogues only a product at most 64 deep
// whose epilogue reads a full-size operand prefetches it: not a deeper one, not without the
// operand.
TEST(GemmEpilogueHost, PrefetchIsForShortProductsWhenAsked) {
  EmitOptions o;
  o.prefetchShortEpilogues = false;
  EXPECT_FALSE(prefetches(residualGemm(1024, 32, 64), o));
  o.prefetchShortEpilogues = true;
  EXPECT_TRUE(prefetches(residualGemm(1024, 32, 64), o));
  EXPECT_TRUE(prefetches(residualGemm(4096, 64, 256), o));
  EXPECT_FALSE(prefetches(residualGemm(4096, 128, 256), o));
  EXPECT_FALSE(prefetches(R"(graph @g(%a: f16[1024,64], %b: f16[64,256], %c: f16[256]) -> (y: ?) {
  %m = matmul(%a, %b) : ?
  %y = add(%m, %c) : ?
  return %y
})",
                          o));
}

// With the option, the cost model prices such an epilogue's loads by the warps resident to hide
// them: ResNet-50 b32's layer1 1x1 conv (100352 x 256 x 64 with a residual) takes 128 x 64
// tiles in 2 stages (no stage past its K tiles: 2 blocks, 16 warps per SM), where it takes
// 128 x 256 (8 warps) without; 128 channels deep it keeps 128 x 256.
TEST(GemmEpilogueHost, ShortResidualProductsTakeTilesOfMoreWarps) {
  EmitOptions o;
  o.smVersion = 90;
  o.numSms = 132;
  o.prefetchShortEpilogues = true;
  auto tileOf = [&](const std::string &text, const EmitOptions &opts) {
    const std::string src = mmaSyncSource(text, opts);
    const size_t at = src.find(", tile ");
    return at == std::string::npos ? std::string()
                                   : src.substr(at + 7, src.find('\n', at) - at - 7);
  };
  EXPECT_EQ(tileOf(residualGemm(100352, 64, 256), o), "128x64x32/4x2s2k1");
  EXPECT_EQ(tileOf(residualGemm(25088, 128, 512), o), "128x256x32/2x4s4k1");
  EmitOptions off = o;
  off.prefetchShortEpilogues = false;
  EXPECT_EQ(tileOf(residualGemm(100352, 64, 256), off), "128x256x32/2x4s3k1");
}

// Split-K (few tiles, a long K): the reduction kernel sums the partial sums of 8 adjacent f16
// outputs per thread and runs the vector epilogue (bias along N, the residual), or sums one
// output per thread where the output's size is odd.
TEST(GemmEpilogueHost, SplitKReductionMatchesTheReference) {
  EmitOptions o;
  o.sm90a = false;
  o.numSms = 132;
  const std::string even = residualGemm(16, 2048, 64), odd = residualGemm(15, 2048, 63);
  for (const auto &[text, vector] : {std::pair{even, true}, std::pair{odd, false}}) {
    SCOPED_TRACE(text);
    auto g = parseInfer(text);
    ASSERT_TRUE(g);
    KernelSet set;
    emitSource(wholeGraph(*g, "sk"), &set, o);
    ASSERT_EQ(set.kernels.size(), 2u) << "not split";
    const std::string &red = set.kernels[1].source;
    EXPECT_EQ(red.find("dlc_epv(v.v, (int)i);") != std::string::npos, vector) << red;
    EXPECT_EQ(red.find("dlc_ep(v, (int)c);") != std::string::npos, !vector) << red;
  }
  expectHostRunsMatchReference({{even, {}, 1e-2, o, true}, {odd, {}, 1e-2, o, true}});
}

} // namespace
} // namespace dlc::codegen::testing
