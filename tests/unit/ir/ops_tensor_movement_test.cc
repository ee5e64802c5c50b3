// Shape inference of the data-movement ops: Transpose, Slice, Concat, Split, Gather.
#include <limits>

#include "ops_tensor_test_util.h"

namespace dlc::tensortest {
namespace {

constexpr DType kF32 = DType::kF32, kI64 = DType::kI64;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(TensorMovementInfer, TransposePerm) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {sym("N"), 3, 5}));
  Node *t = g.createNode(Op::kTranspose, {x}, 1, "t");
  EXPECT_EQ(inferStr(t), "f32[5,3,N]"); // default: reversed
  t->setAttr("perm", std::vector<int64_t>{2, 0, 1});
  EXPECT_EQ(inferStr(t), "f32[5,N,3]");
  t->setAttr("perm", std::vector<int64_t>{0, 0, 1});
  EXPECT_EQ(inferStr(t),
            "error: node 't' (Transpose): perm [0,0,1] is not a permutation of 3 axes");
  t->setAttr("perm", std::vector<int64_t>{1, 0});
  EXPECT_EQ(inferStr(t), "error: node 't' (Transpose): perm [1,0] is not a permutation of 3 axes");
  Node *u = g.createNode(Op::kTranspose, {g.addInput("u", unranked(kF32))}, 1, "u");
  u->setAttr("perm", std::vector<int64_t>{1, 0});
  EXPECT_EQ(inferStr(u), "f32[?,?]");
}

Node *slice(Graph &g, Value *x, std::vector<int64_t> starts, std::vector<int64_t> ends,
            std::vector<int64_t> axes = {}, std::vector<int64_t> steps = {}) {
  std::vector<Value *> in = {x, constI64(g, starts), constI64(g, ends)};
  if (!axes.empty() || !steps.empty())
    in.push_back(axes.empty() ? nullptr : constI64(g, axes));
  if (!steps.empty())
    in.push_back(constI64(g, steps));
  return g.createNode(Op::kSlice, in, 1, "s");
}

TEST(TensorMovementInfer, SliceStatic) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {10, 20}));
  EXPECT_EQ(inferStr(slice(g, x, {2}, {7})), "f32[5,20]");
  EXPECT_EQ(inferStr(slice(g, x, {-3, 0}, {kMax, 20}, {0, 1}, {1, 3})), "f32[3,7]");
  EXPECT_EQ(inferStr(slice(g, x, {5}, {100}, {-1})), "f32[10,15]");
  EXPECT_EQ(inferStr(slice(g, x, {7}, {2})), "f32[0,20]");
}

TEST(TensorMovementInfer, SliceNegativeSteps) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {10, 20}));
  EXPECT_EQ(inferStr(slice(g, x, {-1}, {kMin}, {0}, {-1})), "f32[10,20]");
  EXPECT_EQ(inferStr(slice(g, x, {8}, {1}, {0}, {-3})), "f32[3,20]");      // 8, 5, 2
  EXPECT_EQ(inferStr(slice(g, x, {100}, {-100}, {1}, {-7})), "f32[10,3]"); // 19, 12, 5
  EXPECT_EQ(inferStr(slice(g, x, {2}, {5}, {0}, {-1})), "f32[0,20]");
}

TEST(TensorMovementInfer, SliceSymbolic) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {sym("N"), 20}));
  EXPECT_EQ(inferStr(slice(g, x, {0}, {kMax})), "f32[N,20]");
  EXPECT_EQ(inferStr(slice(g, x, {-1}, {kMin}, {0}, {-1})), "f32[N,20]");
  EXPECT_EQ(inferStr(slice(g, x, {1}, {kMax})), "f32[?,20]");
  Value *starts = g.addInput("st", ty(kI64, {1}));
  EXPECT_EQ(
      inferStr(g.createNode(Op::kSlice, {x, starts, constI64(g, {4}), constI64(g, {1})}, 1, "s")),
      "f32[N,?]");
  EXPECT_EQ(inferStr(g.createNode(Op::kSlice, {x, starts, constI64(g, {4})}, 1, "s")), "f32[?,20]");
}

