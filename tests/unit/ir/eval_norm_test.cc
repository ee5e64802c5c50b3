// Reference evaluation of the normalisations and Dropout against the ONNX formulas written out
// here element by element, on random inputs with fixed seeds.
#include <functional>
#include <limits>

#include "tests/unit/ir/eval_nn_test_util.h"

namespace dlc::nntest {
namespace {

using NormEval = NnEval;

/// Mean and population variance of v[begin + i * stride], i < n.
std::pair<double, double> stats(const std::vector<double> &v, const std::vector<size_t> &at) {
  double m = 0, s = 0;
  for (size_t i : at)
    m += v[i];
  m /= static_cast<double>(at.size());
  for (size_t i : at)
    s += (v[i] - m) * (v[i] - m);
  return {m, s / static_cast<double>(at.size())};
}

TEST_F(NormEval, BatchNormalizationInference) {
  for (DType dt : {DType::kF32, DType::kF64, DType::kF16}) {
    Tensor x = randomTensor({2, 3, 4, 5}, 1, dt), scale = randomTensor({3}, 2, dt);
    Tensor b = randomTensor({3}, 3, dt), mean = randomTensor({3}, 4, dt);
    Tensor var = randomTensor({3}, 5, dt, 0.5, 2.0);
    std::vector<double> xs = values(x), expected;
    for (size_t i = 0; i < xs.size(); ++i) {
      size_t c = (i / 20) % 3;
      expected.push_back((xs[i] - values(mean)[c]) / std::sqrt(values(var)[c] + 1e-3) *
                             values(scale)[c] +
                         values(b)[c]);
    }
    Tensor y =
        eval1(Op::kBatchNormalization, {x, scale, b, mean, var}, {{"epsilon", Attribute(1e-3f)}});
    EXPECT_EQ(y.dtype(), dt);
    double tol = dt == DType::kF16 ? 1e-2 : 1e-6;
    expectClose(y, expected, tol, tol);
  }
}

TEST_F(NormEval, BatchNormalizationTrainingUsesTheBatchStatistics) {
  // ONNX (opset 15): y normalised with the batch's mean and biased variance over N and the
  // spatial axes; running = input * momentum + batch * (1 - momentum).
  Tensor x = randomTensor({2, 3, 4}, 1), scale = randomTensor({3}, 2), b = randomTensor({3}, 3);
  Tensor mean = randomTensor({3}, 4), var = randomTensor({3}, 5, DType::kF32, 0.5, 2.0);
  const double eps = 1e-2, momentum = 0.75;
  std::vector<double> xs = values(x), expected(xs.size()), runMean, runVar;
  for (size_t c = 0; c < 3; ++c) {
    std::vector<size_t> at;
    for (size_t n = 0; n < 2; ++n)
      for (size_t i = 0; i < 4; ++i)
        at.push_back((n * 3 + c) * 4 + i);
    auto [m, v] = stats(xs, at);
    for (size_t i : at)
      expected[i] = (xs[i] - m) / std::sqrt(v + eps) * values(scale)[c] + values(b)[c];
    runMean.push_back(values(mean)[c] * momentum + m * (1 - momentum));
    runVar.push_back(values(var)[c] * momentum + v * (1 - momentum));
  }
  auto r = eval(Op::kBatchNormalization, {x, scale, b, mean, var},
                {{"training_mode", Attribute(1)},
                 {"epsilon", Attribute(static_cast<float>(eps))},
                 {"momentum", Attribute(static_cast<float>(momentum))}},
                3);
  ASSERT_TRUE(r.hasValue()) << r.status().message();
  expectClose(r->at(0), expected, 1e-6, 1e-6);
  expectClose(r->at(1), runMean, 1e-6, 1e-6);
  expectClose(r->at(2), runVar, 1e-6, 1e-6);
  // Inference ignores the batch: the running statistics pass through unchanged.
  auto inference = eval(Op::kBatchNormalization, {x, scale, b, mean, var}, {}, 3);
  ASSERT_TRUE(inference.hasValue()) << inference.status().message();
  EXPECT_TRUE(inference->at(1).identical(mean));
}

TEST_F(NormEval, InstanceNormalization) {
  Tensor x = randomTensor({2, 3, 4, 3}, 7), scale = randomTensor({3}, 8), b = randomTensor({3}, 9);
  std::vector<double> xs = values(x), expected(xs.size());
  for (size_t plane = 0; plane < 6; ++plane) {
    std::vector<size_t> at;
    for (size_t i = 0; i < 12; ++i)
      at.push_back(plane * 12 + i);
    auto [m, v] = stats(xs, at);
    for (size_t i : at)
      expected[i] =
          (xs[i] - m) / std::sqrt(v + 1e-5) * values(scale)[plane % 3] + values(b)[plane % 3];
  }
  expectClose(eval1(Op::kInstanceNormalization, {x, scale, b}), expected, 1e-5, 1e-5);
}

TEST_F(NormEval, GroupNormalization) {
  // 6 channels in 2 groups of 3; scale and bias per channel (opset 21).
  Tensor x = randomTensor({2, 6, 2, 2}, 10), scale = randomTensor({6}, 11),
         b = randomTensor({6}, 12);
  std::vector<double> xs = values(x), expected(xs.size());
  for (size_t n = 0; n < 2; ++n)
    for (size_t g = 0; g < 2; ++g) {
      std::vector<size_t> at;
      for (size_t i = 0; i < 12; ++i)
        at.push_back(n * 24 + g * 12 + i);
      auto [m, v] = stats(xs, at);
      for (size_t i : at) {
        size_t c = (i / 4) % 6;
        expected[i] = (xs[i] - m) / std::sqrt(v + 1e-2) * values(scale)[c] + values(b)[c];
      }
    }
  Tensor y = eval1(Op::kGroupNormalization, {x, scale, b},
                   {{"num_groups", Attribute(2)}, {"epsilon", Attribute(1e-2f)}});
  expectClose(y, expected, 1e-5, 1e-5);
}

TEST_F(NormEval, LayerNormalizationEveryAxisWithMeanAndInvStdDev) {
  std::vector<int64_t> shape{2, 3, 4};
  Tensor x = randomTensor(shape, 13);
  std::vector<double> xs = values(x);
  for (int64_t axis : {-3, -2, -1, 0, 1, 2}) {
    int64_t a = axis < 0 ? axis + 3 : axis;
    std::vector<int64_t> norm(shape.begin() + a, shape.end());
    int64_t cols = 1;
    for (int64_t d : norm)
      cols *= d;
    int64_t rows = 24 / cols;
    Tensor scale = randomTensor(norm, 14), b = randomTensor(norm, 15);
    std::vector<double> expected(24), means, invs;
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<size_t> at;
      for (int64_t i = 0; i < cols; ++i)
        at.push_back(static_cast<size_t>(r * cols + i));
      auto [m, v] = stats(xs, at);
      means.push_back(m);
      invs.push_back(1.0 / std::sqrt(v + 1e-5));
      for (int64_t i = 0; i < cols; ++i)
        expected[at[static_cast<size_t>(i)]] = (xs[at[static_cast<size_t>(i)]] - m) * invs.back() *
                                                   values(scale)[static_cast<size_t>(i)] +
                                               values(b)[static_cast<size_t>(i)];
    }
    auto r = eval(Op::kLayerNormalization, {x, scale, b}, {{"axis", Attribute(axis)}}, 3);
    ASSERT_TRUE(r.hasValue()) << r.status().message();
    expectClose(r->at(0), expected, 1e-5, 1e-5, "Y axis " + std::to_string(axis));
    std::vector<int64_t> statShape = shape;
    for (int64_t d = a; d < 3; ++d)
      statShape[static_cast<size_t>(d)] = 1;
    EXPECT_EQ(r->at(1).shape(), statShape);
    EXPECT_EQ(r->at(1).dtype(), DType::kF32);
    expectClose(r->at(1), means, 1e-6, 0, "Mean");
    expectClose(r->at(2), invs, 1e-5, 1e-6, "InvStdDev");
  }
}

TEST_F(NormEval, LayerNormalizationBroadcastScaleNoBiasF16AndStashF64) {
  Tensor x = randomTensor({3, 4}, 16, DType::kF16);
  Tensor scale = f32({1}, {2.0f}).castTo(DType::kF16);
  std::vector<double> xs = values(x), expected;
  std::vector<double> invs;
  for (size_t r = 0; r < 3; ++r) {
    std::vector<size_t> at{r * 4, r * 4 + 1, r * 4 + 2, r * 4 + 3};
    auto [m, v] = stats(xs, at);
    invs.push_back(1.0 / std::sqrt(v + 1e-5));
    for (size_t i : at)
      expected.push_back((xs[i] - m) * invs.back() * 2.0);
  }
  auto r = eval(Op::kLayerNormalization, {x, scale}, {{"stash_type", Attribute(11)}}, 3);
  ASSERT_TRUE(r.hasValue()) << r.status().message();
  EXPECT_EQ(r->at(0).dtype(), DType::kF16);
  expectClose(r->at(0), expected, 1e-2, 1e-2);
  EXPECT_EQ(r->at(2).dtype(), DType::kF64);
  expectClose(r->at(2), invs, 1e-9, 1e-9);
  EXPECT_EQ(evalError(Op::kLayerNormalization, {randomTensor({3, 4}, 1), randomTensor({3}, 2)}),
            "node 'n' (LayerNormalization): Scale of shape [3] does not broadcast to [4]");
}

TEST_F(NormEval, MeanVarianceNormalization) {
  Tensor x = randomTensor({2, 3, 2, 2}, 17);
  std::vector<double> xs = values(x);
  auto check = [&](std::vector<int64_t> axes, std::function<size_t(size_t)> groupOf, int groups) {
    std::vector<std::vector<size_t>> members(static_cast<size_t>(groups));
    for (size_t i = 0; i < xs.size(); ++i)
      members[groupOf(i)].push_back(i);
    std::vector<double> expected(xs.size());
    for (const auto &at : members) {
      auto [m, v] = stats(xs, at);
      for (size_t i : at)
        expected[i] = (xs[i] - m) / (std::sqrt(v) + 1e-9);
    }
    AttrMap attrs;
    if (!axes.empty())
      attrs["axes"] = Attribute(axes);
    expectClose(eval1(Op::kMeanVarianceNormalization, {x}, attrs), expected, 1e-5, 1e-5);
  };
  check(
      {}, [](size_t i) { return (i / 4) % 3; }, 3); // default axes 0, 2, 3
  check(
      {-1}, [](size_t i) { return i / 2; }, 12); // last axis
  check(
      {1, 3}, [](size_t i) { return (i / 12) * 2 + (i / 2) % 2; }, 4);
}

TEST_F(NormEval, LpNormalization) {
  Tensor x = randomTensor({2, 3, 4}, 18);
  std::vector<double> xs = values(x);
  for (int64_t p : {1, 2})
    for (int64_t axis : {0, 1, -1}) {
      int64_t a = axis < 0 ? 2 : axis;
      int64_t strides[] = {12, 4, 1}, dims[] = {2, 3, 4};
      std::vector<double> expected(xs.size());
      for (size_t i = 0; i < xs.size(); ++i) {
        int64_t idx = static_cast<int64_t>(i);
        int64_t base = idx - ((idx / strides[a]) % dims[a]) * strides[a];
        double norm = 0;
        for (int64_t k = 0; k < dims[a]; ++k) {
          double v = xs[static_cast<size_t>(base + k * strides[a])];
          norm += p == 1 ? std::abs(v) : v * v;
        }
        expected[i] = xs[i] / (p == 1 ? norm : std::sqrt(norm));
      }
      expectClose(
          eval1(Op::kLpNormalization, {x}, {{"p", Attribute(p)}, {"axis", Attribute(axis)}}),
          expected, 1e-6, 1e-6);
    }
}

TEST_F(NormEval, LRN) {
  // onnx/backend/test/case/node/lrn.py: square_sum over channels [c - floor((size-1)/2),
  // c + ceil((size-1)/2)], y = x / (bias + alpha / size * square_sum) ^ beta.
  Tensor x = randomTensor({2, 5, 3, 2}, 19);
  std::vector<double> xs = values(x), expected(xs.size());
  const int64_t size = 4;
  const double alpha = 0.0002, beta = 0.5, bias = 2.0;
  for (size_t i = 0; i < xs.size(); ++i) {
    int64_t c = static_cast<int64_t>(i / 6) % 5, rest = static_cast<int64_t>(i) - c * 6;
    double sq = 0;
    for (int64_t k = std::max<int64_t>(0, c - 1); k <= std::min<int64_t>(4, c + 2); ++k)
      sq += xs[static_cast<size_t>(rest + k * 6)] * xs[static_cast<size_t>(rest + k * 6)];
    expected[i] = xs[i] / std::pow(bias + alpha / size * sq, beta);
  }
  Tensor y = eval1(Op::kLRN, {x},
                   {{"size", Attribute(size)},
                    {"alpha", Attribute(static_cast<float>(alpha))},
                    {"beta", Attribute(static_cast<float>(beta))},
                    {"bias", Attribute(static_cast<float>(bias))}});
  expectClose(y, expected, 1e-6, 1e-6);
}

TEST_F(NormEval, DropoutInference) {
  Tensor x = randomTensor({3, 4}, 20);
  auto r = eval(Op::kDropout, {x}, {}, 2);
  ASSERT_TRUE(r.hasValue()) << r.status().message();
  EXPECT_TRUE(r->at(0).identical(x));
  EXPECT_EQ(r->at(1).dtype(), DType::kBool);
  EXPECT_EQ(values(r->at(1)), std::vector<double>(12, 1.0));
  Tensor trueT = Tensor::zeros(DType::kBool, {});
  trueT.mutableData<bool>()[0] = true;
  // Training with ratio 0 is the identity too.
  auto zero = eval(Op::kDropout, {x, f32({}, {0.0f}), trueT}, {}, 2);
  ASSERT_TRUE(zero.hasValue()) << zero.status().message();
  EXPECT_TRUE(zero->at(0).identical(x));
}

TEST_F(NormEval, DropoutTrainingKeepsAndScalesByTheMask) {
  Tensor x = randomTensor({64, 64}, 21);
  Tensor trueT = Tensor::zeros(DType::kBool, {});
  trueT.mutableData<bool>()[0] = true;
  auto train = eval(Op::kDropout, {x, f32({}, {0.25f}), trueT}, {{"seed", Attribute(7)}}, 2);
  ASSERT_TRUE(train.hasValue()) << train.status().message();
  std::vector<double> xs = values(x), ys = values(train->at(0)), mask = values(train->at(1));
  int64_t kept = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    kept += mask[i] != 0;
    EXPECT_NEAR(ys[i], mask[i] != 0 ? xs[i] / 0.75 : 0.0, 1e-6) << "element " << i;
  }
  // 4,096 draws keep about three quarters (binomial standard deviation about 28).
  EXPECT_NEAR(static_cast<double>(kept), 3072.0, 200.0);
  // The mask is a function of the seed: the same seed repeats it, another seed does not.
  auto again = eval(Op::kDropout, {x, f32({}, {0.25f}), trueT}, {{"seed", Attribute(7)}}, 2);
  auto other = eval(Op::kDropout, {x, f32({}, {0.25f}), trueT}, {{"seed", Attribute(8)}}, 2);
  ASSERT_TRUE(again.hasValue() && other.hasValue());
  EXPECT_TRUE(again->at(1).identical(train->at(1)));
  EXPECT_FALSE(other->at(1).identical(train->at(1)));
  auto one = eval(Op::kDropout, {x, f32({}, {1.0f}), trueT}, {}, 2);
  ASSERT_FALSE(one.hasValue());
  EXPECT_EQ(one.status().message(),
            "node 'n' (Dropout): ratio must be in [0, 1) in training, got 1");
}

} // namespace
} // namespace dlc::nntest
