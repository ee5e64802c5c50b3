// The Hopper GEMM family (codegen/sm90_gemm.cuh: persistent, a cp.async producer warpgroup,
// wgmma consumers) against the reference backend on random data: both layouts of B, f16 and
// bf16, tails in M, N and K, a batch whose B is an activation, bias, GELU, ReLU and residual
// epilogues. Each graph is lowered for sm_90 to check that its GEMM gets the Hopper kernel
// (the program is compiled for sm_90a; no GPU needed), then run on the GPU with the arena
// poisoned and compared (skipped without an sm_90 GPU).
#include <gtest/gtest.h>

#include <random>

#include "gpu_test_util.h"
#include "runtime/jit/compile.h"

namespace dlc {
namespace {

using rt::testing::denseText;

using rt::testing::randomTensor;

/// The program `text` lowers to for an H200 (sm_90, 132 SMs), without NVRTC. The weights keep
/// the layout the graph gives them unless `kMajor` (the schedules are tested on both layouts
/// of B as the cases write them; kmajor-weights is tested on its own below).
Expected<rt::Program> lowered(const std::string &text, bool pingpong = false,
                              bool clusterSplit = false, bool tma = false, bool streamK = false,
                              bool multicast = false, bool kMajor = false) {
  DLC_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, parseGraph(text));
  jit::JitOptions jo;
  jo.lower.compile = false;
  jo.lower.emit.kMajorWeights = kMajor;
  jo.lower.emit.hopperNarrowTiles = true; // the cost model's whole choice of tiles
  jo.lower.emit.smVersion = jo.lower.nvrtc.smVersion = 90;
  jo.lower.emit.numSms = 132;
  jo.lower.emit.hopperSplitK = true;
  jo.lower.emit.hopperPingpong = pingpong;
  jo.lower.emit.hopperClusterSplitK = clusterSplit;
  jo.lower.emit.hopperTma = tma;
  jo.lower.emit.hopperStreamK = streamK;
  jo.lower.emit.hopperMulticast = multicast;
  jo.strictPlacement = true;
  return jit::compileForGpu(*g, {}, jo);
}

struct Case {
  std::string what, text;
  DType dtype;
  std::vector<int64_t> x;
  bool split = false; // the cost model splits K (partial sums, then a reduction kernel)
};

/// x [m, k] times a constant f16 weight [k, n] (scaled by 1/16) plus a constant bias: weight
/// and bias from denseText seeds `seed` and seed + 1.
std::string biasMatmul(int m, int k, int n, uint32_t seed) {
  return fmt::format(R"(graph @g(%x: f16[{0},{1}]) -> (y: f16[{0},{2}]) {{
  %w = constant f16[{1},{2}] {3}
  %ws = constant f16[] dense<[0.0625]>
  %wsc = mul(%w, %ws) : f16[{1},{2}]
  %b = constant f16[{2}] {4}
  %m = matmul(%x, %wsc) : f16[{0},{2}]
  %y = add(%m, %b) : f16[{0},{2}]
  return %y
}})",
                     m, k, n, denseText(static_cast<size_t>(k) * n, seed), denseText(n, seed + 1));
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (DType t : {DType::kF16, DType::kBF16}) {
    const std::string dt(dtypeName(t));
    // B [K, N] constant (N-major): bias and GELU; M, N, K not multiples of the tile (2000
    // rows, 1000 columns, K = 328).
    out.push_back({dt + " N-major B, bias, gelu",
                   fmt::format(R"(graph @g(%x: {0}[2000,328]) -> (y: {0}[2000,1000]) {{
  %w = constant {0}[328,1000] {1}
  %ws = constant {0}[] dense<[0.125]>
  %wsc = mul(%w, %ws) : {0}[328,1000]
  %b = constant {0}[1000] {2}
  %m = matmul(%x, %wsc) : {0}[2000,1000]
  %a = add(%m, %b) : {0}[2000,1000]
  %y = gelu(%a) : {0}[2000,1000]
  return %y
}})",
                               dt, denseText(328 * 1000, 5), denseText(1000, 6)),
                   t,
                   {2000, 328}});
    // Gemm with transB: B [N, K] (K-major), ReLU, and a residual (N = K); 4000 rows.
    out.push_back({dt + " K-major B, relu, residual",
                   fmt::format(R"(graph @g(%x: {0}[4000,384]) -> (y: {0}[4000,384]) {{
  %w = constant {0}[384,384] {1}
  %ws = constant {0}[] dense<[0.125]>
  %wsc = mul(%w, %ws) : {0}[384,384]
  %m = gemm(%x, %wsc) {{transB = 1}} : {0}[4000,384]
  %r = relu(%m) : {0}[4000,384]
  %y = add(%r, %x) : {0}[4000,384]
  return %y
}})",
                               dt, denseText(384 * 384, 8)),
                   t,
                   {4000, 384}});
  }
  // Few columns over a long K (BERT's FFN down-projection has N = 768, K = 3072), tails in M,
  // N and K.
  out.push_back(
      {"f16 few columns, bias", biasMatmul(1000, 1000, 520, 12), DType::kF16, {1000, 1000}});
  // Few output tiles over a long K (an MLP's down-projection at a small batch): K is split
  // across the SMs, each split's partial sums reduced by a second kernel with the bias; tails
  // in M and N.
  out.push_back(
      {"f16 split-K, bias", biasMatmul(250, 3072, 520, 14), DType::kF16, {250, 3072}, true});
  // More tiles than SMs (ViT's FFN up-projection has 1576 x 3072): the ping-pong schedule
  // when asked for, both warpgroups' turns, tails in M.
  out.push_back(
      {"f16 more tiles than SMs, bias", biasMatmul(1900, 256, 2304, 16), DType::kF16, {1900, 256}});
  // Few tiles over a longer K (ViT's FFN down-projection, 52 tiles of 128 x 192 over 48 K
  // steps, in small): 8 x 4 tiles of 128 x 192 over 24 K steps leave most of 132 SMs idle;
  // without stream-K the cost model runs 96 whole tiles of 128 x 64 (it split K before
  // session 38 priced both passes over the partial sums); with EmitOptions::hopperStreamK
  // the CTAs share the K steps out instead.
  out.push_back({"f16 few tiles, long K, bias",
                 biasMatmul(1000, 1536, 768, 18),
                 DType::kF16,
                 {1000, 1536},
                 false});
  // 13 row tiles, M a multiple of 128: B multicast pairs them, the last pair's second tile
  // lies wholly past M (its rows masked though M needs no tail test otherwise).
  out.push_back(
      {"f16 odd row tiles, bias", biasMatmul(1664, 256, 384, 20), DType::kF16, {1664, 256}});
  // ViT's 13 row tiles with constant weights, which kmajor-weights stores K-major: the
  // attention output projection's 768 columns at 128 x 96 (104 tiles, where 128 x 128 makes
  // 78) and 1576 columns at 128 x 160 (130 tiles; the last column of tiles 136 wide, so its
  // 32-column pass holds 8).
  out.push_back(
      {"f16 K-major weight, 96 columns", biasMatmul(1576, 256, 768, 22), DType::kF16, {1576, 256}});
  // BERT b8's 768-column projections (1024 rows): 128 tiles of 128 x 48 fill the 132 SMs
  // where 128 x 64 makes 96.
  out.push_back(
      {"f16 K-major weight, 48 columns", biasMatmul(1024, 768, 768, 26), DType::kF16, {1024, 768}});
  out.push_back({"f16 K-major weight, 160 columns",
                 biasMatmul(1576, 256, 1576, 24),
                 DType::kF16,
                 {1576, 256}});
  // Attention's score product: a batch of x times its own transpose (both activations).
  out.push_back({"f16 batched, B an activation",
                 R"(graph @g(%x: f16[12,384,200]) -> (y: f16[12,384,384]) {
  %t = transpose(%x) {perm = [0, 2, 1]} : f16[12,200,384]
  %y = matmul(%x, %t) : f16[12,384,384]
  return %y
})",
                 DType::kF16,
                 {12, 384, 200}});
  return out;
}

