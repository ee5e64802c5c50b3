// Shape inference of the shape-arithmetic ops (Shape, Size, Reshape, Flatten, Squeeze,
// Unsqueeze, Expand, Tile, ConstantOfShape, Range, Identity) and symbolic shape values.
#include <limits>

#include "ir/ops/tensor_internal.h"
#include "ops_tensor_test_util.h"

namespace dlc::tensortest {
namespace {

constexpr DType kF32 = DType::kF32, kI64 = DType::kI64;

TEST(TensorShapeInfer, ReshapeCopiesZeroAndInfersMinusOne) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {2, 3, 4}));
  Node *r = g.createNode(Op::kReshape, {x, constI64(g, {0, -1})}, 1, "r");
  EXPECT_EQ(inferStr(r), "f32[2,12]");
}

TEST(TensorShapeInfer, ReshapeSymbolicMinusOneCancelsSharedSymbols) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {sym("N"), 12, 64}));
  auto reshape = [&](std::vector<int64_t> target) {
    return inferStr(g.createNode(Op::kReshape, {x, constI64(g, target)}, 1, "r"));
  };
  EXPECT_EQ(reshape({0, -1}), "f32[N,768]");
  EXPECT_EQ(reshape({-1, 768}), "f32[N,768]");
  EXPECT_EQ(reshape({0, 12, 8, 8}), "f32[N,12,8,8]");
  EXPECT_EQ(reshape({-1, 64}), "f32[?,64]"); // 12 * N has no name
  EXPECT_EQ(reshape({2, -1}), "f32[2,?]");
}

TEST(TensorShapeInfer, ReshapeFromSymbolicShapeValue) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {sym("N"), 12, 64}));
  Value *shape = g.addInput("s", ty(kI64, {2}));
  Node *r = g.createNode(Op::kReshape, {x, shape}, 1, "r");
  InferRunner run;
  run.setShapeValue(shape, {sym("N"), shapeValueDim(-1)});
  ASSERT_TRUE(run.run(r).isOk());
  EXPECT_EQ(r->output(0)->type(), ty(kF32, {sym("N"), 768}));
}

TEST(TensorShapeInfer, ReshapeWithUnknownTarget) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {2, 3}));
  Value *s3 = g.addInput("s3", ty(kI64, {3}));
  Value *sAny = g.addInput("sAny", ty(kI64, {sym("K")}));
  EXPECT_EQ(inferStr(g.createNode(Op::kReshape, {x, s3}, 1, "r")), "f32[?,?,?]");
  EXPECT_EQ(inferStr(g.createNode(Op::kReshape, {x, sAny}, 1, "r")), "f32[*]");
}

TEST(TensorShapeInfer, ReshapeAllowZero) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {0, 3}));
  Node *r = g.createNode(Op::kReshape, {x, constI64(g, {3, 0})}, 1, "r");
  r->setAttr("allowzero", 1);
  EXPECT_EQ(inferStr(r), "f32[3,0]");
  Node *both = g.createNode(Op::kReshape, {x, constI64(g, {0, -1})}, 1, "both");
  both->setAttr("allowzero", 1);
  EXPECT_EQ(inferStr(both),
            "error: node 'both' (Reshape): reshape target [0,-1] has both 0 and -1 with "
            "allowzero=1");
}

TEST(TensorShapeInfer, ReshapeErrors) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {2, 3}));
  auto reshape = [&](std::vector<int64_t> target) {
    return inferStr(g.createNode(Op::kReshape, {x, constI64(g, target)}, 1, "r"));
  };
  EXPECT_EQ(reshape({4, 2}),
            "error: node 'r' (Reshape): cannot reshape f32[2,3] (6 elements) to [4,2] (8 "
            "elements)");
  EXPECT_EQ(reshape({4, -1}), "error: node 'r' (Reshape): cannot reshape f32[2,3] (6 elements) "
                              "to [4,-1]: 6 is not a multiple of 4");
  EXPECT_EQ(reshape({-1, -1}),
            "error: node 'r' (Reshape): reshape target [-1,-1] has more than one -1");
  EXPECT_EQ(reshape({6, -2}),
            "error: node 'r' (Reshape): reshape target [6,-2] has an invalid value -2");
  EXPECT_EQ(reshape({1, 1, 0}), "error: node 'r' (Reshape): reshape target [1,1,0] copies dim "
                                "2 of f32[2,3], which has rank 2");
}

