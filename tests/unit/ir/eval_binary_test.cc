// Reference evaluation of the binary and variadic elementwise ops: broadcasting on random
// shapes against a plain loop, integer semantics (truncation, wrapping, Mod signs, division
// by zero), NaN handling, mixed-type Pow, comparisons, logic and bitwise ops, PRelu.
#include <functional>
#include <limits>

#include "tests/unit/ir/eval_test_util.h"

namespace dlc::optest {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

class BinaryEval : public EvalTest {
protected:
  /// Checks `op` on random broadcasting shapes against `f` applied with numpy's indexing.
  void checkBroadcast(Op op, DType dtype, std::function<double(double, double)> f,
                      bool positiveB = false) {
    for (int trial = 0; trial < 12; ++trial) {
      std::vector<int64_t> sa = randomShape(), sb = broadcastPartner(sa);
      if (trial % 2)
        std::swap(sa, sb);
      Tensor a = isFloat(dtype) ? randomFloat(dtype, sa) : randomInt(dtype, sa, -20, 20);
      Tensor b = isFloat(dtype) ? randomFloat(dtype, sb, positiveB ? 0.5 : -3, 3)
                                : randomInt(dtype, sb, positiveB ? 1 : -20, 20);
      Tensor r = eval1(op, {a, b});
      std::vector<int64_t> shape = broadcastShape(sa, sb);
      ASSERT_EQ(r.shape(), shape) << opName(op);
      std::vector<double> want, va = values(a), vb = values(b);
      for (int64_t i = 0; i < r.numElements(); ++i) {
        std::vector<int64_t> c = coordsOf(i, shape);
        want.push_back(f(va[static_cast<size_t>(broadcastIndex(c, sa))],
                         vb[static_cast<size_t>(broadcastIndex(c, sb))]));
      }
      SCOPED_TRACE(std::string(opName(op)) + " " + std::string(dtypeName(dtype)));
      expectClose(values(r), want, dtype == DType::kF32 ? 1e-6 : 0, 0);
    }
  }
};

TEST_F(BinaryEval, BroadcastingMatchesAPlainLoop) {
  for (DType t : {DType::kF32, DType::kI32}) {
    checkBroadcast(Op::kAdd, t, [](double x, double y) { return x + y; });
    checkBroadcast(Op::kSub, t, [](double x, double y) { return x - y; });
    checkBroadcast(Op::kMul, t, [](double x, double y) { return x * y; });
    checkBroadcast(Op::kMax, t, [](double x, double y) { return std::max(x, y); });
    checkBroadcast(Op::kMin, t, [](double x, double y) { return std::min(x, y); });
    checkBroadcast(Op::kEqual, t, [](double x, double y) { return x == y; });
    checkBroadcast(Op::kLess, t, [](double x, double y) { return x < y; });
    checkBroadcast(Op::kLessOrEqual, t, [](double x, double y) { return x <= y; });
    checkBroadcast(Op::kGreater, t, [](double x, double y) { return x > y; });
    checkBroadcast(Op::kGreaterOrEqual, t, [](double x, double y) { return x >= y; });
  }
  checkBroadcast(Op::kDiv, DType::kF32, [](double x, double y) { return x / y; });
  checkBroadcast(
      Op::kDiv, DType::kI32, [](double x, double y) { return std::trunc(x / y); }, true);
  checkBroadcast(Op::kPow, DType::kF32, [](double x, double y) { return std::pow(x, y); });
  checkBroadcast(Op::kSum, DType::kF32, [](double x, double y) { return x + y; });
  checkBroadcast(Op::kMean, DType::kF64, [](double x, double y) { return (x + y) / 2; });
}

TEST_F(BinaryEval, IntegerDivTruncatesTowardZeroAndWraps) {
  EXPECT_EQ(ints(eval1(Op::kDiv, {i64({4}, {7, -7, 7, -7}), i64({4}, {2, 2, -2, -2})})),
            (std::vector<int64_t>{3, -3, -3, 3}));
  int64_t lo = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(ints(eval1(Op::kDiv, {i64({}, {lo}), i64({}, {-1})}))[0], lo);
  EXPECT_EQ(ints(eval1(Op::kAdd, {i8({1}, {127}), i8({1}, {1})}))[0], -128);
  EXPECT_EQ(ints(eval1(Op::kMul, {i32({1}, {1 << 30}), i32({1}, {4})}))[0], 0);
  EXPECT_EQ(ints(eval1(Op::kSub, {u8({1}, {0}), u8({1}, {1})}))[0], 255);
}

TEST_F(BinaryEval, DivisionAndModuloByZeroAreErrors) {
  EXPECT_EQ(evalError(Op::kDiv, {i64({2}, {1, 2}), i64({2}, {1, 0})}),
            "node 'e' (Div): integer division by zero");
  EXPECT_EQ(evalError(Op::kMod, {i32({1}, {1}), i32({}, {0})}),
            "node 'e' (Mod): integer modulo by zero");
  EXPECT_EQ(evalError(Op::kPow, {i32({1}, {0}), i64({}, {-1})}),
            "node 'e' (Pow): integer zero raised to a negative power");
  // Floats follow IEEE.
  EXPECT_TRUE(std::isinf(values(eval1(Op::kDiv, {f32({}, {1}), f32({}, {0})}))[0]));
}

TEST_F(BinaryEval, ModSignsFollowFmod) {
  Tensor a = i32({4}, {-7, 7, -7, 7}), b = i32({4}, {3, 3, -3, -3});
  EXPECT_EQ(ints(eval1(Op::kMod, {a, b})), (std::vector<int64_t>{2, 1, -1, -2})); // like Python
  EXPECT_EQ(ints(eval1(Op::kMod, {a, b}, {{"fmod", 1}})),
            (std::vector<int64_t>{-1, 1, -1, 1})); // like C
  int64_t lo = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(ints(eval1(Op::kMod, {i64({1}, {lo}), i64({1}, {-1})}))[0], 0);
  EXPECT_EQ(ints(eval1(Op::kMod, {u8({2}, {250, 7}), u8({2}, {7, 250})})),
            (std::vector<int64_t>{5, 7}));
  EXPECT_EQ(values(eval1(Op::kMod, {f32({2}, {-7.5f, 7.5f}), f32({2}, {2, -2})}, {{"fmod", 1}})),
            (std::vector<double>{-1.5, 1.5}));
  EXPECT_EQ(evalError(Op::kMod, {f32({1}, {1}), f32({1}, {1})}),
            "node 'e' (Mod): floating-point Mod requires fmod=1");
}

TEST_F(BinaryEval, MaxAndMinPropagateNaNAndAreVariadic) {
  Tensor a = f64({3}, {1, kNaN, 3}), b = f64({3}, {kNaN, 2, 1});
  std::vector<double> mx = values(eval1(Op::kMax, {a, b}));
  EXPECT_TRUE(std::isnan(mx[0]) && std::isnan(mx[1]));
  EXPECT_EQ(mx[2], 3);
  EXPECT_EQ(values(eval1(Op::kMin, {a, b}))[2], 1);
  EXPECT_EQ(ints(eval1(Op::kMax, {i64({3}, {1, 5, 3}), i64({}, {2}), i64({1}, {4})})),
            (std::vector<int64_t>{4, 5, 4}));
  EXPECT_EQ(ints(eval1(Op::kMin, {i64({2}, {7, 8})})), (std::vector<int64_t>{7, 8}));
}

TEST_F(BinaryEval, SumAndMeanFoldAllInputsAndRoundOnce) {
  Tensor r = eval1(Op::kSum, {f32({2, 1}, {1, 2}), f32({3}, {10, 20, 30}), f32({}, {0.5f})});
  EXPECT_EQ(r.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values(r), (std::vector<double>{11.5, 21.5, 31.5, 12.5, 22.5, 32.5}));
  EXPECT_EQ(values(eval1(Op::kMean, {f32({2}, {1, 2}), f32({2}, {2, 4}), f32({2}, {6, 9})})),
            (std::vector<double>{3, 5}));
  // 2048 + 1 + 1 is exact in f32; summing in f16 would lose both 1s (f16 spacing is 2 there).
  Tensor h =
      eval1(Op::kSum, {f32({1}, {2048}).castTo(DType::kF16), f32({1}, {1}).castTo(DType::kF16),
                       f32({1}, {1}).castTo(DType::kF16)});
  EXPECT_EQ(h.dtype(), DType::kF16);
  EXPECT_EQ(values(h)[0], 2050);
}

TEST_F(BinaryEval, PowHandlesMixedTypes) {
  Tensor r = eval1(Op::kPow, {f32({3}, {2, -2, 9}), i64({3}, {3, 3, -1})});
  EXPECT_EQ(r.dtype(), DType::kF32);
  expectClose(values(r), {8, -8, 1.0 / 9}, 1e-7);
  // An integer base with a float exponent is computed in double and truncated.
  Tensor t = eval1(Op::kPow, {i32({3}, {2, 10, -8}), f32({3}, {0.5f, 1.5f, 1.0f / 3})});
  EXPECT_EQ(t.dtype(), DType::kI32);
  EXPECT_EQ(ints(t), (std::vector<int64_t>{1, 31, 0})); // (-8)^(1/3) is NaN -> 0
  // Integer ** integer is exact, wraps, and truncates negative powers.
  EXPECT_EQ(ints(eval1(Op::kPow, {i64({5}, {3, 2, 2, 1, -1}), i64({5}, {39, 64, -1, -5, -3})})),
            (std::vector<int64_t>{4052555153018976267, 0, 0, 1, -1}));
  EXPECT_EQ(ints(eval1(Op::kPow, {i32({2}, {-3, 7}), u8({2}, {3, 2})})),
            (std::vector<int64_t>{-27, 49}));
}

TEST_F(BinaryEval, ComparisonsAndLogic) {
  Tensor a = f64({3}, {kNaN, 1, 2}), b = f64({3}, {kNaN, 1, 1});
  EXPECT_EQ(ints(eval1(Op::kEqual, {a, b})), (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(ints(eval1(Op::kGreaterOrEqual, {a, b})), (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(ints(eval1(Op::kLessOrEqual, {a, b})), (std::vector<int64_t>{0, 1, 0}));
  Tensor p = boolean({4}, {0, 0, 1, 1}), q = boolean({4}, {0, 1, 0, 1});
  EXPECT_EQ(ints(eval1(Op::kAnd, {p, q})), (std::vector<int64_t>{0, 0, 0, 1}));
  EXPECT_EQ(ints(eval1(Op::kOr, {p, q})), (std::vector<int64_t>{0, 1, 1, 1}));
  EXPECT_EQ(ints(eval1(Op::kXor, {p, q})), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(ints(eval1(Op::kEqual, {p, q})), (std::vector<int64_t>{1, 0, 0, 1}));
  EXPECT_EQ(evalError(Op::kLess, {p, q}),
            "node 'e' (Less): no reference evaluation for dtype bool");
}

TEST_F(BinaryEval, BitwiseAndShifts) {
  Tensor x = u8({4}, {0x0f, 0xf0, 0xff, 1}), s = u8({4}, {1, 4, 8, 7});
  EXPECT_EQ(ints(eval1(Op::kBitShift, {x, s}, {{"direction", "LEFT"}})),
            (std::vector<int64_t>{0x1e, 0x00, 0, 0x80}));
  EXPECT_EQ(ints(eval1(Op::kBitShift, {x, s}, {{"direction", "RIGHT"}})),
            (std::vector<int64_t>{0x07, 0x0f, 0, 0}));
  EXPECT_EQ(evalError(Op::kBitShift, {x, s}, {{"direction", "UP"}}),
            "node 'e' (BitShift): attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"UP\"");
  Tensor a = i8({3}, {-1, 12, 5}), b = i8({1}, {10});
  EXPECT_EQ(ints(eval1(Op::kBitwiseAnd, {a, b})), (std::vector<int64_t>{10, 8, 0}));
  EXPECT_EQ(ints(eval1(Op::kBitwiseOr, {a, b})), (std::vector<int64_t>{-1, 14, 15}));
  EXPECT_EQ(ints(eval1(Op::kBitwiseXor, {a, b})), (std::vector<int64_t>{-11, 6, 15}));
}

TEST_F(BinaryEval, PReluBroadcastsTheSlopeOneWay) {
  Tensor x = randomFloat(DType::kF32, {2, 3, 4}), slope = f32({3, 1}, {0.5f, -1, 2});
  Tensor r = eval1(Op::kPRelu, {x, slope});
  std::vector<double> vx = values(x), want;
  for (int64_t i = 0; i < x.numElements(); ++i) {
    double s = values(slope)[static_cast<size_t>((i / 4) % 3)], v = vx[static_cast<size_t>(i)];
    want.push_back(v < 0 ? s * v : v);
  }
  expectClose(values(r), want, 1e-7);
  EXPECT_EQ(ints(eval1(Op::kPRelu, {i32({2}, {-3, 3}), i32({}, {2})})),
            (std::vector<int64_t>{-6, 3}));
  EXPECT_EQ(evalError(Op::kPRelu, {f32({3}, {1, 2, 3}), f32({2, 3}, {1, 2, 3, 4, 5, 6})}),
            "node 'e' (PRelu): slope of shape [2,3] does not broadcast to the input's shape [3]");
}

TEST_F(BinaryEval, ErrorsNameTheNode) {
  EXPECT_EQ(evalError(Op::kAdd, {i64({2}, {1, 2}), i64({3}, {1, 2, 3})}),
            "node 'e' (Add): shapes [2] and [3] cannot be broadcast (dim 2 vs 3)");
  EXPECT_EQ(evalError(Op::kAdd, {i64({}, {1}), f32({}, {1})}),
            "node 'e' (Add): inputs 0 and 1 have different dtypes (i64 vs f32)");
  EXPECT_EQ(evalError(Op::kAdd, {i64({}, {1})}), "node 'e' (Add): expects 2 inputs, got 1");
  EXPECT_EQ(evalError(Op::kSum, {i64({}, {1})}),
            "node 'e' (Sum): no reference evaluation for dtype i64");
}

} // namespace
} // namespace dlc::optest
