// Shape inference of the reduction family.
#include "tests/unit/ir/op_infer_test_util.h"

namespace dlc::optest {
namespace {

using Reduction = OpTest;

TEST_F(Reduction, ConstantAxesWithAndWithoutKeepdims) {
  EXPECT_EQ(infer(Op::kReduceSum, {in("f32[N,3,4]"), constI64({1})}).type(), "f32[N,1,4]");
  EXPECT_EQ(infer(Op::kReduceMean, {in("f32[N,3,4]"), constI64({1, -1})}, {{"keepdims", 0}}).type(),
            "f32[N]");
  EXPECT_EQ(infer(Op::kReduceMax, {in("f32[N,3,4]"), constI64({0})}, {{"keepdims", 0}}).type(),
            "f32[3,4]");
}

TEST_F(Reduction, NoAxesReducesEverything) {
  EXPECT_EQ(infer(Op::kReduceL2, {in("f32[N,3]")}).type(), "f32[1,1]");
  EXPECT_EQ(infer(Op::kReduceProd, {in("f32[N,3]")}, {{"keepdims", 0}}).type(), "f32[]");
  // An empty constant is the same as no axes.
  EXPECT_EQ(
      infer(Op::kReduceSum, {in("f32[N,3]"), constT(Tensor::vectorI64({}))}, {{"keepdims", 0}})
          .type(),
      "f32[]");
}

TEST_F(Reduction, NoopWithEmptyAxesKeepsTheInput) {
  EXPECT_EQ(infer(Op::kReduceSum, {in("f32[N,3]")}, {{"noop_with_empty_axes", 1}}).type(),
            "f32[N,3]");
  EXPECT_EQ(
      infer(Op::kReduceSum, {in("f32[N,3]"), in("i64[0]")}, {{"noop_with_empty_axes", 1}}).type(),
      "f32[N,3]");
}

TEST_F(Reduction, NonConstantAxes) {
  // Which dims are reduced is unknown: with keepdims the rank survives, without it nothing does.
  EXPECT_EQ(infer(Op::kReduceSum, {in("f32[N,3,4]"), in("i64[1]")}).type(), "f32[?,?,?]");
  EXPECT_EQ(infer(Op::kReduceSum, {in("f32[N,3,4]"), in("i64[1]")}, {{"keepdims", 0}}).type(),
            "f32[*]");
}

TEST_F(Reduction, UnrankedInput) {
  EXPECT_EQ(infer(Op::kReduceLogSumExp, {in("f32[*]"), constI64({0})}).type(), "f32[*]");
}

TEST_F(Reduction, AxisErrors) {
  EXPECT_EQ(infer(Op::kReduceSum, {in("f32[N,3,4]"), constI64({3})}).status.message(),
            "node 'n' (ReduceSum): axis 3 is out of range for rank 3");
  EXPECT_EQ(infer(Op::kReduceSum, {in("f32[N,3,4]"), constI64({1, -2})}).status.message(),
            "node 'n' (ReduceSum): axis -2 appears more than once in axes");
  EXPECT_EQ(infer(Op::kReduceMin, {in("f32[N,3]"), in("i32[1]")}).status.message(),
            "node 'n' (ReduceMin): axes must be i64, got i32");
}

TEST_F(Reduction, ArgMaxGivesI64) {
  EXPECT_EQ(infer(Op::kArgMax, {in("f32[N,3,4]")}, {{"axis", 1}, {"keepdims", 0}}).type(),
            "i64[N,4]");
  EXPECT_EQ(infer(Op::kArgMin, {in("f32[N,3,4]")}, {{"axis", -1}}).type(), "i64[N,3,1]");
  EXPECT_EQ(infer(Op::kArgMax, {in("f16[N,3]")}).type(), "i64[1,3]"); // axis defaults to 0
  EXPECT_EQ(infer(Op::kArgMax, {in("f16[*]")}).type(), "i64[*]");
  EXPECT_EQ(infer(Op::kArgMax, {in("f32[3]")}, {{"axis", 1}}).status.message(),
            "node 'n' (ArgMax): axis 1 is out of range for rank 1");
}

TEST_F(Reduction, SoftmaxFamilyKeepsType) {
  EXPECT_EQ(infer(Op::kSoftmax, {in("f32[N,10]")}).type(), "f32[N,10]");
  EXPECT_EQ(infer(Op::kLogSoftmax, {in("f16[N,S,S]")}, {{"axis", 1}}).type(), "f16[N,S,S]");
  EXPECT_EQ(infer(Op::kHardmax, {in("f32[N,10]")}, {{"axis", 2}}).status.message(),
            "node 'n' (Hardmax): axis 2 is out of range for rank 2");
  EXPECT_EQ(infer(Op::kSoftmax, {in("i64[3]")}).status.message(),
            "node 'n' (Softmax): input 0 has dtype i64, expected a float type");
}

TEST_F(Reduction, TopK) {
  auto r = infer(Op::kTopK, {in("f32[N,10]"), constI64({3}, {1})}, {}, {}, 2);
  ASSERT_TRUE(r.status.isOk()) << r.status.message();
  EXPECT_EQ(r.type(0), "f32[N,3]");
  EXPECT_EQ(r.type(1), "i64[N,3]");
  EXPECT_EQ(infer(Op::kTopK, {in("f32[N,10]"), in("i64[1]")}, {{"axis", 0}}, {}, 2).type(1),
            "i64[?,10]");
  // K computed from a shape keeps its symbol.
  EXPECT_EQ(infer(Op::kTopK, {in("f32[N,S]"), in("i64[1]")}, {}, {{1, dims({Dim::symbol("K")})}}, 2)
                .type(0),
            "f32[N,K]");
  EXPECT_EQ(infer(Op::kTopK, {in("f32[N,10]"), constI64({11}, {1})}, {}, {}, 2).status.message(),
            "node 'n' (TopK): K = 11 exceeds the size 10 of axis 1");
  EXPECT_EQ(infer(Op::kTopK, {in("f32[N,10]"), constI64({-1}, {1})}, {}, {}, 2).status.message(),
            "node 'n' (TopK): K must be >= 0, got -1");
  EXPECT_EQ(infer(Op::kTopK, {in("f32[N,10]"), in("i64[2]")}, {}, {}, 2).status.message(),
            "node 'n' (TopK): K must hold exactly one element, got shape [2]");
  EXPECT_EQ(infer(Op::kTopK, {in("f32[N,10]"), constI64({2}, {1})}).status.message(),
            "node 'n' (TopK): expects 2 outputs, got 1");
}

TEST_F(Reduction, CumSum) {
  EXPECT_EQ(infer(Op::kCumSum, {in("f32[N,3]"), constI64({1})}).type(), "f32[N,3]");
  EXPECT_EQ(infer(Op::kCumSum, {in("f32[N,3]"), in("i32[]")}).type(), "f32[N,3]");
  EXPECT_EQ(infer(Op::kCumSum, {in("f32[N,3]"), constI64({2})}).status.message(),
            "node 'n' (CumSum): axis 2 is out of range for rank 2");
}

TEST_F(Reduction, RowsFollowOnnx) {
  EXPECT_EQ(opDef(Op::kReduceSum).fusion, FusionKind::kReduction);
  EXPECT_EQ(opDef(Op::kReduceSum).maxInputs, 2);
  Node *n = node(Op::kReduceMean, {in("f32[2]")});
  EXPECT_EQ(n->getInt("keepdims"), 1);
  EXPECT_EQ(n->getInt("noop_with_empty_axes"), 0);
  Node *t = node(Op::kTopK, {in("f32[2]"), constI64({1})}, "t", 2);
  EXPECT_EQ(t->getInt("axis"), -1);
  EXPECT_EQ(t->getInt("largest"), 1);
  EXPECT_EQ(t->getInt("sorted"), 1);
  EXPECT_EQ(node(Op::kArgMax, {in("f32[2]")})->getInt("select_last_index"), 0);
  EXPECT_EQ(node(Op::kSoftmax, {in("f32[2]")})->getInt("axis"), -1);
}

} // namespace
} // namespace dlc::optest
