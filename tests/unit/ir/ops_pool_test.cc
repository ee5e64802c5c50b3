// Shape inference of pooling ops (windowed, global, unpool, RoI).
#include "ops_infer_fixture.h"

namespace dlc::testing {
namespace {

using PoolTest = OpsInferTest;

TEST_F(PoolTest, MaxPoolCeilMode) {
  // ONNX node test maxpool_2d_ceil.
  Node *n = node(Op::kMaxPool, {input("f32[1,1,4,4]")});
  n->setAttr("kernel_shape", ints({3, 3}));
  n->setAttr("strides", ints({2, 2}));
  n->setAttr("ceil_mode", Attribute(1));
  EXPECT_EQ(infer(n), "f32[1,1,2,2]");
  n->setAttr("ceil_mode", Attribute(0));
  EXPECT_EQ(infer(n), "f32[1,1,1,1]");
}

TEST_F(PoolTest, AveragePoolPadsAsLargeAsTheKernelAreRefused) {
  // A window wholly in the padding pools nothing (AveragePool returned NaN); ONNX requires
  // pads smaller than the kernel. The dilated kernel is what counts.
  Node *n = node(Op::kAveragePool, {input("f32[1,1,4,4]")});
  n->setAttr("kernel_shape", ints({2, 2}));
  n->setAttr("pads", ints({0, 2, 0, 0}));
  EXPECT_EQ(infer(n), "error: node 'n' (AveragePool): pads [0,2,0,0] must be smaller than the "
                      "kernel (2 along axis 3): a window could lie wholly in the padding");
  Node *dilated = node(Op::kAveragePool, {input("f32[1,1,8,8]")});
  dilated->setAttr("kernel_shape", ints({2, 2}));
  dilated->setAttr("dilations", ints({2, 2}));
  dilated->setAttr("pads", ints({2, 2, 2, 2}));
  EXPECT_EQ(infer(dilated), "f32[1,1,10,10]");
  // MaxPool defines a window in the padding (-inf) and keeps it.
  Node *max = node(Op::kMaxPool, {input("f32[1,1,4,4]")});
  max->setAttr("kernel_shape", ints({2, 2}));
  max->setAttr("pads", ints({0, 2, 0, 0}));
  EXPECT_EQ(infer(max), "f32[1,1,3,5]");
}

TEST_F(PoolTest, CeilModeDropsWindowsStartingInRightPadding) {
  // ONNX node test maxpool_2d_ceil_output_size_reduce_by_one.
  Node *n = node(Op::kMaxPool, {input("f32[1,1,2,2]")});
  n->setAttr("kernel_shape", ints({1, 1}));
  n->setAttr("strides", ints({2, 2}));
  n->setAttr("ceil_mode", Attribute(1));
  EXPECT_EQ(infer(n), "f32[1,1,1,1]");
  // With left padding the last window may start inside it: 3 + 1 + 1 padded, kernel 2.
  Node *padded = node(Op::kAveragePool, {input("f32[1,1,3,3]")});
  padded->setAttr("kernel_shape", ints({2, 2}));
  padded->setAttr("strides", ints({2, 2}));
  padded->setAttr("pads", ints({1, 1, 1, 1}));
  padded->setAttr("ceil_mode", Attribute(1));
  EXPECT_EQ(infer(padded), "f32[1,1,2,2]");
}

TEST_F(PoolTest, MaxPoolIndicesAreI64) {
  Node *n = node(Op::kMaxPool, {input("f16[N,8,9,9]")}, 2);
  n->setAttr("kernel_shape", ints({3, 3}));
  n->setAttr("strides", ints({3, 3}));
  EXPECT_EQ(infer(n), "f16[N,8,3,3]; i64[N,8,3,3]");
}

TEST_F(PoolTest, DilatedAndSamePools) {
  // ONNX node test maxpool_2d_dilations.
  Node *dil = node(Op::kMaxPool, {input("f32[1,1,4,4]")});
  dil->setAttr("kernel_shape", ints({2, 2}));
  dil->setAttr("dilations", ints({2, 2}));
  EXPECT_EQ(infer(dil), "f32[1,1,2,2]");
  // ONNX node test averagepool_2d_same_upper, and a strided SAME_LOWER.
  Node *same = node(Op::kAveragePool, {input("f32[1,3,32,32]")});
  same->setAttr("kernel_shape", ints({2, 2}));
  same->setAttr("auto_pad", Attribute("SAME_UPPER"));
  EXPECT_EQ(infer(same), "f32[1,3,32,32]");
  Node *lower = node(Op::kAveragePool, {input("f32[1,3,5,H]")});
  lower->setAttr("kernel_shape", ints({3, 3}));
  lower->setAttr("strides", ints({2, 1}));
  lower->setAttr("auto_pad", Attribute("SAME_LOWER"));
  EXPECT_EQ(infer(lower), "f32[1,3,3,H]");
}

TEST_F(PoolTest, LpPoolOneDimensional) {
  Node *n = node(Op::kLpPool, {input("f32[N,C,L]")});
  n->setAttr("kernel_shape", ints({2}));
  n->setAttr("strides", ints({2}));
  EXPECT_EQ(infer(n), "f32[N,C,?]");
}

TEST_F(PoolTest, PoolErrors) {
  Node *noKernel = node(Op::kMaxPool, {input("f32[1,1,4,4]")});
  EXPECT_EQ(infer(noKernel),
            "error: node 'n' (MaxPool): missing required attribute 'kernel_shape'");
  Node *big = node(Op::kAveragePool, {input("f32[1,1,4,4]")});
  big->setAttr("kernel_shape", ints({5, 1}));
  EXPECT_EQ(infer(big), "error: node 'n' (AveragePool): kernel extent 5 on spatial axis 0 "
                        "exceeds the padded input size 4");
  Node *autoPad = node(Op::kAveragePool, {input("f32[1,1,4,4]")});
  autoPad->setAttr("kernel_shape", ints({2, 2}));
  autoPad->setAttr("auto_pad", Attribute("same_upper"));
  EXPECT_EQ(infer(autoPad), "error: node 'n' (AveragePool): invalid auto_pad 'same_upper'; "
                            "expected NOTSET, SAME_UPPER, SAME_LOWER or VALID");
}

TEST_F(PoolTest, GlobalPools) {
  EXPECT_EQ(infer(node(Op::kGlobalAveragePool, {input("f32[N,3,H,W]")})), "f32[N,3,1,1]");
  EXPECT_EQ(infer(node(Op::kGlobalMaxPool, {input("f16[2,5,7]")})), "f16[2,5,1]");
  EXPECT_EQ(infer(node(Op::kGlobalLpPool, {input("f32[1,2,3,4,5]")})), "f32[1,2,1,1,1]");
  EXPECT_EQ(infer(node(Op::kGlobalAveragePool, {input("f32[*]")})), "f32[*]");
  EXPECT_EQ(infer(node(Op::kGlobalAveragePool, {input("f32[3]")})),
            "error: node 'n' (GlobalAveragePool): input X must have rank >= 2, got rank 1");
}

TEST_F(PoolTest, MaxUnpool) {
  Node *n = node(Op::kMaxUnpool, {input("f32[N,1,2,2]"), input("i64[N,1,2,2]")});
  n->setAttr("kernel_shape", ints({2, 2}));
  n->setAttr("strides", ints({2, 2}));
  EXPECT_EQ(infer(n), "f32[N,1,4,4]");
  Node *sized =
      node(Op::kMaxUnpool, {input("f32[1,1,2,2]"), input("i64[1,1,2,2]"), i64s({1, 1, 5, 5})});
  sized->setAttr("kernel_shape", ints({2, 2}));
  sized->setAttr("strides", ints({2, 2}));
  EXPECT_EQ(infer(sized), "f32[1,1,5,5]");
}

TEST_F(PoolTest, RoiPools) {
  Node *maxRoi = node(Op::kMaxRoiPool, {input("f32[1,16,32,32]"), input("f32[R,5]")});
  maxRoi->setAttr("pooled_shape", ints({7, 6}));
  EXPECT_EQ(infer(maxRoi), "f32[R,16,7,6]");
  Node *align =
      node(Op::kRoiAlign, {input("f32[N,256,H,W]"), input("f32[?,4]"), input("i64[300]")});
  align->setAttr("output_height", Attribute(7));
  align->setAttr("output_width", Attribute(5));
  EXPECT_EQ(infer(align), "f32[300,256,7,5]");
  Node *bad = node(Op::kRoiAlign, {input("f32[N,256,H,W]"), input("f32[10,4]"), input("i64[9]")});
  EXPECT_EQ(infer(bad),
            "error: node 'n' (RoiAlign): rois has 10 rows but batch_indices has 9 elements");
}

} // namespace
} // namespace dlc::testing