// Lowering needs no GPU: this part runs everywhere.
TEST(Sm90Gemm, TheTestGraphsGetTheHopperKernel) {
  for (const Case &c : cases()) {
    SCOPED_TRACE(c.what);
    auto p = lowered(c.text);
    ASSERT_TRUE(p) << p.status().message();
    ASSERT_FALSE(p->modules.empty());
    EXPECT_EQ(p->modules[0].arch, "sm_90a") << "the GEMM did not get the Hopper kernel";
    bool reduction = false;
    for (const auto &[name, source] : p->sources)
      reduction |= name.size() > 7 && name.substr(name.size() - 7) == "_splitk";
    EXPECT_EQ(reduction, c.split) << "split-K reduction kernel";
  }
}

// With EmitOptions::hopperPingpong, a GEMM of more tiles than SMs runs ping-pong and one that
// fits in a wave does not (the tile is named in the kernel's header comment).
TEST(Sm90Gemm, PingpongWhereTilesOutnumberTheSms) {
  int pingpong = 0;
  for (const Case &c : cases()) {
    SCOPED_TRACE(c.what);
    for (bool on : {false, true}) {
      auto p = lowered(c.text, on);
      ASSERT_TRUE(p) << p.status().message();
      for (const auto &[name, source] : p->sources) {
        const bool pp = source.find("/wps") != std::string::npos;
        EXPECT_TRUE(on || !pp) << name << " runs ping-pong without being asked";
        pingpong += pp;
      }
    }
    if (c.what == "f16 split-K, bias") { // 250 x 520: 2 x 9 tiles (split) on 132 SMs
      auto p = lowered(c.text, true);
      ASSERT_TRUE(p) << p.status().message();
      for (const auto &[name, source] : p->sources)
        EXPECT_EQ(source.find("/wps"), std::string::npos) << name;
    }
  }
  EXPECT_GT(pingpong, 0) << "no case ran ping-pong";
}

