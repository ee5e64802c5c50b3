// fold-batchnorm: the folded graph computes what the original computed (reference executor on
// random inputs), for each producer, weight layout and bias form; and what is left alone.
#include <gtest/gtest.h>

#include "numerics_util.h"
#include "pass_test_util.h"

namespace dlc {
namespace {

using testing::countOps;
using testing::expectSameResults;

class FoldBatchNormTest : public ::testing::Test {
protected:
  Graph g{"g"};
  std::mt19937_64 rng{7};

  Value *random(std::string name, std::vector<int64_t> shape, double lo = -1, double hi = 1) {
    Tensor t = randomTensor(DType::kF32, shape, rng).value();
    float *p = t.mutableData<float>();
    for (int64_t i = 0; i < t.numElements(); ++i)
      p[i] = static_cast<float>(lo + (hi - lo) * (p[i] + 1) / 2);
    return g.addConstant(std::move(name), t);
  }

  /// bn(x) with random parameters over `channels`; variances in [0.5, 2).
  Node *batchNorm(Value *x, int64_t channels, std::string name = "bn") {
    Node *bn = g.createNode(Op::kBatchNormalization,
                            {x, random(name + ".scale", {channels}),
                             random(name + ".bias", {channels}), random(name + ".mean", {channels}),
                             random(name + ".var", {channels}, 0.5, 2)},
                            1, name);
    bn->setAttr("epsilon", Attribute(1e-3f));
    return bn;
  }