TEST(TensorMovementInfer, SliceErrors) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {10, 20}));
  EXPECT_EQ(inferStr(slice(g, x, {0}, {5}, {0}, {0})),
            "error: node 's' (Slice): slice step cannot be 0 (axis 0)");
  EXPECT_EQ(inferStr(slice(g, x, {0}, {5}, {2})),
            "error: node 's' (Slice): axis 2 is out of range for rank 2");
  EXPECT_EQ(inferStr(slice(g, x, {0, 1}, {5})),
            "error: node 's' (Slice): starts has 2 elements but ends has 1");
}

TEST(TensorMovementInfer, SliceOfShapeValue) {
  Graph g;
  Value *v = g.addInput("v", ty(kI64, {3}));
  Node *mid = slice(g, v, {1}, {3});
  Node *rev = slice(g, v, {-1}, {kMin}, {0}, {-1});
  InferRunner run;
  run.setShapeValue(v, {sym("N"), 12, 64});
  ASSERT_TRUE(run.run(mid).isOk());
  ASSERT_TRUE(run.run(rev).isOk());
  EXPECT_EQ(mid->output(0)->type().str(), "i64[2]");
  EXPECT_EQ(run.shapeValue(mid->output(0)), "[12,64]");
  EXPECT_EQ(run.shapeValue(rev->output(0)), "[64,12,N]");
}

TEST(TensorMovementInfer, Concat) {
  Graph g;
  Value *a = g.addInput("a", ty(kF32, {sym("N"), 3}));
  Value *b = g.addInput("b", ty(kF32, {sym("N"), 5}));
  Value *c = g.addInput("c", ty(kF32, {2, sym("K")}));
  auto concat = [&](std::vector<Value *> in, int64_t axis) {
    Node *n = g.createNode(Op::kConcat, in, 1, "cat");
    n->setAttr("axis", axis);
    return inferStr(n);
  };
  EXPECT_EQ(concat({a, b}, 1), "f32[N,8]");
  EXPECT_EQ(concat({a, b, a}, -1), "f32[N,11]");
  EXPECT_EQ(concat({a, c}, 1), "f32[2,?]");
  EXPECT_EQ(concat({a, g.addInput("u", unranked(kF32))}, 1), "f32[N,?]");
  EXPECT_EQ(concat({a, b}, 0),
            "error: node 'cat' (Concat): inputs 0 and 1 differ in dim 1 (3 vs 5)");
  EXPECT_EQ(concat({a, b}, 2), "error: node 'cat' (Concat): axis 2 is out of range for rank 2");
  EXPECT_EQ(concat({a, g.addInput("r3", ty(kF32, {1, 2, 3}))}, 0),
            "error: node 'cat' (Concat): input 1 is f32[1,2,3] but input 0 is f32[N,3]: ranks "
            "differ");
  EXPECT_EQ(concat({a, g.addInput("i", ty(kI64, {1, 3}))}, 0),
            "error: node 'cat' (Concat): input 1 is i64[1,3] but input 0 is f32[N,3]");
}

Node *split(Graph &g, Value *x, int outputs, Value *sizes = nullptr) {
  std::vector<Value *> in = {x};
  if (sizes)
    in.push_back(sizes);
  return g.createNode(Op::kSplit, in, outputs, "sp");
}

std::string splitTypes(Node *n) {
  InferRunner run;
  Status s = run.run(n);
  if (!s.isOk())
    return "error: " + s.message();
  std::string out;
  for (Value *v : n->outputs())
    out += (out.empty() ? "" : " ") + v->type().str();
  return out;
}

TEST(TensorMovementInfer, SplitEqualParts) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {6, sym("N")}));
  EXPECT_EQ(splitTypes(split(g, x, 3)), "f32[2,N] f32[2,N] f32[2,N]");
  Node *byCols = split(g, x, 2);
  byCols->setAttr("axis", -1);
  EXPECT_EQ(splitTypes(byCols), "f32[6,?] f32[6,?]");
  EXPECT_EQ(splitTypes(split(g, x, 4)),
            "error: node 'sp' (Split): cannot split an axis of size 6 into 4 equal parts");
}

