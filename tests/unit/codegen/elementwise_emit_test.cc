// The elementwise family: source shape (FileCheck-like assertions on the text) and NVRTC
// compilation for sm_90 (no GPU needed).
#include <gtest/gtest.h>

#include "codegen/cuda_prelude.h"
#include "codegen/emitters.h"
#include "codegen/nvrtc.h"
#include "host_check.h"
#include "ir/parser.h"
#include "passes/pass_manager.h"

namespace dlc::codegen {
namespace {

std::unique_ptr<Graph> parse(const char *text) {
  auto g = parseGraph(text, "test.dlc");
  EXPECT_TRUE(g) << g.status().message();
  return std::move(*g);
}

FusedGroup wholeGraph(const Graph &g) {
  FusedGroup grp;
  grp.name = "fused_test";
  for (const Node *n : g.nodes())
    grp.nodes.push_back(n);
  for (const Value *v : g.inputs())
    grp.inputs.push_back(v);
  for (const auto &o : g.outputs())
    grp.outputs.push_back(o.value);
  return grp;
}

TEST(ElementwiseEmit, BroadcastChainCompilesForSm90) {
  auto g = parse(R"(graph @g(%x: f16[4,8], %b: f32[8]) -> (y: f16[4,8]) {
  %c = cast(%x) {to = f32} : f32[4,8]
  %s = add(%c, %b) : f32[4,8]
  %r = relu(%s) : f32[4,8]
  %y = cast(%r) {to = f16} : f16[4,8]
  return %y
})");
  auto set = emitGroup(wholeGraph(*g), {});
  ASSERT_TRUE(set) << set.status().message();
  ASSERT_EQ(set->kernels.size(), 1u);
  const Kernel &k = set->kernels[0];
  EXPECT_NE(k.source.find("const __half* __restrict__ in0"), std::string::npos) << k.source;
  // %b is broadcast along the rows: its offset is the column, i % 8.
  EXPECT_NE(k.source.find("dlc_load(in1[(((i) % 8LL))])"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("out0[i] = dlc_store<__half>"), std::string::npos) << k.source;
  auto mod = compileCuda(std::string(cudaPrelude()) + k.source, k.name);
  ASSERT_TRUE(mod) << mod.status().message();
  EXPECT_FALSE(mod->cubin.empty());
  EXPECT_NE(mod->ptx.find(".entry fused_test"), std::string::npos);
}

TEST(ElementwiseEmit, EveryElementwiseOpCompiles) {
  // One kernel per op with a CUDA expression, all in one NVRTC program.
  std::string source(cudaPrelude());
  int count = 0;
  for (const char *text : {"%y = abs(%a) : f32[3]",
                           "%y = sigmoid(%a) : f32[3]",
                           "%y = gelu(%a) : f32[3]",
                           "%y = div(%i, %j) : i64[3]",
                           "%y = mod(%i, %j) : i64[3]",
                           "%y = mod(%a, %b) {fmod = 1} : f32[3]",
                           "%y = pow(%a, %b) : f32[3]",
                           "%y = max(%a, %b, %a) : f32[3]",
                           "%y = where(%p, %a, %b) : f32[3]",
                           "%y = cast(%a) {to = i32} : i32[3]",
                           "%y = cast(%a) {to = bool} : bool[3]",
                           "%y = clip(%a, %lo, %hi) : f32[3]",
                           "%y = is_inf(%a) : bool[3]",
                           "%y = bit_shift(%i, %j) {direction = \"LEFT\"} : i64[3]",
                           "%y = hard_swish(%a) : f32[3]",
                           "%y = selu(%a) : f32[3]",
                           "%y = round(%a) : f32[3]",
                           "%y = erf(%d) : f64[3]",
                           "%y = mean(%a, %b) : f32[3]",
                           "%y = not(%p) : bool[3]"}) {
    std::string text2 = std::string(R"(graph @g(%a: f32[3], %b: f32[3], %i: i64[3], %j: i64[3],
        %p: bool[3], %lo: f32[], %hi: f32[], %d: f64[3]) -> (y: ?) {
  )") + text + "\n  return %y\n}";
    auto g = parseGraph(text2, "op.dlc");
    ASSERT_TRUE(g) << g.status().message();
    FusedGroup grp;
    grp.name = "k" + std::to_string(count++);
    const Node *n = (*g)->nodes()[0];
    grp.nodes.push_back(n);
    for (const Value *v : n->inputs())
      if (std::find(grp.inputs.begin(), grp.inputs.end(), v) == grp.inputs.end())
        grp.inputs.push_back(v);
    grp.outputs.push_back(n->output(0));
    auto set = emitGroup(grp, {});
    ASSERT_TRUE(set) << text << ": " << set.status().message();
    source += set->kernels[0].source;
  }
  auto mod = compileCuda(source, "all_elementwise");
  ASSERT_TRUE(mod) << mod.status().message();
}

TEST(ElementwiseEmit, VectorisedWithScalarTail) {
  // 40 f16 elements: 8 per 16-byte vector (the widest full-shape operand is f16), 5 vectors,
  // no tail; the broadcast bias is read per element.
  auto g = parse(R"(graph @g(%x: f16[4,10], %b: f32[10]) -> (y: f16[4,10]) {
  %c = cast(%x) {to = f32} : f32[4,10]
  %s = add(%c, %b) : f32[4,10]
  %y = cast(%s) {to = f16} : f16[4,10]
  return %y
})");
  auto set = emitGroup(wholeGraph(*g), {});
  ASSERT_TRUE(set) << set.status().message();
  const Kernel &k = set->kernels[0];
  EXPECT_NE(k.source.find("const bool aligned = ((unsigned long long)in0 & 15) == 0 && "
                          "((unsigned long long)out0 & 15) == 0;"),
            std::string::npos)
      << k.source;
  EXPECT_NE(k.source.find("for (int t = blockIdx.x * (int)blockDim.x + threadIdx.x; t < 5;"),
            std::string::npos)
      << k.source;
  EXPECT_NE(k.source.find("const dlc_vec<__half, 8> in0v = *reinterpret_cast<const "
                          "dlc_vec<__half, 8> *>(in0 + t * 8);"),
            std::string::npos)
      << k.source;
  EXPECT_NE(k.source.find("const int i = t * 8 + j;"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("dlc_load(in0v.v[j])"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("dlc_load(in1[(((i) % 10LL))])"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("*reinterpret_cast<dlc_vec<__half, 8> *>(out0 + t * 8) = out0v;"),
            std::string::npos)
      << k.source;
  // The scalar loop starts after the vectors when aligned, at 0 otherwise.
  EXPECT_NE(k.source.find("for (int i = (aligned ? 40 : 0) + blockIdx.x"), std::string::npos)
      << k.source;
  EXPECT_EQ(k.launch.grid[0], 1u);

  // Mixed widths: f32 output, so 4 elements per thread; 10 elements leave a tail of 2.
  auto g2 = parse(R"(graph @g(%x: f16[10], %z: i64[1]) -> (y: f32[10], m: bool[10]) {
  %y = cast(%x) {to = f32} : f32[10]
  %m = is_nan(%x) : bool[10]
  return %y, %m
})");
  FusedGroup grp2 = wholeGraph(*g2);
  grp2.name = "fused_test2";
  auto set2 = emitGroup(grp2, {});
  ASSERT_TRUE(set2) << set2.status().message();
  const std::string &src = set2->kernels[0].source;
  EXPECT_NE(src.find("((unsigned long long)in0 & 7) == 0"), std::string::npos) << src;
  EXPECT_NE(src.find("((unsigned long long)out1 & 3) == 0"), std::string::npos) << src;
  EXPECT_EQ(src.find("(unsigned long long)in1"), std::string::npos) << src; // not full-shape
  EXPECT_NE(src.find("dlc_vec<bool, 4> out1v;"), std::string::npos) << src;
  EXPECT_NE(src.find("t < 2;"), std::string::npos) << src;
  EXPECT_NE(src.find("(aligned ? 8 : 0)"), std::string::npos) << src;

  // 64-bit elements go two per vector; a group of 3 elements stays scalar.
  auto g3 = parse(R"(graph @g(%a: i64[6], %b: i64[6]) -> (y: i64[6]) {
  %y = mul(%a, %b) : i64[6]
  return %y
})");
  FusedGroup grp3 = wholeGraph(*g3);
  grp3.name = "fused_test3";
  auto set3 = emitGroup(grp3, {});
  ASSERT_TRUE(set3) << set3.status().message();
  EXPECT_NE(set3->kernels[0].source.find("dlc_vec<long long, 2>"), std::string::npos);
  std::string all = k.source + src + set3->kernels[0].source;
  auto mod = compileCuda(std::string(cudaPrelude()) + all, "vectorised");
  ASSERT_TRUE(mod) << mod.status().message();
}

TEST(ElementwiseHostRun, VectorAndTailMatchTheReference) {
  using testing::HostCase;
  testing::expectHostRunsMatchReference({
      {R"(graph @g(%x: f16[4,10], %b: f32[10]) -> (y: ?) {
  %c = cast(%x) {to = f32} : ?
  %s = add(%c, %b) : ?
  %r = relu(%s) : ?
  %y = cast(%r) {to = f16} : ?
  return %y
})",
       {},
       1e-3},
      {R"(graph @g(%x: f32[1001], %s: f32[]) -> (y: ?) {
  %m = mul(%x, %s) : ?
  %y = sigmoid(%m) : ?
  return %y
})",
       {{"s", Tensor::scalarF32(-0.01f)}},
       1e-6},
      {R"(graph @g(%x: f16[3,5,7], %z: bf16[5,1]) -> (y: ?, m: ?) {
  %c = cast(%z) {to = f16} : ?
  %a = add(%x, %c) : ?
  %y = cast(%a) {to = f32} : ?
  %m = greater(%a, %x) : ?
  return %y, %m
})",
       {},
       1e-3},
      {R"(graph @g(%a: i64[7], %b: i64[7]) -> (y: ?) {
  %y = mul(%a, %b) : ?
  return %y
})"},
  });
}

