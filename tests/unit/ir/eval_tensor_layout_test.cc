// Reference evaluation of Pad, CenterCropPad, DepthToSpace, SpaceToDepth, Trilu, EyeLike and
// ReverseSequence.
#include <limits>

#include "eval_tensor_test_util.h"
#include "ir/eval/eval_util.h"

namespace dlc::evaltest {
namespace {

std::vector<float> iota(int n, float from = 0) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i)
    v.push_back(from + static_cast<float>(i));
  return v;
}

/// Pad of a 1-D f32 tensor; `value` < 0 leaves constant_value absent.
Node *pad1d(Graph &g, std::vector<float> data, std::vector<int64_t> pads, const char *mode,
            float value = -1) {
  const int64_t n = static_cast<int64_t>(data.size());
  std::vector<Value *> in{f32(g, {n}, std::move(data)), i64(g, {2}, std::move(pads))};
  if (value >= 0)
    in.push_back(scalarF32(g, value));
  Node *node = g.createNode(Op::kPad, in, 1, "pad");
  node->setAttr("mode", mode);
  return node;
}

TEST(EvalPad, SpecExamplesOfEveryMode) {
  const std::vector<float> data = {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f};
  const std::vector<std::pair<const char *, std::vector<float>>> cases = {
      {"constant", {0, 0, 1.0f, 1.2f, 0, 0, 2.3f, 3.4f, 0, 0, 4.5f, 5.7f}},
      {"reflect", {1.0f, 1.2f, 1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f, 4.5f, 5.7f}},
      {"edge", {1.0f, 1.0f, 1.0f, 1.2f, 2.3f, 2.3f, 2.3f, 3.4f, 4.5f, 4.5f, 4.5f, 5.7f}}};
  for (const auto &[mode, want] : cases) {
    Graph g;
    Node *n = g.createNode(Op::kPad, {f32(g, {3, 2}, data), i64(g, {4}, {0, 2, 0, 0})}, 1, "pad");
    n->setAttr("mode", mode);
    Tensor out = eval1(n);
    EXPECT_EQ(out.type().str(), "f32[3,4]");
    EXPECT_EQ(values<float>(out), want) << mode;
  }
  Graph g;
  Node *wrap = g.createNode(Op::kPad, {f32(g, {3, 2}, data), i64(g, {4}, {2, 1, 1, 1})}, 1, "pad");
  wrap->setAttr("mode", "wrap");
  Tensor w = eval1(wrap);
  EXPECT_EQ(w.type().str(), "f32[6,4]");
  EXPECT_EQ(values<float>(w), (std::vector<float>{3.4f, 2.3f, 3.4f, 2.3f, 5.7f, 4.5f, 5.7f, 4.5f,
                                                  1.2f, 1.0f, 1.2f, 1.0f, 3.4f, 2.3f, 3.4f, 2.3f,
                                                  5.7f, 4.5f, 5.7f, 4.5f, 1.2f, 1.0f, 1.2f, 1.0f}));
}

TEST(EvalPad, NegativePadsCropFirst) {
  Graph g;
  const std::vector<float> d = {1, 2, 3, 4, 5};
  EXPECT_EQ(values<float>(eval1(pad1d(g, d, {-1, 2}, "reflect"))),
            (std::vector<float>{2, 3, 4, 5, 4, 3}));
  EXPECT_EQ(values<float>(eval1(pad1d(g, d, {-1, 2}, "edge"))),
            (std::vector<float>{2, 3, 4, 5, 5, 5}));
  EXPECT_EQ(values<float>(eval1(pad1d(g, d, {-1, 2}, "wrap"))),
            (std::vector<float>{2, 3, 4, 5, 2, 3}));
  EXPECT_EQ(values<float>(eval1(pad1d(g, d, {-1, 2}, "constant", 9))),
            (std::vector<float>{2, 3, 4, 5, 9, 9}));
  EXPECT_EQ(values<float>(eval1(pad1d(g, d, {2, -3}, "wrap"))), (std::vector<float>{1, 2, 1, 2}));
  EXPECT_EQ(values<float>(eval1(pad1d(g, d, {2, -3}, "edge"))), (std::vector<float>{1, 1, 1, 2}));
  // Cropped away entirely: constant mode fills, the others cannot.
  EXPECT_EQ(values<float>(eval1(pad1d(g, {1, 2, 3}, {-5, 4}, "constant", 7))),
            (std::vector<float>{7, 7}));
  EXPECT_EQ(evalError(pad1d(g, {1, 2, 3}, {-5, 4}, "edge")),
            "node 'pad' (Pad): pads (-5, 4) crop more than axis 0 of size 3 holds; mode 'edge' "
            "cannot pad it");
  EXPECT_EQ(evalError(pad1d(g, {1, 2, 3}, {-3, 1}, "wrap")),
            "node 'pad' (Pad): mode 'wrap' cannot pad axis 0: it is empty after cropping");
  EXPECT_EQ(values<float>(eval1(pad1d(g, d, {2, -3}, "reflect"))),
            (std::vector<float>{1, 2, 1, 2}));
}

