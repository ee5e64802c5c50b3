// A GEMM group that ends in a layer norm (FusedGroup::norm, fuse{gemm-layer-norm}): on sm_90a
// the Hopper kernel normalizes its rows in clusters of one CTA per column tile, one kernel
// that NVRTC compiles; where no cluster spans a row tile (N past 8 tiles) or on other targets,
// the GEMM kernel then the layer-norm kernel; the layer norm's input, when nothing else reads
// it, in a scratch buffer. (Numbers: tests/unit/runtime/gemm_norm_emulated_test.cc on the host
// emulator, tests/unit/gpu/gemm_norm_gpu_test.cc on the GPU.)
#include <gtest/gtest.h>

#include "codegen/cuda_prelude.h"
#include "codegen/emitters.h"
#include "codegen/gemm_kernel.h"
#include "codegen/nvrtc.h"
#include "emit_test_util.h"

namespace dlc::codegen {
namespace {

struct Built {
  std::unique_ptr<Graph> graph;
  FusedGroup group;
};

/// x = a bᵀ (+ r), y = layer_norm(x) over N columns; outputs y and, with `both`, x. B is
/// stored [N, K], as kmajor-weights stores a model's weights for sm_90a (the 96-column tiles
/// read it so).
Built build(const std::string &dtype, int64_t m, int64_t n, int64_t k, bool both,
            bool residual = true) {
  const std::string t = dtype;
  const std::string text = fmt::format(
      "graph @g(%a: {0}[{1},{3}], %b: {0}[{2},{3}], %r: {0}[{1},{2}], %s: {0}[{2}], "
      "%t: {0}[{2}]) -> (y: ?{4}) {{\n"
      "  %m = gemm(%a, %b) {{transB = 1}} : ?\n"
      "  %x = {5} : ?\n"
      "  %y = layer_normalization(%x, %s, %t) {{axis = -1, epsilon = 1e-05}} : ?\n"
      "  return %y{6}\n}}",
      t, m, n, k, both ? ", x: ?" : "", residual ? "add(%m, %r)" : "relu(%m)", both ? ", %x" : "");
  Built b;
  b.graph = testing::parseInfer(text);
  if (!b.graph)
    return b;
  b.group = testing::wholeGraph(*b.graph, "g0_matmul_layer_normalization"); // anchor: the gemm
  for (const Node *n : b.graph->nodes())
    if (n->op() == Op::kLayerNormalization)
      b.group.norm = n;
  return b;
}

// ViT-B/16's residual projections (1576 x 768, both results used) and BERT's (1024 x 768,
// only the layer norm's): 128 x 96 tiles, a cluster of the 8 column tiles per row tile.
TEST(GemmNormEmit, ClustersOfColumnTilesNormalizeTheRows) {
  for (bool both : {true, false}) {
    SCOPED_TRACE(both ? "x used elsewhere" : "x read by the layer norm alone");
    Built b = build("f16", both ? 1576 : 1024, 768, 768, both);
    auto set = emitGroup(b.group, EmitOptions{});
    ASSERT_TRUE(set) << set.status().message();
    ASSERT_EQ(set->kernels.size(), 1u) << "one kernel: the layer norm's went into the GEMM's";
    const Kernel &k = set->kernels[0];
    EXPECT_TRUE(k.sm90a);
    const int64_t rowTiles = both ? 13 : 8;
    EXPECT_EQ(k.launch.grid[0], static_cast<uint32_t>(rowTiles * 8)) << "8 CTAs per row tile";
    for (const char *want :
         {"__cluster_dims__(8, 1, 1)", "constexpr int ROWS = 8;", "tile 128x96x64/wgs",
          "auto norm_tail", "}, norm_tail);", "dlc_sm90::load_cg16(out0 + base[i] + c)",
          "RPW = 2, CH = 3", "sum[i] = sum[i] / 768.0f;",
          "dev[i] = 1.0f / sqrt(dev[i] / 768.0f + 9.99999975e-06f);"})
      EXPECT_NE(k.source.find(want), std::string::npos) << want << "\n" << k.source;
    // The layer norm's scale, bias and result follow the GEMM's parameters; x is written by
    // the epilogue either way, to its own buffer or to the group's scratch.
    const Value *x = b.graph->findValue("x"), *y = b.graph->findValue("y");
    ASSERT_GE(k.params.size(), 4u);
    const size_t p = k.params.size() - 2; // the two TMA maps come last
    EXPECT_EQ(k.params[p - 1].value, y);
    EXPECT_TRUE(k.params[p - 1].written);
    bool scratch = false, boundX = false;
    for (const KernelParam &q : k.params) {
      scratch |= !q.value && q.scratch >= 0;
      boundX |= q.value == x;
    }
    EXPECT_EQ(boundX, both);
    EXPECT_EQ(scratch, !both);
    ASSERT_EQ(set->scratchBytes.size(), both ? 0u : 1u);
    if (!both) {
      EXPECT_EQ(set->scratchBytes[0], 1024u * 768u * 2u);
    }
    NvrtcOptions sm90a;
    sm90a.archSpecific = true;
    auto mod = compileCuda(std::string(cudaPrelude()) + k.source, "norm", sm90a);
    ASSERT_TRUE(mod) << mod.status().message();
    for (const char *ptx : {"ld.global.cg.v4.u32", "mbarrier.arrive.release.cluster",
                            "mbarrier.try_wait.parity.acquire.cluster", "fence.acq_rel.cluster",
                            "mapa.shared::cluster"})
      EXPECT_NE(mod->ptx.find(ptx), std::string::npos) << ptx;
    EXPECT_EQ(mod->ptx.find(".local"), std::string::npos) << "no spills";
  }
}

// Shapes past the clusters' reach, and the cases with fewer columns: a row tile of one CTA
// (no cluster), a ragged last chunk of columns, bf16.
TEST(GemmNormEmit, NarrowAndWideRows) {
  {
    // 4096 columns are 16 tiles of 256: two kernels, the GEMM's and the layer norm's.
    Built b = build("f16", 256, 4096, 256, true);
    auto set = emitGroup(b.group, EmitOptions{});
    ASSERT_TRUE(set) << set.status().message();
    ASSERT_EQ(set->kernels.size(), 2u);
    EXPECT_EQ(set->kernels[0].source.find("norm_tail"), std::string::npos);
    EXPECT_EQ(set->kernels[1].name, "g0_matmul_layer_normalization_norm");
  }
  {
    // 64 columns: one CTA holds a tile's whole rows.
    Built b = build("bf16", 300, 64, 128, false, /*residual=*/false);
    auto set = emitGroup(b.group, EmitOptions{});
    ASSERT_TRUE(set) << set.status().message();
    ASSERT_EQ(set->kernels.size(), 1u);
    const Kernel &k = set->kernels[0];
    EXPECT_EQ(k.source.find("__cluster_dims__"), std::string::npos);
    EXPECT_NE(k.source.find("constexpr int ROWS = 1;"), std::string::npos);
    EXPECT_EQ(k.launch.grid[0], 3u) << "one CTA per row tile";
    NvrtcOptions sm90a;
    sm90a.archSpecific = true;
    auto mod = compileCuda(std::string(cudaPrelude()) + k.source, "norm64", sm90a);
    ASSERT_TRUE(mod) << mod.status().message();
  }
  {
    // 200 columns: 8-column chunks past the row are skipped.
    Built b = build("f16", 130, 200, 64, true);
    auto set = emitGroup(b.group, EmitOptions{});
    ASSERT_TRUE(set) << set.status().message();
    ASSERT_EQ(set->kernels.size(), 1u);
    EXPECT_NE(set->kernels[0].source.find("if (ok[i] && c < N)"), std::string::npos);
    NvrtcOptions sm90a;
    sm90a.archSpecific = true;
    auto mod = compileCuda(std::string(cudaPrelude()) + set->kernels[0].source, "norm200", sm90a);
    ASSERT_TRUE(mod) << mod.status().message();
  }
  {
    // Without the Hopper family (sm_80): the two kernels.
    Built b = build("f16", 1576, 768, 768, true);
    EmitOptions sm80;
    sm80.smVersion = 80;
    auto set = emitGroup(b.group, sm80);
    ASSERT_TRUE(set) << set.status().message();
    ASSERT_EQ(set->kernels.size(), 2u);
    EXPECT_FALSE(set->kernels[0].sm90a);
  }
}

} // namespace
} // namespace dlc::codegen
