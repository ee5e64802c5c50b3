// Shape inference of RNNs, random generators, signal ops and NonMaxSuppression, and the
// table rows of every nn / misc op.
#include "ir/ops/nn_util.h"
#include "ops_infer_fixture.h"

namespace dlc::testing {
namespace {

using MiscTest = OpsInferTest;

TEST_F(MiscTest, LstmBidirectional) {
  Node *n = node(
      Op::kLSTM,
      {input("f32[T,N,10]"), weight(DType::kF32, {2, 80, 10}), weight(DType::kF32, {2, 80, 20})},
      3);
  n->setAttr("direction", Attribute("bidirectional"));
  n->setAttr("hidden_size", Attribute(20));
  EXPECT_EQ(infer(n), "f32[T,2,N,20]; f32[2,N,20]; f32[2,N,20]");
  n->setInput(0, input("f32[N,T,10]")); // layout 1: batch first
  n->setAttr("layout", Attribute(1));
  EXPECT_EQ(infer(n), "f32[N,T,2,20]; f32[N,2,20]; f32[N,2,20]");
}

TEST_F(MiscTest, GruAndRnnHiddenSizeFromWeights) {
  Node *gru = node(Op::kGRU, {input("f32[5,3,4]"), input("f32[1,?,4]"), input("f32[1,?,16]")}, 2);
  EXPECT_EQ(infer(gru), "f32[5,1,3,16]; f32[1,3,16]");
  Node *rnn =
      node(Op::kRNN, {input("f32[5,3,4]"), weight(DType::kF32, {1, 8, 4}), input("f32[1,8,?]")});
  EXPECT_EQ(infer(rnn), "f32[5,1,3,8]");
  Node *unranked = node(Op::kRNN, {input("f32[*]"), input("f32[*]"), input("f32[*]")}, 2);
  EXPECT_EQ(infer(unranked), "f32[?,1,?,?]; f32[1,?,?]");
}

TEST_F(MiscTest, RecurrentErrors) {
  Node *dir = node(Op::kRNN, {input("f32[5,3,4]"), input("f32[1,8,4]"), input("f32[1,8,8]")});
  dir->setAttr("direction", Attribute("both"));
  EXPECT_EQ(infer(dir), "error: node 'n' (RNN): invalid direction 'both'; expected forward, "
                        "reverse or bidirectional");
  Node *dirs = node(Op::kGRU, {input("f32[5,3,4]"), input("f32[1,24,4]"), input("f32[1,24,8]")});
  dirs->setAttr("direction", Attribute("bidirectional"));
  EXPECT_EQ(infer(dirs), "error: node 'n' (GRU): direction 'bidirectional' needs 2 directions "
                         "in W and R, got 1");
  Node *rows = node(Op::kLSTM, {input("f32[5,3,4]"), input("f32[1,24,4]"), input("f32[1,24,8]")});
  EXPECT_EQ(infer(rows), "error: node 'n' (LSTM): W has 24 rows, expected 4 * hidden_size (8)");
  Node *rank = node(Op::kLSTM, {input("f32[5,4]"), input("f32[1,32,4]"), input("f32[1,32,8]")});
  EXPECT_EQ(infer(rank), "error: node 'n' (LSTM): input X must have rank 3, got rank 2");
}

TEST_F(MiscTest, RandomGenerators) {
  Node *normal = node(Op::kRandomNormal, {});
  normal->setAttr("shape", ints({2, 3}));
  EXPECT_EQ(infer(normal), "f32[2,3]");
  Node *uniform = node(Op::kRandomUniform, {});
  uniform->setAttr("shape", ints({4}));
  uniform->setAttr("dtype", Attribute(DType::kF64));
  EXPECT_EQ(infer(uniform), "f64[4]");
  Node *noShape = node(Op::kRandomUniform, {});
  EXPECT_EQ(infer(noShape), "error: node 'n' (RandomUniform): missing required attribute 'shape'");
  EXPECT_EQ(infer(node(Op::kRandomNormalLike, {input("f16[N,3]")})), "f16[N,3]");
  Node *like = node(Op::kRandomUniformLike, {input("f16[N,3]")});
  like->setAttr("dtype", Attribute(DType::kF32));
  EXPECT_EQ(infer(like), "f32[N,3]");
  EXPECT_EQ(infer(node(Op::kBernoulli, {input("f64[*]")})), "f64[*]");
}

TEST_F(MiscTest, Multinomial) {
  Node *n = node(Op::kMultinomial, {input("f32[B,10]")});
  n->setAttr("sample_size", Attribute(5));
  EXPECT_EQ(infer(n), "i32[B,5]");
  n->setAttr("dtype", Attribute(DType::kF32));
  EXPECT_EQ(infer(n), "error: node 'n' (Multinomial): attribute 'dtype' must be i32 or i64, "
                      "got f32");
}

TEST_F(MiscTest, Windows) {
  EXPECT_EQ(infer(node(Op::kHannWindow, {i64Scalar(10)})), "f32[10]");
  Node *hamming = node(Op::kHammingWindow, {input("i64[]")});
  hamming->setAttr("output_datatype", Attribute(DType::kF64));
  EXPECT_EQ(infer(hamming, {{0, {Dim::symbol("L")}}}), "f64[L]");
  EXPECT_EQ(infer(node(Op::kBlackmanWindow, {input("i32[]")})), "f32[?]");
  EXPECT_EQ(infer(node(Op::kHannWindow, {i64Scalar(0)})),
            "error: node 'n' (HannWindow): input size must be positive, got 0");
}

TEST_F(MiscTest, Dft) {
  EXPECT_EQ(infer(node(Op::kDFT, {input("f32[B,16,1]")})), "f32[B,16,2]");
  Node *onesided = node(Op::kDFT, {input("f32[B,16,1]"), i64Scalar(20)});
  onesided->setAttr("onesided", Attribute(1));
  EXPECT_EQ(infer(onesided), "f32[B,11,2]");
  Node *axis0 = node(Op::kDFT, {input("f32[8,16,2]"), nullptr, i64Scalar(0)});
  EXPECT_EQ(infer(axis0), "f32[8,16,2]");
  Node *badAxis = node(Op::kDFT, {input("f32[8,16,2]"), nullptr, i64Scalar(-1)});
  EXPECT_EQ(infer(badAxis), "error: node 'n' (DFT): axis -1 is invalid for rank 3; expected "
                            "[-3, -2] or [0, 1]");
  Node *unknownAxis = node(Op::kDFT, {input("f32[8,16,1]"), nullptr, input("i64[]")});
  EXPECT_EQ(infer(unknownAxis), "f32[8,16,2]");
}

TEST_F(MiscTest, StftAndMelWeightMatrix) {
  // ONNX node tests stft and stft_with_window.
  Node *n = node(Op::kSTFT, {input("f32[1,128,1]"), i64Scalar(8), nullptr, i64Scalar(16)});
  EXPECT_EQ(infer(n), "f32[1,15,9,2]");
  Node *window = node(Op::kSTFT, {input("f32[1,128,1]"), i64Scalar(8), input("f32[16]")});
  window->setAttr("onesided", Attribute(0));
  EXPECT_EQ(infer(window), "f32[1,15,16,2]");
  Node *mel = node(Op::kMelWeightMatrix,
                   {i64Scalar(8), i64Scalar(16), i64Scalar(8192), f32s({0}), f32s({8192})});
  EXPECT_EQ(infer(mel), "f32[9,8]");
}

TEST_F(MiscTest, NonMaxSuppression) {
  Node *n = node(Op::kNonMaxSuppression, {input("f32[1,6,4]"), input("f32[1,1,6]"), i64Scalar(3)});
  EXPECT_EQ(infer(n), "i64[?,3]");
  Node *bad = node(Op::kNonMaxSuppression, {input("f32[1,6,5]"), input("f32[1,1,6]")});
  EXPECT_EQ(infer(bad), "error: node 'n' (NonMaxSuppression): input boxes must have 4 "
                        "coordinates per box, got 5");
}

// Every op of the nn and misc families has its own row with shape inference.
TEST(NnMiscOpTableTest, EveryOpHasARowWithInference) {
  const Op ops[] = {Op::kAveragePool,
                    Op::kBatchNormalization,
                    Op::kConv,
                    Op::kConvInteger,
                    Op::kConvTranspose,
                    Op::kDropout,
                    Op::kGlobalAveragePool,
                    Op::kGlobalLpPool,
                    Op::kGlobalMaxPool,
                    Op::kGroupNormalization,
                    Op::kInstanceNormalization,
                    Op::kLRN,
                    Op::kLayerNormalization,
                    Op::kLpNormalization,
                    Op::kLpPool,
                    Op::kMaxPool,
                    Op::kMaxRoiPool,
                    Op::kMaxUnpool,
                    Op::kMeanVarianceNormalization,
                    Op::kResize,
                    Op::kCol2Im,
                    Op::kGridSample,
                    Op::kRoiAlign,
                    Op::kNegativeLogLikelihoodLoss,
                    Op::kSoftmaxCrossEntropyLoss,
                    Op::kGRU,
                    Op::kLSTM,
                    Op::kRNN,
                    Op::kBernoulli,
                    Op::kMultinomial,
                    Op::kRandomNormal,
                    Op::kRandomNormalLike,
                    Op::kRandomUniform,
                    Op::kRandomUniformLike,
                    Op::kBlackmanWindow,
                    Op::kHammingWindow,
                    Op::kHannWindow,
                    Op::kDFT,
                    Op::kSTFT,
                    Op::kMelWeightMatrix,
                    Op::kNonMaxSuppression};
  EXPECT_EQ(std::size(ops), 41u);
  for (Op op : ops) {
    const OpDef &def = opDef(op);
    EXPECT_EQ(def.op, op) << opName(op);
    EXPECT_NE(def.infer, nullptr) << opName(op);
    EXPECT_GE(def.maxInputs, def.minInputs) << opName(op);
  }
  EXPECT_EQ(opDef(Op::kConv).fusion, FusionKind::kOutFusable);
  EXPECT_EQ(opDef(Op::kConvTranspose).fusion, FusionKind::kOutFusable);
  EXPECT_EQ(opDef(Op::kMaxPool).fusion, FusionKind::kOpaque);
}

TEST(NnMiscOpTableTest, SchemaDefaults) {
  const AttrSpec *eps = opDef(Op::kBatchNormalization).findAttr("epsilon");
  ASSERT_NE(eps, nullptr);
  EXPECT_EQ(eps->defaultValue->f(), 1e-5f);
  const AttrSpec *mode = opDef(Op::kResize).findAttr("nearest_mode");
  ASSERT_NE(mode, nullptr);
  EXPECT_EQ(mode->defaultValue->s(), "round_prefer_floor");
  const AttrSpec *dtype = opDef(Op::kRandomNormal).findAttr("dtype");
  ASSERT_NE(dtype, nullptr);
  EXPECT_EQ(dtype->kind, AttrKind::kDType);
  EXPECT_EQ(dtype->defaultValue->dtype(), DType::kF32);
  const AttrSpec *acts = opDef(Op::kRNN).findAttr("activations");
  ASSERT_NE(acts, nullptr);
  EXPECT_EQ(acts->defaultValue->strings(), (std::vector<std::string>{"Tanh", "Tanh"}));
  EXPECT_TRUE(opDef(Op::kMaxPool).findAttr("kernel_shape")->required);
}

} // namespace
} // namespace dlc::testing
