// Shape inference of the remaining tensor-family ops (padding, layout, indexing,
// data-dependent) and the family's op table rows.
#include "ir/eval/eval.h"
#include "ir/ops/families.h"
#include "ops_tensor_test_util.h"

namespace dlc::tensortest {
namespace {

constexpr DType kF32 = DType::kF32, kI64 = DType::kI64;

TEST(TensorOpTable, EveryOpHasOneRowWithInference) {
  const std::vector<Op> ops = {
      Op::kCompress,  Op::kConcat,       Op::kConstantOfShape, Op::kDepthToSpace,    Op::kExpand,
      Op::kEyeLike,   Op::kFlatten,      Op::kGather,          Op::kGatherElements,  Op::kGatherND,
      Op::kIdentity,  Op::kCopy,         Op::kNonZero,         Op::kOneHot,          Op::kPad,
      Op::kRange,     Op::kReshape,      Op::kReverseSequence, Op::kScatterElements, Op::kScatterND,
      Op::kShape,     Op::kSize,         Op::kSlice,           Op::kSpaceToDepth,    Op::kSplit,
      Op::kSqueeze,   Op::kTile,         Op::kTranspose,       Op::kTrilu,           Op::kUnique,
      Op::kUnsqueeze, Op::kCenterCropPad};
  std::vector<OpDef> rows = ops::tensorOps();
  ASSERT_EQ(rows.size(), ops.size());
  for (Op op : ops) {
    EXPECT_EQ(std::count_if(rows.begin(), rows.end(), [op](const OpDef &d) { return d.op == op; }),
              1)
        << opName(op);
    EXPECT_EQ(opDef(op).op, op) << opName(op);
    EXPECT_NE(opDef(op).infer, nullptr) << opName(op);
  }
  for (Op op : {Op::kShape, Op::kSize, Op::kGather, Op::kConcat, Op::kSlice, Op::kSqueeze,
                Op::kUnsqueeze, Op::kConstantOfShape, Op::kRange, Op::kReshape, Op::kExpand,
                Op::kIdentity, Op::kTranspose, Op::kFlatten, Op::kTile, Op::kSplit})
    EXPECT_TRUE(eval::hasEval(op)) << opName(op);
}

TEST(TensorOpTable, ArityFusionAndDefaults) {
  EXPECT_EQ(opDef(Op::kConcat).maxInputs, -1);
  EXPECT_EQ(opDef(Op::kSplit).maxOutputs, -1);
  EXPECT_EQ(opDef(Op::kUnique).maxOutputs, 4);
  EXPECT_EQ(opDef(Op::kSlice).minInputs, 3);
  EXPECT_EQ(opDef(Op::kSlice).maxInputs, 5);
  EXPECT_EQ(opDef(Op::kPad).maxInputs, 4);
  EXPECT_EQ(opDef(Op::kTranspose).fusion, FusionKind::kInjective);
  EXPECT_EQ(opDef(Op::kReshape).fusion, FusionKind::kInjective);
  EXPECT_EQ(opDef(Op::kNonZero).fusion, FusionKind::kOpaque);
  EXPECT_EQ(opDef(Op::kUnique).fusion, FusionKind::kOpaque);
  EXPECT_EQ(opDef(Op::kCompress).fusion, FusionKind::kOpaque);
  EXPECT_EQ(opDef(Op::kEyeLike).findAttr("dtype")->kind, AttrKind::kDType);
  const AttrSpec *value = opDef(Op::kConstantOfShape).findAttr("value");
  ASSERT_NE(value, nullptr);
  ASSERT_TRUE(value->defaultValue.has_value());
  EXPECT_TRUE(
      value->defaultValue->tensor().identical(Tensor::fromVector<float>(kF32, {1}, {0.0f})));
  EXPECT_EQ(opDef(Op::kPad).findAttr("mode")->defaultValue->s(), "constant");
  EXPECT_EQ(opDef(Op::kScatterElements).findAttr("reduction")->defaultValue->s(), "none");
  EXPECT_TRUE(opDef(Op::kDepthToSpace).findAttr("blocksize")->required);
  EXPECT_FALSE(opDef(Op::kShape).findAttr("end")->defaultValue.has_value());
}

TEST(TensorOpTable, ArityIsCheckedBeforeInferenceAndEvaluation) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {2, 3}));
  EXPECT_EQ(inferStr(g.createNode(Op::kReshape, {x}, 1, "r")),
            "error: node 'r' (Reshape): expects 2 inputs, got 1");
  EXPECT_EQ(inferStr(g.createNode(Op::kSlice, {x, constI64(g, {0})}, 1, "s")),
            "error: node 's' (Slice): expects 3 to 5 inputs, got 2");
  EXPECT_EQ(inferStr(g.createNode(Op::kUnique, {x}, 5, "u")),
            "error: node 'u' (Unique): expects 1 to 4 outputs, got 5");
  auto r = eval::evaluate(*g.createNode(Op::kSplit, {x}, 0, "sp"), {Tensor::scalarF32(1)});
  ASSERT_FALSE(r.hasValue());
  EXPECT_EQ(r.status().message(), "node 'sp' (Split): expects at least 1 outputs, got 0");
}