// With EmitOptions::hopperTma, every case of one plain matrix per operand passes its A and B
// as tensor maps after its pointers, the workspace split's main kernel too (its reduction
// kernel takes none); the batched case keeps cp.async.
TEST(Sm90Gemm, TmaProducerGetsTensorMaps) {
  for (const Case &c : cases()) {
    SCOPED_TRACE(c.what);
    auto p = lowered(c.text, false, false, true);
    ASSERT_TRUE(p) << p.status().message();
    size_t maps = 0;
    for (const rt::Step &step : p->steps)
      if (const auto *l = std::get_if<rt::LaunchStep>(&step))
        maps += l->tensorMaps.size();
    EXPECT_EQ(maps, c.x.size() == 2 ? 2u : 0u);
  }
}

// With EmitOptions::hopperStreamK, the GEMM whose few tiles leave SMs idle runs stream-K: one
// kernel (no reduction kernel), a workspace, and its flags in the program's zeroed state at
// the arena's end, which programs without stream-K do not have.
TEST(Sm90Gemm, StreamKFlagsLiveInTheZeroedState) {
  int streamK = 0;
  for (const Case &c : cases()) {
    SCOPED_TRACE(c.what);
    auto p = lowered(c.text, false, false, true, true);
    ASSERT_TRUE(p) << p.status().message();
    bool sk = false;
    for (const auto &[name, source] : p->sources)
      sk |= source.find("sk_flags") != std::string::npos;
    streamK += sk;
    if (c.what == "f16 few tiles, long K, bias") {
      EXPECT_TRUE(sk) << "the cost model did not choose stream-K";
    }
    if (!sk) {
      EXPECT_EQ(p->zeroedBytes, 0u);
      continue;
    }
    ASSERT_GE(p->zeroedBytes, 132u * 4);
    for (const rt::Step &step : p->steps) {
      const auto *l = std::get_if<rt::LaunchStep>(&step);
      ASSERT_TRUE(l);
      EXPECT_EQ(l->kernel.find("_splitk"), std::string::npos);
      // Every other buffer ends before the zeroed state; the flags are its start.
      const uint64_t state = p->arenaBytes - p->zeroedBytes;
      for (const rt::BufferRef &ref : l->args) {
        if (ref.space == rt::Space::kArena) {
          EXPECT_TRUE(ref.offset + ref.bytes <= state || ref.offset == state)
              << ref.offset << " + " << ref.bytes << " against " << state;
        }
      }
    }
    // Without stream-K the same graph has no zeroed state.
    auto plain = lowered(c.text, false, false, true, false);
    ASSERT_TRUE(plain) << plain.status().message();
    EXPECT_EQ(plain->zeroedBytes, 0u);
  }
  EXPECT_GT(streamK, 0);
}

