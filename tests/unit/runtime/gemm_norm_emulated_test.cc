// `--gemm-layer-norm` on a target without the Hopper family (the host emulator runs plain
// sm_90 code): fuse puts a transformer's residual projection and the layer norm after it into
// one group, which runs as the GEMM's kernel and the layer norm's (codegen/gemm_norm.cc); the
// layer norm's input lives in the group's scratch when nothing else reads it. Both forms
// against the reference backend.
#include <gtest/gtest.h>

#include <random>

#include "ir/annotations/fused_groups.h"
#include "ir/parser.h"
#include "runtime/jit/compile.h"
#include "runtime/jit/model.h"
#include "unit/codegen/host_emulator.h"
#include "unit/runtime/emulated_util.h"

namespace dlc {
namespace {

using testing::dense;

/// x2 = x w + b + x, y = layer_norm(x2); outputs y and, with `both` (pre-LN: the residual
/// stream goes on), x2.
std::string residualNormText(int64_t b, int64_t s, int64_t e, bool both) {
  return fmt::format(R"(graph @block(%x: f16[{0},{1},{2}]) -> (y: ?{3}) {{
  %w = constant f16[{2},{2}] {4}
  %bias = constant f16[{2}] {5}
  %g = constant f16[{2}] {6}
  %beta = constant f16[{2}] {7}
  %m = matmul(%x, %w) : ?
  %a = add(%m, %bias) : ?
  %x2 = add(%a, %x) : ?
  %y = layer_normalization(%x2, %g, %beta) {{axis = -1, epsilon = 1e-05}} : ?
  return %y{8}
}})",
                     b, s, e, both ? ", x2: ?" : "", dense(e * e, 3, 0.2f), dense(e, 4, 0.5f),
                     dense(e, 5, 1.0f), dense(e, 6, 0.5f), both ? ", %x2" : "");
}

TEST(GemmNormEmulated, ResidualProjectionAndLayerNormMatchTheReference) {
  for (bool both : {true, false}) {
    SCOPED_TRACE(both ? "x2 an output too" : "x2 read by the layer norm alone");
    auto g = parseGraph(residualNormText(2, 40, 64, both));
    ASSERT_TRUE(g) << g.status().message();
    auto m = Model::fromGraph(std::move(*g));
    ASSERT_TRUE(m) << m.status().message();
    jit::JitOptions jo = testing::emulatedJitOptions();
    jo.lower.emit.gemmLayerNorm = true;
    // The pipeline puts the layer norm in the GEMM's group.
    std::ostringstream sink;
    jo.pipeline.out = &sink;
    jo.pipeline.err = &sink;
    auto prepared = jit::prepareForGpu(m->graph(), {}, jo);
    ASSERT_TRUE(prepared) << prepared.status().message();
    std::optional<int64_t> gemmGroup, normGroup;
    for (const Node *n : (*prepared)->nodes()) {
      if (n->op() == Op::kMatMul)
        gemmGroup = fuseGroupOf(*n);
      if (n->op() == Op::kLayerNormalization)
        normGroup = fuseGroupOf(*n);
    }
    ASSERT_TRUE(gemmGroup.has_value());
    EXPECT_EQ(gemmGroup, normGroup) << "the layer norm joins the GEMM's group";
    // Two kernels (no Hopper family here), the reference's numbers.
    int launches = 0;
    testing::expectEmulatedMatchesWith(*m, {{"x", testing::halfUniform({2, 40, 64}, 7)}},
                                       {1e-2, 1e-2}, jo, &launches);
    EXPECT_EQ(launches, 2) << "the GEMM with its epilogue, then the layer norm";
  }
}

} // namespace
} // namespace dlc
