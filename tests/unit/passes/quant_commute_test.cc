// insert-fake-quant's last step (passes/util/quant_commute.h): quantization moved across
// MaxPool, Transpose, Flatten, Unsqueeze, Squeeze and Concat changes no bit of the result, and
// leaves int8 flowing through them with one DQ, right before the matmul.
#include <gtest/gtest.h>

#include "numerics_util.h"
#include "pass_test_util.h"

namespace dlc {
namespace {

using testing::countOps;

constexpr const char *kChain = R"(
graph @chain(%x: f32[1,2,4,4], %z: f32[1,2,4,4]) -> (y: f32[1,2]) attributes {quant.input_ranges = [-1.0, 1.0, -1.0, 1.0]} {
  %w = constant f32[2,2,1,1] dense<[0.5, -2.0, 1.0, 0.25]>
  %ax = constant i64[1] dense<[1]>
  %w2 = constant f32[16,2] dense<[1.0, 0.5, -1.0, 0.25, 0.5, 0.0, 0.0, -0.125, 1.0, 0.5, -1.0, 0.25, 0.5, 0.0, 0.0, -0.125, 1.0, 0.5, -1.0, 0.25, 0.5, 0.0, 0.0, -0.125, 1.0, 0.5, -1.0, 0.25, 0.5, 0.0, 0.0, -0.125]>
  %c = conv(%x, %w) {quant.ranges = [-3.0, 2.54]} : f32[1,2,4,4] loc("conv1")
  %r = relu(%c) {quant.ranges = [0.0, 2.54]} : f32[1,2,4,4] loc("relu1")
  %c2 = conv(%z, %w) {quant.ranges = [-3.0, 3.0]} : f32[1,2,4,4] loc("conv2")
  %r2 = relu(%c2) {quant.ranges = [0.0, 3.0]} : f32[1,2,4,4] loc("relu2")
  %cat = concat(%r, %r2) {axis = 1, quant.ranges = [0.0, 3.0]} : f32[1,4,4,4] loc("cat")
  %p = max_pool(%cat) {kernel_shape = [2, 2], strides = [2, 2], quant.ranges = [0.0, 3.0]} : f32[1,4,2,2] loc("pool")
  %t = transpose(%p) {perm = [0, 2, 3, 1], quant.ranges = [0.0, 3.0]} : f32[1,2,2,4] loc("nhwc")
  %fl = flatten(%t) {axis = 1, quant.ranges = [0.0, 3.0]} : f32[1,16] loc("flat")
  %u = unsqueeze(%fl, %ax) {quant.ranges = [0.0, 3.0]} : f32[1,1,16] loc("un")
  %sq = squeeze(%u, %ax) {quant.ranges = [0.0, 3.0]} : f32[1,16] loc("sq")
  %y = matmul(%sq, %w2) {quant.ranges = [-1.0, 1.0]} : f32[1,2] loc("fc")
  return %y
}
)";

TEST(QuantCommute, MovesQuantizationUpTheChainBitForBit) {
  auto g = testing::parsed(kChain);
  ASSERT_NE(g, nullptr);
  auto kept = testing::after(*g, "insert-fake-quant{commute=false}");
  std::ostringstream log;
  auto moved = testing::after(*g, "insert-fake-quant", &log);
  testing::expectSameResults(*kept, *moved, 0.0, 3);
  testing::expectSameResults(*kept, *moved, 0.0, 4);

  for (const char *v : {"cat", "p", "t", "fl", "u", "sq"})
    EXPECT_EQ(moved->findValue(v)->dtype(), DType::kI8) << v;
  const Node *fc = moved->findValue("y")->producer();
  const Node *dq = fc->input(0)->producer();
  ASSERT_EQ(dq->op(), Op::kDequantizeLinear);
  EXPECT_EQ(dq->input(0)->name(), "sq");
  const Node *cat = moved->findValue("cat")->producer();
  for (const Value *in : cat->inputs())
    EXPECT_EQ(in->producer()->op(), Op::kQuantizeLinear) << in->name();
  // Two Q (the relus' outputs, one per cat input), one DQ on activations, one per weight.
  EXPECT_EQ(countOps(*moved, Op::kQuantizeLinear), 2 + 2); // + the convs' inputs %x and %z
  EXPECT_LT(countOps(*moved, Op::kDequantizeLinear), countOps(*kept, Op::kDequantizeLinear));
  EXPECT_NE(log.str().find("moves to its input (quantization commutes with max_pool)"),
            std::string::npos)
      << log.str();
}

TEST(QuantCommute, LeavesAValueOtherNodesReadInFloat) {
  auto g = testing::parsed(R"(
graph @g(%x: f32[1,2,4,4]) -> (y: f32[1,2], p: f32[1,2,2,2]) attributes {quant.input_ranges = [-1.0, 1.0]} {
  %w = constant f32[2,2,1,1] dense<[0.5, -2.0, 1.0, 0.25]>
  %shape = constant i64[2] dense<[1, 8]>
  %w2 = constant f32[8,2] dense<[1.0, 0.5, -1.0, 0.25, 0.5, 0.0, 0.0, -0.125, 1.0, 0.5, -1.0, 0.25, 0.5, 0.0, 0.0, -0.125]>
  %c = conv(%x, %w) {quant.ranges = [-3.0, 2.54]} : f32[1,2,4,4] loc("conv1")
  %p = max_pool(%c) {kernel_shape = [2, 2], strides = [2, 2], quant.ranges = [-3.0, 2.54]} : f32[1,2,2,2] loc("pool")
  %f = reshape(%p, %shape) {quant.ranges = [-3.0, 2.54]} : f32[1,8] loc("flatten")
  %y = matmul(%f, %w2) {quant.ranges = [-1.0, 1.0]} : f32[1,2] loc("fc")
  return %y, %p
}
)");
  ASSERT_NE(g, nullptr);
  std::ostringstream log;
  auto moved = testing::after(*g, "insert-fake-quant", &log);
  auto kept = testing::after(*g, "insert-fake-quant{commute=false}");
  testing::expectSameResults(*kept, *moved, 0.0);
  EXPECT_EQ(moved->findValue("f")->dtype(), DType::kI8);  // across the reshape
  EXPECT_EQ(moved->findValue("p")->dtype(), DType::kF32); // not across the pool: %p is returned
  EXPECT_NE(log.str().find("stays after it: %p is a graph output, needed in float"),
            std::string::npos)
      << log.str();
}

} // namespace
} // namespace dlc