TEST(ElementwiseHostRun, MisalignedBuffersTakeTheScalarLoop) {
  auto g = parse(R"(graph @g(%x: f32[64]) -> (y: f32[64]) {
  %y = neg(%x) : f32[64]
  return %y
})");
  auto set = emitGroup(wholeGraph(*g), {});
  ASSERT_TRUE(set) << set.status().message();
  auto module = testing::HostModule::build(set->kernels[0].source);
  ASSERT_TRUE(module) << module.status().message();
  // Both buffers start one float past a 16-byte boundary.
  std::vector<float> in(68), out(68, 0.0f);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<float>(i) + 0.5f;
  float *x = in.data() + 1, *y = out.data() + 1;
  ASSERT_NE(reinterpret_cast<uintptr_t>(x) % 16, 0u);
  Status s = (*module)->run(set->kernels[0], {x, y});
  ASSERT_TRUE(s.isOk()) << s.message();
  for (int i = 0; i < 64; ++i)
    ASSERT_EQ(y[i], -x[i]) << "element " << i;
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[65], 0.0f);
}

TEST(ElementwiseEmit, OutputOfSmallerShapeIsRefused) {
  auto g = parse(R"(graph @g(%x: f32[4,8], %b: f32[8]) -> (y: f32[4,8], z: f32[8]) {
  %z = neg(%b) : f32[8]
  %y = add(%x, %z) : f32[4,8]
  return %y, %z
})");
  auto set = emitGroup(wholeGraph(*g), {});
  ASSERT_FALSE(set);
  EXPECT_NE(set.status().message().find("output 'z' has shape [8], not the group's iteration "
                                        "shape [4,8]"),
            std::string::npos)
      << set.status().message();
}

TEST(Nvrtc, CompileErrorCarriesTheLogAndName) {
  auto mod = compileCuda("extern \"C\" __global__ void broken() { undefined_thing(); }", "broken");
  ASSERT_FALSE(mod);
  EXPECT_NE(mod.status().message().find("NVRTC failed to compile 'broken' for sm_90"),
            std::string::npos);
  EXPECT_NE(mod.status().message().find("undefined_thing"), std::string::npos);
}

} // namespace
} // namespace dlc::codegen
