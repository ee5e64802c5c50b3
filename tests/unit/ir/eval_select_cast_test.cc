// Reference evaluation of Where, Clip, Cast and CastLike: NaN and infinities in Clip, and
// Cast's conversions (bool, truncation and saturation to integers, integer wrapping, and
// rounding once to nearest even into f16/bf16 from any type).
#include <cmath>
#include <limits>

#include "tests/unit/ir/eval_test_util.h"

namespace dlc::optest {
namespace {

constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr float kNaNF = std::numeric_limits<float>::quiet_NaN();

class SelectCastEval : public EvalTest {};

TEST_F(SelectCastEval, WhereBroadcastsAllThreeInputs) {
  Tensor r = eval1(Op::kWhere, {boolean({2, 1}, {1, 0}), i64({1, 3}, {1, 2, 3}), i64({}, {-1})});
  EXPECT_EQ(r.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ints(r), (std::vector<int64_t>{1, 2, 3, -1, -1, -1}));
  Tensor h = eval1(Op::kWhere, {boolean({2}, {0, 1}), f32({2}, {1, 2}).castTo(DType::kF16),
                                f32({1}, {7}).castTo(DType::kF16)});
  EXPECT_EQ(h.dtype(), DType::kF16);
  EXPECT_EQ(values(h), (std::vector<double>{7, 2}));
  EXPECT_EQ(evalError(Op::kWhere, {i64({}, {1}), i64({}, {1}), i64({}, {1})}),
            "node 'e' (Where): condition has dtype i64, expected bool");
}

TEST_F(SelectCastEval, ClipBoundsNaNAndInfinities) {
  Tensor x = f32({6}, {-kInfF, -2, 0.5f, 2, kInfF, kNaNF});
  auto clip = [&](std::vector<Tensor> in) { return values(eval1(Op::kClip, std::move(in))); };
  auto same = [](std::vector<double> got, std::vector<double> want) {
    expectClose(got, want, 0, 0);
  };
  double inf = kInfF, nan = kNaNF;
  same(clip({x}), {-inf, -2, 0.5, 2, inf, nan}); // no bounds: nothing is clamped
  same(clip({x, f32({}, {-1})}), {-1, -1, 0.5, 2, inf, nan});
  same(clip({x, Tensor(), f32({1}, {1})}), {-inf, -2, 0.5, 1, 1, nan});
  same(clip({x, f32({}, {-1}), f32({}, {1})}), {-1, -1, 0.5, 1, 1, nan});
  same(clip({x, f32({}, {2}), f32({}, {1})}), {1, 1, 1, 1, 1, nan}); // min > max gives max
  same(clip({x, f32({}, {kNaNF})}), {nan, nan, nan, nan, nan, nan});
  EXPECT_EQ(ints(eval1(Op::kClip, {i8({4}, {-128, -5, 5, 127}), i8({}, {-10}), i8({}, {10})})),
            (std::vector<int64_t>{-10, -5, 5, 10}));
  EXPECT_EQ(evalError(Op::kClip, {x, f32({2}, {0, 1})}),
            "node 'e' (Clip): min must be a scalar, got shape [2]");
  EXPECT_EQ(evalError(Op::kClip, {x, i32({}, {0})}),
            "node 'e' (Clip): min has dtype i32, but the input has dtype f32");
}

TEST_F(SelectCastEval, CastToIntegersTruncatesSaturatesAndWraps) {
  auto cast = [&](Tensor t, DType to) { return eval1(Op::kCast, {std::move(t)}, {{"to", to}}); };
  Tensor r = cast(f32({5}, {1.7f, -1.7f, 3e10f, -3e10f, kNaNF}), DType::kI32);
  EXPECT_EQ(r.dtype(), DType::kI32);
  EXPECT_EQ(ints(r), (std::vector<int64_t>{1, -1, std::numeric_limits<int32_t>::max(),
                                           std::numeric_limits<int32_t>::min(), 0}));
  EXPECT_EQ(ints(cast(f64({3}, {-1.5, 255.9, 300}), DType::kU8)),
            (std::vector<int64_t>{0, 255, 255}));
  EXPECT_EQ(ints(cast(i64({3}, {300, -129, 127}), DType::kI8)),
            (std::vector<int64_t>{44, 127, 127}));
  EXPECT_EQ(ints(cast(i32({2}, {-1, 256}), DType::kU8)), (std::vector<int64_t>{255, 0}));
  EXPECT_EQ(ints(cast(f32({4}, {0.0f, -0.0f, kNaNF, 0.1f}), DType::kBool)),
            (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(values(cast(boolean({2}, {0, 1}), DType::kF16)), (std::vector<double>{0, 1}));
  EXPECT_EQ(ints(cast(i64({2}, {0, -7}), DType::kBool)), (std::vector<int64_t>{0, 1}));
}

TEST_F(SelectCastEval, CastToHalfTypesRoundsOnceToNearestEven) {
  auto cast = [&](Tensor t, DType to) { return eval1(Op::kCast, {std::move(t)}, {{"to", to}}); };
  double tie = 1 + std::ldexp(1.0, -11); // halfway between two f16 values
  Tensor h =
      cast(f32({5}, {static_cast<float>(tie), static_cast<float>(1 + 3 * std::ldexp(1.0, -11)),
                     65519, 65520, -kInfF}),
           DType::kF16);
  EXPECT_EQ(values(h), (std::vector<double>{1, 1 + std::ldexp(1.0, -9), 65504,
                                            std::numeric_limits<double>::infinity(),
                                            -std::numeric_limits<double>::infinity()}));
  // Just above a tie: going through f32 would land on the tie and round down.
  Tensor d = cast(f64({1}, {tie + std::ldexp(1.0, -40)}), DType::kF16);
  EXPECT_EQ(values(d)[0], 1 + std::ldexp(1.0, -10));
  int64_t big = (int64_t{1} << 24) + (int64_t{1} << 16) + 1;
  EXPECT_EQ(values(cast(i64({1}, {big}), DType::kBF16))[0],
            std::ldexp(1.0, 24) + std::ldexp(1.0, 17));
  Tensor u = cast(Tensor::fromVector<uint64_t>(DType::kU64, {1}, {~uint64_t{0}}), DType::kF32);
  EXPECT_EQ(values(u)[0], std::ldexp(1.0, 64));
  // bf16 -> f16 is exact when the value fits.
  Tensor b = f32({2}, {1.0078125f, -3.5f}).castTo(DType::kBF16);
  EXPECT_EQ(values(cast(b, DType::kF16)), (std::vector<double>{1.0078125, -3.5}));
  EXPECT_TRUE(std::isnan(values(cast(f32({1}, {kNaNF}), DType::kBF16))[0]));
}

TEST_F(SelectCastEval, CastLikeTakesTheTargetsType) {
  Tensor r = eval1(Op::kCastLike, {f32({2}, {2.9f, -2.9f}), i32({}, {0})});
  EXPECT_EQ(r.dtype(), DType::kI32);
  EXPECT_EQ(ints(r), (std::vector<int64_t>{2, -2}));
  EXPECT_EQ(evalError(Op::kCast, {i64({}, {1})}),
            "node 'e' (Cast): missing required attribute 'to'");
  EXPECT_EQ(evalError(Op::kCast, {i64({}, {1})}, {{"to", DType::kUnknown}}),
            "node 'e' (Cast): attribute 'to' must be a known dtype");
}

} // namespace
} // namespace dlc::optest