TEST(TensorMovementInfer, SplitNumOutputs) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {10, 2}));
  Node *n = split(g, x, 3);
  n->setAttr("num_outputs", 3);
  EXPECT_EQ(splitTypes(n), "f32[4,2] f32[4,2] f32[2,2]");
  Node *wrong = split(g, x, 2);
  wrong->setAttr("num_outputs", 3);
  EXPECT_EQ(splitTypes(wrong),
            "error: node 'sp' (Split): num_outputs is 3 but the node has 2 outputs");
  Node *tooMany = split(g, g.addInput("y", ty(kF32, {5})), 4);
  tooMany->setAttr("num_outputs", 4);
  EXPECT_EQ(splitTypes(tooMany),
            "error: node 'sp' (Split): cannot split an axis of size 5 into 4 parts of 2");
}

TEST(TensorMovementInfer, SplitWithSplitInput) {
  Graph g;
  Value *x = g.addInput("x", ty(kF32, {10, 2}));
  EXPECT_EQ(splitTypes(split(g, x, 2, constI64(g, {3, 7}))), "f32[3,2] f32[7,2]");
  EXPECT_EQ(splitTypes(split(g, x, 2, g.addInput("s", ty(kI64, {2})))), "f32[?,2] f32[?,2]");
  EXPECT_EQ(splitTypes(split(g, x, 2, constI64(g, {3, 6}))),
            "error: node 'sp' (Split): split [3,6] sums to 9 but the axis has size 10");
  EXPECT_EQ(splitTypes(split(g, x, 3, constI64(g, {3, 7}))),
            "error: node 'sp' (Split): split has 2 elements for 3 outputs");
  Node *both = split(g, x, 2, constI64(g, {3, 7}));
  both->setAttr("num_outputs", 2);
  EXPECT_EQ(splitTypes(both), "error: node 'sp' (Split): the split input and the num_outputs "
                              "attribute are both given");
}

TEST(TensorMovementInfer, GatherOnRank3) {
  Graph g;
  Value *data = g.addInput("d", ty(kF32, {sym("N"), 5, 7}));
  Value *idx = g.addInput("i", ty(kI64, {2, 3}));
  Node *mid = g.createNode(Op::kGather, {data, idx}, 1, "g");
  mid->setAttr("axis", 1);
  EXPECT_EQ(inferStr(mid), "f32[N,2,3,7]");
  EXPECT_EQ(inferStr(g.createNode(Op::kGather, {data, idx}, 1, "g")), "f32[2,3,5,7]");
  Node *last = g.createNode(Op::kGather, {data, scalarI64(g, -1)}, 1, "g");
  last->setAttr("axis", -1);
  EXPECT_EQ(inferStr(last), "f32[N,5]");
  Node *oob = g.createNode(Op::kGather, {data, constI64(g, {0, 5})}, 1, "g");
  oob->setAttr("axis", 1);
  EXPECT_EQ(inferStr(oob),
            "error: node 'g' (Gather): index 5 is out of range for axis 1 of size 5");
  Node *badAxis = g.createNode(Op::kGather, {data, idx}, 1, "g");
  badAxis->setAttr("axis", 3);
  EXPECT_EQ(inferStr(badAxis), "error: node 'g' (Gather): axis 3 is out of range for rank 3");
  Value *fidx = g.addInput("f", ty(kF32, {2}));
  EXPECT_EQ(inferStr(g.createNode(Op::kGather, {data, fidx}, 1, "g")),
            "error: node 'g' (Gather): indices must be i32 or i64, got f32");
}

TEST(TensorMovementInfer, GatherOfShapeValueWithNegativeIndices) {
  Graph g;
  Value *v = g.addInput("v", ty(kI64, {4}));
  Node *pick = g.createNode(Op::kGather, {v, constI64(g, {-1, 0})}, 1, "g");
  InferRunner run;
  run.setShapeValue(v, {sym("B"), 3, sym("H"), sym("W")});
  ASSERT_TRUE(run.run(pick).isOk());
  EXPECT_EQ(pick->output(0)->type().str(), "i64[2]");
  EXPECT_EQ(run.shapeValue(pick->output(0)), "[W,B]");
}

} // namespace
} // namespace dlc::tensortest