TEST(TensorShapeInfer, ReshapeOfNoElementsWithAMinusOneIsAmbiguous) {
  // `dlc run --dim N=0` on a CNN's flatten said only "output 0 has no static type (f32[0,?])".
  // As in numpy, -1 cannot be solved when the other dims hold no elements.
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {0, 32, 8, 8}));
  Node *r = g.createNode(Op::kReshape, {x, constI64(g, {0, -1})}, 1, "flatten");
  EXPECT_EQ(inferStr(r), "error: node 'flatten' (Reshape): cannot reshape f32[0,32,8,8] to "
                         "[0,-1]: the other dims hold no elements, so the -1 could be any size "
                         "(an input with a 0 dim?)");
  // A 0 dim is fine where -1 is solvable: [0,32,8,8] -> [-1,64] is [0,64].
  Node *ok = g.createNode(Op::kReshape, {x, constI64(g, {-1, 64})}, 1, "ok");
  EXPECT_EQ(inferStr(ok), "f32[0,64]");
  // Symbolic: N may be 0 or not; inference cannot tell and leaves the dim open.
  Value *n = g.addInput("n", ty(kF32, {sym("N"), 32}));
  Node *sym0 = g.createNode(Op::kReshape, {n, constI64(g, {0, -1})}, 1, "sym");
  EXPECT_EQ(inferStr(sym0), "f32[N,32]");
}

TEST(TensorShapeInfer, ShapeGatherUnsqueezeConcatReshapeChain) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {sym("N"), 12, 64}));
  Node *shape = g.createNode(Op::kShape, {x}, 1, "shape");
  Node *gather = g.createNode(Op::kGather, {shape->output(0), scalarI64(g, 0)}, 1, "gather");
  Node *unsq = g.createNode(Op::kUnsqueeze, {gather->output(0), constI64(g, {0})}, 1, "unsq");
  Node *concat = g.createNode(Op::kConcat, {unsq->output(0), constI64(g, {-1})}, 1, "concat");
  concat->setAttr("axis", 0);
  Node *reshape = g.createNode(Op::kReshape, {x, concat->output(0)}, 1, "reshape");
  InferRunner run;
  for (Node *n : g.nodes())
    ASSERT_TRUE(run.run(n).isOk()) << n->describe();
  EXPECT_EQ(shape->output(0)->type().str(), "i64[3]");
  EXPECT_EQ(run.shapeValue(shape->output(0)), "[N,12,64]");
  EXPECT_EQ(gather->output(0)->type().str(), "i64[]");
  EXPECT_EQ(run.shapeValue(gather->output(0)), "[N]");
  EXPECT_EQ(unsq->output(0)->type().str(), "i64[1]");
  EXPECT_EQ(run.shapeValue(unsq->output(0)), "[N]");
  EXPECT_EQ(concat->output(0)->type().str(), "i64[2]");
  EXPECT_EQ(run.shapeValue(concat->output(0)), "[N,-1]");
  EXPECT_EQ(reshape->output(0)->type(), ty(kF32, {sym("N"), 768}));
}

TEST(TensorShapeInfer, ShapeSliceConcatReshapeChain) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {sym("B"), sym("T"), 8, 64}));
  Node *shape = g.createNode(Op::kShape, {x}, 1, "shape");
  Node *slice =
      g.createNode(Op::kSlice, {shape->output(0), constI64(g, {0}), constI64(g, {2})}, 1, "slice");
  Node *concat = g.createNode(Op::kConcat, {slice->output(0), constI64(g, {512})}, 1, "concat");
  concat->setAttr("axis", 0);
  Node *reshape = g.createNode(Op::kReshape, {x, concat->output(0)}, 1, "reshape");
  InferRunner run;
  for (Node *n : g.nodes())
    ASSERT_TRUE(run.run(n).isOk()) << n->describe();
  EXPECT_EQ(run.shapeValue(slice->output(0)), "[B,T]");
  EXPECT_EQ(reshape->output(0)->type().str(), "f32[B,T,512]");
}