TEST(EvalPad, ExtremePadsDoNotOverflow) {
  // dim 3 + (INT64_MIN + 10) + (INT64_MAX - 5) = 7 elements, all outside the data.
  Graph g;
  Node *n =
      pad1d(g, {1, 2, 3},
            {std::numeric_limits<int64_t>::min() + 10, std::numeric_limits<int64_t>::max() - 5},
            "constant", 4);
  EXPECT_EQ(values<float>(eval1(n)), std::vector<float>(7, 4.0f));
}

TEST(EvalPad, ReflectAndWrapRepeatPastTheAxisLength) {
  Graph g;
  EXPECT_EQ(values<float>(eval1(pad1d(g, {1, 2, 3}, {5, 0}, "reflect"))),
            (std::vector<float>{2, 1, 2, 3, 2, 1, 2, 3}));
  EXPECT_EQ(values<float>(eval1(pad1d(g, {1, 2, 3}, {0, 6}, "reflect"))),
            (std::vector<float>{1, 2, 3, 2, 1, 2, 3, 2, 1}));
  EXPECT_EQ(values<float>(eval1(pad1d(g, {7}, {2, 3}, "reflect"))),
            (std::vector<float>{7, 7, 7, 7, 7, 7}));
  EXPECT_EQ(values<float>(eval1(pad1d(g, {1, 2, 3}, {4, 5}, "wrap"))),
            (std::vector<float>{3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2}));
}

TEST(EvalPad, AxesInputAndIntegerData) {
  Graph g;
  Node *n = g.createNode(Op::kPad,
                         {i32(g, {2, 3}, {1, 2, 3, 4, 5, 6}), i64(g, {2}, {1, 2}), i32(g, {}, {-8}),
                          i64(g, {1}, {-1})},
                         1, "pad");
  Tensor out = eval1(n);
  EXPECT_EQ(out.type().str(), "i32[2,6]");
  EXPECT_EQ(values<int32_t>(out), (std::vector<int32_t>{-8, 1, 2, 3, -8, -8, -8, 4, 5, 6, -8, -8}));
  // No constant_value: zeros; reflect on axis 0 only.
  Node *r = g.createNode(Op::kPad,
                         {f32(g, {3, 2}, iota(6)), i64(g, {2}, {2, 1}), nullptr, i64(g, {1}, {0})},
                         1, "pad");
  r->setAttr("mode", "reflect");
  EXPECT_EQ(values<float>(eval1(r)), (std::vector<float>{4, 5, 2, 3, 0, 1, 2, 3, 4, 5, 2, 3}));
}

TEST(EvalCenterCropPad, CropPadAndAxes) {
  Graph g;
  // Crop 5 -> 2 keeps [1, 3); pad 3 -> 6 puts the data at [1, 4).
  Node *crop =
      g.createNode(Op::kCenterCropPad, {f32(g, {5}, iota(5, 1)), i64(g, {1}, {2})}, 1, "ccp");
  EXPECT_EQ(values<float>(eval1(crop)), (std::vector<float>{2, 3}));
  Node *pad =
      g.createNode(Op::kCenterCropPad, {f32(g, {3}, iota(3, 1)), i64(g, {1}, {6})}, 1, "ccp");
  EXPECT_EQ(values<float>(eval1(pad)), (std::vector<float>{0, 1, 2, 3, 0, 0}));
  // [4, 3] -> rows cropped to 2 (start 1), cols padded to 5 (start 1), through axes [0, -1].
  Node *both = g.createNode(Op::kCenterCropPad, {f32(g, {4, 3}, iota(12, 1)), i64(g, {2}, {2, 5})},
                            1, "ccp");
  both->setAttr("axes", std::vector<int64_t>{0, -1});
  Tensor out = eval1(both);
  EXPECT_EQ(out.type().str(), "f32[2,5]");
  EXPECT_EQ(values<float>(out), (std::vector<float>{0, 4, 5, 6, 0, 0, 7, 8, 9, 0}));
}