  /// Infers shapes, folds a copy, checks it against the original; returns the copy.
  std::unique_ptr<Graph> foldAndCompare(std::ostream *log = nullptr) {
    EXPECT_TRUE(inferShapes(g).isOk());
    auto folded = testing::after(g, "fold-batchnorm", log);
    expectSameResults(g, *folded, 1e-5);
    return folded;
  }
};

TEST_F(FoldBatchNormTest, ConvWithGroupsAndNoBias) {
  Value *x = g.addInput("x", testing::f32({2, 4, 6, 6}));
  Node *conv = g.createNode(Op::kConv, {x, random("w", {6, 2, 3, 3})}, 1, "conv");
  conv->setAttr("group", Attribute(int64_t{2}));
  conv->setAttr("pads", Attribute(std::vector<int64_t>{1, 1, 1, 1}));
  g.addOutput("y", batchNorm(conv->output(0), 6)->output(0));
  std::ostringstream log;
  auto folded = foldAndCompare(&log);
  EXPECT_EQ(countOps(*folded, Op::kBatchNormalization), 0);
  ASSERT_EQ(folded->numNodes(), 1u);
  const Node *c = folded->nodes()[0];
  EXPECT_EQ(c->input(2)->shape(), Shape({6}));
  EXPECT_EQ(folded->outputs()[0].value->name(), "bn");
  EXPECT_NE(log.str().find("node 'bn' (BatchNormalization): folded into node 'conv' (Conv)"),
            std::string::npos)
      << log.str();
  // The old weight and the BN parameters are gone; only the folded ones remain.
  EXPECT_EQ(folded->constants().size(), 2u);
}

TEST_F(FoldBatchNormTest, ConvWithBias) {
  Value *x = g.addInput("x", testing::f32({1, 3, 5, 5}));
  Node *conv = g.createNode(Op::kConv, {x, random("w", {4, 3, 3, 3}), random("b", {4})}, 1, "conv");
  g.addOutput("y", batchNorm(conv->output(0), 4)->output(0));
  auto folded = foldAndCompare();
  EXPECT_EQ(countOps(*folded, Op::kBatchNormalization), 0);
}

// A weight of more than 2^20 elements is scaled on several threads: every output channel's
// row equals the weight's row times that channel's BN scale, rounded once, as the serial
// path computes it.
TEST_F(FoldBatchNormTest, BigWeightsScaleEachChannelOnce) {
  constexpr int64_t kOut = 256, kIn = 512, kK = 9; // 1.18M elements
  Value *x = g.addInput("x", testing::f32({1, kIn, 3, 3}));
  Value *w = random("w", {kOut, kIn, 3, 3});
  Node *conv = g.createNode(Op::kConv, {x, w}, 1, "conv");
  Node *bn = batchNorm(conv->output(0), kOut);
  g.addOutput("y", bn->output(0));
  ASSERT_TRUE(inferShapes(g).isOk());
  auto folded = testing::after(g, "fold-batchnorm");
  ASSERT_TRUE(folded);
  ASSERT_EQ(folded->numNodes(), 1u);
  const Tensor &got = folded->nodes()[0]->input(1)->constant();
  const auto param = [&](int i) { return bn->input(i)->constant().data<float>(); };
  const float *scale = param(1), *var = param(4), *src = w->constant().data<float>();
  for (int64_t o = 0; o < kOut; ++o) {
    const double s = scale[o] / std::sqrt(static_cast<double>(var[o]) + 1e-3);
    for (int64_t i = 0; i < kIn * kK; i += 97) {
      const int64_t at = o * kIn * kK + i;
      ASSERT_NEAR(got.data<float>()[at], src[at] * s, 1e-6 * std::abs(src[at] * s) + 1e-12)
          << "channel " << o << ", element " << i;
    }
  }
}

TEST_F(FoldBatchNormTest, ConvTransposeWithGroupsUsesItsWeightLayout) {
  // W is [C_in, C_out/group, k, k]: scaling its first axis instead would be wrong.
  Value *x = g.addInput("x", testing::f32({1, 4, 3, 3}));
  Node *ct =
      g.createNode(Op::kConvTranspose, {x, random("w", {4, 3, 2, 2}), random("b", {6})}, 1, "ct");
  ct->setAttr("group", Attribute(int64_t{2}));
  ct->setAttr("strides", Attribute(std::vector<int64_t>{2, 2}));
  g.addOutput("y", batchNorm(ct->output(0), 6)->output(0));
  auto folded = foldAndCompare();
  EXPECT_EQ(countOps(*folded, Op::kBatchNormalization), 0);
}

struct GemmCase {
  bool transB;
  std::vector<int64_t> c; // empty: no C
  float alpha, beta;
};

class FoldGemmTest : public FoldBatchNormTest, public ::testing::WithParamInterface<GemmCase> {};

TEST_P(FoldGemmTest, FoldsIntoBAndC) {
  const GemmCase &k = GetParam();
  Value *a = g.addInput("a", testing::f32({3, 4}));
  std::vector<Value *> ins{
      a, random("b", k.transB ? std::vector<int64_t>{5, 4} : std::vector<int64_t>{4, 5})};
  if (!k.c.empty())
    ins.push_back(random("c", k.c));
  Node *gemm = g.createNode(Op::kGemm, ins, 1, "gemm");
  gemm->setAttr("transB", Attribute(int64_t{k.transB}));
  gemm->setAttr("alpha", Attribute(k.alpha));
  gemm->setAttr("beta", Attribute(k.beta));
  g.addOutput("y", batchNorm(gemm->output(0), 5)->output(0));
  auto folded = foldAndCompare();
  EXPECT_EQ(countOps(*folded, Op::kBatchNormalization), 0);
  EXPECT_EQ(folded->nodes()[0]->getFloat("beta"), 1.0f);
  EXPECT_EQ(folded->nodes()[0]->input(2)->shape().rank(), k.c.size() == 2 && k.c[0] != 1 ? 2 : 1);
}

INSTANTIATE_TEST_SUITE_P(
    BiasForms, FoldGemmTest,
    ::testing::Values(GemmCase{false, {}, 1.0f, 1.0f}, GemmCase{true, {5}, 0.5f, 2.0f},
                      GemmCase{true, {3, 5}, 1.0f, -1.0f}, GemmCase{false, {3, 1}, 2.0f, 0.5f},
                      GemmCase{false, {1, 5}, 1.0f, 1.0f}, GemmCase{true, {}, 1.0f, 0.0f}));

TEST_F(FoldBatchNormTest, StandaloneBatchNormBecomesMulAdd) {
  Value *x = g.addInput("x", testing::f32({2, 3, 4, 4}));
  g.addOutput("y", batchNorm(x, 3)->output(0));
  std::ostringstream log;
  auto folded = foldAndCompare(&log);
  EXPECT_EQ(countOps(*folded, Op::kBatchNormalization), 0);
  ASSERT_EQ(folded->numNodes(), 2u);
  const Node *mul = folded->nodes()[0], *add = folded->nodes()[1];
  EXPECT_EQ(mul->op(), Op::kMul);
  EXPECT_EQ(add->op(), Op::kAdd);
  EXPECT_EQ(mul->input(1)->shape(), Shape({3, 1, 1}));
  EXPECT_EQ(add->input(1)->shape(), Shape({3, 1, 1}));
  EXPECT_EQ(add->output(0)->name(), "bn");
  EXPECT_NE(log.str().find("not folded into its producer: its input is not produced by a node; "
                           "rewritten as mul + add"),
            std::string::npos)
      << log.str();
}

TEST_F(FoldBatchNormTest, ConvUsedTwiceKeepsItsWeightsAndTheBnBecomesMulAdd) {
  Value *x = g.addInput("x", testing::f32({1, 2, 4, 4}));
  Node *conv = g.createNode(Op::kConv, {x, random("w", {3, 2, 1, 1})}, 1, "conv");
  g.addOutput("y", batchNorm(conv->output(0), 3)->output(0));
  g.addOutput("raw", conv->output(0));
  std::ostringstream log;
  auto folded = foldAndCompare(&log);
  EXPECT_EQ(countOps(*folded, Op::kMul), 1);
  EXPECT_EQ(countOps(*folded, Op::kAdd), 1);
  EXPECT_EQ(folded->nodes()[0]->numInputs(), 2); // no bias added to the conv
  EXPECT_NE(log.str().find("%conv has 2 uses"), std::string::npos) << log.str();
}

TEST_F(FoldBatchNormTest, RankTwoBatchNormBroadcastsOverChannels) {
  Value *x = g.addInput("x", testing::f32({4, 3}));
  g.addOutput("y", batchNorm(x, 3)->output(0));
  auto folded = foldAndCompare();
  EXPECT_EQ(folded->nodes()[0]->input(1)->shape(), Shape({3}));
}

TEST_F(FoldBatchNormTest, NonConstantParametersOrTrainingModeAreLeftAlone) {
  Value *x = g.addInput("x", testing::f32({1, 2, 3}));
  Value *scale = g.addInput("scale", testing::f32({2}));
  Node *bn = g.createNode(Op::kBatchNormalization,
                          {x, scale, random("b", {2}), random("m", {2}), random("v", {2}, 0.5, 1)},
                          1, "dyn");
  Node *train = batchNorm(bn->output(0), 2, "train");
  train->setAttr("training_mode", Attribute(int64_t{1}));
  g.addOutput("y", train->output(0));
  ASSERT_TRUE(inferShapes(g).isOk());
  std::ostringstream log;
  Expected<bool> changed = testing::runPass(g, "fold-batchnorm", {}, &log);
  ASSERT_TRUE(changed) << changed.status().message();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(countOps(g, Op::kBatchNormalization), 2);
  EXPECT_EQ(log.str(), "[fold-batchnorm] node 'dyn' (BatchNormalization): not folded: scale is "
                       "not a constant\n"
                       "[fold-batchnorm] node 'train' (BatchNormalization): not folded: "
                       "training_mode is not 0\n");
}

} // namespace
} // namespace dlc