// With EmitOptions::hopperMulticast, the TMA kernels whose row tiles pair without adding a
// wave run in clusters of two (B's maps then hold half a tile); the batched case (cp.async)
// and every case without the option do not.
TEST(Sm90Gemm, MulticastPairsRowTiles) {
  int paired = 0;
  for (const Case &c : cases()) {
    SCOPED_TRACE(c.what);
    for (bool on : {false, true}) {
      auto p = lowered(c.text, false, false, true, false, on);
      ASSERT_TRUE(p) << p.status().message();
      for (const auto &[name, source] : p->sources) {
        const bool cluster = source.find("__cluster_dims__(2, 1, 1)") != std::string::npos;
        EXPECT_TRUE(on || !cluster) << name << " pairs tiles without being asked";
        EXPECT_TRUE(c.x.size() == 2 || !cluster) << name << " pairs a cp.async kernel";
        paired += cluster;
      }
    }
    if (c.what == "f16 odd row tiles, bias") {
      auto p = lowered(c.text, false, false, true, false, true);
      ASSERT_TRUE(p) << p.status().message();
      for (const auto &[name, source] : p->sources) {
        EXPECT_NE(source.find("__cluster_dims__(2, 1, 1)"), std::string::npos) << name;
        // The phantom tile's rows are tested against M although 1664 = 13 x 128.
        EXPECT_NE(source.find("row < 1664"), std::string::npos) << name;
      }
    }
  }
  EXPECT_GT(paired, 1) << "too few cases paired their tiles";
}

// With EmitOptions::hopperClusterSplitK, the GEMM whose K the cost model splits sums its
// splits in a thread-block cluster: one kernel, no reduction kernel or workspace.
TEST(Sm90Gemm, ClusterSplitKIsOneKernel) {
  for (const Case &c : cases()) {
    if (!c.split)
      continue;
    SCOPED_TRACE(c.what);
    auto p = lowered(c.text, false, true);
    ASSERT_TRUE(p) << p.status().message();
    int clustered = 0;
    for (const auto &[name, source] : p->sources) {
      EXPECT_FALSE(name.size() > 7 && name.substr(name.size() - 7) == "_splitk") << name;
      EXPECT_EQ(source.find("float* __restrict__ ws"), std::string::npos) << name;
      clustered += source.find("__cluster_dims__(") != std::string::npos;
    }
    EXPECT_EQ(clustered, 1);
  }
}

// kmajor-weights (on for sm_90a unless turned off) stores each case's constant weight [N, K],
// read through perm_b: the cost model then takes the 96- and 160-column tiles for ViT's row
// count and the 48-column one for BERT's, which an N-major weight cannot have.
TEST(Sm90Gemm, KMajorWeightsTakeNarrowTiles) {
  const char *narrowTiles[] = {"128x32x64", "128x48x64", "128x80x64", "128x96x64", "128x160x64"};
  for (const Case &c : cases()) {
    SCOPED_TRACE(c.what);
    if (c.what.find("K-major weight") != std::string::npos) {
      auto p = lowered(c.text, false, false, true, false, false, true);
      ASSERT_TRUE(p) << p.status().message();
      std::string tiles;
      for (const auto &[name, source] : p->sources)
        for (const char *tile : narrowTiles)
          if (source.find(tile) != std::string::npos)
            tiles += tile;
      EXPECT_EQ(tiles, c.what.find("96") != std::string::npos   ? "128x96x64"
                       : c.what.find("48") != std::string::npos ? "128x48x64"
                                                                : "128x160x64");
    }
    if (c.what.find("K-major B") != std::string::npos)
      continue; // a Gemm with transB reads B K-major as it is
    auto off = lowered(c.text, false, false, true, false, false, false);
    ASSERT_TRUE(off) << off.status().message();
    for (const auto &[name, source] : off->sources)
      for (const char *tile : narrowTiles)
        EXPECT_EQ(source.find(tile), std::string::npos) << name << " without kmajor-weights";
  }
}

