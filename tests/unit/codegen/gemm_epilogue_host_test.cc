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
  return o;
}

std::string residualGemm(int m, int k, int n) {
  return fmt::format(R"(graph @g(%a: f16[{0},{1}], %b: f16[{1},{2}], %c: f16[{2}], %r: f16[{0},{2}]) -> (y: ?) {{
  %m = matmul(%a, %b) : ?
  %y0 = add(%m, %c) : ?
  %y1 = add(%y0, %r) : ?
  %y = relu(%y1) : ?
  return %y
}})",
                     m, k, n);
}

TEST(GemmEpilogueHost, PrefetchedResidualMatchesTheReference) {
  // The residual is loaded before the main loop (dlc_epl) and used after it.
  for (const std::string text : {residualGemm(256, 64, 128), residualGemm(200, 72, 136)}) {
    auto g = parseInfer(text);
    ASSERT_TRUE(g);
    KernelSet set;
    emitSource(wholeGraph(*g, "pf"), &set, prefetching());
    ASSERT_FALSE(set.kernels.empty());
    EXPECT_NE(set.kernels[0].source.find("dlc_epl(ob"), std::string::npos)
        << set.kernels[0].source;
  }
  expectHostRunsMatchReference({{residualGemm(256, 64, 128), {}, 1e-2, prefetching()},
                                {residualGemm(200, 72, 136), {}, 1e-2, prefetching()}});
}

TEST(GemmEpilogueHost, PrefetchIsOffByDefault) {
  auto g = parseInfer(residualGemm(256, 64, 128));
  ASSERT_TRUE(g);
  EmitOptions o;
  o.sm90a = false;
  KernelSet set;
  emitSource(wholeGraph(*g, "plain"), &set, o);
  ASSERT_FALSE(set.kernels.empty());
  EXPECT_EQ(set.kernels[0].source.find("dlc_epl"), std::string::npos);
}

} // namespace
} // namespace dlc::codegen::testing