TEST(EvalDepthToSpace, SpecExamplesForBothModes) {
  Graph g;
  Value *x = f32(g, {1, 8, 2, 3}, iota(48));
  Node *dcr = g.createNode(Op::kDepthToSpace, {x}, 1, "d2s");
  dcr->setAttr("blocksize", 2);
  Tensor a = eval1(dcr);
  EXPECT_EQ(a.type().str(), "f32[1,2,4,6]");
  EXPECT_EQ(values<float>(a),
            (std::vector<float>{0,  12, 1,  13, 2,  14, 24, 36, 25, 37, 26, 38, 3,  15, 4,  16,
                                5,  17, 27, 39, 28, 40, 29, 41, 6,  18, 7,  19, 8,  20, 30, 42,
                                31, 43, 32, 44, 9,  21, 10, 22, 11, 23, 33, 45, 34, 46, 35, 47}));
  Node *crd = g.createNode(Op::kDepthToSpace, {x}, 1, "d2s");
  crd->setAttr("blocksize", 2);
  crd->setAttr("mode", "CRD");
  EXPECT_EQ(values<float>(eval1(crd)),
            (std::vector<float>{0,  6,  1,  7,  2,  8,  12, 18, 13, 19, 14, 20, 3,  9,  4,  10,
                                5,  11, 15, 21, 16, 22, 17, 23, 24, 30, 25, 31, 26, 32, 36, 42,
                                37, 43, 38, 44, 27, 33, 28, 34, 29, 35, 39, 45, 40, 46, 41, 47}));
}

TEST(EvalSpaceToDepth, InvertsDepthToSpaceInDcrMode) {
  Graph g;
  const std::vector<float> data = randomFloats(2 * 18 * 2 * 3, 5);
  Node *d2s = g.createNode(Op::kDepthToSpace, {f32(g, {2, 18, 2, 3}, data)}, 1, "d2s");
  d2s->setAttr("blocksize", 3);
  Tensor space = eval1(d2s);
  ASSERT_EQ(space.type().str(), "f32[2,2,6,9]");
  Node *s2d = g.createNode(Op::kSpaceToDepth, {g.addConstant("s", space)}, 1, "s2d");
  s2d->setAttr("blocksize", 3);
  Tensor back = eval1(s2d);
  EXPECT_EQ(back.type().str(), "f32[2,18,2,3]");
  EXPECT_EQ(values<float>(back), data);
  // Spec example: [1,1,4,6] -> [1,4,2,3]: out[(b1 * 2 + b2)][h][w] = in[h * 2 + b1][w * 2 + b2].
  Node *small = g.createNode(Op::kSpaceToDepth, {f32(g, {1, 1, 4, 6}, iota(24))}, 1, "s2d");
  small->setAttr("blocksize", 2);
  std::vector<float> want;
  for (int b1 = 0; b1 < 2; ++b1)
    for (int b2 = 0; b2 < 2; ++b2)
      for (int h = 0; h < 2; ++h)
        for (int w = 0; w < 3; ++w)
          want.push_back(static_cast<float>((h * 2 + b1) * 6 + w * 2 + b2));
  EXPECT_EQ(values<float>(eval1(small)), want);
}

TEST(EvalTrilu, UpperAndLowerWithK) {
  const std::vector<float> data = randomFloats(2 * 3 * 4, 8);
  for (int upper : {0, 1})
    for (int64_t k : {-5, -1, 0, 2, 7}) {
      Graph g;
      Node *n = g.createNode(Op::kTrilu, {f32(g, {2, 3, 4}, data), scalarI64(g, k)}, 1, "tri");
      n->setAttr("upper", upper);
      std::vector<float> want = data;
      for (int m = 0; m < 2; ++m)
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 4; ++j)
            if (upper ? j < i + k : j > i + k)
              want[static_cast<size_t>((m * 3 + i) * 4 + j)] = 0;
      EXPECT_EQ(values<float>(eval1(n)), want) << "upper " << upper << " k " << k;
    }
  Graph g;
  Node *noK = g.createNode(Op::kTrilu, {i64(g, {2, 2}, {1, 2, 3, 4})}, 1, "tri");
  EXPECT_EQ(values<int64_t>(eval1(noK)), (std::vector<int64_t>{1, 2, 0, 4}));
}