TEST(Sm90Gemm, HopperKernelsMatchTheReference) {
  DLC_REQUIRE_GPU(driver);
  if (driver->device().smVersion() != 90)
    GTEST_SKIP() << "the Hopper kernels need an sm_90 GPU, this one is " << driver->device().arch();
  for (const Case &c : cases()) {
    SCOPED_TRACE(c.what);
    // The schedules: cooperative, ping-pong, split-K in a cluster (where the case splits),
    // the TMA producer (ping-pong and cluster split too), 128 x 192 tiles with all of them,
    // stream-K (with TMA and 128 x 192 tiles), B multicast (TMA, 128 x 192 tiles, split-K
    // through the workspace), B multicast with ping-pong; each with the weights as the case
    // writes them. Then dlc's defaults (constant weights K-major, narrow tiles where the cost
    // model takes them), those with the cp.async producer, and those with the 128 x 48 and
    // 128 x 32 tiles allowed (EmitOptions::hopperNarrowTiles).
    for (int schedule : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}) {
      if (schedule == 2 && !c.split)
        continue;
      SCOPED_TRACE(schedule == 0   ? "cooperative"
                   : schedule == 1 ? "ping-pong"
                   : schedule == 2 ? "cluster split"
                   : schedule == 3 ? "TMA"
                   : schedule == 4 ? "128 x 192 tiles"
                   : schedule == 5 ? "stream-K"
                   : schedule == 6 ? "B multicast"
                   : schedule == 7 ? "B multicast, ping-pong"
                   : schedule == 8 ? "defaults"
                   : schedule == 9 ? "defaults, cp.async"
                                   : "defaults, 128 x 48 and 128 x 32 tiles");
      SessionOptions so;
      if (schedule >= 8) {
        so.kernels.hopperTma = schedule != 9;
        so.kernels.hopperNarrowTiles = schedule == 10;
        rt::testing::expectGpuMatchesReference(c.text, randomTensor(c.dtype, c.x, 11), 1, so);
        continue;
      }
      so.kernels.kMajorWeights = false;
      so.kernels.hopperSplitK = c.split; // each case with the split its case names
      so.kernels.hopperPingpong = schedule == 1 || schedule == 3 || schedule == 4 || schedule == 7;
      so.kernels.hopperClusterSplitK = schedule == 2 || schedule == 3 || schedule == 4;
      so.kernels.hopperTma = schedule >= 3;
      so.kernels.hopperTile192 = schedule >= 4;
      so.kernels.hopperStreamK = schedule == 5;
      so.kernels.hopperMulticast = schedule >= 6;
      rt::testing::expectGpuMatchesReference(c.text, randomTensor(c.dtype, c.x, 11), 1, so);
    }
  }
}

// Stream-K's flags are zero again after each run: one session runs three inputs, each
// against the reference backend (a flag left set would let a tile's owner add stale sums
// before its peers have written them).
TEST(Sm90Gemm, StreamKRunsAgainAndAgain) {
  DLC_REQUIRE_GPU(driver);
  if (driver->device().smVersion() != 90)
    GTEST_SKIP() << "the Hopper kernels need an sm_90 GPU, this one is " << driver->device().arch();
  const std::vector<Case> all = cases();
  auto it = std::find_if(all.begin(), all.end(),
                         [](const Case &c) { return c.what == "f16 few tiles, long K, bias"; });
  ASSERT_NE(it, all.end());
  auto model = rt::testing::modelOf(it->text);
  ASSERT_TRUE(model) << model.status().message();
  SessionOptions so = rt::testing::gpuAlone();
  so.kernels.hopperStreamK = true;
  auto gpu = model->createSession(so);
  ASSERT_TRUE(gpu) << gpu.status().message();
  SessionOptions cpuOpts;
  cpuOpts.backend = Backend::kCpu;
  auto cpu = model->createSession(cpuOpts);
  ASSERT_TRUE(cpu) << cpu.status().message();
  for (uint32_t seed : {21u, 22u, 23u}) {
    SCOPED_TRACE(seed);
    const Tensor x = randomTensor(it->dtype, it->x, seed);
    auto out = gpu->run({{"x", x}});
    ASSERT_TRUE(out) << out.status().message();
    auto ref = cpu->run({{"x", x}});
    ASSERT_TRUE(ref) << ref.status().message();
    rt::testing::expectMatches(out->at("y"), ref->at("y"));
  }
}

} // namespace
} // namespace dlc
