// The GEMM family (MatMul, Gemm): emitted source for many shapes, dtypes and attributes
// compiles with NVRTC for sm_90 (no GPU needed); tile choice, split-K and refusals.
#include <gtest/gtest.h>

#include "codegen/cuda_prelude.h"
#include "codegen/emitters.h"
#include "codegen/gemm_kernel.h"
#include "codegen/gemm_writer.h"
#include "codegen/nvrtc.h"
#include "ir/parser.h"
#include "passes/pass_manager.h"

namespace dlc::codegen {
namespace {

struct Built {
  std::unique_ptr<Graph> graph;
  FusedGroup group;
};

/// Parses `text`, infers shapes, and groups every node (the first is the anchor).
Built build(const std::string &text, const std::string &name = "g") {
  Built b;
  auto g = parseGraph(text, "test.dlc");
  EXPECT_TRUE(g) << g.status().message();
  if (!g)
    return b;
  b.graph = std::move(*g);
  Status st = inferShapes(*b.graph);
  EXPECT_TRUE(st.isOk()) << st.message();
  b.group.name = name;
  for (const Node *n : b.graph->nodes())
    b.group.nodes.push_back(n);
  b.group.anchor = b.group.nodes[0];
  for (const Value *v : b.graph->inputs())
    b.group.inputs.push_back(v);
  b.group.outputs.push_back(b.graph->outputs()[0].value);
  return b;
}

std::string matmulGraph(const std::string &a, const std::string &b,
                        const std::string &epilogue = "", const std::string &extraInputs = "") {
  return "graph @g(%a: " + a + ", %b: " + b + extraInputs + ") -> (y: ?) {\n" +
         "  %y0 = matmul(%a, %b) : ?\n" + epilogue + "  return %y" +
         (epilogue.empty() ? "0" : "1") + "\n}";
}

/// Emits every group, concatenates the kernels into one program and compiles it for sm_90
/// (sm_90a when a kernel needs it).
void compileAll(std::vector<Built> &groups, const EmitOptions &opts, const char *program,
                std::string *ptx = nullptr) {
  std::string source(cudaPrelude());
  NvrtcOptions nvrtc; // sm_90, or sm_90a once a kernel of the Hopper family is among them
  for (Built &b : groups) {
    auto set = emitGroup(b.group, opts);
    ASSERT_TRUE(set) << b.group.name << ": " << set.status().message();
    for (const Kernel &k : set->kernels)
      source += k.source;
    nvrtc.archSpecific = nvrtc.archSpecific || needsSm90a(set->kernels);
  }
  auto mod = compileCuda(source, program, nvrtc);
  ASSERT_TRUE(mod) << mod.status().message();
  EXPECT_FALSE(mod->cubin.empty());
  if (ptx)
    *ptx = mod->ptx;
}

TEST(GemmEmit, HalfAndBf16MatMulsCompileToTensorCoreCode) {
  std::vector<Built> gs;
  int i = 0;
  for (const char *dt : {"f16", "bf16"}) {
    auto shape = [&](const char *dims) { return std::string(dt) + "[" + dims + "]"; };
    for (auto [a, b] : std::vector<std::pair<const char *, const char *>>{
             {"256,512", "512,384"},   // aligned, big tiles
             {"1,4096", "4096,1024"},  // batch-1 linear: small M, split-K
             {"77,50", "50,33"},       // ragged edges, K not a multiple of 8: element loads
             {"4,16,64", "64,32"},     // A's batch folded into M
             {"3,1,40,24", "5,24,16"}, // broadcast batch dims
             {"96", "96,40"},          // 1-D A
             {"40,96", "96"},          // 1-D B
         })
      gs.push_back(build(matmulGraph(shape(a), shape(b)), "mm" + std::to_string(i++)));
  }
  std::string ptx;
  compileAll(gs, {}, "matmuls", &ptx);
  EXPECT_NE(ptx.find("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"), std::string::npos);
  EXPECT_NE(ptx.find("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"), std::string::npos);
  EXPECT_NE(ptx.find("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"), std::string::npos);
  EXPECT_NE(ptx.find("cp.async.cg.shared.global"), std::string::npos);
  // Fragments and accumulators stay in registers.
  EXPECT_EQ(ptx.find(".local"), std::string::npos);
}

TEST(GemmEmit, GemmAttributesAndEpiloguesCompile) {
  std::vector<Built> gs;
  int i = 0;
  for (const char *dt : {"f16", "f32"}) {
    const std::string t(dt);
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb) {
        std::string a = ta ? t + "[64,96]" : t + "[96,64]", b = tb ? t + "[80,64]" : t + "[64,80]";
        gs.push_back(build(
            "graph @g(%a: " + a + ", %b: " + b + ", %c: " + t + "[80]) -> (y: ?) {\n" +
                "  %y = gemm(%a, %b, %c) {alpha = 0.5, beta = 2.0, transA = " + std::to_string(ta) +
                ", transB = " + std::to_string(tb) + "} : ?\n  return %y\n}",
            "gemm" + std::to_string(i++)));
      }
    // Bias, activation and residual epilogue on a MatMul.
    gs.push_back(build(matmulGraph(t + "[128,64]", t + "[64,256]",
                                   "  %s = add(%y0, %bias) : ?\n  %r = relu(%s) : ?\n"
                                   "  %y1 = add(%r, %res) : ?\n",
                                   ", %bias: " + t + "[256], %res: " + t + "[128,256]"),
                       "epi" + std::to_string(i++)));
  }
  EmitOptions tf32;
  tf32.allowTf32 = true;
  std::vector<Built> tf;
  tf.push_back(build(matmulGraph("f32[200,72]", "f32[72,136]"), "tf32a"));
  tf.push_back(build(matmulGraph("f32[33,17]", "f32[17,5]"), "tf32b"));
  compileAll(gs, {}, "gemms");
  std::string ptx;
  compileAll(tf, tf32, "tf32", &ptx);
  EXPECT_NE(ptx.find("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"), std::string::npos);
}

TEST(GemmEmit, TranscendentalEpiloguesAreCopiedFewTimes) {
  const std::string gelu = "  %y1 = gelu(%y0) : ?\n", relu = "  %y1 = relu(%y0) : ?\n";
  const std::string noinline = "__attribute__((noinline))";
  const std::string rolled = "#pragma unroll 1\n";
  auto source = [](Built &b, const EmitOptions &opts) {
    auto set = emitGroup(b.group, opts);
    EXPECT_TRUE(set) << set.status().message();
    return set ? set->kernels[0].source : std::string();
  };
  auto has = [](const std::string &src, const std::string &what) {
    return src.find(what) != std::string::npos;
  };
  std::vector<Built> gs;
  gs.push_back(build(matmulGraph("f16[256,128]", "f16[128,256]", gelu), "gelu16"));
  gs.push_back(build(matmulGraph("f32[256,16]", "f32[16,256]", gelu), "gelu32")); // no split-K
  gs.push_back(build(matmulGraph("f16[256,128]", "f16[128,256]", relu), "relu16"));
  // The staged epilogue (the default) inlines a heavy epilogue but does not unroll its chunk
  // loop; a cheap one is unrolled.
  const std::string staged = source(gs[0], {});
  EXPECT_NE(staged.find("dlc_epv"), std::string::npos);
  EXPECT_FALSE(has(staged, noinline));
  EXPECT_TRUE(has(staged, rolled));
  EXPECT_FALSE(has(source(gs[2], {}), rolled));
  // The fragment epilogue calls it instead (f16 and f32 SIMT), never a cheap one.
  EmitOptions fragment;
  fragment.stagedEpilogue = false;
  EXPECT_TRUE(has(source(gs[0], fragment), noinline));
  EXPECT_TRUE(has(source(gs[1], fragment), noinline));
  EXPECT_TRUE(has(source(gs[1], {}), noinline)); // SIMT: no staged epilogue
  EXPECT_FALSE(has(source(gs[2], fragment), noinline));
  EmitOptions inlined = fragment;
  inlined.outlineHeavyEpilogues = false;
  EXPECT_FALSE(has(source(gs[0], inlined), noinline));
  // The attribute is accepted by NVRTC; on a big warp tile (64 x 64: 64 accumulator pairs per
  // lane) the outlined program and the staged one are both far smaller than the fragment
  // epilogue inlined once per pair. (erf: a 16-bit GELU is a dozen instructions, dlc_gelu16.)
  Built big =
      build(matmulGraph("f16[1024,768]", "f16[768,3072]", "  %y1 = erf(%y0) : ?\n"), "erf_big");
  auto cubinSize = [&](const EmitOptions &opts) {
    NvrtcOptions nvrtc;
    nvrtc.archSpecific = true; // sm_90a compiles either family
    auto mod = compileCuda(std::string(cudaPrelude()) + source(big, opts), "gelu", nvrtc);
    EXPECT_TRUE(mod) << mod.status().message();
    return mod ? mod->cubin.size() : size_t{0};
  };
  // (The mma.sync family: the Hopper family keeps one copy per slab pass; calling an outlined
  // one would save its accumulators around each call.)
  EmitOptions portable;
  portable.sm90a = false;
  inlined.sm90a = fragment.sm90a = false;
  const size_t full = cubinSize(inlined);
  EXPECT_LT(cubinSize(fragment), full / 2);
  EXPECT_LT(cubinSize(portable), full / 2);
  compileAll(gs, {}, "epilogues");
  compileAll(gs, fragment, "fragment_epilogues");
}

TEST(GemmEmit, StagedEpilogueWidthFollowsTheOutput) {
  // 16 bytes per lane: 8 halves, 16 int8, 4 floats (a float output of an f16 product).
  using gemm::stagedWidth;
  gemm::GemmSpec spec;
  spec.dtype = DType::kF16;
  spec.m = 256;
  spec.n = 256;
  spec.k = 64;
  spec.outRowStride = 256;
  gemm::TileConfig cfg; // 128 x 128, 2 x 2 warps: 64 columns per warp
  EXPECT_EQ(stagedWidth(spec, cfg, 1, DType::kF16), 8);
  EXPECT_EQ(stagedWidth(spec, cfg, 1, DType::kI8), 16);
  EXPECT_EQ(stagedWidth(spec, cfg, 1, DType::kF32), 4);
  // Rows of 200 halves take chunks of 8, rows of 204 chunks of 4; 202 none: the fragments.
  spec.n = spec.outRowStride = 200;
  EXPECT_EQ(stagedWidth(spec, cfg, 1, DType::kF16), 8);
  spec.n = spec.outRowStride = 204;
  EXPECT_EQ(stagedWidth(spec, cfg, 1, DType::kF16), 4);
  spec.n = spec.outRowStride = 202;
  EXPECT_EQ(stagedWidth(spec, cfg, 1, DType::kF16), 0);
  // Split-K finishes in its reduction kernel; SIMT has no fragments to stage.
  spec.n = spec.outRowStride = 256;
  EXPECT_EQ(stagedWidth(spec, cfg, 2, DType::kF16), 0);
  cfg.simt = true;
  EXPECT_EQ(stagedWidth(spec, cfg, 1, DType::kF16), 0);
  // Column splits (NCHW conv outputs: pixels of one image) must hold whole chunks.
  cfg.simt = false;
  spec.outSplit = 196; // 14 x 14 pixels: chunks of 4, not 8
  spec.outSplitStride = 196 * 64;
  EXPECT_EQ(stagedWidth(spec, cfg, 1, DType::kF16), 4);
  spec.outSplit = 49; // 7 x 7
  spec.outSplitStride = 49 * 64;
  EXPECT_EQ(stagedWidth(spec, cfg, 1, DType::kF16), 0);
}

TEST(GemmEmit, F32WithoutTf32UsesTheSimtKernel) {
  Built b = build(matmulGraph("f32[512,512]", "f32[512,512]"));
  auto set = emitGroup(b.group, {});
  ASSERT_TRUE(set) << set.status().message();
  EXPECT_EQ(set->kernels[0].source.find("dlc_mma"), std::string::npos);
  EXPECT_NE(set->kernels[0].source.find("fmaf("), std::string::npos);
  EXPECT_EQ(set->kernels[0].launch.block[0], 256u);
}

TEST(GemmEmit, TileChoiceFollowsTheShape) {
  Built big = build(matmulGraph("f16[4096,4096]", "f16[4096,4096]"));
  // On sm_90 the Hopper family takes a big f16 GEMM; without it (sm_80, or sm90a off) the
  // mma.sync family's widest tile.
  auto hopper = emitGroup(big.group, {});
  ASSERT_TRUE(hopper) << hopper.status().message();
  EXPECT_NE(hopper->kernels[0].source.find("tile 128x256x64/wgs4k1"), std::string::npos)
      << hopper->kernels[0].source.substr(0, 200);
  EXPECT_TRUE(hopper->kernels[0].sm90a);
  EXPECT_EQ(hopper->kernels[0].launch.block[0], 384u);
  EmitOptions portable;
  portable.sm90a = false;
  auto s = emitGroup(big.group, portable);
  ASSERT_TRUE(s) << s.status().message();
  ASSERT_EQ(s->kernels.size(), 1u);
  EXPECT_NE(s->kernels[0].source.find("tile 128x256x32/2x4s4k1"), std::string::npos)
      << s->kernels[0].source.substr(0, 200);
  EXPECT_GT(s->kernels[0].launch.sharedBytes, 48u * 1024u);
  EXPECT_EQ(s->kernels[0].launch.grid[0], 32u * 16u);

  // Batch-1 GEMV-like shape: few output tiles, so K is split and a second kernel adds the
  // partial sums (in a fixed order) from a scratch buffer.
  Built gemv = build(matmulGraph("f16[1,4096]", "f16[4096,4096]"));
  auto v = emitGroup(gemv.group, {});
  ASSERT_TRUE(v) << v.status().message();
  ASSERT_EQ(v->kernels.size(), 2u);
  EXPECT_GT(v->kernels[0].launch.grid[1], 1u);
  ASSERT_EQ(v->scratchBytes.size(), 1u);
  EXPECT_EQ(v->scratchBytes[0], uint64_t{v->kernels[0].launch.grid[1]} * 4096u * 4u);
  EXPECT_EQ(v->kernels[1].name, "g_splitk");
  EXPECT_EQ(v->kernels[1].params.back().scratch, 0);
  EXPECT_TRUE(v->kernels[1].params.back().written);
}

TEST(GemmEmit, TileOverrideAndParsing) {
  auto c = gemm::parseTileConfig("64x128x32/2x2s3k4");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->bm, 64);
  EXPECT_EQ(c->bn, 128);
  EXPECT_EQ(c->warpsN, 2);
  EXPECT_EQ(c->stages, 3);
  EXPECT_EQ(c->splitK, 4);
  EXPECT_EQ(c->str(), "64x128x32/2x2s3k4");
  EXPECT_FALSE(gemm::parseTileConfig("64x128"));
  EXPECT_FALSE(gemm::parseTileConfig("64x128x32/2x2q"));
  Built b = build(matmulGraph("f16[100,256]", "f16[256,64]"));
  auto ok = gemm::emitGemmGroup(b.group, {}, gemm::parseTileConfig("64x64x32/2x2s3k2"));
  ASSERT_TRUE(ok) << ok.status().message();
  EXPECT_NE(ok->kernels[0].source.find("tile 64x64x32/2x2s3k2"), std::string::npos);
  EXPECT_EQ(ok->kernels.size(), 2u);
  auto bad = gemm::emitGemmGroup(b.group, {}, gemm::parseTileConfig("128x256x32/2x4s9k1"));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find(
                "tile 128x256x32/2x4s9k1 does not fit: 244224 bytes of shared memory"),
            std::string::npos)
      << bad.status().message();
  // Blocks per SM: launch bounds that cap the registers, refused where they cannot fit.
  auto b3 = gemm::parseTileConfig("128x64x32/4x2s2k1b3");
  ASSERT_TRUE(b3);
  EXPECT_EQ(b3->minBlocks, 3);
  EXPECT_EQ(b3->str(), "128x64x32/4x2s2k1b3");
  EXPECT_FALSE(gemm::parseTileConfig("128x256x64/wgs4b2")); // not for the Hopper family
  auto capped = gemm::emitGemmGroup(b.group, {}, b3);
  ASSERT_TRUE(capped) << capped.status().message();
  EXPECT_NE(capped->kernels[0].source.find("__launch_bounds__(256, 3)"), std::string::npos);
  auto tooMany = gemm::emitGemmGroup(b.group, {}, gemm::parseTileConfig("128x64x32/4x2s2k1b9"));
  ASSERT_FALSE(tooMany);
  EXPECT_NE(tooMany.status().message().find("9 blocks of 256 threads do not fit on an SM"),
            std::string::npos)
      << tooMany.status().message();
}

