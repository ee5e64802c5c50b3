// Reference evaluation of the unary elementwise ops: math functions and activations against
// their formulas on seeded random inputs, and the spec's corner cases.
#include <functional>
#include <limits>
#include <numbers>

#include "ir/eval/eval.h"
#include "ir/ops/families.h"
#include "tests/unit/ir/eval_test_util.h"

namespace dlc::optest {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

class UnaryEval : public EvalTest {
protected:
  /// Checks `op` against `formula` on random f64, f32 and f16 inputs in [lo, hi].
  void checkFormula(Op op, std::function<double(double)> formula, double lo, double hi,
                    AttrMap attrs = {}) {
    for (DType dtype : {DType::kF64, DType::kF32, DType::kF16, DType::kBF16}) {
      Tensor x = randomFloat(dtype, {3, 7}, lo, hi);
      Tensor r = eval1(op, {x}, attrs);
      ASSERT_EQ(r.dtype(), dtype) << opName(op);
      ASSERT_EQ(r.shape(), x.shape());
      std::vector<double> want;
      for (double v : values(x))
        want.push_back(formula(v));
      double rtol = dtype == DType::kF64 ? 1e-12 : dtype == DType::kF32 ? 2e-6 : 1e-2;
      SCOPED_TRACE(std::string(opName(op)) + " " + std::string(dtypeName(dtype)));
      expectClose(values(r), want, rtol, dtype == DType::kF64 ? 1e-13 : 1e-6);
    }
  }
};

TEST_F(UnaryEval, MathFunctionsFollowTheirFormulas) {
  checkFormula(
      Op::kAcos, [](double x) { return std::acos(x); }, -0.99, 0.99);
  checkFormula(
      Op::kAcosh, [](double x) { return std::acosh(x); }, 1.0, 5.0);
  checkFormula(
      Op::kAsin, [](double x) { return std::asin(x); }, -0.99, 0.99);
  checkFormula(
      Op::kAsinh, [](double x) { return std::asinh(x); }, -3, 3);
  checkFormula(
      Op::kAtan, [](double x) { return std::atan(x); }, -3, 3);
  checkFormula(
      Op::kAtanh, [](double x) { return std::atanh(x); }, -0.9, 0.9);
  checkFormula(
      Op::kCeil, [](double x) { return std::ceil(x); }, -3, 3);
  checkFormula(
      Op::kCos, [](double x) { return std::cos(x); }, -3, 3);
  checkFormula(
      Op::kCosh, [](double x) { return std::cosh(x); }, -3, 3);
  checkFormula(
      Op::kErf, [](double x) { return std::erf(x); }, -3, 3);
  checkFormula(
      Op::kExp, [](double x) { return std::exp(x); }, -3, 3);
  checkFormula(
      Op::kFloor, [](double x) { return std::floor(x); }, -3, 3);
  checkFormula(
      Op::kLog, [](double x) { return std::log(x); }, 0.01, 5);
  checkFormula(
      Op::kReciprocal, [](double x) { return 1 / x; }, 0.5, 5);
  checkFormula(
      Op::kSin, [](double x) { return std::sin(x); }, -3, 3);
  checkFormula(
      Op::kSinh, [](double x) { return std::sinh(x); }, -3, 3);
  checkFormula(
      Op::kSqrt, [](double x) { return std::sqrt(x); }, 0, 5);
  checkFormula(
      Op::kTan, [](double x) { return std::tan(x); }, -1.5, 1.5);
  checkFormula(
      Op::kTanh, [](double x) { return std::tanh(x); }, -3, 3);
  checkFormula(
      Op::kAbs, [](double x) { return std::fabs(x); }, -3, 3);
  checkFormula(
      Op::kNeg, [](double x) { return -x; }, -3, 3);
  checkFormula(
      Op::kSign, [](double x) { return x > 0 ? 1.0 : -1.0; }, -3, 3);
}

TEST_F(UnaryEval, ActivationsFollowTheirFormulas) {
  auto softplus = [](double x) { return std::log(std::exp(x) + 1); };
  checkFormula(Op::kCelu,
               [](double x) { return std::max(0.0, x) + std::min(0.0, 2 * (std::exp(x / 2) - 1)); },
               -3, 3, {{"alpha", 2.0f}});
  checkFormula(Op::kElu, [](double x) { return x < 0 ? 0.5 * (std::exp(x) - 1) : x; }, -3, 3,
               {{"alpha", 0.5f}});
  checkFormula(
      Op::kGelu, [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }, -3, 3);
  checkFormula(Op::kGelu,
               [](double x) {
                 double k = std::sqrt(2 / std::numbers::pi);
                 return 0.5 * x * (1 + std::tanh(k * (x + 0.044715 * x * x * x)));
               },
               -3, 3, {{"approximate", "tanh"}});
  checkFormula(Op::kHardSigmoid, [](double x) { return std::clamp(0.25 * x + 0.5, 0.0, 1.0); }, -3,
               3, {{"alpha", 0.25f}, {"beta", 0.5f}});
  checkFormula(
      Op::kHardSwish, [](double x) { return x * std::clamp(x / 6 + 0.5, 0.0, 1.0); }, -4, 4);
  checkFormula(Op::kLeakyRelu, [](double x) { return x < 0 ? 0.125 * x : x; }, -3, 3,
               {{"alpha", 0.125f}});
  checkFormula(
      Op::kMish, [&](double x) { return x * std::tanh(softplus(x)); }, -3, 3);
  checkFormula(
      Op::kRelu, [](double x) { return std::max(0.0, x); }, -3, 3);
  double alpha = 1.67326319217681884765625, gamma = 1.05070102214813232421875;
  checkFormula(
      Op::kSelu,
      [&](double x) { return x > 0 ? gamma * x : gamma * (alpha * std::exp(x) - alpha); }, -3, 3);
  checkFormula(Op::kShrink, [](double x) { return x < -1.5  ? x + 0.5
                                                  : x > 1.5 ? x - 0.5
                                                            : 0; }, -3,
               3, {{"bias", 0.5f}, {"lambd", 1.5f}});
  checkFormula(
      Op::kSigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }, -3, 3);
  checkFormula(Op::kSoftplus, softplus, -3, 3);
  checkFormula(
      Op::kSoftsign, [](double x) { return x / (1 + std::fabs(x)); }, -3, 3);
  checkFormula(Op::kThresholdedRelu, [](double x) { return x > 0.75 ? x : 0; }, -3, 3,
               {{"alpha", 0.75f}});
}

