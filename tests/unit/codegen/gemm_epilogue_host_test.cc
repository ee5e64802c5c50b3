// The GEMM epilogue's variants run on the host emulator against the reference: the staged
// epilogue with its full-size operand (a residual) prefetched before the main loop
// (EmitOptions::prefetchEpilogue), on tiles that divide the output and tiles that do not.
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
  for (const std::string text : {residualGemm(1024, 32, 64), residualGemm(1000, 32, 64)}) {
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

TEST(GemmEpilogueHost, PrefetchIsOffByDefault) {
  auto g = parseInfer(residualGemm(1024, 32, 64));
  ASSERT_TRUE(g);
  EmitOptions o = prefetching();
  o.prefetchEpilogue = false;
  KernelSet set;
  emitSource(wholeGraph(*g, "plain"), &set, o);
  ASSERT_FALSE(set.kernels.empty());
  EXPECT_EQ(set.kernels[0].source.find("dlc_epl"), std::string::npos);
}

} // namespace
} // namespace dlc::codegen::testing
