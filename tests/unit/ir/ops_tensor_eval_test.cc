// Reference evaluation of the tensor family: numeric results for every implemented eval.
#include <limits>

#include "ir/eval/eval.h"
#include "ops_tensor_test_util.h"

namespace dlc::tensortest {
namespace {

constexpr DType kF32 = DType::kF32;
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Value *f32(Graph &g, std::vector<int64_t> shape, std::vector<float> v) {
  return g.addConstant("f", Tensor::fromVector<float>(kF32, std::move(shape), v));
}
Value *i32(Graph &g, std::vector<int64_t> shape, std::vector<int32_t> v) {
  return g.addConstant("i", Tensor::fromVector<int32_t>(DType::kI32, std::move(shape), v));
}
std::vector<float> iota(int n) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i)
    v.push_back(static_cast<float>(i));
  return v;
}

/// Evaluates a single-output node; fails the test on error.
Tensor eval1(Node *n) {
  auto r = evalConstants(n);
  EXPECT_TRUE(r.hasValue()) << r.status().message();
  return r.hasValue() ? (*r)[0] : Tensor();
}

TEST(TensorEval, ShapeAndSize) {
  Graph g;
  Value *x = f32(g, {2, 3, 4}, iota(24));
  Tensor all = eval1(g.createNode(Op::kShape, {x}, 1, "s"));
  EXPECT_EQ(all.type().str(), "i64[3]");
  EXPECT_EQ(values<int64_t>(all), (std::vector<int64_t>{2, 3, 4}));
  Node *part = g.createNode(Op::kShape, {x}, 1, "s");
  part->setAttr("start", -2);
  part->setAttr("end", 10);
  EXPECT_EQ(values<int64_t>(eval1(part)), (std::vector<int64_t>{3, 4}));
  Tensor size = eval1(g.createNode(Op::kSize, {x}, 1, "n"));
  EXPECT_EQ(size.type().str(), "i64[]");
  EXPECT_EQ(values<int64_t>(size), (std::vector<int64_t>{24}));
}

TEST(TensorEval, GatherNegativeIndices) {
  Graph g;
  Tensor v = eval1(
      g.createNode(Op::kGather, {i32(g, {3}, {10, 20, 30}), constI64(g, {-1, 0, -3})}, 1, "g"));
  EXPECT_EQ(v.type().str(), "i32[3]");
  EXPECT_EQ(values<int32_t>(v), (std::vector<int32_t>{30, 10, 10}));
  // Rank-3 data, axis 1, 2-D indices: out[i][a][b][k] = data[i][idx[a][b]][k].
  Node *n =
      g.createNode(Op::kGather,
                   {f32(g, {2, 3, 2}, iota(12)),
                    g.addConstant("ix", Tensor::fromVector<int32_t>(DType::kI32, {2, 1}, {2, -3}))},
                   1, "g");
  n->setAttr("axis", 1);
  Tensor out = eval1(n);
  EXPECT_EQ(out.type().str(), "f32[2,2,1,2]");
  EXPECT_EQ(values<float>(out), (std::vector<float>{4, 5, 0, 1, 10, 11, 6, 7}));
  Tensor scalar =
      eval1(g.createNode(Op::kGather, {i32(g, {3}, {10, 20, 30}), scalarI64(g, 1)}, 1, "g"));
  EXPECT_EQ(scalar.type().str(), "i32[]");
  EXPECT_EQ(values<int32_t>(scalar), (std::vector<int32_t>{20}));
}

TEST(TensorEval, GatherOutOfRangeNamesTheNode) {
  Graph g;
  Node *n = g.createNode(Op::kGather, {i32(g, {3}, {10, 20, 30}), constI64(g, {0, 3})}, 1, "pick");
  auto r = evalConstants(n);
  ASSERT_FALSE(r.hasValue());
  EXPECT_EQ(r.status().message(),
            "node 'pick' (Gather): index 3 is out of range for axis 0 of size 3");
  auto low = evalConstants(
      g.createNode(Op::kGather, {i32(g, {3}, {10, 20, 30}), constI64(g, {-4})}, 1, "pick"));
  ASSERT_FALSE(low.hasValue());
  EXPECT_EQ(low.status().message(),
            "node 'pick' (Gather): index -4 is out of range for axis 0 of size 3");
}

TEST(TensorEval, Concat) {
  Graph g;
  Node *n =
      g.createNode(Op::kConcat, {f32(g, {2, 2}, {1, 2, 3, 4}), f32(g, {2, 1}, {5, 6})}, 1, "c");
  n->setAttr("axis", -1);
  Tensor out = eval1(n);
  EXPECT_EQ(out.type().str(), "f32[2,3]");
  EXPECT_EQ(values<float>(out), (std::vector<float>{1, 2, 5, 3, 4, 6}));
  Node *v =
      g.createNode(Op::kConcat, {constI64(g, {7}), constI64(g, {}), constI64(g, {-1, 2})}, 1, "c");
  v->setAttr("axis", 0);
  EXPECT_EQ(values<int64_t>(eval1(v)), (std::vector<int64_t>{7, -1, 2}));
}