TEST(GemmEmit, RefusalsNameTheOpAndReason) {
  auto g = parseGraph(
      R"(graph @g(%a: i32[4,8], %b: i32[8,2], %c: f16[0,8], %d: f16[8,3]) -> (y: ?, z: ?) {
  %y = matmul(%a, %b) : i32[4,2]
  %z = matmul(%c, %d) : f16[0,3]
  return %y, %z
})",
      "t.dlc");
  ASSERT_TRUE(g) << g.status().message();
  std::string why;
  EXPECT_FALSE(gpuSupports(*(*g)->nodes()[0], &why));
  EXPECT_EQ(why, "MatMul: dtype i32 has no GPU kernel (f32, f16 and bf16 only)");
  EXPECT_FALSE(gpuSupports(*(*g)->nodes()[1], &why));
  EXPECT_EQ(why, "MatMul: the output [0,3] is empty");
}

TEST(GemmEmit, Int8ProductsReachTheHopperFamily) {
  // realize-int8's form of BERT's FFN up-projection: s8 wgmma by default (BK 128: a stage row
  // is 128 bytes) at 128 x 192 (128 x 256 leaves a third of the SMs idle on 1024 x 3072; kbench
  // on an H100: 0.0188 ms against 0.0258 at 128 x 128), the mma.sync family with
  // --no-hopper-int8.
  Built b = build("graph @g(%a: i8[1024,768], %b: i8[3072,768]) -> (y: ?) {\n"
                  "  %y = matmul_integer(%a, %b) {transB = 1} : ?\n  return %y\n}",
                  "int8");
  auto hopper = emitGroup(b.group, {});
  ASSERT_TRUE(hopper) << hopper.status().message();
  ASSERT_EQ(hopper->kernels.size(), 1u); // int8 never splits K
  EXPECT_TRUE(hopper->kernels[0].sm90a);
  EXPECT_NE(hopper->kernels[0].source.find("128x192x128/wgs"), std::string::npos)
      << hopper->kernels[0].source.substr(0, 200);
  EmitOptions off;
  off.hopperInt8 = false;
  auto plain = emitGroup(b.group, off);
  ASSERT_TRUE(plain) << plain.status().message();
  EXPECT_FALSE(plain->kernels[0].sm90a);
}

