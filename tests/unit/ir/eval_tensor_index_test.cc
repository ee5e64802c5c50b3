// Reference evaluation of the indexing ops: GatherElements, GatherND, ScatterElements,
// ScatterND, OneHot (spec examples, straightforward loops on random data, and the errors of
// out-of-range indices).
#include <cstdint>
#include <limits>

#include "eval_tensor_test_util.h"

namespace dlc::evaltest {
namespace {

TEST(EvalGatherElements, SpecExamples) {
  Graph g;
  Node *a = g.createNode(Op::kGatherElements,
                         {f32(g, {2, 2}, {1, 2, 3, 4}), i64(g, {2, 2}, {0, 0, 1, 0})}, 1, "ge");
  a->setAttr("axis", 1);
  EXPECT_EQ(values<float>(eval1(a)), (std::vector<float>{1, 1, 4, 3}));
  Value *data = i32(g, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Node *b = g.createNode(Op::kGatherElements, {data, i32(g, {2, 3}, {1, 2, 0, 2, 0, 0})}, 1, "ge");
  EXPECT_EQ(values<int32_t>(eval1(b)), (std::vector<int32_t>{4, 8, 3, 7, 2, 3}));
  Node *neg =
      g.createNode(Op::kGatherElements, {data, i64(g, {2, 3}, {-1, -2, 0, -2, 0, 0})}, 1, "ge");
  EXPECT_EQ(values<int32_t>(eval1(neg)), (std::vector<int32_t>{7, 5, 3, 4, 2, 3}));
}

TEST(EvalGatherElements, RandomRank3AgainstLoops) {
  // Indices smaller than data on the other axes read the leading part of data.
  Graph g;
  const std::vector<float> data = randomFloats(3 * 4 * 5, 11);
  std::vector<int64_t> idx;
  for (int i = 0; i < 2 * 6 * 3; ++i)
    idx.push_back((i * 7) % 8 - 4); // in [-4, 3]: every valid index of an axis of size 4
  // The gathered axis may be longer in indices (6) than in data (4).
  Node *n =
      g.createNode(Op::kGatherElements, {f32(g, {3, 4, 5}, data), i64(g, {2, 6, 3}, idx)}, 1, "ge");
  n->setAttr("axis", 1);
  Tensor out = eval1(n);
  ASSERT_EQ(out.type().str(), "f32[2,6,3]");
  std::vector<float> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 6; ++j)
      for (int k = 0; k < 3; ++k) {
        int64_t v = idx[static_cast<size_t>((i * 6 + j) * 3 + k)];
        v = v < 0 ? v + 4 : v;
        want.push_back(data[static_cast<size_t>((i * 4 + v) * 5 + k)]);
      }
  EXPECT_EQ(values<float>(out), want);
}

TEST(EvalGatherElements, Errors) {
  Graph g;
  Node *n = g.createNode(Op::kGatherElements,
                         {f32(g, {2, 3}, randomFloats(6, 3)), i64(g, {1, 2}, {0, 3})}, 1, "pick");
  n->setAttr("axis", 1);
  EXPECT_EQ(evalError(n), "node 'pick' (GatherElements): index 3 is out of range for axis 1 of "
                          "size 3");
  Node *wide =
      g.createNode(Op::kGatherElements,
                   {f32(g, {2, 3}, randomFloats(6, 3)), i64(g, {3, 1}, {0, 1, 0})}, 1, "pick");
  wide->setAttr("axis", 1);
  EXPECT_EQ(evalError(wide),
            "node 'pick' (GatherElements): indices i64[3,1] exceed data f32[2,3] on axis 0");
}

TEST(EvalGatherND, SpecExamples) {
  Graph g;
  Value *d2 = i32(g, {2, 2}, {0, 1, 2, 3});
  EXPECT_EQ(values<int32_t>(
                eval1(g.createNode(Op::kGatherND, {d2, i64(g, {2, 2}, {0, 0, 1, 1})}, 1, "gnd"))),
            (std::vector<int32_t>{0, 3}));
  Tensor rows = eval1(g.createNode(Op::kGatherND, {d2, i64(g, {2, 1}, {1, 0})}, 1, "gnd"));
  EXPECT_EQ(rows.type().str(), "i32[2,2]");
  EXPECT_EQ(values<int32_t>(rows), (std::vector<int32_t>{2, 3, 0, 1}));
  Value *d3 = f32(g, {2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor t = eval1(g.createNode(Op::kGatherND, {d3, i64(g, {2, 1, 2}, {0, 1, 1, 0})}, 1, "gnd"));
  EXPECT_EQ(t.type().str(), "f32[2,1,2]");
  EXPECT_EQ(values<float>(t), (std::vector<float>{2, 3, 4, 5}));
  Node *batched = g.createNode(Op::kGatherND, {d3, i64(g, {2, 1}, {1, 0})}, 1, "gnd");
  batched->setAttr("batch_dims", 1);
  Tensor b = eval1(batched);
  EXPECT_EQ(b.type().str(), "f32[2,2]");
  EXPECT_EQ(values<float>(b), (std::vector<float>{2, 3, 4, 5}));
  // batch_dims = 1 with one index per batch entry and negative indices.
  Node *neg = g.createNode(Op::kGatherND, {d3, i64(g, {2, 2}, {-1, 0, 0, -1})}, 1, "gnd");
  neg->setAttr("batch_dims", 1);
  EXPECT_EQ(values<float>(eval1(neg)), (std::vector<float>{2, 5}));
}

TEST(EvalGatherND, OutOfRangeNamesIndexAndAxis) {
  Graph g;
  Node *n = g.createNode(Op::kGatherND,
                         {f32(g, {2, 3}, randomFloats(6, 5)), i64(g, {1, 2}, {1, -4})}, 1, "gnd");
  EXPECT_EQ(evalError(n), "node 'gnd' (GatherND): index -4 is out of range for axis 1 of size 3");
}

TEST(EvalScatterElements, SpecExamples) {
  Graph g;
  Node *a =
      g.createNode(Op::kScatterElements,
                   {f32(g, {3, 3}, std::vector<float>(9, 0.0f)), i64(g, {2, 3}, {1, 0, 2, 0, 2, 1}),
                    f32(g, {2, 3}, {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f})},
                   1, "se");
  EXPECT_EQ(values<float>(eval1(a)),
            (std::vector<float>{2.0f, 1.1f, 0, 1.0f, 0, 2.2f, 0, 2.1f, 1.2f}));
  Node *b = g.createNode(
      Op::kScatterElements,
      {f32(g, {1, 5}, {1, 2, 3, 4, 5}), i64(g, {1, 2}, {1, -2}), f32(g, {1, 2}, {1.1f, 2.1f})}, 1,
      "se");
  b->setAttr("axis", 1);
  EXPECT_EQ(values<float>(eval1(b)), (std::vector<float>{1, 1.1f, 3, 2.1f, 5}));
}

TEST(EvalScatterElements, ReductionsOnDuplicates) {
  const std::vector<std::pair<const char *, float>> cases = {{"none", 2.1f},
                                                             {"add", 2.0f + 1.1f + 2.1f},
                                                             {"mul", 2.0f * 1.1f * 2.1f},
                                                             {"max", 2.1f},
                                                             {"min", 1.1f}};
  for (const auto &[reduction, want] : cases) {
    Graph g;
    Node *n = g.createNode(
        Op::kScatterElements,
        {f32(g, {1, 3}, {1, 2, 3}), i64(g, {1, 2}, {1, 1}), f32(g, {1, 2}, {1.1f, 2.1f})}, 1, "se");
    n->setAttr("axis", 1);
    n->setAttr("reduction", reduction);
    EXPECT_EQ(values<float>(eval1(n)), (std::vector<float>{1, want, 3})) << reduction;
  }
}

TEST(EvalScatterElements, IntegerWrapBoolAndHalfRounding) {
  Graph g;
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  Node *wrap =
      g.createNode(Op::kScatterElements,
                   {i32(g, {2}, {kMax, 7}), i64(g, {2}, {0, 0}), i32(g, {2}, {1, 1})}, 1, "se");
  wrap->setAttr("reduction", "add");
  EXPECT_EQ(values<int32_t>(eval1(wrap)),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::min() + 1, 7}));
  Node *any = g.createNode(
      Op::kScatterElements,
      {boolean(g, {2}, {false, false}), i64(g, {2}, {1, 1}), boolean(g, {2}, {true, false})}, 1,
      "se");
  any->setAttr("reduction", "add");
  EXPECT_EQ(values<bool>(eval1(any)), (std::vector<bool>{false, true}));
  // 2048 + 1 + 1 in f16: rounding after each step would stay at 2048 (ties to even); computed
  // in f32 and rounded once it is 2050.
  Value *h =
      g.addConstant("h", Tensor::fromVector<float>(DType::kF32, {1}, {2048}).castTo(DType::kF16));
  Value *ones =
      g.addConstant("u", Tensor::fromVector<float>(DType::kF32, {2}, {1, 1}).castTo(DType::kF16));
  Node *half = g.createNode(Op::kScatterElements, {h, i64(g, {2}, {0, 0}), ones}, 1, "se");
  half->setAttr("reduction", "add");
  Tensor out = eval1(half);
  EXPECT_EQ(out.type().str(), "f16[1]");
  EXPECT_EQ(asF32(out), (std::vector<float>{2050}));
}

TEST(EvalScatterElements, OutOfRangeIndexIsAnError) {
  Graph g;
  Node *n = g.createNode(
      Op::kScatterElements,
      {f32(g, {2, 3}, randomFloats(6, 9)), i64(g, {1, 2}, {0, -4}), f32(g, {1, 2}, {5, 6})}, 1,
      "upd");
  n->setAttr("axis", 1);
  EXPECT_EQ(evalError(n),
            "node 'upd' (ScatterElements): index -4 is out of range for axis 1 of size 3");
}

TEST(EvalScatterND, SpecExampleAndSlices) {
  Graph g;
  Node *a = g.createNode(Op::kScatterND,
                         {f32(g, {8}, {1, 2, 3, 4, 5, 6, 7, 8}), i64(g, {4, 1}, {4, 3, 1, 7}),
                          f32(g, {4}, {9, 10, 11, 12})},
                         1, "snd");
  EXPECT_EQ(values<float>(eval1(a)), (std::vector<float>{1, 11, 3, 10, 9, 6, 7, 12}));
  const std::vector<float> data = randomFloats(12, 21), upd = randomFloats(6, 22);
  Node *rows =
      g.createNode(Op::kScatterND,
                   {f32(g, {4, 3}, data), i64(g, {2, 1}, {2, -4}), f32(g, {2, 3}, upd)}, 1, "snd");
  std::vector<float> want = data;
  std::copy(upd.begin(), upd.begin() + 3, want.begin() + 6);
  std::copy(upd.begin() + 3, upd.end(), want.begin());
  EXPECT_EQ(values<float>(eval1(rows)), want);
}

TEST(EvalScatterND, Reductions) {
  const std::vector<std::pair<const char *, int64_t>> cases = {
      {"none", 6}, {"add", 12}, {"mul", 30}, {"max", 6}, {"min", 1}};
  for (const auto &[reduction, want] : cases) {
    Graph g;
    Node *n = g.createNode(Op::kScatterND,
                           {i64(g, {3}, {1, 2, 3}), i64(g, {2, 1}, {0, 0}), i64(g, {2}, {5, 6})}, 1,
                           "snd");
    n->setAttr("reduction", reduction);
    EXPECT_EQ(values<int64_t>(eval1(n)), (std::vector<int64_t>{want, 2, 3})) << reduction;
  }
}

TEST(EvalScatterND, OutOfRangeIndexIsAnError) {
  Graph g;
  Node *n = g.createNode(
      Op::kScatterND,
      {f32(g, {2, 3}, randomFloats(6, 4)), i64(g, {1, 2}, {2, 0}), f32(g, {1}, {1})}, 1, "snd");
  EXPECT_EQ(evalError(n), "node 'snd' (ScatterND): index 2 is out of range for axis 0 of size 2");
}

TEST(EvalOneHot, AxisAndNegativeIndices) {
  Graph g;
  const std::vector<int64_t> idx = {1, 9, 2, 4};
  Node *n = g.createNode(Op::kOneHot, {i64(g, {2, 2}, idx), scalarI64(g, 10), f32(g, {2}, {1, 3})},
                         1, "oh");
  n->setAttr("axis", 1);
  Tensor out = eval1(n);
  ASSERT_EQ(out.type().str(), "f32[2,10,2]");
  std::vector<float> want;
  for (int i = 0; i < 2; ++i)
    for (int d = 0; d < 10; ++d)
      for (int j = 0; j < 2; ++j)
        want.push_back(idx[static_cast<size_t>(i * 2 + j)] == d ? 3.0f : 1.0f);
  EXPECT_EQ(values<float>(out), want);
  Tensor neg = eval1(g.createNode(
      Op::kOneHot, {i64(g, {3}, {0, -7, -8}), f32(g, {1}, {10}), i32(g, {2}, {0, 5})}, 1, "oh"));
  ASSERT_EQ(neg.type().str(), "i32[3,10]");
  std::vector<int32_t> wantNeg(30, 0);
  wantNeg[0] = wantNeg[10 + 3] = wantNeg[20 + 2] = 5;
  EXPECT_EQ(values<int32_t>(neg), wantNeg);
}

TEST(EvalOneHot, FloatIndicesTruncateAndOutOfRangeRowsStayOff) {
  Graph g;
  Node *n = g.createNode(
      Op::kOneHot,
      {f32(g, {5}, {0.0f, 1.7f, -1.2f, 3.0f, -4.0f}), scalarF32(g, 3.0f), i64(g, {2}, {-1, 1})}, 1,
      "oh");
  n->setAttr("axis", 0);
  Tensor out = eval1(n);
  ASSERT_EQ(out.type().str(), "i64[3,5]");
  // Columns: 0 -> 0, 1.7 -> 1, -1.2 -> -1 -> 2, 3 and -4 out of range -> all off.
  EXPECT_EQ(values<int64_t>(out), (std::vector<int64_t>{1, -1, -1, -1, -1, //
                                                        -1, 1, -1, -1, -1, //
                                                        -1, -1, 1, -1, -1}));
}

} // namespace
} // namespace dlc::evaltest