Node *pad(Graph &g, Value *x, std::vector<int64_t> pads, std::vector<int64_t> axes = {}) {
  std::vector<Value *> in = {x, constI64(g, pads)};
  if (!axes.empty()) {
    in.push_back(nullptr);
    in.push_back(constI64(g, axes));
  }
  return g.createNode(Op::kPad, in, 1, "p");
}

TEST(TensorMiscInfer, Pad) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {sym("N"), 3, 4}));
  EXPECT_EQ(inferStr(pad(g, x, {0, 1, 2, 0, 1, 2})), "f32[N,5,8]");
  EXPECT_EQ(inferStr(pad(g, x, {1, 1}, {-1})), "f32[N,3,6]");
  EXPECT_EQ(inferStr(pad(g, x, {0, 0, -1, 0, 0, -1})), "f32[N,3,2]");
  EXPECT_EQ(inferStr(pad(g, x, {1, 0, 0, 0, 0, 0})), "f32[?,3,4]");
  EXPECT_EQ(inferStr(g.createNode(Op::kPad, {x, g.addInput("pads", ty(kI64, {6}))}, 1, "p")),
            "f32[?,?,?]");
  EXPECT_EQ(inferStr(pad(g, x, {1, 1})),
            "error: node 'p' (Pad): pads has 2 elements for 3 axes (expected 6)");
  EXPECT_EQ(inferStr(pad(g, x, {0, 0, -3, 0, 0, -2})),
            "error: node 'p' (Pad): padding axis 2 of size 4 by -3 and -2 gives an invalid size");
  Node *mode = pad(g, x, {0, 0, 0, 0, 0, 0});
  mode->setAttr("mode", "mirror");
  EXPECT_EQ(inferStr(mode), "error: node 'p' (Pad): unknown mode 'mirror' (expected constant, "
                            "reflect, edge or wrap)");
}

TEST(TensorMiscInfer, CenterCropPad) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {sym("N"), 10, 10}));
  Node *n = g.createNode(Op::kCenterCropPad, {x, constI64(g, {5, 12})}, 1, "c");
  n->setAttr("axes", std::vector<int64_t>{1, -1});
  EXPECT_EQ(inferStr(n), "f32[N,5,12]");
  EXPECT_EQ(inferStr(g.createNode(Op::kCenterCropPad, {x, constI64(g, {5, 12})}, 1, "c")),
            "error: node 'c' (CenterCropPad): shape has 2 elements for 3 axes");
}