TEST(GemmEmit, HopperFamilyCompilesForSm90a) {
  // Both layouts of B, bf16, tails in M, N and K, a batch, an epilogue: each compiles for
  // sm_90a into wgmma, mbarrier and setmaxnreg code with the accumulators in registers (no
  // local memory: a heavy epilogue would add the frame of its outlined chunk loop).
  std::vector<std::pair<Built, std::string>> cases;
  cases.push_back(
      {build(matmulGraph("f16[300,264]", "f16[264,520]", "  %y1 = relu(%y0) : ?\n"), "n_major"),
       "128x256x64/wgs4"});
  cases.push_back({build("graph @g(%a: bf16[200,136], %b: bf16[264,136]) -> (y: ?) {\n"
                         "  %y = gemm(%a, %b) {transB = 1} : ?\n  return %y\n}",
                         "k_major"),
                   "128x128x64/wgs6"});
  cases.push_back(
      {build(matmulGraph("f16[4,136,200]", "f16[4,200,136]"), "batched"), "128x128x64/wgs3"});
  cases.push_back(
      {build(matmulGraph("f16[1000,264]", "f16[264,200]", "  %y1 = relu(%y0) : ?\n"), "n64"),
       "128x64x64/wgs8"});
  // int8 in realize-int8's form (B stored [N, K]): s8 wgmma with int32 accumulators.
  cases.push_back({build("graph @g(%a: i8[300,272], %b: i8[520,272]) -> (y: ?) {\n"
                         "  %y = matmul_integer(%a, %b) {transB = 1} : ?\n  return %y\n}",
                         "int8"),
                   "128x256x128/wgs4"});
  std::string source(cudaPrelude());
  for (auto &[b, tile] : cases) {
    auto set = gemm::emitGemmGroup(b.group, {}, gemm::parseTileConfig(tile));
    ASSERT_TRUE(set) << b.group.name << ": " << set.status().message();
    ASSERT_EQ(set->kernels.size(), 1u);
    EXPECT_TRUE(set->kernels[0].sm90a);
    EXPECT_EQ(set->kernels[0].launch.block[0], 384u);
    // Persistent: no more CTAs than SMs (132 by default) or tiles.
    EXPECT_LE(set->kernels[0].launch.grid[0], 132u);
    EXPECT_LE(set->kernels[0].launch.sharedBytes, 227u * 1024u);
    source += set->kernels[0].source;
  }
  NvrtcOptions sm90a;
  sm90a.archSpecific = true;
  auto mod = compileCuda(source, "hopper", sm90a);
  ASSERT_TRUE(mod) << mod.status().message();
  for (const char *want :
       {"wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16",
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16",
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16",
        "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8", "setmaxnreg.inc.sync.aligned.u32",
        "mbarrier.try_wait.parity.shared::cta.b64", "fence.proxy.async.shared::cta",
        "cp.async.cg.shared.global"})
    EXPECT_NE(mod->ptx.find(want), std::string::npos) << want;
  EXPECT_EQ(mod->ptx.find(".local"), std::string::npos);
  // The same source is not sm_90 code.
  EXPECT_FALSE(compileCuda(source, "hopper_on_sm90"));
}