TEST_F(UnaryEval, RoundIsHalfToEven) {
  Tensor r =
      eval1(Op::kRound, {f32({9}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 2.49f, 3.7f, -3.7f})});
  EXPECT_EQ(values(r), (std::vector<double>{0, 2, 2, -0.0, -2, -2, 2, 4, -4}));
  EXPECT_TRUE(std::signbit(values(r)[3]));
}

TEST_F(UnaryEval, IsInfAndIsNaN) {
  Tensor x = f64({4}, {kInf, -kInf, 1.0, kNaN});
  EXPECT_EQ(ints(eval1(Op::kIsInf, {x})), (std::vector<int64_t>{1, 1, 0, 0}));
  EXPECT_EQ(ints(eval1(Op::kIsInf, {x}, {{"detect_negative", 0}})),
            (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(ints(eval1(Op::kIsInf, {x}, {{"detect_positive", 0}})),
            (std::vector<int64_t>{0, 1, 0, 0}));
  Tensor nan = eval1(Op::kIsNaN, {x.castTo(DType::kF16)});
  EXPECT_EQ(nan.dtype(), DType::kBool);
  EXPECT_EQ(ints(nan), (std::vector<int64_t>{0, 0, 0, 1}));
}

TEST_F(UnaryEval, LargeInputsDoNotOverflow) {
  Tensor x = f64({2}, {100.0, -100.0}); // exp(-100) is subnormal in f32
  expectClose(values(eval1(Op::kSoftplus, {x})), {100.0, std::exp(-100.0)}, 1e-6, 0);
  expectClose(values(eval1(Op::kSigmoid, {x})), {1.0, std::exp(-100.0)}, 1e-6, 0);
  expectClose(values(eval1(Op::kMish, {x})), {100.0, -100.0 * std::exp(-100.0)}, 1e-6, 0);
}

TEST_F(UnaryEval, NaNPropagatesThroughFormulasButNotThroughSelections) {
  Tensor x = f32({1}, {std::numeric_limits<float>::quiet_NaN()});
  for (Op op : {Op::kRelu, Op::kLeakyRelu, Op::kHardSigmoid, Op::kHardSwish, Op::kElu, Op::kCelu,
                Op::kSelu, Op::kSigmoid, Op::kSoftplus, Op::kGelu, Op::kSign})
    EXPECT_TRUE(std::isnan(values(eval1(op, {x}))[0])) << opName(op);
  // Comparisons with NaN are false, so these select their constant.
  EXPECT_EQ(values(eval1(Op::kThresholdedRelu, {x}))[0], 0.0);
  EXPECT_EQ(values(eval1(Op::kShrink, {x}))[0], 0.0);
}

TEST_F(UnaryEval, IntegerInputs) {
  int64_t lo = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(ints(eval1(Op::kNeg, {i64({3}, {1, -2, lo})})), (std::vector<int64_t>{-1, 2, lo}));
  EXPECT_EQ(ints(eval1(Op::kAbs, {i64({3}, {1, -2, lo})})), (std::vector<int64_t>{1, 2, lo}));
  EXPECT_EQ(ints(eval1(Op::kAbs, {u8({2}, {0, 255})})), (std::vector<int64_t>{0, 255}));
  EXPECT_EQ(ints(eval1(Op::kSign, {i32({3}, {-7, 0, 9})})), (std::vector<int64_t>{-1, 0, 1}));
  EXPECT_EQ(ints(eval1(Op::kSign, {u8({2}, {0, 9})})), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(ints(eval1(Op::kRelu, {i8({3}, {-128, 0, 127})})), (std::vector<int64_t>{0, 0, 127}));
  Tensor s = eval1(Op::kShrink, {i32({5}, {-5, -1, 0, 1, 5})}, {{"bias", 2.0f}, {"lambd", 1.5f}});
  EXPECT_EQ(s.dtype(), DType::kI32);
  EXPECT_EQ(ints(s), (std::vector<int64_t>{-3, 0, 0, 0, 3}));
  EXPECT_EQ(ints(eval1(Op::kErf, {i64({4}, {-9, 0, 1, 9})})), (std::vector<int64_t>{-1, 0, 0, 1}));
  EXPECT_EQ(ints(eval1(Op::kBitwiseNot, {u8({2}, {0, 0x0f})})), (std::vector<int64_t>{255, 0xf0}));
  EXPECT_EQ(ints(eval1(Op::kBitwiseNot, {i32({2}, {0, -1})})), (std::vector<int64_t>{-1, 0}));
  EXPECT_EQ(ints(eval1(Op::kNot, {boolean({2}, {0, 1})})), (std::vector<int64_t>{1, 0}));
}

TEST_F(UnaryEval, HalfTypesComputeInF32AndRoundOnce) {
  Tensor x = randomFloat(DType::kF16, {16});
  Tensor r = eval1(Op::kExp, {x});
  for (int64_t i = 0; i < x.numElements(); ++i) {
    float in = halfToFloat(x.data<uint16_t>()[i]);
    EXPECT_EQ(r.data<uint16_t>()[i], floatToHalf(std::exp(in))) << "element " << i;
  }
  Tensor b = randomFloat(DType::kBF16, {16});
  Tensor t = eval1(Op::kTanh, {b});
  for (int64_t i = 0; i < b.numElements(); ++i)
    EXPECT_EQ(t.data<uint16_t>()[i], floatToBf16(std::tanh(bf16ToFloat(b.data<uint16_t>()[i]))));
}

TEST_F(UnaryEval, EveryOpOfTheFourFamiliesHasEval) {
  for (const auto &family :
       {ops::elementwiseOps(), ops::reductionOps(), ops::linalgOps(), ops::quantOps()})
    for (const OpDef &d : family)
      EXPECT_TRUE(eval::hasEval(d.op)) << opName(d.op);
}

TEST_F(UnaryEval, ErrorsNameTheNode) {
  EXPECT_EQ(evalError(Op::kSqrt, {i64({1}, {4})}),
            "node 'e' (Sqrt): no reference evaluation for dtype i64");
  EXPECT_EQ(evalError(Op::kNeg, {u8({1}, {4})}),
            "node 'e' (Neg): no reference evaluation for dtype u8");
  EXPECT_EQ(evalError(Op::kGelu, {f32({1}, {1})}, {{"approximate", "fast"}}),
            "node 'e' (Gelu): attribute 'approximate' must be \"none\" or \"tanh\", got \"fast\"");
  EXPECT_EQ(evalError(Op::kExp, {}), "node 'e' (Exp): expects 1 inputs, got 0");
  EXPECT_EQ(evalError(Op::kExp, {Tensor()}), "node 'e' (Exp): required input 0 is missing");
}

} // namespace
} // namespace dlc::optest