TEST(TensorEval, SliceNegativeStep) {
  Graph g;
  Value *x = f32(g, {10}, iota(10));
  Tensor rev = eval1(g.createNode(
      Op::kSlice, {x, constI64(g, {-1}), constI64(g, {kMin}), constI64(g, {0}), constI64(g, {-2})},
      1, "s"));
  EXPECT_EQ(values<float>(rev), (std::vector<float>{9, 7, 5, 3, 1}));
  // 2-D: rows 2.. step 1 on axis 0 reversed columns 3..0 exclusive on axis 1.
  Value *m = f32(g, {3, 4}, iota(12));
  Tensor sub = eval1(g.createNode(
      Op::kSlice,
      {m, constI64(g, {3, 1}), constI64(g, {0, 100}), constI64(g, {1, 0}), constI64(g, {-1, 1})}, 1,
      "s"));
  EXPECT_EQ(sub.type().str(), "f32[2,3]");
  EXPECT_EQ(values<float>(sub), (std::vector<float>{7, 6, 5, 11, 10, 9}));
  Tensor clamped =
      eval1(g.createNode(Op::kSlice, {x, constI64(g, {-100}), constI64(g, {3})}, 1, "s"));
  EXPECT_EQ(values<float>(clamped), (std::vector<float>{0, 1, 2}));
}

TEST(TensorEval, ReshapeSqueezeUnsqueezeFlattenIdentity) {
  Graph g;
  Value *x = f32(g, {2, 3, 1}, iota(6));
  Tensor r = eval1(g.createNode(Op::kReshape, {x, constI64(g, {0, -1})}, 1, "r"));
  EXPECT_EQ(r.type().str(), "f32[2,3]");
  EXPECT_EQ(values<float>(r), iota(6));
  Node *zero = g.createNode(Op::kReshape, {f32(g, {0, 3}, {}), constI64(g, {3, 0})}, 1, "r");
  zero->setAttr("allowzero", 1);
  EXPECT_EQ(eval1(zero).type().str(), "f32[3,0]");
  EXPECT_EQ(eval1(g.createNode(Op::kSqueeze, {x, constI64(g, {-1})}, 1, "s")).type().str(),
            "f32[2,3]");
  EXPECT_EQ(eval1(g.createNode(Op::kSqueeze, {x}, 1, "s")).type().str(), "f32[2,3]");
  EXPECT_EQ(eval1(g.createNode(Op::kUnsqueeze, {x, constI64(g, {0, -1})}, 1, "u")).type().str(),
            "f32[1,2,3,1,1]");
  Tensor f = eval1(g.createNode(Op::kFlatten, {x}, 1, "f"));
  EXPECT_EQ(f.type().str(), "f32[2,3]");
  EXPECT_EQ(values<float>(f), iota(6));
  Tensor id = eval1(g.createNode(Op::kIdentity, {x}, 1, "i"));
  EXPECT_EQ(id.type().str(), "f32[2,3,1]");
  EXPECT_EQ(values<float>(id), iota(6));
  auto bad = evalConstants(g.createNode(Op::kReshape, {x, constI64(g, {4, -1})}, 1, "r"));
  ASSERT_FALSE(bad.hasValue());
  EXPECT_EQ(bad.status().message(), "node 'r' (Reshape): cannot reshape f32[2,3,1] (6 elements) "
                                    "to [4,-1]: 6 is not a multiple of 4");
}

TEST(TensorEval, ConstantOfShape) {
  Graph g;
  Tensor z = eval1(g.createNode(Op::kConstantOfShape, {constI64(g, {2, 2})}, 1, "c"));
  EXPECT_EQ(z.type().str(), "f32[2,2]");
  EXPECT_EQ(values<float>(z), (std::vector<float>{0, 0, 0, 0}));
  Node *n = g.createNode(Op::kConstantOfShape, {constI64(g, {3})}, 1, "c");
  n->setAttr("value", Tensor::fromVector<int32_t>(DType::kI32, {1}, {-7}));
  Tensor s = eval1(n);
  EXPECT_EQ(s.type().str(), "i32[3]");
  EXPECT_EQ(values<int32_t>(s), (std::vector<int32_t>{-7, -7, -7}));
}

TEST(TensorEval, Range) {
  Graph g;
  auto range = [&](Value *s, Value *l, Value *d) {
    return eval1(g.createNode(Op::kRange, {s, l, d}, 1, "r"));
  };
  auto i = [&](int32_t v) { return i32(g, {}, {v}); };
  auto f = [&](float v) { return g.addConstant("f", Tensor::scalarF32(v)); };
  EXPECT_EQ(values<int32_t>(range(i(1), i(10), i(3))), (std::vector<int32_t>{1, 4, 7}));
  EXPECT_EQ(values<int32_t>(range(i(10), i(1), i(-3))), (std::vector<int32_t>{10, 7, 4}));
  EXPECT_EQ(range(i(5), i(1), i(1)).type().str(), "i32[0]");
  Tensor fr = range(f(0), f(1), f(0.25f));
  EXPECT_EQ(fr.type().str(), "f32[4]");
  EXPECT_EQ(values<float>(fr), (std::vector<float>{0, 0.25f, 0.5f, 0.75f}));
  EXPECT_EQ(values<float>(range(f(1), f(2.1f), f(0.5f))), (std::vector<float>{1, 1.5f, 2}));
  EXPECT_EQ(values<int64_t>(range(scalarI64(g, -2), scalarI64(g, 2), scalarI64(g, 2))),
            (std::vector<int64_t>{-2, 0}));
}