TEST(EvalEyeLike, DiagonalsAndDtypes) {
  Graph g;
  Value *x = f32(g, {3, 4}, randomFloats(12, 2));
  for (int64_t k : {-4, -2, 0, 1, 3, 9}) {
    Node *n = g.createNode(Op::kEyeLike, {x}, 1, "eye");
    n->setAttr("k", k);
    n->setAttr("dtype", DType::kI32);
    std::vector<int32_t> want(12, 0);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j)
        want[static_cast<size_t>(i * 4 + j)] = j - i == k ? 1 : 0;
    Tensor out = eval1(n);
    EXPECT_EQ(out.type().str(), "i32[3,4]");
    EXPECT_EQ(values<int32_t>(out), want) << "k " << k;
  }
  Tensor same = eval1(g.createNode(Op::kEyeLike, {x}, 1, "eye"));
  EXPECT_EQ(same.type().str(), "f32[3,4]");
  EXPECT_EQ(values<float>(same), (std::vector<float>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}));
  Node *b = g.createNode(Op::kEyeLike, {x}, 1, "eye");
  b->setAttr("dtype", DType::kBool);
  EXPECT_EQ(values<bool>(eval1(b)), (std::vector<bool>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}));
}

TEST(EvalReverseSequence, SpecExamples) {
  Graph g;
  Value *x = i64(g, {4, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
  Node *time = g.createNode(Op::kReverseSequence, {x, i64(g, {4}, {4, 3, 2, 1})}, 1, "rs");
  EXPECT_EQ(values<int64_t>(eval1(time)),
            (std::vector<int64_t>{12, 9, 6, 3, 8, 5, 2, 7, 4, 1, 10, 11, 0, 13, 14, 15}));
  Node *batch = g.createNode(Op::kReverseSequence, {x, i64(g, {4}, {1, 2, 3, 4})}, 1, "rs");
  batch->setAttr("batch_axis", 0);
  batch->setAttr("time_axis", 1);
  EXPECT_EQ(values<int64_t>(eval1(batch)),
            (std::vector<int64_t>{0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12}));
  // Inner dims move with their time step.
  Node *inner =
      g.createNode(Op::kReverseSequence, {f32(g, {3, 1, 2}, iota(6)), i64(g, {1}, {3})}, 1, "rs");
  EXPECT_EQ(values<float>(eval1(inner)), (std::vector<float>{4, 5, 2, 3, 0, 1}));
  Node *bad = g.createNode(Op::kReverseSequence, {x, i64(g, {4}, {1, 5, 1, 1})}, 1, "rs");
  EXPECT_EQ(evalError(bad), "node 'rs' (ReverseSequence): sequence_lens[1] = 5 is out of range "
                            "for time axis 0 of size 4");
}

} // namespace
} // namespace dlc::evaltest

namespace dlc::evaltest {
namespace {

// eval::permuted of a tensor big enough to be copied on several threads (1 MiB and more): a conv
// weight [O, I, kh, kw] re-laid [O, kh, kw, I] as the layout pass does, each element checked
// against the index arithmetic, and a rank-5 permutation whose rows do not start at a
// thread's boundary.
TEST(EvalPermuted, BigTensorsOnThreadsMatchTheIndexArithmetic) {
  auto check = [](std::vector<int64_t> shape, std::vector<int64_t> perm) {
    Tensor in = Tensor::zeros(DType::kI32, shape);
    for (int64_t i = 0; i < in.numElements(); ++i)
      in.mutableData<int32_t>()[i] = static_cast<int32_t>(i * 7 + 3);
    auto out = eval::permuted(in, perm);
    ASSERT_TRUE(out) << out.status().message();
    const size_t rank = shape.size();
    std::vector<int64_t> inStrides(rank, 1);
    for (size_t d = rank - 1; d-- > 0;)
      inStrides[d] = inStrides[d + 1] * shape[d + 1];
    const std::vector<int64_t> &outShape = out->shape();
    for (int64_t o = 0; o < out->numElements(); ++o) {
      int64_t rest = o, src = 0;
      for (size_t d = rank; d-- > 0;) {
        src += (rest % outShape[d]) * inStrides[static_cast<size_t>(perm[d])];
        rest /= outShape[d];
      }
      ASSERT_EQ(out->template data<int32_t>()[o], in.data<int32_t>()[src]) << "element " << o;
    }
  };
  check({512, 256, 3, 3}, {0, 2, 3, 1}); // 4.5 MiB of int32
  check({3, 5, 7, 11, 1021}, {4, 2, 0, 3, 1});
}

} // namespace
} // namespace dlc::evaltest