TEST(TensorMiscInfer, DepthToSpaceAndSpaceToDepth) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {sym("N"), 8, 2, 3}));
  Node *d2s = g.createNode(Op::kDepthToSpace, {x}, 1, "d2s");
  d2s->setAttr("blocksize", 2);
  EXPECT_EQ(inferStr(d2s), "f32[N,2,4,6]");
  Node *bad = g.createNode(Op::kDepthToSpace, {x}, 1, "d2s");
  bad->setAttr("blocksize", 3);
  EXPECT_EQ(inferStr(bad),
            "error: node 'd2s' (DepthToSpace): 8 channels are not divisible by blocksize^2 = 9");
  Node *huge = g.createNode(Op::kDepthToSpace, {x}, 1, "d2s");
  huge->setAttr("blocksize", int64_t{1} << 32);
  EXPECT_EQ(inferStr(huge),
            "error: node 'd2s' (DepthToSpace): blocksize 4294967296 is not a positive size");
  Node *s2d = g.createNode(Op::kSpaceToDepth, {g.addInput("y", ty(kF32, {1, 2, 4, 6}))}, 1, "s2d");
  s2d->setAttr("blocksize", 2);
  EXPECT_EQ(inferStr(s2d), "f32[1,8,2,3]");
  Node *s2dBad = g.createNode(Op::kSpaceToDepth, {x}, 1, "s2d");
  s2dBad->setAttr("blocksize", 2);
  EXPECT_EQ(inferStr(s2dBad),
            "error: node 's2d' (SpaceToDepth): dim 3 of size 3 is not divisible by blocksize 2");
}

TEST(TensorMiscInfer, OneHot) {
  Graph g;
  Value *idx = g.addInput("i", ty(kI64, {sym("N"), 3}));
  Value *values = g.addInput("v", ty(kF32, {2}));
  Node *last = g.createNode(Op::kOneHot, {idx, scalarI64(g, 10), values}, 1, "oh");
  EXPECT_EQ(inferStr(last), "f32[N,3,10]");
  Node *first = g.createNode(Op::kOneHot,
                             {idx, g.addConstant("d", Tensor::scalarF32(4.0f)), values}, 1, "oh");
  first->setAttr("axis", 0);
  EXPECT_EQ(inferStr(first), "f32[4,N,3]");
  Node *bad = g.createNode(Op::kOneHot, {idx, scalarI64(g, 10), values}, 1, "oh");
  bad->setAttr("axis", 3);
  EXPECT_EQ(inferStr(bad), "error: node 'oh' (OneHot): axis 3 is out of range for rank 3");
}

TEST(TensorMiscInfer, GatherElementsAndGatherND) {
  Graph g;
  Value *data = g.addInput("d", ty(kF32, {2, 3, 4}));
  EXPECT_EQ(inferStr(g.createNode(Op::kGatherElements, {data, g.addInput("i", ty(kI64, {2, 1, 4}))},
                                  1, "ge")),
            "f32[2,1,4]");
  EXPECT_EQ(inferStr(g.createNode(Op::kGatherElements, {data, g.addInput("i2", ty(kI64, {2, 1}))},
                                  1, "ge")),
            "error: node 'ge' (GatherElements): indices i64[2,1] and data f32[2,3,4] differ in "
            "rank");
  EXPECT_EQ(
      inferStr(g.createNode(Op::kGatherND, {data, g.addInput("n", ty(kI64, {5, 2}))}, 1, "gnd")),
      "f32[5,4]");
  Node *batched = g.createNode(Op::kGatherND, {data, g.addInput("b", ty(kI64, {2, 1}))}, 1, "gnd");
  batched->setAttr("batch_dims", 1);
  EXPECT_EQ(inferStr(batched), "f32[2,4]");
  EXPECT_EQ(
      inferStr(g.createNode(Op::kGatherND, {data, g.addInput("k", ty(kI64, {5, 4}))}, 1, "gnd")),
      "error: node 'gnd' (GatherND): the last dim of indices i64[5,4] must be in [1, 3]");
}

