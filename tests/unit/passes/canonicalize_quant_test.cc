// canonicalize-quant: fake_quant (TensorFlow's semantics) and the clamp -> Q -> DQ it becomes
// give the same levels on random inputs, per tensor and per channel, narrow range and fewer
// bits included; what cannot be rewritten stays.
#include "numerics_util.h"

namespace dlc {
namespace {

using testing::after;
using testing::countOps;
using testing::parsed;

constexpr const char *kGraph =
    R"(graph @fq(%x: f32[64,3], %y: f32[64,3]) -> (a: ?, b: ?, c: ?, d: ?) {
  %lo = constant f32[] dense<[-1.0]>
  %hi = constant f32[] dense<[2.5]>
  %zlo = constant f32[] dense<[0.0]>
  %clo = constant f32[3] dense<[-1.0, -0.5, 0.0]>
  %chi = constant f32[3] dense<[1.0, 3.0, 6.0]>
  %a = fake_quant(%x, %lo, %hi) {num_bits = 8} : f32[64,3] loc("a")
  %b = fake_quant(%y, %clo, %chi) {num_bits = 4, narrow_range = 1} : f32[64,3] loc("b")
  %c = fake_quant(%x, %zlo, %hi) {num_bits = 8, narrow_range = 1} : f32[64,3] loc("c")
  %d = fake_quant(%y, %lo, %hi) {num_bits = 12} : f32[64,3] loc("d")
  return %a, %b, %c, %d
})";

TEST(CanonicalizeQuant, QdqGivesTheFakeQuantLevels) {
  std::unique_ptr<Graph> g = parsed(kGraph);
  ASSERT_TRUE(g);
  std::unique_ptr<Graph> q = after(*g, "canonicalize-quant");
  ASSERT_TRUE(q);
  EXPECT_EQ(countOps(*q, Op::kFakeQuant), 1); // %d: 12 bits stay
  EXPECT_EQ(countOps(*q, Op::kQuantizeLinear), 3);
  EXPECT_EQ(countOps(*q, Op::kDequantizeLinear), 3);
  // Inputs spread over and beyond the ranges (the clamp matters), several seeds.
  for (uint64_t seed : {1, 2, 3}) {
    std::map<std::string, Tensor> inputs = testing::randomInputs(*g, seed);
    for (auto &[name, t] : inputs)
      for (int64_t i = 0; i < t.numElements(); ++i)
        t.mutableData<float>()[i] *= 8.0f;
    auto before = ReferenceExecutor::create(*g);
    auto now = ReferenceExecutor::create(*q);
    ASSERT_TRUE(before && now);
    auto ra = before->run(inputs);
    auto rb = now->run(inputs);
    ASSERT_TRUE(ra && rb);
    for (size_t o = 0; o < ra->size(); ++o) {
      const Tensor &x = (*ra)[o].tensor, &y = (*rb)[o].tensor;
      int differ = 0;
      for (int64_t k = 0; k < x.numElements(); ++k)
        differ += x.elementAsDouble(k) != y.elementAsDouble(k);
      // Ties (half up in TensorFlow, half to even in QuantizeLinear) need a value exactly
      // halfway between two levels: none among random floats.
      EXPECT_EQ(differ, 0) << (*ra)[o].name << ", seed " << seed;
    }
  }
}

TEST(CanonicalizeQuant, RunTimeRangesAndZeroRangesStay) {
  std::unique_ptr<Graph> g =
      parsed(R"(graph @keep(%x: f32[4], %m: f32[], %n: f32[]) -> (a: ?, b: ?) {
  %z = constant f32[] dense<[0.0]>
  %a = fake_quant(%x, %m, %n) : f32[4] loc("a")
  %b = fake_quant(%x, %z, %z) : f32[4] loc("b")
  return %a, %b
})");
  ASSERT_TRUE(g);
  std::ostringstream log;
  std::unique_ptr<Graph> q = after(*g, "canonicalize-quant", &log);
  ASSERT_TRUE(q);
  EXPECT_EQ(countOps(*q, Op::kFakeQuant), 2);
  EXPECT_NE(log.str().find("node 'a' (FakeQuant): kept: min or max is computed at run time"),
            std::string::npos)
      << log.str();
  EXPECT_NE(log.str().find("node 'b' (FakeQuant): kept: a channel's min and max are both 0"),
            std::string::npos)
      << log.str();
}

TEST(CanonicalizeQuant, AnInvertedRangeIsAnErrorNamingTheNode) {
  std::unique_ptr<Graph> g = parsed(R"(graph @bad(%x: f32[4]) -> (a: ?) {
  %lo = constant f32[] dense<[3.0]>
  %hi = constant f32[] dense<[1.0]>
  %a = fake_quant(%x, %lo, %hi) : f32[4] loc("a")
  return %a
})");
  ASSERT_TRUE(g);
  auto p = parsePipeline("canonicalize-quant");
  ASSERT_TRUE(p);
  Status st = runPipeline(*g, *p, PipelineOptions());
  EXPECT_NE(st.message().find("node 'a' (FakeQuant): min (3) must be smaller than max (1)"),
            std::string::npos)
      << st.message();
}

} // namespace
} // namespace dlc
