// The elementwise family: source shape (FileCheck-like assertions on the text) and NVRTC
// compilation for sm_90 (no GPU needed).
#include <gtest/gtest.h>

#include "codegen/cuda_prelude.h"
#include "codegen/emitters.h"
#include "codegen/nvrtc.h"
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
