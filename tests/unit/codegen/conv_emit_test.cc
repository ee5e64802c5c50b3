// The conv family: implicit-GEMM and depthwise sources for many shapes, dtypes and attributes
// compile with NVRTC for sm_90 (no GPU needed); layout choices and refusals.
#include <gtest/gtest.h>

#include "codegen/cuda_prelude.h"
#include "codegen/emitters.h"
#include "codegen/gemm_kernel.h"
#include "codegen/nvrtc.h"
#include "emit_test_util.h"
#include "ir/parser.h"
#include "passes/pass_manager.h"

namespace dlc::codegen {
namespace {

struct Built {
  std::unique_ptr<Graph> graph;
  FusedGroup group;
};

Built build(const std::string &text, const std::string &name) {
  Built b;
  auto g = parseGraph(text, "test.dlc");
  EXPECT_TRUE(g) << g.status().message() << "\n" << text;
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

struct ConvCase {
  std::string dtype;
  std::vector<int64_t> x, w; // NCHW input, OIHW weight
  std::string attrs;         // conv attributes
  bool bias = false;
  bool relu = false;
};

std::string dims(const std::vector<int64_t> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

Built buildConv(const ConvCase &c, const std::string &name) {
  std::string in = "%x: " + c.dtype + "[" + dims(c.x) + "], %w: " + c.dtype + "[" + dims(c.w) + "]";
  std::string args = "%x, %w";
  if (c.bias) {
    in += ", %b: " + c.dtype + "[" + std::to_string(c.w[0]) + "]";
    args += ", %b";
  }
  std::string body =
      "  %y0 = conv(" + args + ")" + (c.attrs.empty() ? "" : " {" + c.attrs + "}") + " : ?\n";
  std::string result = "%y0";
  if (c.relu) {
    body += "  %y1 = relu(%y0) : ?\n";
    result = "%y1";
  }
  return build("graph @g(" + in + ") -> (y: ?) {\n" + body + "  return " + result + "\n}", name);
}

void compileAll(std::vector<Built> &groups, const EmitOptions &opts, const char *program,
                std::vector<KernelSet> *sets = nullptr, std::string *ptx = nullptr) {
  std::string source(cudaPrelude());
  for (Built &b : groups) {
    auto set = emitGroup(b.group, opts);
    ASSERT_TRUE(set) << b.group.name << ": " << set.status().message();
    for (const Kernel &k : set->kernels)
      source += k.source;
    if (sets)
      sets->push_back(std::move(*set));
  }
  auto mod = compileCuda(source, program);
  ASSERT_TRUE(mod) << mod.status().message();
  EXPECT_FALSE(mod->cubin.empty());
  if (ptx)
    *ptx = mod->ptx;
}

TEST(ConvEmit, ResNetStyleHalfConvsCompile) {
  const std::vector<ConvCase> cases = {
      // 7x7 stride-2 stem with 3 input channels (unaligned K: element loads).
      {"f16", {1, 3, 224, 224}, {64, 3, 7, 7}, "pads = [3, 3, 3, 3], strides = [2, 2]", true, true},
      // 3x3 pad 1 (im2col gather), batch 32.
      {"f16", {32, 64, 56, 56}, {64, 64, 3, 3}, "pads = [1, 1, 1, 1]", true, true},
      // 1x1 stride 1 on aligned planes: a plain strided B with cp.async.
      {"f16", {2, 256, 56, 56}, {64, 256, 1, 1}, "", true, false},
      // 1x1 on a 7x7 plane (49 pixels, not 16-byte aligned): gathered.
      {"bf16", {1, 512, 7, 7}, {2048, 512, 1, 1}, "", false, true},
      // 1x1 stride 2 downsample.
      {"f16", {4, 256, 56, 56}, {512, 256, 1, 1}, "strides = [2, 2]", false, false},
      // Grouped (ResNeXt-style), dilated, asymmetric pads.
      {"f16",
       {2, 64, 20, 20},
       {64, 2, 3, 3},
       "group = 32, dilations = [2, 2], pads = [2, 1, 2, 3]",
       true,
       false},
      // 1-D.
      {"bf16", {3, 16, 100}, {24, 16, 5}, "pads = [2, 2], strides = [3]", true, false},
  };
  std::vector<Built> gs;
  for (size_t i = 0; i < cases.size(); ++i)
    gs.push_back(buildConv(cases[i], "conv" + std::to_string(i)));
  std::vector<KernelSet> sets;
  std::string ptx;
  compileAll(gs, {}, "convs", &sets, &ptx);
  ASSERT_EQ(sets.size(), cases.size());
  EXPECT_NE(ptx.find("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"), std::string::npos);
  EXPECT_NE(ptx.find("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"), std::string::npos);
  EXPECT_EQ(ptx.find(".local"), std::string::npos);
  // The pointwise conv on aligned planes reads B through cp.async; the 3x3 gathers.
  EXPECT_NE(sets[2].kernels[0].source.find("B: K-strided tile, cp.async 16-byte loads"),
            std::string::npos);
  EXPECT_NE(sets[1].kernels[0].source.find("B: im2col gather"), std::string::npos);
  EXPECT_NE(sets[3].kernels[0].source.find("B: im2col gather"), std::string::npos);
  // The grouped conv runs one GEMM per group: grid z.
  EXPECT_EQ(sets[5].kernels[0].launch.grid[2], 32u);
}

// The stem kernel (EmitOptions::stemConv, on by default) compiles for sm_90 without spilling:
// ResNet-50's stem at batch 32 in f16 and at batch 8 in bf16, and an odd stride; at batch 1
// its 49 tiles would not fill the GPU, and the implicit GEMM keeps it.
TEST(ConvEmit, StemKernelCompilesWithoutSpills) {
  const std::string stem = "pads = [3, 3, 3, 3], strides = [2, 2]";
  const std::vector<ConvCase> cases = {
      {"f16", {32, 3, 224, 224}, {64, 3, 7, 7}, stem, true, true},
      {"bf16", {8, 3, 224, 224}, {64, 3, 7, 7}, stem, true, true},
      {"f16", {64, 1, 64, 64}, {32, 1, 5, 5}, "pads = [2, 2, 2, 2]", false, false},
      {"f16", {1, 3, 224, 224}, {64, 3, 7, 7}, stem, true, true},
  };
  std::vector<Built> gs;
  for (size_t i = 0; i < cases.size(); ++i)
    gs.push_back(buildConv(cases[i], "stem" + std::to_string(i)));
  std::vector<KernelSet> sets;
  std::string ptx;
  compileAll(gs, {}, "stems", &sets, &ptx);
  ASSERT_EQ(sets.size(), cases.size());
  EXPECT_EQ(ptx.find(".local"), std::string::npos);
  for (size_t i = 0; i < sets.size(); ++i) {
    ASSERT_EQ(sets[i].kernels.size(), 1u);
    EXPECT_EQ(sets[i].kernels[0].source.find(": stem conv, ") != std::string::npos, i < 3) << i;
  }
  // Persistent: two blocks per SM at most.
  EXPECT_EQ(sets[0].kernels[0].launch.grid[0], 2u * 132u);
  EXPECT_EQ(sets[0].kernels[0].launch.block[0], 256u);
}

TEST(ConvEmit, DepthwiseUsesTheDirectKernel) {
  std::vector<Built> gs;
  gs.push_back(buildConv(
      {"f16", {1, 32, 112, 112}, {32, 1, 3, 3}, "group = 32, pads = [1, 1, 1, 1]", true, true},
      "dw0"));
  // Channel multiplier 2, stride 2.
  gs.push_back(buildConv({"f32",
                          {2, 8, 15, 15},
                          {16, 1, 5, 5},
                          "group = 8, pads = [2, 2, 2, 2], strides = [2, 2]",
                          false,
                          false},
                         "dw1"));
  std::vector<KernelSet> sets;
  compileAll(gs, {}, "depthwise", &sets);
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_NE(sets[0].kernels[0].source.find("depthwise conv, 3 x 3 window"), std::string::npos);
  EXPECT_EQ(sets[0].kernels[0].source.find("dlc_mma"), std::string::npos);
  EXPECT_NE(sets[1].kernels[0].source.find("co / 2"), std::string::npos);
}

TEST(ConvEmit, F32ConvsCompileSimtAndTf32) {
  std::vector<Built> gs;
  gs.push_back(
      buildConv({"f32", {1, 3, 32, 32}, {16, 3, 3, 3}, "pads = [1, 1, 1, 1]", true, true}, "s0"));
  gs.push_back(buildConv({"f32", {2, 64, 14, 14}, {128, 64, 1, 1}, "", false, false}, "s1"));
  std::vector<KernelSet> simt;
  compileAll(gs, {}, "f32conv", &simt);
  EXPECT_EQ(simt[0].kernels[0].source.find("dlc_mma"), std::string::npos);
  EmitOptions tf32;
  tf32.allowTf32 = true;
  std::string ptx;
  compileAll(gs, tf32, "tf32conv", nullptr, &ptx);
  EXPECT_NE(ptx.find("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"), std::string::npos);
}

TEST(ConvEmit, ChannelsLastConvOnTheHopperKernelCompiles) {
  // The layout pass's form: NHWC input, OHWI weight. With a Hopper tile the producer gathers
  // A (the im2col rows) chunk by chunk through a_rows; the cost model does not pick it yet.
  const char *text = R"(graph @g(%x: f16[2,9,9,32], %w: f16[48,3,3,32], %b: f16[48]) -> (y: ?) {
  %y0 = conv(%x, %w, %b) {channels_last = 1, pads = [1, 1, 1, 1]} : ?
  %y = relu(%y0) : ?
  return %y
})";
  Built b = build(text, "nhwc");
  auto hopper = gemm::emitConvGroup(b.group, {}, gemm::parseTileConfig("128x128x64/wgs4"));
  ASSERT_TRUE(hopper) << hopper.status().message();
  ASSERT_EQ(hopper->kernels.size(), 1u);
  const std::string &src = hopper->kernels[0].source;
  EXPECT_TRUE(hopper->kernels[0].sm90a);
  EXPECT_NE(src.find("auto a_rows = [&](const __half *A, int m, int kc) -> const __half *"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("const int ih = oh * 1 - 1 + kh * 1, iw = ow * 1 - 1 + kw * 1;"),
            std::string::npos);
  NvrtcOptions sm90a;
  sm90a.archSpecific = true;
  auto mod = compileCuda(std::string(cudaPrelude()) + src, "nhwc_hopper", sm90a);
  ASSERT_TRUE(mod) << mod.status().message();
  EXPECT_NE(mod->ptx.find("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"),
            std::string::npos);
  auto chosen = emitGroup(b.group, {});
  ASSERT_TRUE(chosen) << chosen.status().message();
  EXPECT_FALSE(chosen->kernels[0].sm90a);
  // --hopper-conv lets the cost model choose it (a ResNet-50 b32 layer: 100352 rows).
  Built r50 = build(R"(graph @g(%x: f16[32,56,56,64], %w: f16[64,3,3,64], %b: f16[64]) -> (y: ?) {
  %y0 = conv(%x, %w, %b) {channels_last = 1, pads = [1, 1, 1, 1]} : ?
  %y = relu(%y0) : ?
  return %y
})",
                    "r50");
  EmitOptions conv;
  conv.hopperConv = true;
  auto plain = emitGroup(r50.group, {});
  ASSERT_TRUE(plain) << plain.status().message();
  EXPECT_FALSE(plain->kernels[0].sm90a);
  auto opted = emitGroup(r50.group, conv);
  ASSERT_TRUE(opted) << opted.status().message();
  EXPECT_TRUE(opted->kernels[0].sm90a);
  const std::string &source = opted->kernels[0].source;
  EXPECT_TRUE(source.find("/wgs") != std::string::npos || source.find("/wps") != std::string::npos)
      << source.substr(0, 200);
}

TEST(ConvEmit, PointwiseChannelsLastConvReadsAPlainMatrix) {
  // A 16-bit 1x1, stride-1, unpadded channels-last conv's A is its input, [images * h * w,
  // channels]: the cost model may put it on the Hopper kernels, which load it with TMA (no
  // im2col rows). int8 ones do so over at least 1024 channels without a residual; the others
  // keep the im2col rows (they lost on the Hopper kernels) and the mma.sync kernels. These are
  // the GPU tests' pointwise shapes (ConvNhwc.ChannelsLastMatchesTheReference,
  // Int8Gemm.ConvChannelsLastMatchesTheReference), so those run the path said here.
  struct Case {
    std::string dtype;
    int64_t n, hw, c, m;
    bool plain;
  };
  for (const Case &c : {Case{"f16", 7, 28, 40, 200, true}, Case{"f16", 7, 28, 64, 256, true},
                        Case{"i8", 7, 28, 128, 512, false}, Case{"i8", 7, 28, 192, 256, false},
                        Case{"i8", 7, 28, 64, 256, false}, Case{"i8", 3, 14, 1024, 256, true},
                        Case{"i8", 5, 7, 2048, 512, true}}) {
    SCOPED_TRACE(fmt::format("{} 1x1 conv {} -> {}", c.dtype, c.c, c.m));
    const bool s8 = c.dtype == "i8";
    const std::string y = fmt::format("[{},{},{},{}]", c.n, c.hw, c.hw, c.m);
    const std::string text = fmt::format(
        R"(graph @g(%x: {0}[{6},{7},{7},{1}], %w: {0}[{2},1,1,{1}]) -> (y: ?) {{
  %y0 = {3}(%x, %w) {{channels_last = 1}} : {4}{5}
  return %y0
}})",
        c.dtype, c.c, c.m, s8 ? "conv_integer" : "conv", s8 ? "i32" : "f16", y, c.n, c.hw);
    Built b = build(text, "pw");
    auto set = emitGroup(b.group, {});
    ASSERT_TRUE(set) << set.status().message();
    ASSERT_EQ(set->kernels.size(), 1u);
    const std::string &src = set->kernels[0].source;
    EXPECT_EQ(src.find("im2col rows of an NHWC image") == std::string::npos, c.plain)
        << src.substr(0, 600);
    if (!s8) { // the cost model's choice for the int8 ones (the GPU tests run whichever it is)
      EXPECT_NE(src.find("dlc_sm90::TensorMap tmA"), std::string::npos) << src.substr(0, 300);
    }
  }
  // An int8 one over 1024 channels with an int8 residual keeps the rows.
  Built res = build(
      R"(graph @g(%x: i8[3,14,14,1024], %w: i8[256,1,1,1024], %r: f32[3,14,14,256]) -> (y: ?) {
  %acc = conv_integer(%x, %w) {channels_last = 1} : i32[3,14,14,256]
  %f = cast(%acc) {to = f32} : f32[3,14,14,256]
  %y0 = add(%f, %r) : f32[3,14,14,256]
  return %y0
})",
      "res");
  auto resSet = emitGroup(res.group, {});
  ASSERT_TRUE(resSet) << resSet.status().message();
  EXPECT_NE(resSet->kernels[0].source.find("im2col rows of an NHWC image"), std::string::npos);
  // A strided 1x1 conv (ResNet's downsample) still gathers its rows.
  Built ds = build(R"(graph @g(%x: f16[8,56,56,256], %w: f16[512,1,1,256]) -> (y: ?) {
  %y0 = conv(%x, %w) {channels_last = 1, strides = [2, 2]} : f16[8,28,28,512]
  return %y0
})",
                   "ds");
  auto set = gemm::emitConvGroup(ds.group, {}, gemm::parseTileConfig("128x128x64/wgs4"));
  ASSERT_TRUE(set) << set.status().message();
  EXPECT_NE(set->kernels[0].source.find("a_rows"), std::string::npos);
}

