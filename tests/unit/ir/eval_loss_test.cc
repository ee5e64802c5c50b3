// Reference evaluation of NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: small cases
// worked by hand (weights, ignore_index, the three reductions, the [N, C, d1, ..., dk]
// layout), SoftmaxCrossEntropyLoss against LogSoftmax followed by NegativeLogLikelihoodLoss on
// random inputs, and the errors.
#include <limits>

#include "tests/unit/ir/eval_test_util.h"

namespace dlc::optest {
namespace {

constexpr Op kNll = Op::kNegativeLogLikelihoodLoss;
constexpr Op kSce = Op::kSoftmaxCrossEntropyLoss;

class LossEval : public EvalTest {};

TEST_F(LossEval, NllReductionsAndWeights) {
  Tensor x = f32({2, 3}, {-1, -2, -3, -4, -5, -6});
  Tensor target = i64({2}, {2, 0});
  Tensor weight = f32({3}, {1, 2, 3});
  AttrMap none = {{"reduction", Attribute("none")}}, sum = {{"reduction", Attribute("sum")}};
  Tensor loss = eval1(kNll, {x, target}, none);
  EXPECT_EQ(loss.shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(values(loss), (std::vector<double>{3, 4}));
  EXPECT_EQ(values(eval1(kNll, {x, target, weight}, none)), (std::vector<double>{9, 4}));
  EXPECT_EQ(values(eval1(kNll, {x, target, weight}, sum)), (std::vector<double>{13}));
  // "mean" (the default) divides by the sum of the weights applied: 13 / (3 + 1).
  Tensor mean = eval1(kNll, {x, target, weight});
  EXPECT_TRUE(mean.shape().empty());
  EXPECT_EQ(values(mean), (std::vector<double>{3.25}));
  EXPECT_EQ(values(eval1(kNll, {x, target})), (std::vector<double>{3.5}));
}

TEST_F(LossEval, NllIgnoreIndex) {
  Tensor x = f32({2, 3}, {-1, -2, -3, -4, -5, -6});
  Tensor weight = f32({3}, {1, 2, 3});
  AttrMap ignore0 = {{"ignore_index", 0}};
  EXPECT_EQ(values(eval1(kNll, {x, i64({2}, {2, 0})},
                         {{"ignore_index", 0}, {"reduction", Attribute("none")}})),
            (std::vector<double>{3, 0}));
  // Ignored samples leave the mean's denominator too.
  EXPECT_EQ(values(eval1(kNll, {x, i64({2}, {2, 0})}, ignore0)), (std::vector<double>{3}));
  EXPECT_EQ(values(eval1(kNll, {x, i64({2}, {2, 0}), weight}, ignore0)), (std::vector<double>{3}));
  // A negative ignore_index, outside [0, C), is allowed in the target.
  EXPECT_EQ(values(eval1(kNll, {x, i32({2}, {-1, 1}), weight}, {{"ignore_index", -1}})),
            (std::vector<double>{5}));
  // Every sample ignored: 0 / 0.
  EXPECT_TRUE(std::isnan(values(eval1(kNll, {x, i64({2}, {1, 1})}, {{"ignore_index", 1}}))[0]));
  EXPECT_EQ(values(eval1(kNll, {x, i64({2}, {1, 1})},
                         {{"ignore_index", 1}, {"reduction", Attribute("sum")}})),
            (std::vector<double>{0}));
}

TEST_F(LossEval, NllSpatialLayout) {
  // [N=2, C=2, d1=3]: the class axis sits between the batch and the spatial axes.
  Tensor x = f64({2, 2, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  Tensor target = i64({2, 3}, {1, 0, 1, 0, 0, 1});
  Tensor loss = eval1(kNll, {x, target}, {{"reduction", Attribute("none")}});
  EXPECT_EQ(loss.dtype(), DType::kF64);
  EXPECT_EQ(loss.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values(loss), (std::vector<double>{-4, -2, -6, -7, -8, -12}));
}

TEST_F(LossEval, SceIsLogSoftmaxThenNll) {
  for (std::vector<int64_t> shape : {std::vector<int64_t>{3, 5}, {2, 4, 3, 2}}) {
    Tensor x = randomFloat(DType::kF64, shape);
    std::vector<int64_t> targetShape = shape;
    targetShape.erase(targetShape.begin() + 1);
    Tensor target = randomInt(DType::kI64, targetShape, 0, shape[1] - 1);
    Tensor weight = randomFloat(DType::kF64, {shape[1]}, 0.5, 2);
    Tensor logProb = eval1(Op::kLogSoftmax, {x}, {{"axis", 1}});
    for (const char *reduction : {"none", "sum", "mean"}) {
      AttrMap attrs = {{"reduction", Attribute(reduction)}, {"ignore_index", 1}};
      auto r = eval(kSce, {x, target, weight}, attrs, 2);
      ASSERT_TRUE(r.hasValue()) << r.status().message();
      Tensor nll = eval1(kNll, {logProb, target, weight}, attrs);
      EXPECT_EQ((*r)[0].shape(), nll.shape()) << reduction;
      expectClose(values((*r)[0]), values(nll), 1e-12);
      expectClose(values((*r)[1]), values(logProb), 1e-12, 1e-14);
    }
  }
}

TEST_F(LossEval, SceLargeScoresAndHalfTypes) {
  // exp(1000) overflows; the largest score is subtracted first.
  Tensor x = f32({1, 3}, {1000, 1001, 1002});
  double s = 1 + std::exp(-1.0) + std::exp(-2.0);
  expectClose(values(eval1(kSce, {x, i64({1}, {0})})), {2 + std::log(s)}, 1e-6);
  Tensor h = f32({2, 2}, {0, 0, 1, 1}).castTo(DType::kF16);
  auto r = eval(kSce, {h, i32({2}, {0, 1})}, {{"reduction", Attribute("none")}}, 2);
  ASSERT_TRUE(r.hasValue()) << r.status().message();
  EXPECT_EQ((*r)[0].dtype(), DType::kF16);
  expectClose(values((*r)[0]), {std::log(2.0), std::log(2.0)}, 1e-3);
  expectClose(values((*r)[1]), std::vector<double>(4, -std::log(2.0)), 1e-3);
}

TEST_F(LossEval, Errors) {
  Tensor x = f32({2, 5}, std::vector<float>(10, -1));
  EXPECT_EQ(evalError(kNll, {x, i64({2}, {0, 7})}),
            "node 'e' (NegativeLogLikelihoodLoss): target value 7 at flat index 1 is outside "
            "[0, 5) and is not ignore_index");
  EXPECT_EQ(evalError(kSce, {x, i64({2}, {-1, 0})}, {{"ignore_index", -2}}),
            "node 'e' (SoftmaxCrossEntropyLoss): labels value -1 at flat index 0 is outside "
            "[0, 5) and is not ignore_index");
  EXPECT_EQ(evalError(kNll, {x, i64({2}, {0, 1}), f32({4}, {1, 1, 1, 1})}),
            "node 'e' (NegativeLogLikelihoodLoss): weight has 4 elements but input has 5 classes");
}

} // namespace
} // namespace dlc::optest