TEST(TensorMiscInfer, Scatter) {
  Graph g;
  Value *data = g.addInput("d", ty(kF32, {sym("N"), 4}));
  Value *idx = g.addInput("i", ty(kI64, {2, 4}));
  Value *upd = g.addInput("u", ty(kF32, {2, 4}));
  Node *se = g.createNode(Op::kScatterElements, {data, idx, upd}, 1, "se");
  EXPECT_EQ(inferStr(se), "f32[N,4]");
  se->setAttr("reduction", "sum");
  EXPECT_EQ(inferStr(se), "error: node 'se' (ScatterElements): unknown reduction 'sum' "
                          "(expected none, add, mul, max or min)");
  Value *ndIdx = g.addInput("ni", ty(kI64, {3, 1}));
  Value *ndUpd = g.addInput("nu", ty(kF32, {3, 4}));
  Node *nd = g.createNode(Op::kScatterND, {data, ndIdx, ndUpd}, 1, "nd");
  nd->setAttr("reduction", "max");
  EXPECT_EQ(inferStr(nd), "f32[N,4]");
  EXPECT_EQ(inferStr(g.createNode(Op::kScatterND, {data, ndIdx, upd}, 1, "nd")),
            "error: node 'nd' (ScatterND): updates f32[2,4] should have shape [3,4]");
}

TEST(TensorMiscInfer, DataDependentOps) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {sym("N"), 3}));
  EXPECT_EQ(inferStr(g.createNode(Op::kNonZero, {x}, 1, "nz")), "i64[2,?]");

  Node *u = g.createNode(Op::kUnique, {g.addInput("s", ty(kF32, {2, 3}))}, 4, "u");
  InferRunner run;
  ASSERT_TRUE(run.run(u).isOk());
  EXPECT_EQ(u->output(0)->type().str(), "f32[?]");
  EXPECT_EQ(u->output(1)->type().str(), "i64[?]");
  EXPECT_EQ(u->output(2)->type().str(), "i64[6]");
  EXPECT_EQ(u->output(3)->type().str(), "i64[?]");
  Node *ua = g.createNode(Op::kUnique, {x}, 3, "ua");
  ua->setAttr("axis", -1);
  ASSERT_TRUE(run.run(ua).isOk());
  EXPECT_EQ(ua->output(0)->type().str(), "f32[N,?]");
  EXPECT_EQ(ua->output(2)->type().str(), "i64[3]");

  Value *cond = g.addConstant("c", Tensor::fromVector<uint8_t>(DType::kBool, {3}, {1, 0, 1}));
  Node *c = g.createNode(Op::kCompress, {g.addInput("y", ty(kF32, {3, 4})), cond}, 1, "cmp");
  c->setAttr("axis", 0);
  EXPECT_EQ(inferStr(c), "f32[2,4]");
  Value *dyn = g.addInput("dc", ty(DType::kBool, {sym("M")}));
  EXPECT_EQ(inferStr(g.createNode(Op::kCompress, {x, dyn}, 1, "cmp")), "f32[?]");
  Node *longer = g.createNode(Op::kCompress, {g.addInput("z", ty(kF32, {2, 4})), cond}, 1, "cmp");
  longer->setAttr("axis", 0);
  EXPECT_EQ(inferStr(longer), "error: node 'cmp' (Compress): condition has 3 elements but axis 0 "
                              "of f32[2,4] has 2");
}

TEST(TensorMiscInfer, TriluAndReverseSequence) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {sym("T"), 4, 5}));
  EXPECT_EQ(inferStr(g.createNode(Op::kTrilu, {x, scalarI64(g, 1)}, 1, "t")), "f32[T,4,5]");
  EXPECT_EQ(inferStr(g.createNode(Op::kTrilu, {g.addInput("v", ty(kF32, {4}))}, 1, "t")),
            "error: node 't' (Trilu): input must have rank >= 2, got f32[4]");
  Value *lens = g.addInput("l", ty(kI64, {4}));
  EXPECT_EQ(inferStr(g.createNode(Op::kReverseSequence, {x, lens}, 1, "rs")), "f32[T,4,5]");
  Node *swapped = g.createNode(Op::kReverseSequence, {x, lens}, 1, "rs");
  swapped->setAttr("batch_axis", 0);
  swapped->setAttr("time_axis", 1);
  EXPECT_EQ(inferStr(swapped), "f32[T,4,5]"); // T may be 4
  swapped->setAttr("time_axis", 0);
  EXPECT_EQ(inferStr(swapped), "error: node 'rs' (ReverseSequence): batch_axis 0 and time_axis 0 "
                               "must be 0 and 1 in some order");
}

} // namespace
} // namespace dlc::tensortest