TEST(ConvEmit, Int8ResNetConvsTakeTheMeasuredTiles) {
  // The cost model's choices for ResNet-50 b32's int8 convolutions that kbench and the model's
  // profile measured on an H100 (session 45, tools/kbench/int8_resnet50.txt): a 3x3 window over
  // 128 channels on 256 x 128 (0.0244 ms against 0.0346 at 128 x 64), over 64 channels still
  // 128 x 64 (0.0375 against 0.0439); a 1x1 expansion of one K tile with its int8 residual
  // loads the residual before its main loop (0.0648 ms against 0.0726), on 64 x 64 tiles
  // (session 47, in the model: 0.0482 ms against 0.0514 at 128 x 64); at batch 1 (100 blocks
  // of 128 x 64) it keeps 128 x 64, the tile measured there.
  struct Case {
    int64_t n, hw, c, m, k;
    bool residual;
    std::string tile;
    bool prefetch;
  };
  for (const Case &c : {Case{32, 28, 128, 128, 3, false, "256x128x64/4x2s4k1", false},
                        Case{32, 56, 64, 64, 3, false, "128x64x64/4x2s4k1", false},
                        Case{32, 56, 64, 256, 1, true, "64x64x64/2x2s2k1", true},
                        Case{1, 56, 64, 256, 1, true, "128x64x64/4x2s2k1", true}}) {
    SCOPED_TRACE(fmt::format("{}x{} conv {} -> {} at {}, batch {}", c.k, c.k, c.c, c.m, c.hw, c.n));
    const std::string x = fmt::format("[{2},{0},{0},{1}]", c.hw, c.c, c.n);
    const std::string y = fmt::format("[{2},{0},{0},{1}]", c.hw, c.m, c.n);
    // The residual as ResNet's int8 blocks have it: int8, dequantized, the sum quantized.
    const std::string tail = c.residual ? fmt::format(R"(%rs = constant f32[] dense<[0.05]>
  %rd = dequantize_linear(%r, %rs) : f32{0}
  %s = add(%f, %rd) : f32{0}
  %qs = constant f32[] dense<[0.1]>
  %qz = constant i8[] dense<[0]>
  %y0 = quantize_linear(%s, %qs, %qz) : i8{0})",
                                                      y)
                                        : fmt::format("%y0 = relu(%f) : f32{}", y);
    const std::string text = fmt::format(
        R"(graph @g(%x: i8{0}, %w: i8[{2},{3},{3},{4}]{6}) -> (y: ?) {{
  %acc = conv_integer(%x, %w) {{channels_last = 1, pads = [{5}, {5}, {5}, {5}]}} : i32{1}
  %f = cast(%acc) {{to = f32}} : f32{1}
  {7}
  return %y0
}})",
        x, y, c.m, c.k, c.c, c.k / 2, c.residual ? ", %r: i8" + y : std::string(), tail);
    auto g = testing::parseInfer(text);
    ASSERT_TRUE(g);
    auto set = emitGroup(testing::wholeGraph(*g, "r50"), {});
    ASSERT_TRUE(set) << set.status().message();
    const std::string &src = set->kernels[0].source;
    EXPECT_NE(src.find("tile " + c.tile), std::string::npos) << src.substr(0, 200);
    EXPECT_EQ(src.find("dlc_epl(") != std::string::npos, c.prefetch) << src.substr(0, 200);
  }
}