TEST(TensorShapeInfer, ShapeStartEnd) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {sym("N"), 3, 4, 5}));
  Node *s = g.createNode(Op::kShape, {x}, 1, "s");
  s->setAttr("start", 1);
  s->setAttr("end", -1);
  InferRunner run;
  ASSERT_TRUE(run.run(s).isOk());
  EXPECT_EQ(s->output(0)->type().str(), "i64[2]");
  EXPECT_EQ(run.shapeValue(s->output(0)), "[3,4]");
  Node *past = g.createNode(Op::kShape, {x}, 1, "past");
  past->setAttr("start", 7);
  ASSERT_TRUE(run.run(past).isOk());
  EXPECT_EQ(past->output(0)->type().str(), "i64[0]");
  Value *u = g.addInput("u", unranked(kF32));
  EXPECT_EQ(inferStr(g.createNode(Op::kShape, {u}, 1, "su")), "i64[?]");
}

TEST(TensorShapeInfer, SizeValue) {
  Graph g;
  InferRunner run;
  Node *a = g.createNode(Op::kSize, {g.addInput("a", ty(kF32, {2, 3}))}, 1, "a");
  Node *b = g.createNode(Op::kSize, {g.addInput("b", ty(kF32, {sym("N"), 1}))}, 1, "b");
  Node *c = g.createNode(Op::kSize, {g.addInput("c", ty(kF32, {sym("N"), 3}))}, 1, "c");
  for (Node *n : {a, b, c})
    ASSERT_TRUE(run.run(n).isOk());
  EXPECT_EQ(a->output(0)->type().str(), "i64[]");
  EXPECT_EQ(run.shapeValue(a->output(0)), "[6]");
  EXPECT_EQ(run.shapeValue(b->output(0)), "[N]");
  EXPECT_EQ(run.shapeValue(c->output(0)), "none");
}

TEST(TensorShapeInfer, Flatten) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {sym("N"), 3, 4}));
  auto flatten = [&](int64_t axis) {
    Node *n = g.createNode(Op::kFlatten, {x}, 1, "f");
    n->setAttr("axis", axis);
    return inferStr(n);
  };
  EXPECT_EQ(flatten(1), "f32[N,12]");
  EXPECT_EQ(flatten(-1), "f32[?,4]");
  EXPECT_EQ(flatten(0), "f32[1,?]");
  EXPECT_EQ(flatten(3), "f32[?,1]");
  EXPECT_EQ(flatten(4), "error: node 'f' (Flatten): axis 4 is out of range for rank 3");
}

TEST(TensorShapeInfer, SqueezeWithNegativeAxes) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {1, sym("N"), 1, 3}));
  auto squeeze = [&](std::vector<int64_t> axes) {
    return inferStr(g.createNode(Op::kSqueeze, {x, constI64(g, axes)}, 1, "sq"));
  };
  EXPECT_EQ(squeeze({-2}), "f32[1,N,3]");
  EXPECT_EQ(squeeze({0, -2}), "f32[N,3]");
  EXPECT_EQ(squeeze({-1}), "error: node 'sq' (Squeeze): cannot squeeze axis 3 of size 3 in "
                           "f32[1,N,1,3]");
  EXPECT_EQ(squeeze({4}), "error: node 'sq' (Squeeze): axis 4 is out of range for rank 4");
  EXPECT_EQ(squeeze({0, -4}), "error: node 'sq' (Squeeze): axis -4 is repeated");
}

TEST(TensorShapeInfer, SqueezeWithoutAxes) {
  Graph g;
  Value *s = g.addInput("s", ty(kF32, {1, 3, 1}));
  Value *d = g.addInput("d", ty(kF32, {1, sym("N")}));
  EXPECT_EQ(inferStr(g.createNode(Op::kSqueeze, {s}, 1, "a")), "f32[3]");
  EXPECT_EQ(inferStr(g.createNode(Op::kSqueeze, {d}, 1, "b")), "f32[*]"); // N may be 1
}

