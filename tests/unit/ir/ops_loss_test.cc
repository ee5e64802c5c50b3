// Shape inference of NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
#include "ops_infer_fixture.h"

namespace dlc::testing {
namespace {

using LossTest = OpsInferTest;

TEST_F(LossTest, ReductionNoneKeepsTheTargetShape) {
  Node *n = node(Op::kNegativeLogLikelihoodLoss, {input("f32[N,5,H,W]"), input("i64[N,H,W]")});
  n->setAttr("reduction", Attribute("none"));
  EXPECT_EQ(infer(n), "f32[N,H,W]");
  // Each side fills in what the other leaves open; k = 0 gives [N].
  Node *fill = node(Op::kNegativeLogLikelihoodLoss, {input("f64[?,5,8]"), input("i32[4,?]")});
  fill->setAttr("reduction", Attribute("none"));
  EXPECT_EQ(infer(fill), "f64[4,8]");
  Node *nc = node(Op::kSoftmaxCrossEntropyLoss, {input("f16[3,5]"), input("i64[3]")});
  nc->setAttr("reduction", Attribute("none"));
  EXPECT_EQ(infer(nc), "f16[3]");
  Node *unranked = node(Op::kNegativeLogLikelihoodLoss, {input("f32[*]"), input("i64[N,7]")});
  unranked->setAttr("reduction", Attribute("none"));
  EXPECT_EQ(infer(unranked), "f32[N,7]");
}

TEST_F(LossTest, MeanAndSumGiveAScalar) {
  // reduction defaults to "mean".
  EXPECT_EQ(infer(node(Op::kNegativeLogLikelihoodLoss,
                       {input("f32[3,5,2]"), input("i64[3,2]"), input("f32[5]")})),
            "f32[]");
  Node *sum = node(Op::kSoftmaxCrossEntropyLoss, {input("bf16[*]"), input("i64[*]")});
  sum->setAttr("reduction", Attribute("sum"));
  EXPECT_EQ(infer(sum), "bf16[]");
  EXPECT_EQ(opDef(Op::kNegativeLogLikelihoodLoss).findAttr("reduction")->defaultValue->s(), "mean");
  EXPECT_FALSE(opDef(Op::kSoftmaxCrossEntropyLoss).findAttr("ignore_index")->defaultValue);
}

TEST_F(LossTest, SoftmaxCrossEntropyLogProbHasTheScoresType) {
  Node *n = node(Op::kSoftmaxCrossEntropyLoss, {input("f32[N,10,4]"), input("i64[N,4]")}, 2);
  EXPECT_EQ(infer(n), "f32[]; f32[N,10,4]");
  n->setAttr("reduction", Attribute("none"));
  EXPECT_EQ(infer(n), "f32[N,4]; f32[N,10,4]");
}

TEST_F(LossTest, TargetRankAndDims) {
  EXPECT_EQ(infer(node(Op::kNegativeLogLikelihoodLoss, {input("f32[3,5,2]"), input("i64[3]")})),
            "error: node 'n' (NegativeLogLikelihoodLoss): target must have rank 2 (the rank of "
            "input minus 1), got shape [3]");
  EXPECT_EQ(infer(node(Op::kSoftmaxCrossEntropyLoss, {input("f32[3,5]"), input("i64[3,5]")})),
            "error: node 'n' (SoftmaxCrossEntropyLoss): labels must have rank 1 (the rank of "
            "scores minus 1), got shape [3,5]");
  EXPECT_EQ(infer(node(Op::kNegativeLogLikelihoodLoss, {input("f32[3,5,2]"), input("i64[3,4]")})),
            "error: node 'n' (NegativeLogLikelihoodLoss): target dim 1 is 4 but input dim 2 is 2");
  EXPECT_EQ(infer(node(Op::kSoftmaxCrossEntropyLoss, {input("f32[2,5]"), input("i64[3]")})),
            "error: node 'n' (SoftmaxCrossEntropyLoss): labels dim 0 is 3 but scores dim 0 is 2");
  EXPECT_EQ(infer(node(Op::kNegativeLogLikelihoodLoss, {input("f32[5]"), input("i64[*]")})),
            "error: node 'n' (NegativeLogLikelihoodLoss): input must have rank >= 2 ([N, C, d1, "
            "..., dk]), got shape [5]");
}

TEST_F(LossTest, DTypes) {
  EXPECT_EQ(infer(node(Op::kNegativeLogLikelihoodLoss, {input("f32[3,5]"), input("f32[3]")})),
            "error: node 'n' (NegativeLogLikelihoodLoss): target must be i32 or i64, got f32");
  EXPECT_EQ(infer(node(Op::kSoftmaxCrossEntropyLoss, {input("i64[3,5]"), input("i64[3]")})),
            "error: node 'n' (SoftmaxCrossEntropyLoss): scores must be a float tensor, got i64");
  EXPECT_EQ(infer(node(Op::kSoftmaxCrossEntropyLoss,
                       {input("f32[3,5]"), input("i64[3]"), input("f64[5]")})),
            "error: node 'n' (SoftmaxCrossEntropyLoss): weights must have the dtype of scores "
            "(f32), got f64");
  EXPECT_EQ(infer(node(Op::kNegativeLogLikelihoodLoss,
                       {input("f32[3,5]"), input("i64[3]"), input("i64[5]")})),
            "error: node 'n' (NegativeLogLikelihoodLoss): weight must be a float tensor, got i64");
}

TEST_F(LossTest, WeightsHaveOneElementPerClass) {
  EXPECT_EQ(infer(node(Op::kNegativeLogLikelihoodLoss,
                       {input("f32[3,5,2]"), input("i64[3,2]"), input("f32[4]")})),
            "error: node 'n' (NegativeLogLikelihoodLoss): weight has 4 elements but input has 5 "
            "classes");
  EXPECT_EQ(infer(node(Op::kSoftmaxCrossEntropyLoss,
                       {input("f32[3,5]"), input("i64[3]"), input("f32[1,5]")})),
            "error: node 'n' (SoftmaxCrossEntropyLoss): weights must have rank 1, got rank 2");
  EXPECT_EQ(infer(node(Op::kSoftmaxCrossEntropyLoss,
                       {input("f32[3,C]"), input("i64[3]"), input("f32[5]")})),
            "f32[]");
}

TEST_F(LossTest, UnknownReduction) {
  Node *n = node(Op::kNegativeLogLikelihoodLoss, {input("f32[3,5]"), input("i64[3]")});
  n->setAttr("reduction", Attribute("avg"));
  EXPECT_EQ(infer(n), "error: node 'n' (NegativeLogLikelihoodLoss): attribute 'reduction' must "
                      "be 'none', 'sum' or 'mean', got 'avg'");
}

} // namespace
} // namespace dlc::testing