TEST(TensorEval, ExpandBroadcast) {
  Graph g;
  Tensor out =
      eval1(g.createNode(Op::kExpand, {f32(g, {3, 1}, {1, 2, 3}), constI64(g, {2, 1, 4})}, 1, "e"));
  EXPECT_EQ(out.type().str(), "f32[2,3,4]");
  std::vector<float> want;
  for (int rep = 0; rep < 2; ++rep)
    for (float v : {1.f, 2.f, 3.f})
      for (int k = 0; k < 4; ++k)
        want.push_back(v);
  EXPECT_EQ(values<float>(out), want);
  Tensor row =
      eval1(g.createNode(Op::kExpand, {f32(g, {3}, {1, 2, 3}), constI64(g, {2, 1})}, 1, "e"));
  EXPECT_EQ(values<float>(row), (std::vector<float>{1, 2, 3, 1, 2, 3}));
}

TEST(TensorEval, TransposeAnyDtype) {
  Graph g;
  Tensor t = eval1(g.createNode(Op::kTranspose, {f32(g, {2, 3}, iota(6))}, 1, "t"));
  EXPECT_EQ(t.type().str(), "f32[3,2]");
  EXPECT_EQ(values<float>(t), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  Value *b =
      g.addConstant("b", Tensor::fromVector<uint8_t>(DType::kU8, {2, 1, 3}, {1, 2, 3, 4, 5, 6}));
  Node *n = g.createNode(Op::kTranspose, {b}, 1, "t");
  n->setAttr("perm", std::vector<int64_t>{2, 0, 1});
  Tensor u = eval1(n);
  EXPECT_EQ(u.type().str(), "u8[3,2,1]");
  EXPECT_EQ(values<uint8_t>(u), (std::vector<uint8_t>{1, 4, 2, 5, 3, 6}));
  Value *d = g.addConstant("d", Tensor::fromVector<double>(DType::kF64, {2, 2}, {1, 2, 3, 4}));
  EXPECT_EQ(values<double>(eval1(g.createNode(Op::kTranspose, {d}, 1, "t"))),
            (std::vector<double>{1, 3, 2, 4}));
}

TEST(TensorEval, Tile) {
  Graph g;
  Value *x = f32(g, {2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(values<float>(eval1(g.createNode(Op::kTile, {x, constI64(g, {2, 1})}, 1, "t"))),
            (std::vector<float>{1, 2, 3, 4, 1, 2, 3, 4}));
  Tensor wide = eval1(g.createNode(Op::kTile, {x, constI64(g, {1, 2})}, 1, "t"));
  EXPECT_EQ(wide.type().str(), "f32[2,4]");
  EXPECT_EQ(values<float>(wide), (std::vector<float>{1, 2, 1, 2, 3, 4, 3, 4}));
  EXPECT_EQ(eval1(g.createNode(Op::kTile, {x, constI64(g, {0, 3})}, 1, "t")).type().str(),
            "f32[0,6]");
}

TEST(TensorEval, Split) {
  Graph g;
  Value *x = f32(g, {2, 3}, iota(6));
  Node *cols = g.createNode(Op::kSplit, {x, constI64(g, {1, 2})}, 2, "s");
  cols->setAttr("axis", 1);
  auto r = evalConstants(cols);
  ASSERT_TRUE(r.hasValue()) << r.status().message();
  EXPECT_EQ((*r)[0].type().str(), "f32[2,1]");
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{0, 3}));
  EXPECT_EQ(values<float>((*r)[1]), (std::vector<float>{1, 2, 4, 5}));
  Node *parts = g.createNode(Op::kSplit, {f32(g, {10}, iota(10))}, 4, "s");
  parts->setAttr("num_outputs", 4);
  auto p = evalConstants(parts);
  ASSERT_TRUE(p.hasValue()) << p.status().message();
  EXPECT_EQ(values<float>((*p)[2]), (std::vector<float>{6, 7, 8}));
  EXPECT_EQ(values<float>((*p)[3]), (std::vector<float>{9}));
}

TEST(TensorEval, OpWithoutEvalIsUnimplemented) {
  eval::ScopedEvalOverride noEval(Op::kNonZero, nullptr);
  Graph g;
  auto r = evalConstants(g.createNode(Op::kNonZero, {f32(g, {2}, {0, 1})}, 1, "nz"));
  ASSERT_FALSE(r.hasValue());
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(r.status().message(), "node 'nz' (NonZero): no reference evaluation for op 'non_zero'");
}

} // namespace
} // namespace dlc::tensortest
