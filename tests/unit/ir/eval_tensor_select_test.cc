// Reference evaluation of the data-dependent selection ops: Compress, NonZero, Unique.
#include <cmath>

#include "eval_tensor_test_util.h"

namespace dlc::evaltest {
namespace {

TEST(EvalCompress, AxesFlattenedAndShortConditions) {
  Graph g;
  Value *x = f32(g, {3, 2}, {1, 2, 3, 4, 5, 6});
  Node *rows = g.createNode(Op::kCompress, {x, boolean(g, {3}, {false, true, true})}, 1, "c");
  rows->setAttr("axis", 0);
  Tensor r = eval1(rows);
  EXPECT_EQ(r.type().str(), "f32[2,2]");
  EXPECT_EQ(values<float>(r), (std::vector<float>{3, 4, 5, 6}));
  Node *cols = g.createNode(Op::kCompress, {x, boolean(g, {2}, {false, true})}, 1, "c");
  cols->setAttr("axis", -1);
  EXPECT_EQ(values<float>(eval1(cols)), (std::vector<float>{2, 4, 6}));
  Node *flat =
      g.createNode(Op::kCompress, {x, boolean(g, {5}, {false, true, false, false, true})}, 1, "c");
  Tensor f = eval1(flat);
  EXPECT_EQ(f.type().str(), "f32[2]");
  EXPECT_EQ(values<float>(f), (std::vector<float>{2, 5}));
  // A condition shorter than the axis drops the slices past its end.
  Node *shortCond = g.createNode(Op::kCompress, {x, boolean(g, {1}, {true})}, 1, "c");
  shortCond->setAttr("axis", 0);
  EXPECT_EQ(values<float>(eval1(shortCond)), (std::vector<float>{1, 2}));
}

TEST(EvalNonZero, CoordinatesInRowMajorOrder) {
  Graph g;
  Tensor a = eval1(g.createNode(Op::kNonZero, {i32(g, {2, 2}, {1, 0, 1, 1})}, 1, "nz"));
  EXPECT_EQ(a.type().str(), "i64[2,3]");
  EXPECT_EQ(values<int64_t>(a), (std::vector<int64_t>{0, 1, 1, 0, 0, 1}));
  // -0.0 is zero, NaN is not.
  Tensor b = eval1(g.createNode(Op::kNonZero, {f32(g, {4}, {0.0f, -0.0f, NAN, 2.5f})}, 1, "nz"));
  EXPECT_EQ(b.type().str(), "i64[1,2]");
  EXPECT_EQ(values<int64_t>(b), (std::vector<int64_t>{2, 3}));
  Tensor none =
      eval1(g.createNode(Op::kNonZero, {boolean(g, {2, 3}, {0, 0, 0, 0, 0, 0})}, 1, "nz"));
  EXPECT_EQ(none.type().str(), "i64[2,0]");
}

struct UniqueResult {
  std::vector<float> y;
  std::vector<int64_t> indices, inverse, counts;
  std::string yType;
};

UniqueResult unique(Graph &g, Value *x, int sorted, std::optional<int64_t> axis = {}) {
  Node *n = g.createNode(Op::kUnique, {x}, 4, "u");
  n->setAttr("sorted", sorted);
  if (axis)
    n->setAttr("axis", *axis);
  std::vector<Tensor> out = evalAll(n);
  return {asF32(out[0]), values<int64_t>(out[1]), values<int64_t>(out[2]), values<int64_t>(out[3]),
          out[0].type().str()};
}

TEST(EvalUnique, SpecExamplesWithoutAxis) {
  Graph g;
  Value *x = f32(g, {6}, {2, 1, 1, 3, 4, 3});
  UniqueResult s = unique(g, x, 1);
  EXPECT_EQ(s.y, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(s.indices, (std::vector<int64_t>{1, 0, 3, 4}));
  EXPECT_EQ(s.inverse, (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(s.counts, (std::vector<int64_t>{2, 1, 2, 1}));
  UniqueResult u = unique(g, x, 0);
  EXPECT_EQ(u.y, (std::vector<float>{2, 1, 3, 4}));
  EXPECT_EQ(u.indices, (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(u.inverse, (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(u.counts, (std::vector<int64_t>{1, 2, 2, 1}));
  // A 2-D input is flattened; f16 compares by value.
  Value *h = g.addConstant(
      "h", Tensor::fromVector<float>(DType::kF32, {2, 3}, {2, 1, 1, 3, 4, 3}).castTo(DType::kF16));
  UniqueResult hs = unique(g, h, 1);
  EXPECT_EQ(hs.yType, "f16[4]");
  EXPECT_EQ(hs.y, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(hs.inverse, (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));
}

TEST(EvalUnique, SlicesAlongAnAxis) {
  Graph g;
  UniqueResult a = unique(g, f32(g, {3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4}), 1, 0);
  EXPECT_EQ(a.yType, "f32[2,3]");
  EXPECT_EQ(a.y, (std::vector<float>{1, 0, 0, 2, 3, 4}));
  EXPECT_EQ(a.indices, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(a.inverse, (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(a.counts, (std::vector<int64_t>{2, 1}));
  Value *x3 = f32(g, {2, 4, 2}, {1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1});
  for (int64_t axis : {1, -2}) {
    UniqueResult b = unique(g, x3, 1, axis);
    EXPECT_EQ(b.yType, "f32[2,3,2]");
    EXPECT_EQ(b.y, (std::vector<float>{0, 1, 1, 1, 2, 1, 0, 1, 1, 1, 2, 1}));
    EXPECT_EQ(b.indices, (std::vector<int64_t>{1, 0, 2}));
    EXPECT_EQ(b.inverse, (std::vector<int64_t>{1, 0, 2, 0}));
    EXPECT_EQ(b.counts, (std::vector<int64_t>{2, 1, 1}));
  }
  // Unsorted slices keep first-occurrence order.
  UniqueResult c = unique(g, x3, 0, 1);
  EXPECT_EQ(c.y, (std::vector<float>{1, 1, 0, 1, 2, 1, 1, 1, 0, 1, 2, 1}));
  EXPECT_EQ(c.inverse, (std::vector<int64_t>{0, 1, 2, 1}));
}

TEST(EvalUnique, SignedZeroAndNan) {
  Graph g;
  UniqueResult r = unique(g, f32(g, {5}, {NAN, 0.0f, -0.0f, 1.0f, NAN}), 1);
  ASSERT_EQ(r.y.size(), 3u);
  EXPECT_EQ(r.y[0], 0.0f);
  EXPECT_FALSE(std::signbit(r.y[0])); // the first occurrence is kept
  EXPECT_EQ(r.y[1], 1.0f);
  EXPECT_TRUE(std::isnan(r.y[2]));
  EXPECT_EQ(r.indices, (std::vector<int64_t>{1, 3, 0}));
  EXPECT_EQ(r.inverse, (std::vector<int64_t>{2, 0, 0, 1, 2}));
  EXPECT_EQ(r.counts, (std::vector<int64_t>{2, 1, 2}));
}

TEST(EvalUnique, FewerOutputs) {
  Graph g;
  Node *n = g.createNode(Op::kUnique, {i64(g, {4}, {5, -1, 5, 7})}, 1, "u");
  std::vector<Tensor> out = evalAll(n);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(values<int64_t>(out[0]), (std::vector<int64_t>{-1, 5, 7}));
}

} // namespace
} // namespace dlc::evaltest