// Stream-K: the K steps of 8 x 4 tiles of 128 x 192 (K = 1536: 24 steps each) shared out
// over 132 CTAs, 6 steps each; a CTA hands over one tile of float sums (int32 for int8) and
// one flag in the program's zeroed state. The cost model chooses it only when asked, for a
// shape whose tiles leave most SMs idle (ViT's FFN down-projection: 52 tiles of 128 x 192).
TEST(GemmEmit, HopperStreamK) {
  auto c = gemm::parseTileConfig("128x192x64/wgs5kst");
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->streamK && c->tma && c->wgmma);
  EXPECT_EQ(c->splitK, 1);
  EXPECT_EQ(c->str(), "128x192x64/wgs5kst");
  EXPECT_FALSE(gemm::parseTileConfig("128x192x64/2x4s5ks")); // the Hopper family's alone

  Built b = build(matmulGraph("f16[1000,1536]", "f16[1536,768]"));
  auto set = gemm::emitGemmGroup(b.group, {}, c);
  ASSERT_TRUE(set) << set.status().message();
  ASSERT_EQ(set->kernels.size(), 1u); // no reduction kernel
  const Kernel &k = set->kernels[0];
  EXPECT_EQ(k.launch.grid[0], 132u);
  ASSERT_EQ(set->scratchBytes.size(), 1u);
  EXPECT_EQ(set->scratchBytes[0], 132u * 128 * 192 * 4);
  EXPECT_EQ(set->zeroedBytes, 132u * 4);
  int zeroed = 0;
  for (const KernelParam &p : k.params)
    zeroed += p.zeroed;
  EXPECT_EQ(zeroed, 1);
  EXPECT_NE(k.source.find("dlc_sm90::StreamK<float> sk{sk_partials, sk_flags, 32, 6}"),
            std::string::npos)
      << k.source;

  // int8: int32 partial sums (exact), where split-K through a workspace is refused.
  Built i8 = build("graph @g(%a: i8[1000,1536], %b: i8[768,1536]) -> (y: ?) {\n"
                   "  %y = matmul_integer(%a, %b) {transB = 1} : ?\n  return %y\n}",
                   "int8");
  auto set8 = gemm::emitGemmGroup(i8.group, {}, gemm::parseTileConfig("128x128x128/wgs4ks"));
  ASSERT_TRUE(set8) << set8.status().message();
  EXPECT_NE(set8->kernels[0].source.find("dlc_sm90::StreamK<int> sk{"), std::string::npos);
  std::string source = std::string(cudaPrelude()) + k.source + set8->kernels[0].source;
  NvrtcOptions sm90a;
  sm90a.archSpecific = true;
  auto mod = compileCuda(source, "stream_k", sm90a);
  ASSERT_TRUE(mod) << mod.status().message();
  for (const char *want : {"ld.acquire.gpu.global.b32", "fence.acq_rel.gpu", "bar.sync 3, 256",
                           "st.global.cg.v4.b32", "ld.global.cg.v4.b32"})
    EXPECT_NE(mod->ptx.find(want), std::string::npos) << want;
  EXPECT_EQ(mod->ptx.find(".local"), std::string::npos);

  // Not with ping-pong or a split.
  auto pp = gemm::emitGemmGroup(b.group, {}, gemm::parseTileConfig("128x128x64/wps4ks"));
  ASSERT_FALSE(pp);
  EXPECT_NE(pp.status().message().find("stream-K shares K steps out itself"), std::string::npos)
      << pp.status().message();

  // The cost model: ViT's FFN down-projection (1576 x 768 x 3072) runs stream-K when asked.
  Built vit = build(matmulGraph("f16[1576,3072]", "f16[3072,768]"), "vit");
  for (bool asked : {false, true}) {
    EmitOptions o;
    o.hopperStreamK = asked;
    auto chosen = gemm::emitGemmGroup(vit.group, o, std::nullopt);
    ASSERT_TRUE(chosen) << chosen.status().message();
    EXPECT_EQ(chosen->kernels[0].source.find("sk_flags") != std::string::npos, asked);
  }
}

