// The precision reports' building blocks on the reference backend: ValueRunner watches exactly
// the values asked for (mixed precision included), stripQuantization gives a quantized graph's
// float counterpart, compareMixedPrecision names the layer whose values fp16 cannot hold.
// The same on the GPU: tests/unit/gpu/calibration_gpu_test.cc.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/jit/quant_report.h"
#include "runtime/jit/value_runner.h"
#include "runtime_test_util.h"

namespace dlc {
namespace {

using testing::f32Tensor;
using testing::inferredGraph;

// %h = x @ w (w large: |h| up to 2e5, beyond fp16's 65504), %r = relu(h), %s = x @ v (small).
constexpr const char *kTwoMatMuls = R"(
graph @two(%x: f32[2,2]) -> (r: f32[2,2], s: f32[2,2]) {
  %w = constant f32[2,2] dense<[100000.0, 1.0, 100000.0, -1.0]>
  %v = constant f32[2,2] dense<[0.5, 0.25, -0.125, 1.0]>
  %h = matmul(%x, %w) : f32[2,2] loc("big")
  %r = relu(%h) : f32[2,2] loc("act")
  %s = matmul(%x, %v) : f32[2,2] loc("small")
  return %r, %s
}
)";

std::map<std::string, Tensor> twoInputs() {
  return {{"x", f32Tensor({2, 2}, {1.0f, 0.9f, -0.3f, 0.7f})}};
}

TEST(ValueRunner, ObservesTheWatchedValuesOnlyInputsFirst) {
  auto g = inferredGraph(kTwoMatMuls);
  jit::ValueRunnerOptions opts;
  opts.backend = Backend::kCpu;
  auto runner =
      jit::ValueRunner::create(*g, {g->findValue("s"), g->findValue("x"), g->findValue("w")}, opts);
  ASSERT_TRUE(runner) << runner.status().message();
  EXPECT_EQ(runner->backend(), Backend::kCpu);
  std::vector<std::string> seen;
  Tensor s;
  ASSERT_TRUE(runner
                  ->run(twoInputs(),
                        [&](const Value *v, const Tensor &t) {
                          seen.push_back(v->name());
                          if (v->name() == "s")
                            s = t;
                        })
                  .isOk());
  EXPECT_EQ(seen, (std::vector<std::string>{"x", "s"})); // the constant %w is not observed
  const std::vector<float> want = {0.3875f, 1.15f, -0.2375f, 0.625f}, got = testing::f32Values(s);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-6) << i;
}

TEST(ValueRunner, MixedPrecisionOnTheReferenceBackendObservesTheLowType) {
  auto g = inferredGraph(kTwoMatMuls);
  jit::ValueRunnerOptions opts;
  opts.backend = Backend::kCpu;
  opts.precision = "fp16";
  auto runner = jit::ValueRunner::create(*g, {g->findValue("h"), g->findValue("s")}, opts);
  ASSERT_TRUE(runner) << runner.status().message();
  std::map<std::string, Tensor> seen;
  ASSERT_TRUE(
      runner->run(twoInputs(), [&](const Value *v, const Tensor &t) { seen[v->name()] = t; })
          .isOk());
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen["h"].dtype(), DType::kF16);
  EXPECT_TRUE(std::isinf(seen["h"].elementAsDouble(0))); // 190000 overflows fp16
  EXPECT_NEAR(seen["s"].elementAsDouble(0), 0.3875, 1e-3);
}

TEST(ValueRunner, RefusesABadPrecision) {
  auto g = inferredGraph(kTwoMatMuls);
  jit::ValueRunnerOptions opts;
  opts.backend = Backend::kCpu;
  opts.precision = "fp8";
  auto runner = jit::ValueRunner::create(*g, {}, opts);
  ASSERT_FALSE(runner);
  EXPECT_NE(runner.status().message().find("expected fp16 or bf16"), std::string::npos)
      << runner.status().message();
}