TEST(TensorShapeInfer, UnsqueezeWithNegativeAxes) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {3, sym("N")}));
  auto unsqueeze = [&](std::vector<int64_t> axes) {
    return inferStr(g.createNode(Op::kUnsqueeze, {x, constI64(g, axes)}, 1, "u"));
  };
  EXPECT_EQ(unsqueeze({-1}), "f32[3,N,1]");
  EXPECT_EQ(unsqueeze({0, -1}), "f32[1,3,N,1]");
  EXPECT_EQ(unsqueeze({1, -2}), "f32[3,1,1,N]");
  EXPECT_EQ(unsqueeze({3}), "error: node 'u' (Unsqueeze): axis 3 is out of range for rank 3");
  EXPECT_EQ(unsqueeze({1, 1}), "error: node 'u' (Unsqueeze): axis 1 is repeated");
  Value *axes = g.addInput("axes", ty(kI64, {2}));
  EXPECT_EQ(inferStr(g.createNode(Op::kUnsqueeze, {x, axes}, 1, "u")), "f32[?,?,?,?]");
}

TEST(TensorShapeInfer, SqueezeAndUnsqueezeCarryShapeValues) {
  Graph g;
  Value *v = g.addInput("v", ty(kI64, {1}));
  Node *sq = g.createNode(Op::kSqueeze, {v, constI64(g, {0})}, 1, "sq");
  Node *un = g.createNode(Op::kUnsqueeze, {sq->output(0), constI64(g, {0})}, 1, "un");
  Node *id = g.createNode(Op::kIdentity, {un->output(0)}, 1, "id");
  InferRunner run;
  run.setShapeValue(v, {sym("N")});
  for (Node *n : g.nodes())
    ASSERT_TRUE(run.run(n).isOk());
  EXPECT_EQ(sq->output(0)->type().str(), "i64[]");
  EXPECT_EQ(run.shapeValue(sq->output(0)), "[N]");
  EXPECT_EQ(run.shapeValue(un->output(0)), "[N]");
  EXPECT_EQ(id->output(0)->type().str(), "i64[1]");
  EXPECT_EQ(run.shapeValue(id->output(0)), "[N]");
}

TEST(TensorShapeInfer, Expand) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {3, 1}));
  EXPECT_EQ(inferStr(g.createNode(Op::kExpand, {x, constI64(g, {2, 1, 4})}, 1, "e")), "f32[2,3,4]");
  Value *shape = g.addInput("s", ty(kI64, {3}));
  Node *e = g.createNode(Op::kExpand, {x, shape}, 1, "e");
  InferRunner run;
  run.setShapeValue(shape, {sym("N"), 1, 5});
  ASSERT_TRUE(run.run(e).isOk());
  EXPECT_EQ(e->output(0)->type().str(), "f32[N,3,5]");
  EXPECT_EQ(inferStr(g.createNode(Op::kExpand, {x, g.addInput("s2", ty(kI64, {2}))}, 1, "e")),
            "f32[3,?]");
  EXPECT_EQ(inferStr(g.createNode(Op::kExpand, {x, constI64(g, {4, 4})}, 1, "e")),
            "error: node 'e' (Expand): cannot expand f32[3,1] to [4,4]: shapes [3,1] and [4,4] "
            "cannot be broadcast (dim 3 vs 4)");
  EXPECT_EQ(inferStr(g.createNode(Op::kExpand, {x, constI64(g, {-1, 4})}, 1, "e")),
            "error: node 'e' (Expand): shape [-1,4] has a negative value -1");
}

TEST(TensorShapeInfer, Tile) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {2, sym("N"), 1}));
  EXPECT_EQ(inferStr(g.createNode(Op::kTile, {x, constI64(g, {3, 1, 5})}, 1, "t")), "f32[6,N,5]");
  Value *reps = g.addInput("r", ty(kI64, {3}));
  Node *t = g.createNode(Op::kTile, {x, reps}, 1, "t");
  InferRunner run;
  run.setShapeValue(reps, {1, 2, sym("M")});
  ASSERT_TRUE(run.run(t).isOk());
  EXPECT_EQ(t->output(0)->type().str(), "f32[2,?,M]");
  EXPECT_EQ(inferStr(g.createNode(Op::kTile, {x, constI64(g, {3, 1})}, 1, "t")),
            "error: node 't' (Tile): repeats has 2 elements for input f32[2,N,1] of rank 3");
}