TEST(GemmEmit, HopperFamilyRefusesWhatItCannotRun) {
  auto refusal = [](const std::string &graph, const std::string &tile, EmitOptions opts = {}) {
    Built b = build(graph);
    auto set = gemm::emitGemmGroup(b.group, opts, gemm::parseTileConfig(tile));
    EXPECT_FALSE(set) << tile;
    return set ? std::string() : set.status().message();
  };
  const std::string f16 = matmulGraph("f16[256,256]", "f16[256,256]");
  auto has = [](const std::string &msg, const std::string &what) {
    return msg.find(what) != std::string::npos;
  };
  EmitOptions sm80;
  sm80.smVersion = 80;
  EXPECT_TRUE(has(refusal(f16, "128x256x64/wgs4", sm80), "for sm_90a, the target is sm_80"));
  EmitOptions portable;
  portable.sm90a = false;
  EXPECT_TRUE(has(refusal(f16, "128x256x64/wgs4", portable), "without arch-specific features"));
  EXPECT_TRUE(has(refusal(matmulGraph("f32[256,256]", "f32[256,256]"), "128x256x64/wgs4"),
                  "f16, bf16 and int8"));
  const char *widths = "128 x 32, 48, 64, 80, 96, 128, 160, 192 or 256";
  EXPECT_TRUE(has(refusal(f16, "128x16x64/wgs4"), widths));
  EXPECT_TRUE(has(refusal(f16, "128x112x64/wgs4"), widths));
  // 32, 48, 80, 96 and 160 columns are not whole 64-column atoms of an N-major B; K-major
  // they run.
  const std::string kMajor = "graph @g(%a: f16[256,256], %b: f16[256,256]) -> (y: ?) {\n"
                             "  %y = gemm(%a, %b) {transB = 1} : ?\n  return %y\n}";
  for (const char *tile : {"128x32x64/wgs8", "128x48x64/wgs8", "128x80x64/wgs7", "128x96x64/wgs7",
                           "128x160x64/wgs5"}) {
    EXPECT_TRUE(has(refusal(f16, tile), "tile reads B K-major")) << tile;
    auto set = gemm::emitGemmGroup(build(kMajor).group, {}, gemm::parseTileConfig(tile));
    EXPECT_TRUE(set) << tile << ": " << set.status().message();
  }
  EXPECT_TRUE(has(refusal(f16, "128x256x64/wgs5"), "5 stages do not fit"));
  EXPECT_TRUE(has(refusal(f16, "128x256x64/wgs2"), "2 stages do not fit"));
  // Split-K: f16 partial sums 4 columns at a time; never int8 (float partials would round).
  EXPECT_TRUE(has(refusal(matmulGraph("f16[256,256]", "f16[256,250]"), "128x128x64/wgs4k2"),
                  "4 columns at a time"));
  auto split =
      gemm::emitGemmGroup(build(f16).group, {}, gemm::parseTileConfig("128x256x64/wgs4k2"));
  ASSERT_TRUE(split) << split.status().message();
  ASSERT_EQ(split->kernels.size(), 2u);
  EXPECT_EQ(split->kernels[1].name.substr(split->kernels[1].name.size() - 7), "_splitk");
  EXPECT_EQ(split->kernels[0].launch.grid[1], 1u); // persistent: the splits are work units
  EXPECT_TRUE(has(refusal(matmulGraph("f16[64,100]", "f16[100,64]"), "128x128x64/wgs4"),
                  "K = 100 is not a multiple of 8"));
  EXPECT_TRUE(has(refusal(matmulGraph("f16[64,96]", "f16[96,50]"), "128x128x64/wgs4"),
                  "rows of 16-byte chunks"));
  EmitOptions fragment;
  fragment.stagedEpilogue = false;
  EXPECT_TRUE(has(refusal(f16, "128x128x64/wgs4", fragment), "staged epilogue"));
  const std::string s8 = "graph @g(%a: i8[256,256], %b: i8[256,256]) -> (y: ?) {\n"
                         "  %y = matmul_integer(%a, %b) {transB = 1} : ?\n  return %y\n}";
  const std::string msg = refusal(s8, "128x256x64/wgs4");
  EXPECT_TRUE(has(msg, "BK 128")) << msg;
  EXPECT_TRUE(has(refusal(s8, "128x256x128/wgs4k2"), "int8 GEMMs split K only in a cluster"));
  // Ping-pong holds a whole tile per warpgroup: not 128 x 256.
  EXPECT_TRUE(has(refusal(f16, "128x256x64/wps4"), "ping-pong warpgroup"));
  // Split-K in a cluster: 2 to 8 splits, cooperative, its handover buffer in shared memory.
  EXPECT_TRUE(has(refusal(f16, "128x128x64/wps4k2c"), "2 to 8 splits"));
  EXPECT_TRUE(has(refusal(matmulGraph("f16[256,4096]", "f16[4096,256]"), "128x128x64/wgs3k16c"),
                  "2 to 8 splits"));
  EXPECT_TRUE(has(refusal(f16, "128x128x64/wgs6k2c"), "6 stages do not fit"));
  auto cluster =
      gemm::emitGemmGroup(build(f16).group, {}, gemm::parseTileConfig("128x128x64/wgs4k2c"));
  ASSERT_TRUE(cluster) << cluster.status().message();
  ASSERT_EQ(cluster->kernels.size(), 1u); // no reduction kernel
  EXPECT_TRUE(cluster->scratchBytes.empty());
  EXPECT_EQ(cluster->kernels[0].launch.grid[0] % 2, 0u); // whole clusters
  EXPECT_NE(cluster->kernels[0].source.find("__cluster_dims__(2, 1, 1)"), std::string::npos);
  // TMA: plain matrices only, its maps the main kernel's last two parameters.
  // Split-K through the workspace loads with TMA too: the maps are the main kernel's, the
  // reduction kernel takes the other parameters only.
  auto tmaSplit =
      gemm::emitGemmGroup(build(f16).group, {}, gemm::parseTileConfig("128x128x64/wgs4k2t"));
  ASSERT_TRUE(tmaSplit) << tmaSplit.status().message();
  ASSERT_EQ(tmaSplit->kernels.size(), 2u);
  EXPECT_TRUE(tmaSplit->kernels[0].params.back().map.has_value());
  for (const KernelParam &p : tmaSplit->kernels[1].params)
    EXPECT_FALSE(p.map.has_value());
  EXPECT_TRUE(has(refusal("graph @g(%a: f16[4,256,256], %b: f16[4,256,256]) -> (y: ?) {\n"
                          "  %y = matmul(%a, %b) : ?\n  return %y\n}",
                          "128x128x64/wgs4k1t"),
                  "one plain matrix per operand"));
  auto tma = gemm::emitGemmGroup(build(f16).group, {}, gemm::parseTileConfig("128x128x64/wgs4k1t"));
  ASSERT_TRUE(tma) << tma.status().message();
  const auto &params = tma->kernels[0].params;
  ASSERT_GE(params.size(), 2u);
  const KernelParam &a = params[params.size() - 2], &b = params.back();
  ASSERT_TRUE(a.map && b.map);
  EXPECT_EQ(a.map->dims[0], 256u); // A: [M, K], K innermost, 128 rows x 64 halves per box
  EXPECT_EQ(a.map->box[0], 64u);
  EXPECT_EQ(a.map->box[1], 128u);
  EXPECT_EQ(a.map->pitchBytes, 512u);
  EXPECT_EQ(b.map->box[0], 64u); // B: [K, N], N innermost: 64 x 64 atoms
  EXPECT_EQ(b.map->box[1], 64u);
  EXPECT_NE(tma->kernels[0].source.find("dlc_sm90::TmaOperands{&tmA, &tmB}"), std::string::npos);
  // The tile text round-trips.
  for (const char *text : {"128x256x64/wgs4k1", "128x128x64/wps6k1", "128x64x64/wgs4k3c",
                           "128x128x64/wgs6k1t", "128x128x64/wgs4k2ct", "128x192x64/wgs5k1"}) {
    auto c = gemm::parseTileConfig(text);
    ASSERT_TRUE(c) << text;
    EXPECT_TRUE(c->wgmma);
    EXPECT_EQ(c->str(), text);
  }
}

} // namespace
} // namespace dlc::codegen