TEST(CompareMixedPrecision, NamesTheLayerBeyondFp16Range) {
  auto g = inferredGraph(kTwoMatMuls);
  auto layers = jit::compareMixedPrecision(*g, {twoInputs()}, "fp16", "", Backend::kCpu);
  ASSERT_TRUE(layers) << layers.status().message();
  ASSERT_EQ(layers->size(), 3u); // big, act, small
  const jit::LayerQuantReport &worst = (*layers)[0];
  EXPECT_EQ(worst.node, "big");
  EXPECT_EQ(worst.op, "MatMul");
  EXPECT_TRUE(std::isinf(worst.sqnrDb) && worst.sqnrDb < 0);
  EXPECT_DOUBLE_EQ(worst.saturated, 0.25); // h[0,0] = 190000 of four beyond 65504
  EXPECT_EQ(worst.reason, "values beyond fp16 range: max |x| 190000 > 65504");
  EXPECT_EQ((*layers)[1].node, "act");
  const jit::LayerQuantReport &small = (*layers)[2];
  EXPECT_EQ(small.node, "small");
  EXPECT_GT(small.sqnrDb, 50);
  EXPECT_GT(small.cosine, 0.9999);
  EXPECT_EQ(small.reason, "");

  // Kept in float32, the big matmul is no layer; its relu then reads float32 and stays too.
  auto kept = jit::compareMixedPrecision(*g, {twoInputs()}, "fp16", "big", Backend::kCpu);
  ASSERT_TRUE(kept) << kept.status().message();
  ASSERT_EQ(kept->size(), 1u);
  EXPECT_EQ((*kept)[0].node, "small");
  const std::string table = jit::formatLayerTable(*layers, "title:");
  EXPECT_EQ(table.rfind("title:\n", 0), 0u) << table;
  EXPECT_NE(table.find("-inf"), std::string::npos) << table;
}

TEST(CompareMixedPrecision, Bf16HoldsTheRange) {
  auto g = inferredGraph(kTwoMatMuls);
  auto layers = jit::compareMixedPrecision(*g, {twoInputs()}, "bf16", "", Backend::kCpu);
  ASSERT_TRUE(layers) << layers.status().message();
  ASSERT_EQ(layers->size(), 3u);
  for (const jit::LayerQuantReport &l : *layers) {
    EXPECT_TRUE(std::isfinite(l.sqnrDb)) << l.node;
    EXPECT_EQ(l.saturated, 0) << l.node;
    EXPECT_EQ(l.reason, "") << l.node;
  }
}

constexpr const char *kQuantized = R"(
graph @q(%x: f32[1,2]) -> (y: f32[1,2]) {
  %s = constant f32[] dense<[0.01]>
  %zp = constant i8[] dense<[0]>
  %w = constant f32[2,2] dense<[0.5, 0.25, -0.125, 1.0]>
  %x.q = quantize_linear(%x, %s, %zp) : i8[1,2]
  %x.dq = dequantize_linear(%x.q, %s, %zp) : f32[1,2]
  %y = matmul(%x.dq, %w) : f32[1,2] loc("fc")
  return %y
}
)";

TEST(StripQuantization, RemovesEveryQDqPair) {
  auto g = inferredGraph(kQuantized);
  int removed = -1;
  std::unique_ptr<Graph> f = jit::stripQuantization(*g, &removed);
  EXPECT_EQ(removed, 1);
  for (const Node *n : f->nodes())
    EXPECT_TRUE(n->op() != Op::kQuantizeLinear && n->op() != Op::kDequantizeLinear)
        << n->describe();
  const Node *fc = f->findValue("y")->producer();
  EXPECT_EQ(fc->input(0), f->findValue("x"));
  // The original is untouched, and the report compares the two.
  EXPECT_NE(g->findValue("x.dq"), nullptr);
  auto layers =
      jit::compareQuantized(*f, *g, {{{"x", f32Tensor({1, 2}, {0.333f, -0.5f})}}}, Backend::kCpu);
  ASSERT_TRUE(layers) << layers.status().message();
  ASSERT_EQ(layers->size(), 1u);
  EXPECT_EQ((*layers)[0].node, "fc");
  EXPECT_GT((*layers)[0].sqnrDb, 20);
  EXPECT_LT((*layers)[0].sqnrDb, 100);
}

} // namespace
} // namespace dlc
