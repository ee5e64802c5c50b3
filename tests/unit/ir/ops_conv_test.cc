// Shape inference of Conv, ConvInteger, ConvTranspose and the shared window geometry.
#include "ir/ops/conv_util.h"
#include "ops_infer_fixture.h"

namespace dlc::testing {
namespace {

using ConvTest = OpsInferTest;

TEST_F(ConvTest, StridedPaddedConvKeepsSymbolicBatch) {
  Node *n = node(Op::kConv, {input("f32[N,3,224,224]"), weight(DType::kF32, {64, 3, 7, 7})});
  n->setAttr("strides", ints({2, 2}));
  n->setAttr("pads", ints({3, 3, 3, 3}));
  EXPECT_EQ(infer(n), "f32[N,64,112,112]");
}

TEST_F(ConvTest, BiasAndAsymmetricPads) {
  Node *n = node(Op::kConv, {input("f32[2,3,10,9]"), weight(DType::kF32, {5, 3, 3, 2}),
                             weight(DType::kF32, {5})});
  n->setAttr("pads", ints({0, 1, 2, 0})); // h: 10 + 0 + 2, w: 9 + 1 + 0
  EXPECT_EQ(infer(n), "f32[2,5,10,9]");
}

TEST_F(ConvTest, Dilations) {
  Node *n = node(Op::kConv, {input("f32[1,1,32,32]"), weight(DType::kF32, {4, 1, 3, 3})});
  n->setAttr("dilations", ints({2, 3})); // effective kernel 5 x 7
  EXPECT_EQ(infer(n), "f32[1,4,28,26]");
}

TEST_F(ConvTest, AutoPadSameUpperIsCeilOfInputOverStride) {
  Node *n = node(Op::kConv, {input("f32[1,3,7,8]"), weight(DType::kF32, {4, 3, 3, 3})});
  n->setAttr("auto_pad", Attribute("SAME_UPPER"));
  n->setAttr("strides", ints({2, 2}));
  EXPECT_EQ(infer(n), "f32[1,4,4,4]");
}

TEST_F(ConvTest, SamePaddingWithStrideOneKeepsSymbolicSpatialDims) {
  Node *n = node(Op::kConv, {input("f32[N,3,H,W]"), weight(DType::kF32, {16, 3, 3, 3})});
  n->setAttr("auto_pad", Attribute("SAME_LOWER"));
  EXPECT_EQ(infer(n), "f32[N,16,H,W]");
  Node *explicitPads = node(Op::kConv, {input("f32[N,3,H,W]"), weight(DType::kF32, {16, 3, 3, 3})});
  explicitPads->setAttr("pads", ints({1, 1, 1, 1}));
  EXPECT_EQ(infer(explicitPads), "f32[N,16,H,W]");
}

TEST_F(ConvTest, UnknownSpatialDimsStayUnknown) {
  Node *n = node(Op::kConv, {input("f32[N,3,?,W]"), weight(DType::kF32, {8, 3, 3, 3})});
  n->setAttr("strides", ints({2, 2}));
  EXPECT_EQ(infer(n), "f32[N,8,?,?]");
}

TEST_F(ConvTest, KernelFromAttributeWhenWeightIsNotConstant) {
  Node *n = node(Op::kConv, {input("f32[1,3,9,9]"), input("f32[8,3,?,?]")});
  n->setAttr("kernel_shape", ints({3, 3}));
  EXPECT_EQ(infer(n), "f32[1,8,7,7]");
  Node *noKernel = node(Op::kConv, {input("f32[1,3,9,9]"), input("f32[8,3,?,?]")});
  EXPECT_EQ(infer(noKernel), "f32[1,8,?,?]");
}

TEST_F(ConvTest, UnrankedInputGivesUnrankedOutput) {
  Node *n = node(Op::kConv, {input("f32[*]"), weight(DType::kF32, {8, 3, 3, 3})});
  EXPECT_EQ(infer(n), "f32[*]");
}

TEST_F(ConvTest, OneAndThreeSpatialDims) {
  Node *c1 = node(Op::kConv, {input("f32[N,4,100]"), weight(DType::kF32, {8, 4, 5})});
  c1->setAttr("strides", ints({5}));
  EXPECT_EQ(infer(c1), "f32[N,8,20]");
  Node *c3 = node(Op::kConv, {input("f32[1,2,8,16,16]"), weight(DType::kF32, {4, 2, 3, 3, 3})});
  c3->setAttr("pads", ints({1, 1, 1, 1, 1, 1}));
  c3->setAttr("strides", ints({1, 2, 2}));
  EXPECT_EQ(infer(c3), "f32[1,4,8,8,8]");
}

TEST_F(ConvTest, DepthwiseConv) {
  Node *n = node(Op::kConv, {input("f32[N,32,56,56]"), weight(DType::kF32, {32, 1, 3, 3})});
  n->setAttr("group", Attribute(32));
  n->setAttr("pads", ints({1, 1, 1, 1}));
  n->setAttr("strides", ints({2, 2}));
  EXPECT_EQ(infer(n), "f32[N,32,28,28]");
}

TEST_F(ConvTest, GroupedConv) {
  Node *n = node(Op::kConv, {input("f32[1,4,5,5]"), weight(DType::kF32, {6, 2, 3, 3})});
  n->setAttr("group", Attribute(2));
  EXPECT_EQ(infer(n), "f32[1,6,3,3]");
}

TEST_F(ConvTest, ChannelMismatchIsAnError) {
  Node *n = node(Op::kConv, {input("f32[1,3,8,8]"), weight(DType::kF32, {4, 2, 3, 3})});
  EXPECT_EQ(
      infer(n),
      "error: node 'n' (Conv): input channels (3) must equal weight channels (2) * group (1)");
  Node *grouped = node(Op::kConv, {input("f32[1,8,8,8]"), weight(DType::kF32, {6, 2, 3, 3})});
  grouped->setAttr("group", Attribute(4));
  EXPECT_EQ(infer(grouped),
            "error: node 'n' (Conv): output channels (6) must be divisible by group (4)");
}

TEST_F(ConvTest, InvalidAutoPadIsAnError) {
  Node *n = node(Op::kConv, {input("f32[1,3,8,8]"), weight(DType::kF32, {4, 3, 3, 3})});
  n->setAttr("auto_pad", Attribute("SAME"));
  EXPECT_EQ(infer(n), "error: node 'n' (Conv): invalid auto_pad 'SAME'; expected NOTSET, "
                      "SAME_UPPER, SAME_LOWER or VALID");
}

TEST_F(ConvTest, OtherContradictionsAreErrors) {
  Node *big = node(Op::kConv, {input("f32[1,1,2,2]"), weight(DType::kF32, {1, 1, 3, 3})});
  EXPECT_EQ(infer(big), "error: node 'n' (Conv): kernel extent 3 on spatial axis 0 exceeds the "
                        "padded input size 2");
  Node *rank = node(Op::kConv, {input("f32[1,1,8,8]"), weight(DType::kF32, {1, 1, 3})});
  EXPECT_EQ(infer(rank),
            "error: node 'n' (Conv): weight W must have rank 4 like input X, got rank 3");
  Node *kernel = node(Op::kConv, {input("f32[1,1,8,8]"), weight(DType::kF32, {1, 1, 3, 3})});
  kernel->setAttr("kernel_shape", ints({5, 5}));
  EXPECT_EQ(infer(kernel), "error: node 'n' (Conv): attribute 'kernel_shape' [5,5] does not "
                           "match the weight's spatial dims [3,3]");
  Node *pads = node(Op::kConv, {input("f32[1,1,8,8]"), weight(DType::kF32, {1, 1, 3, 3})});
  pads->setAttr("pads", ints({1, 1}));
  EXPECT_EQ(infer(pads), "error: node 'n' (Conv): attribute 'pads' has 2 values, expected 4");
  Node *stride = node(Op::kConv, {input("f32[1,1,8,8]"), weight(DType::kF32, {1, 1, 3, 3})});
  stride->setAttr("strides", ints({1, 0}));
  EXPECT_EQ(infer(stride),
            "error: node 'n' (Conv): attribute 'strides' must be positive, got [1,0]");
  Node *bias = node(Op::kConv, {input("f32[1,1,8,8]"), weight(DType::kF32, {2, 1, 3, 3}),
                                weight(DType::kF32, {3})});
  EXPECT_EQ(infer(bias),
            "error: node 'n' (Conv): bias B has 3 elements but there are 2 output channels");
}

TEST_F(ConvTest, ValidAutoPadIgnoresPads) {
  Node *n = node(Op::kConv, {input("f32[1,1,8,8]"), weight(DType::kF32, {1, 1, 3, 3})});
  n->setAttr("auto_pad", Attribute("VALID"));
  n->setAttr("pads", ints({1, 1, 1, 1}));
  EXPECT_EQ(infer(n), "f32[1,1,6,6]");
}

TEST_F(ConvTest, ConvIntegerProducesI32) {
  Node *n = node(Op::kConvInteger, {input("u8[1,1,3,3]"), weight(DType::kU8, {1, 1, 2, 2}),
                                    g.addConstant("zp", Tensor::zeros(DType::kU8, {}))});
  EXPECT_EQ(infer(n), "i32[1,1,2,2]");
}

TEST(WindowGeometryTest, SamePadsSplitDependsOnUpperOrLower) {
  ops::WindowGeometry g{.kernel = {3}, .strides = {2}, .dilations = {1}, .pads = {0, 0}};
  g.autoPad = ops::AutoPad::kSameUpper;
  EXPECT_EQ(g.resolvePads(0, 8), std::make_pair(int64_t{0}, int64_t{1}));
  EXPECT_EQ(g.resolvePads(0, 7), std::make_pair(int64_t{1}, int64_t{1}));
  g.autoPad = ops::AutoPad::kSameLower;
  EXPECT_EQ(g.resolvePads(0, 8), std::make_pair(int64_t{1}, int64_t{0}));
}

// --- ConvTranspose (cases from the ONNX node tests) ------------------------------------------

TEST_F(ConvTest, ConvTransposeBasic) {
  Node *n = node(Op::kConvTranspose, {input("f32[N,1,3,3]"), weight(DType::kF32, {1, 2, 3, 3})});
  EXPECT_EQ(infer(n), "f32[N,2,5,5]");
}

TEST_F(ConvTest, ConvTransposeOutputPadding) {
  Node *n = node(Op::kConvTranspose, {input("f32[1,1,3,3]"), weight(DType::kF32, {1, 2, 3, 3})});
  n->setAttr("strides", ints({3, 2}));
  n->setAttr("output_padding", ints({1, 1}));
  EXPECT_EQ(infer(n), "f32[1,2,10,8]");
}

TEST_F(ConvTest, ConvTransposeOutputShape) {
  Node *n = node(Op::kConvTranspose, {input("f32[1,1,3,3]"), weight(DType::kF32, {1, 2, 3, 3})});
  n->setAttr("strides", ints({3, 2}));
  n->setAttr("output_shape", ints({10, 8}));
  EXPECT_EQ(infer(n), "f32[1,2,10,8]");
}

TEST_F(ConvTest, ConvTransposePadsDilationsGroupAndSame) {
  Node *pads = node(Op::kConvTranspose, {input("f32[1,1,3,3]"), weight(DType::kF32, {1, 2, 3, 3})});
  pads->setAttr("strides", ints({3, 2}));
  pads->setAttr("pads", ints({1, 2, 1, 2}));
  EXPECT_EQ(infer(pads), "f32[1,2,7,3]");
  Node *dil = node(Op::kConvTranspose, {input("f32[1,1,3,3]"), weight(DType::kF32, {1, 1, 2, 2})});
  dil->setAttr("dilations", ints({2, 2}));
  EXPECT_EQ(infer(dil), "f32[1,1,5,5]");
  Node *grp = node(Op::kConvTranspose, {input("f32[1,4,5,5]"), weight(DType::kF32, {4, 3, 3, 3})});
  grp->setAttr("group", Attribute(2));
  EXPECT_EQ(infer(grp), "f32[1,6,7,7]");
  Node *same = node(Op::kConvTranspose, {input("f32[1,1,3,H]"), weight(DType::kF32, {1, 1, 3, 3})});
  same->setAttr("auto_pad", Attribute("SAME_UPPER"));
  same->setAttr("strides", ints({2, 1}));
  EXPECT_EQ(infer(same), "f32[1,1,6,H]");
}

TEST_F(ConvTest, ConvTransposeChannelMismatch) {
  Node *n = node(Op::kConvTranspose, {input("f32[1,3,3,3]"), weight(DType::kF32, {2, 2, 3, 3})});
  EXPECT_EQ(infer(n),
            "error: node 'n' (ConvTranspose): input channels (3) must equal weight dim 0 (2)");
}

} // namespace
} // namespace dlc::testing