TEST(ConvEmit, ShortInt8ProductsWithAResidualRunCooperative) {
  // ResNet-50 b32's layer3 expansion (int8 1x1 256 -> 1024 at 14 x 14 with the int8 residual)
  // on a plain A (--int8-pointwise-plain): two K steps of 128 on the Hopper kernels, too short
  // to hide the requantizing epilogue behind the other warpgroup's main loop, so the 128 x 128
  // tile runs cooperative (kbench, H100, session 50: 0.0219 ms against 0.0258 ping-pong). The
  // same product without the residual keeps ping-pong.
  for (bool residual : {true, false}) {
    SCOPED_TRACE(residual ? "residual" : "no residual");
    const std::string y = "[32,14,14,1024]";
    const std::string tail = residual ? fmt::format(R"(%rs = constant f32[] dense<[0.05]>
  %rd = dequantize_linear(%r, %rs) : f32{0}
  %s = add(%f, %rd) : f32{0}
  %qs = constant f32[] dense<[0.1]>
  %qz = constant i8[] dense<[0]>
  %y0 = quantize_linear(%s, %qs, %qz) : i8{0})",
                                                    y)
                                      : fmt::format(R"(%qs = constant f32[] dense<[0.1]>
  %qz = constant i8[] dense<[0]>
  %y0 = quantize_linear(%f, %qs, %qz) : i8{0})",
                                                    y);
    const std::string text = fmt::format(
        R"(graph @g(%x: i8[32,14,14,256], %w: i8[1024,1,1,256]{1}) -> (y: ?) {{
  %acc = conv_integer(%x, %w) {{channels_last = 1}} : i32{0}
  %f = cast(%acc) {{to = f32}} : f32{0}
  {2}
  return %y0
}})",
        y, residual ? ", %r: i8" + y : std::string(), tail);
    auto g = testing::parseInfer(text);
    ASSERT_TRUE(g);
    EmitOptions plain;
    plain.int8PointwisePlain = true;
    auto set = emitGroup(testing::wholeGraph(*g, "l3"), plain);
    ASSERT_TRUE(set) << set.status().message();
    const std::string &src = set->kernels[0].source;
    EXPECT_NE(src.find(residual ? "tile 128x128x128/wgs" : "tile 128x128x128/wps"),
              std::string::npos)
        << src.substr(0, 200);
  }
}

TEST(ConvEmit, RefusalsNameTheOpAndReason) {
  auto g = parseGraph(R"(graph @g(%x: f16[1,2,4,4,4], %w: f16[3,2,1,1,1]) -> (y: ?) {
  %y = conv(%x, %w) : f16[1,3,4,4,4]
  return %y
})",
                      "t.dlc");
  ASSERT_TRUE(g) << g.status().message();
  std::string why;
  EXPECT_FALSE(gpuSupports(*(*g)->nodes()[0], &why));
  EXPECT_EQ(why, "Conv: 3-D convolution has no GPU kernel (1-D and 2-D only)");
}

} // namespace
} // namespace dlc::codegen
