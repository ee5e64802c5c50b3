// ir/limits.h: the process-wide resource limits, their defaults and their errors.
#include <gtest/gtest.h>

#include "ir/limits.h"
#include "ir/parser.h"

namespace dlc {
namespace {

/// Restores the limits a test changed.
class LimitsTest : public ::testing::Test {
protected:
  void SetUp() override { saved_ = limits(); }
  void TearDown() override { setLimits(saved_); }
  Limits saved_;
};

TEST_F(LimitsTest, DefaultTensorLimitIsTheMachinesMemory) {
  setLimits({});
  EXPECT_EQ(limits().maxTensorBytes, physicalMemoryBytes());
  EXPECT_GT(physicalMemoryBytes(), int64_t{1} << 26);
  EXPECT_EQ(limits().maxNodes, 10'000'000);
  EXPECT_EQ(limits().maxLoopIterations, 1'000'000);
}

TEST_F(LimitsTest, TensorBytesAreCheckedAgainstTheLimit) {
  Limits l;
  l.maxTensorBytes = 4096;
  setLimits(l);
  EXPECT_TRUE(checkTensorBytes(DType::kF32, {32, 32}, "x").isOk());
  Status past = checkTensorBytes(DType::kF32, {32, 33}, "input 'x'");
  EXPECT_EQ(past.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(past.message(), "input 'x' would be f32[32,33] (4224 bytes), past the limit of 4096 "
                            "bytes per tensor (--max-tensor-bytes)");
  EXPECT_EQ(checkTensorBytes(DType::kF64, {int64_t{1} << 61}, "t").message(),
            "t would be f64[2305843009213693952], whose byte size overflows int64");
  EXPECT_EQ(checkTensorBytes(DType::kF32, {int64_t{1} << 40, int64_t{1} << 40}, "t").message(),
            "t would be f32[1099511627776,1099511627776], whose byte size overflows int64");
  EXPECT_EQ(checkTensorBytes(DType::kF32, {2, -1}, "t").message(),
            "t would have a negative dim (-1)");
  EXPECT_TRUE(checkTensorBytes(DType::kF32, {0, int64_t{1} << 62}, "empty").isOk());
}

TEST_F(LimitsTest, NodeCountAndNonPositiveValuesMeanTheDefault) {
  Limits l;
  l.maxNodes = 2;
  setLimits(l);
  EXPECT_TRUE(checkNodeCount(2, "m").isOk());
  EXPECT_EQ(checkNodeCount(3, "the model").message(),
            "the model has 3 nodes, past the limit of 2 (--max-nodes)");
  l.maxNodes = 0;
  l.maxLoopIterations = -5;
  setLimits(l);
  EXPECT_EQ(limits().maxNodes, Limits{}.maxNodes);
  EXPECT_EQ(limits().maxLoopIterations, Limits{}.maxLoopIterations);
}

TEST_F(LimitsTest, TheTextParserCountsNodesInBodiesToo) {
  const char *text = R"(graph @g(%c: bool[], %x: f32[2]) -> (y: f32[2]) {
  %y = if(%c, %x) {then_branch = graph @t(%x: f32[2]) -> (r: f32[2]) {
    %a = relu(%x) : f32[2]
    %r = neg(%a) : f32[2]
    return %r
  }, else_branch = graph @e(%x: f32[2]) -> (r: f32[2]) {
    %r = relu(%x) : f32[2]
    return %r
  }} : f32[2]
  return %y
})";
  Limits l;
  l.maxNodes = 4;
  setLimits(l);
  EXPECT_TRUE(parseGraph(text).hasValue());
  l.maxNodes = 3;
  setLimits(l);
  auto g = parseGraph(text);
  ASSERT_FALSE(g.hasValue());
  EXPECT_NE(g.status().message().find("more than 3 nodes, the limit (--max-nodes)"),
            std::string::npos)
      << g.status().message();
}

} // namespace
} // namespace dlc