TEST(TensorShapeInfer, ConstantOfShape) {
  Graph g;
  EXPECT_EQ(inferStr(g.createNode(Op::kConstantOfShape, {constI64(g, {2, 3})}, 1, "c")),
            "f32[2,3]");
  Node *i = g.createNode(Op::kConstantOfShape, {constI64(g, {4})}, 1, "c");
  i->setAttr("value", Tensor::fromVector<int64_t>(DType::kI64, {1}, {7}));
  EXPECT_EQ(inferStr(i), "i64[4]");
  EXPECT_EQ(inferStr(g.createNode(Op::kConstantOfShape, {constI64(g, {})}, 1, "c")), "f32[]");
  Value *shape = g.addInput("s", ty(kI64, {2}));
  Node *sv = g.createNode(Op::kConstantOfShape, {shape}, 1, "c");
  InferRunner run;
  run.setShapeValue(shape, {sym("N"), 4});
  ASSERT_TRUE(run.run(sv).isOk());
  EXPECT_EQ(sv->output(0)->type().str(), "f32[N,4]");
  EXPECT_EQ(inferStr(g.createNode(Op::kConstantOfShape, {shape}, 1, "c")), "f32[?,?]");
  EXPECT_EQ(inferStr(g.createNode(Op::kConstantOfShape, {constI64(g, {2, -3})}, 1, "c")),
            "error: node 'c' (ConstantOfShape): shape [2,-3] has a negative value -3");
  Node *bad = g.createNode(Op::kConstantOfShape, {constI64(g, {2})}, 1, "c");
  bad->setAttr("value", Tensor::fromVector<float>(kF32, {2}, {1, 2}));
  EXPECT_EQ(inferStr(bad),
            "error: node 'c' (ConstantOfShape): value must hold exactly one element, got f32[2]");
}

TEST(TensorShapeInfer, Range) {
  Graph g;
  auto i32 = [&](int32_t v) {
    return g.addConstant("c", Tensor::fromVector<int32_t>(DType::kI32, {}, {v}));
  };
  EXPECT_EQ(inferStr(g.createNode(Op::kRange, {i32(0), i32(10), i32(3)}, 1, "r")), "i32[4]");
  EXPECT_EQ(inferStr(g.createNode(Op::kRange, {i32(10), i32(0), i32(3)}, 1, "r")), "i32[0]");
  EXPECT_EQ(inferStr(g.createNode(Op::kRange, {i32(10), i32(0), i32(-3)}, 1, "r")), "i32[4]");
  Value *lim = g.addInput("lim", ty(kF32, {}));
  EXPECT_EQ(inferStr(g.createNode(Op::kRange,
                                  {g.addConstant("s", Tensor::scalarF32(0)), lim,
                                   g.addConstant("d", Tensor::scalarF32(1))},
                                  1, "r")),
            "f32[?]");
  EXPECT_EQ(inferStr(g.createNode(Op::kRange, {i32(0), i32(10), i32(0)}, 1, "r")),
            "error: node 'r' (Range): delta cannot be 0");
  Value *big = scalarI64(g, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(inferStr(g.createNode(
                Op::kRange,
                {scalarI64(g, -big->constant().elementAsInt64(0)), big, scalarI64(g, 1)}, 1, "r")),
            "error: node 'r' (Range): range from -9223372036854775807 to 9223372036854775807 by "
            "1 has too many elements");
  EXPECT_EQ(inferStr(g.createNode(Op::kRange, {i32(0), lim, i32(1)}, 1, "r")),
            "error: node 'r' (Range): start, limit and delta must have one dtype, got i32, f32 "
            "and i32");
}

TEST(TensorShapeInfer, IdentityAndEyeLike) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {sym("N"), 4}));
  EXPECT_EQ(inferStr(g.createNode(Op::kIdentity, {x}, 1, "i")), "f32[N,4]");
  Node *eye = g.createNode(Op::kEyeLike, {x}, 1, "eye");
  EXPECT_EQ(inferStr(eye), "f32[N,4]");
  eye->setAttr("dtype", DType::kI32);
  EXPECT_EQ(inferStr(eye), "i32[N,4]");
  Value *y = g.addInput("y", ty(kF32, {2, 2, 2}));
  EXPECT_EQ(inferStr(g.createNode(Op::kEyeLike, {y}, 1, "eye")),
            "error: node 'eye' (EyeLike): input must be 2-D, got f32[2,2,2]");
}

} // namespace
} // namespace dlc::tensortest
