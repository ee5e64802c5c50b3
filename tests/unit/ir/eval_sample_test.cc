// Reference evaluation of GridSample (ONNX node-test values, and a trilinear 3-D check) and
// Col2Im (direct loops and the spec example).
#include "tests/unit/ir/eval_nn_test_util.h"

namespace dlc::nntest {
namespace {

using SampleEval = NnEval;

TEST_F(SampleEval, GridSampleNodeTests) {
  // onnx/backend/test/case/node/gridsample.py (opset 16 names: bilinear, bicubic).
  Tensor x = f32({1, 1, 3, 2}, {0, 1, 2, 3, 4, 5});
  Tensor grid = f32({1, 2, 4, 2}, {-1, -1, -0.5f, -0.5f, -0.2f, -0.2f, 0, 0, 0, 0, -0.2f, -0.2f,
                                   0.5f, 0.5f, 1, 1});
  Tensor far = f32({1, 2, 4, 2},
                   {-10, -10, -5, -5, -0.2f, -0.2f, 10, 10, 10, 10, -0.2f, -0.2f, 5, 5, 10, 10});
  struct Case {
    Tensor grid;
    AttrMap attrs;
    std::vector<double> expected;
    double tol;
  } cases[] = {
      {grid, {{"mode", Attribute("bilinear")}}, {0, 0.5, 1.7, 2.5, 2.5, 1.7, 4.5, 1.25}, 1e-6},
      {grid, {{"mode", Attribute("nearest")}}, {0, 0, 2, 2, 2, 2, 5, 0}, 0},
      {grid,
       {{"mode", Attribute("bicubic")}},
       {-0.1406, 0.3828, 1.7556, 2.9688, 2.9688, 1.7556, 5.1445, 1.3906},
       1e-4},
      {grid, {{"align_corners", Attribute(1)}}, {0, 1.25, 2, 2.5, 2.5, 2, 3.75, 5}, 1e-6},
      {far, {{"padding_mode", Attribute("border")}}, {0, 0, 1.7, 5, 5, 1.7, 5, 5}, 1e-6},
      {far,
       {{"padding_mode", Attribute("reflection")}},
       {2.5, 0, 1.7, 2.5, 2.5, 1.7, 5, 2.5},
       1e-6},
      {far, {{"padding_mode", Attribute("zeros")}}, {0, 0, 1.7, 0, 0, 1.7, 0, 0}, 1e-6},
  };
  for (auto &c : cases) {
    Tensor y = eval1(Op::kGridSample, {x, c.grid}, c.attrs);
    EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 2, 4}));
    expectClose(y, c.expected, c.tol);
  }
}

TEST_F(SampleEval, GridSample3DLinearIsTrilinear) {
  // A linear function of the coordinates is reproduced exactly inside the volume:
  // v(d, h, w) = 100 d + 10 h + w, sampled at align_corners positions.
  std::vector<float> v;
  for (int d = 0; d < 3; ++d)
    for (int h = 0; h < 4; ++h)
      for (int w = 0; w < 5; ++w)
        v.push_back(static_cast<float>(100 * d + 10 * h + w));
  Tensor x = f32({1, 1, 3, 4, 5}, v);
  // Two points: (w, h, d) normalised = (0.5, -0.25, 0.2) and (-1, 1, 0).
  Tensor grid = f32({1, 1, 1, 2, 3}, {0.5f, -0.25f, 0.2f, -1, 1, 0});
  Tensor y = eval1(Op::kGridSample, {x, grid}, {{"align_corners", Attribute(1)}});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 1, 1, 2}));
  auto at = [](double w, double h, double d) {
    return 100 * (d + 1) / 2 * 2 + 10 * (h + 1) / 2 * 3 + (w + 1) / 2 * 4;
  };
  expectClose(y, {at(0.5, -0.25, 0.2), at(-1, 1, 0)}, 1e-4);
}

TEST_F(SampleEval, Col2ImAgainstDirectLoops) {
  // Direct: image[n, c, b * s - p + k * d] += input[n, c * prod(block) + k, b].
  const std::vector<int64_t> image{5, 6}, block{2, 3}, strides{2, 1}, dil{1, 2}, pads{1, 0, 0, 1};
  int64_t blocksH = (5 + 1 + 0 - ((2 - 1) * 1 + 1)) / 2 + 1;
  int64_t blocksW = (6 + 0 + 1 - ((3 - 1) * 2 + 1)) / 1 + 1;
  const int64_t C = 2, K = 6, L = blocksH * blocksW;
  Tensor in = randomTensor({2, C * K, L}, 42);
  std::vector<double> xs = values(in), expected(2 * C * 30, 0.0);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t kh = 0; kh < 2; ++kh)
        for (int64_t kw = 0; kw < 3; ++kw)
          for (int64_t bh = 0; bh < blocksH; ++bh)
            for (int64_t bw = 0; bw < blocksW; ++bw) {
              int64_t h = bh * strides[0] - pads[0] + kh * dil[0];
              int64_t w = bw * strides[1] - pads[1] + kw * dil[1];
              if (h < 0 || h >= 5 || w < 0 || w >= 6)
                continue;
              expected[static_cast<size_t>(((n * C + c) * 5 + h) * 6 + w)] +=
                  xs[static_cast<size_t>(((n * C * K) + c * K + kh * 3 + kw) * L + bh * blocksW +
                                         bw)];
            }
  Tensor y = eval1(Op::kCol2Im, {in, i64({2}, image), i64({2}, block)},
                   {{"strides", strides}, {"dilations", dil}, {"pads", pads}});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{2, 2, 5, 6}));
  expectClose(y, expected, 1e-6);
}

TEST_F(SampleEval, Col2ImSpecExample) {
  // onnx/backend/test/case/node/col2im.py: 1..25 as [1, 5, 5], image 5x5, block 1x5.
  std::vector<float> v(25);
  for (int i = 0; i < 25; ++i)
    v[static_cast<size_t>(i)] = static_cast<float>(i + 1);
  Tensor y = eval1(Op::kCol2Im, {f32({1, 5, 5}, v), i64({2}, {5, 5}), i64({2}, {1, 5})});
  EXPECT_EQ(values(y), (std::vector<double>{1,  6,  11, 16, 21, 2,  7,  12, 17, 22, 3,  8, 13,
                                            18, 23, 4,  9,  14, 19, 24, 5,  10, 15, 20, 25}));
}

} // namespace
} // namespace dlc::nntest
