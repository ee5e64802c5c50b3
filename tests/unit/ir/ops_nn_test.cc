// Shape inference of normalisations, Dropout, Resize, GridSample and Col2Im.
#include "ops_infer_fixture.h"

namespace dlc::testing {
namespace {

using NnTest = OpsInferTest;

TEST_F(NnTest, BatchNormalization) {
  Value *x = input("f32[N,3,H,W]");
  Value *c = weight(DType::kF32, {3});
  EXPECT_EQ(infer(node(Op::kBatchNormalization, {x, c, c, c, c})), "f32[N,3,H,W]");
  Value *c4 = weight(DType::kF32, {4});
  Node *training = node(Op::kBatchNormalization,
                        {input("f16[N,C,8]"), input("f16[4]"), input("f16[4]"), c4, c4}, 3);
  training->setAttr("training_mode", Attribute(1));
  EXPECT_EQ(infer(training), "f16[N,C,8]; f32[4]; f32[4]");
  Node *bad = node(Op::kBatchNormalization, {x, weight(DType::kF32, {4}), c, c, c});
  EXPECT_EQ(infer(bad), "error: node 'n' (BatchNormalization): scale has 4 elements but the "
                        "input has 3 channels");
}

TEST_F(NnTest, InstanceAndGroupNormalization) {
  Value *c6 = weight(DType::kF32, {6});
  EXPECT_EQ(infer(node(Op::kInstanceNormalization, {input("f32[N,6,H,W]"), c6, c6})),
            "f32[N,6,H,W]");
  Node *gn = node(Op::kGroupNormalization, {input("f32[N,6,H,W]"), c6, c6});
  gn->setAttr("num_groups", Attribute(3));
  EXPECT_EQ(infer(gn), "f32[N,6,H,W]");
  gn->setAttr("num_groups", Attribute(4));
  EXPECT_EQ(infer(gn), "error: node 'n' (GroupNormalization): channels (6) must be divisible by "
                       "num_groups (4)");
  Node *missing = node(Op::kGroupNormalization, {input("f32[N,6,H,W]"), c6, c6});
  EXPECT_EQ(infer(missing),
            "error: node 'n' (GroupNormalization): missing required attribute 'num_groups'");
}

TEST_F(NnTest, LayerNormalizationOutputs) {
  Node *n =
      node(Op::kLayerNormalization,
           {input("f16[N,T,512]"), weight(DType::kF32, {512}), weight(DType::kF32, {512})}, 3);
  EXPECT_EQ(infer(n), "f16[N,T,512]; f32[N,T,1]; f32[N,T,1]");
  n->setAttr("axis", Attribute(1));
  n->setAttr("stash_type", Attribute(16));
  EXPECT_EQ(infer(n), "f16[N,T,512]; bf16[N,1,1]; bf16[N,1,1]");
  n->setAttr("axis", Attribute(3));
  EXPECT_EQ(infer(n),
            "error: node 'n' (LayerNormalization): attribute 'axis' 3 is out of range for rank 3");
  Node *one = node(Op::kLayerNormalization, {input("f32[*]"), weight(DType::kF32, {8})});
  EXPECT_EQ(infer(one), "f32[*]");
}

TEST_F(NnTest, SameShapeNormalisations) {
  Node *lrn = node(Op::kLRN, {input("f32[N,8,H,W]")});
  lrn->setAttr("size", Attribute(3));
  EXPECT_EQ(infer(lrn), "f32[N,8,H,W]");
  EXPECT_EQ(infer(node(Op::kLpNormalization, {input("f32[2,5]")})), "f32[2,5]");
  EXPECT_EQ(infer(node(Op::kMeanVarianceNormalization, {input("f32[1,3,4,4]")})), "f32[1,3,4,4]");
  Node *p3 = node(Op::kLpNormalization, {input("f32[2,5]")});
  p3->setAttr("p", Attribute(3));
  EXPECT_EQ(infer(p3), "error: node 'n' (LpNormalization): attribute 'p' must be 1 or 2, got 3");
}

TEST_F(NnTest, Dropout) {
  EXPECT_EQ(infer(node(Op::kDropout, {input("f32[N,10]")}, 2)), "f32[N,10]; bool[N,10]");
  Node *bad = node(Op::kDropout, {input("f32[N,10]"), f32s({0.5f})});
  EXPECT_EQ(infer(bad), "error: node 'n' (Dropout): input ratio must have rank 0, got rank 1");
  EXPECT_EQ(opDef(Op::kDropout).fusion, FusionKind::kElementwise);
}

TEST_F(NnTest, ResizeWithScales) {
  Node *n = node(Op::kResize, {input("f32[N,3,20,30]"), nullptr, f32s({1, 1, 2, 0.5f})});
  EXPECT_EQ(infer(n), "f32[N,3,40,15]");
  Node *floor = node(Op::kResize, {input("f32[1,1,5,H]"), nullptr, f32s({1, 1, 0.6f, 2})});
  EXPECT_EQ(infer(floor), "f32[1,1,3,?]");
  Node *axes = node(Op::kResize, {input("f32[N,3,20,30]"), nullptr, f32s({3, 3})});
  axes->setAttr("axes", ints({-2, -1}));
  EXPECT_EQ(infer(axes), "f32[N,3,60,90]");
}

TEST_F(NnTest, AShapeTooLargeToCountIsRefusedWhereItIsInferred) {
  // A 121-byte model: Resize by 1e12 used to infer f32[1,3,7999999967232,7999999967232] and
  // make `dlc run` grow to gigabytes before failing.
  Node *n = node(Op::kResize, {input("f32[1,3,8,8]"), nullptr, f32s({1, 1, 1e12f, 1e12f})});
  EXPECT_EQ(infer(n), "error: node 'n' (Resize): output 0 would have shape "
                      "[1,3,7999999967232,7999999967232], more elements than int64 holds");
}

TEST_F(NnTest, ResizeWithSizes) {
  Node *n = node(Op::kResize, {input("f32[N,3,20,30]"), nullptr, nullptr, i64s({1, 3, 64, 48})});
  EXPECT_EQ(infer(n), "f32[1,3,64,48]");
  // An empty scales tensor means "not given".
  Node *empty = node(Op::kResize, {input("f32[N,3,20,30]"), nullptr, f32s({}), i64s({8, 8})});
  empty->setAttr("axes", ints({2, 3}));
  EXPECT_EQ(infer(empty), "f32[N,3,8,8]");
  // Sizes known only symbolically (e.g. from Shape of another tensor).
  Node *sym = node(Op::kResize, {input("f32[N,3,20,30]"), nullptr, nullptr, input("i64[2]")});
  sym->setAttr("axes", ints({2, 3}));
  EXPECT_EQ(infer(sym, {{3, {Dim::symbol("H"), Dim::symbol("W")}}}), "f32[N,3,H,W]");
  EXPECT_EQ(infer(sym), "f32[N,3,?,?]");
}

TEST_F(NnTest, ResizeKeepAspectRatio) {
  Node *n = node(Op::kResize, {input("f32[1,3,20,40]"), nullptr, nullptr, i64s({10, 10})});
  n->setAttr("axes", ints({2, 3}));
  n->setAttr("keep_aspect_ratio_policy", Attribute("not_larger"));
  EXPECT_EQ(infer(n), "f32[1,3,5,10]");
  n->setAttr("keep_aspect_ratio_policy", Attribute("not_smaller"));
  EXPECT_EQ(infer(n), "f32[1,3,10,20]");
}

TEST_F(NnTest, ResizeErrors) {
  Node *both =
      node(Op::kResize, {input("f32[1,3,4,4]"), nullptr, f32s({1, 1, 2, 2}), i64s({1, 3, 8, 8})});
  EXPECT_EQ(infer(both), "error: node 'n' (Resize): only one of 'scales' and 'sizes' may be given");
  Node *neither = node(Op::kResize, {input("f32[1,3,4,4]")});
  EXPECT_EQ(infer(neither), "error: node 'n' (Resize): one of 'scales' and 'sizes' must be given");
  Node *count = node(Op::kResize, {input("f32[1,3,4,4]"), nullptr, f32s({2, 2})});
  EXPECT_EQ(infer(count), "error: node 'n' (Resize): input 'scales' has 2 values, expected 4");
}

TEST_F(NnTest, GridSample) {
  EXPECT_EQ(infer(node(Op::kGridSample, {input("f32[N,C,32,32]"), input("f32[N,7,9,2]")})),
            "f32[N,C,7,9]");
  EXPECT_EQ(infer(node(Op::kGridSample, {input("f32[2,4,8,8,8]"), input("f32[2,3,5,7,3]")})),
            "f32[2,4,3,5,7]");
  EXPECT_EQ(infer(node(Op::kGridSample, {input("f32[2,4,8,8]"), input("f32[2,3,5,3]")})),
            "error: node 'n' (GridSample): the last dim of grid must be 2 (the number of "
            "spatial axes), got 3");
}

TEST_F(NnTest, Col2Im) {
  // ONNX node test col2im.
  Node *n = node(Op::kCol2Im, {input("f32[1,5,5]"), i64s({5, 5}), i64s({1, 5})});
  EXPECT_EQ(infer(n), "f32[1,1,5,5]");
  Node *strided = node(Op::kCol2Im, {input("f32[N,18,4]"), i64s({5, 5}), i64s({3, 3})});
  strided->setAttr("strides", ints({2, 2}));
  EXPECT_EQ(infer(strided), "f32[N,2,5,5]");
  Node *bad = node(Op::kCol2Im, {input("f32[1,5,4]"), i64s({5, 5}), i64s({1, 5})});
  EXPECT_EQ(infer(bad), "error: node 'n' (Col2Im): input has 4 blocks but image_shape, "
                        "block_shape, pads, strides and dilations give 5");
}

} // namespace
} // namespace dlc::testing
