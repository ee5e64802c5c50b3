// Reference evaluation of the quantization family: QuantizeLinear's rounding and saturation
// (per tensor, per axis, blocked), DequantizeLinear, the spec's DynamicQuantizeLinear
// examples, and QLinearConv against a direct formula.
#include <cmath>
#include <limits>

#include "tests/unit/ir/eval_test_util.h"

namespace dlc::optest {
namespace {

class QuantEval : public EvalTest {};

TEST_F(QuantEval, QuantizeRoundsHalfToEvenAndSaturates) {
  // The spec's example, plus ties and NaN.
  Tensor x = f32({9}, {0, 2, 3, 1000, -254, -1000, 5, 7, std::numeric_limits<float>::quiet_NaN()});
  Tensor r = eval1(Op::kQuantizeLinear, {x, f32({}, {2}), u8({}, {128})});
  EXPECT_EQ(r.dtype(), DType::kU8);
  // 3/2 = 1.5 -> 2, 5/2 = 2.5 -> 2, 7/2 = 3.5 -> 4; NaN quantizes to the zero point.
  EXPECT_EQ(ints(r), (std::vector<int64_t>{128, 129, 130, 255, 1, 0, 130, 132, 128}));
  // Without a zero point: u8 by default, else output_dtype.
  Tensor plain = f32({3}, {-3, 1.5f, 300});
  EXPECT_EQ(ints(eval1(Op::kQuantizeLinear, {plain, f32({}, {1})})),
            (std::vector<int64_t>{0, 2, 255}));
  Tensor s = eval1(Op::kQuantizeLinear, {plain, f32({}, {1})}, {{"output_dtype", DType::kI8}});
  EXPECT_EQ(s.dtype(), DType::kI8);
  EXPECT_EQ(ints(s), (std::vector<int64_t>{-3, 2, 127}));
  Tensor i16 = eval1(Op::kQuantizeLinear, {f32({2}, {-1e6f, 2.5f}), f32({}, {0.5f}),
                                           Tensor::fromVector<int16_t>(DType::kI16, {}, {-3})});
  EXPECT_EQ(ints(i16), (std::vector<int64_t>{-32768, 2}));
  EXPECT_EQ(evalError(Op::kQuantizeLinear, {plain, f32({}, {1}), u8({}, {0})},
                      {{"output_dtype", DType::kI8}}),
            "node 'e' (QuantizeLinear): output_dtype i8 does not match y_zero_point's dtype u8");
}

TEST_F(QuantEval, QuantizePerAxisAndBlocked) {
  Tensor x = f32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor perAxis = eval1(Op::kQuantizeLinear, {x, f32({4}, {1, 2, 4, 8}), u8({4}, {0, 1, 2, 3})});
  EXPECT_EQ(ints(perAxis), (std::vector<int64_t>{1, 2, 3, 3, 5, 4, 4, 4})); // 4/8 -> 0
  Tensor axis0 = eval1(Op::kQuantizeLinear, {x, f32({2}, {1, 0.5f})}, {{"axis", 0}});
  EXPECT_EQ(ints(axis0), (std::vector<int64_t>{1, 2, 3, 4, 10, 12, 14, 16}));
  // Blocks of 3 along axis 1: columns {0,1,2} and {3} share a scale per row.
  Tensor blocked = eval1(Op::kQuantizeLinear, {x, f32({2, 2}, {1, 2, 0.5f, 4})},
                         {{"axis", 1}, {"block_size", 3}});
  EXPECT_EQ(ints(blocked), (std::vector<int64_t>{1, 2, 3, 2, 10, 12, 14, 2}));
  EXPECT_EQ(evalError(Op::kQuantizeLinear, {x, f32({3}, {1, 2, 3})}),
            "node 'e' (QuantizeLinear): y_scale of shape [3] is neither a scalar nor a 1-D tensor "
            "of the size 4 of axis 1");
  EXPECT_EQ(evalError(Op::kQuantizeLinear, {x, f32({2, 1}, {1, 2})}, {{"block_size", 3}}),
            "node 'e' (QuantizeLinear): y_scale has shape [2,1], expected [2,2] for blocks of 3 "
            "along axis 1");
}

TEST_F(QuantEval, DequantizeIsExactUntilTheLastRounding) {
  Tensor r = eval1(Op::kDequantizeLinear, {u8({4}, {0, 3, 128, 255}), f32({}, {2}), u8({}, {128})});
  EXPECT_EQ(r.dtype(), DType::kF32);
  EXPECT_EQ(values(r), (std::vector<double>{-256, -250, 0, 254}));
  Tensor axis = eval1(Op::kDequantizeLinear,
                      {i8({2, 2}, {-128, 127, 10, 20}), f32({2}, {0.5f, 2}), i8({2}, {0, -1})});
  EXPECT_EQ(values(axis), (std::vector<double>{-64, 256, 5, 42}));
  Tensor blocked = eval1(Op::kDequantizeLinear, {i8({1, 4}, {1, 2, 3, 4}), f32({1, 2}, {1, 10})},
                         {{"block_size", 2}});
  EXPECT_EQ(values(blocked), (std::vector<double>{1, 2, 30, 40}));
  // i32 beyond f32's 24 bits: (x - 0) * 1 must round once, not twice.
  Tensor big = eval1(Op::kDequantizeLinear, {i32({1}, {16777217}), f32({}, {1})});
  EXPECT_EQ(values(big)[0], 16777216);
  Tensor half =
      eval1(Op::kDequantizeLinear, {u8({2}, {1, 3}), f32({}, {0.25f}).castTo(DType::kF16)});
  EXPECT_EQ(half.dtype(), DType::kF16);
  EXPECT_EQ(values(half), (std::vector<double>{0.25, 0.75}));
}

TEST_F(QuantEval, DynamicQuantizeFollowsTheSpecFormula) {
  auto run = [&](Tensor x) {
    auto r = eval(Op::kDynamicQuantizeLinear, {std::move(x)}, {}, 3);
    EXPECT_TRUE(r.hasValue()) << r.status().message();
    return r.hasValue() ? *r : std::vector<Tensor>(3);
  };
  // The spec's examples (test_dynamicquantizelinear and its _max_adjusted variant).
  auto r = run(f32({6}, {0, 2, -3, -2.5f, 1.34f, 0.5f}));
  EXPECT_EQ(ints(r[0]), (std::vector<int64_t>{153, 255, 0, 26, 221, 179}));
  EXPECT_EQ(r[1].shape(), std::vector<int64_t>{});
  EXPECT_FLOAT_EQ(static_cast<float>(values(r[1])[0]), 5.0f / 255.0f);
  EXPECT_EQ(r[2].dtype(), DType::kU8);
  EXPECT_EQ(ints(r[2]), (std::vector<int64_t>{153}));
  r = run(f32({6}, {-1, -2.1f, -1.3f, -2.5f, -3.34f, -4}));
  EXPECT_EQ(ints(r[0]), (std::vector<int64_t>{191, 121, 172, 96, 42, 0}));
  EXPECT_EQ(ints(r[2]), (std::vector<int64_t>{255}));
  // A zero range would divide by zero: the scale is 1 then, and everything quantizes to 0.
  r = run(Tensor::zeros(DType::kF32, {3}));
  EXPECT_EQ(values(r[1]), (std::vector<double>{1}));
  EXPECT_EQ(ints(r[0]), (std::vector<int64_t>{0, 0, 0}));
}

TEST_F(QuantEval, QLinearConvMatchesTheDirectFormula) {
  // x [1,2,5,5] u8, w [4,1,3,3] i8 in 2 groups, per-channel w scale and zero point, bias,
  // stride 2 and padding 1.
  Tensor x = randomInt(DType::kU8, {1, 2, 5, 5}, 0, 255);
  Tensor w = randomInt(DType::kI8, {4, 1, 3, 3}, -128, 127);
  Tensor ws = f32({4}, {0.01f, 0.02f, 0.005f, 0.03f});
  Tensor wzp = i8({4}, {0, 3, -2, 1});
  Tensor bias = i32({4}, {100, -50, 0, 7});
  float xs = 0.05f, ys = 0.2f;
  int64_t xzp = 120, yzp = 10;
  Tensor y = eval1(Op::kQLinearConv,
                   {x, f32({}, {xs}), u8({}, {static_cast<uint8_t>(xzp)}), w, ws, wzp,
                    f32({}, {ys}), u8({}, {static_cast<uint8_t>(yzp)}), bias},
                   {{"group", 2},
                    {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                    {"strides", std::vector<int64_t>{2, 2}}});
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{1, 4, 3, 3}));
  std::vector<int64_t> vx = ints(x), vw = ints(w), want;
  for (int64_t m = 0; m < 4; ++m)
    for (int64_t oh = 0; oh < 3; ++oh)
      for (int64_t ow = 0; ow < 3; ++ow) {
        int64_t acc = ints(bias)[static_cast<size_t>(m)], c = m / 2;
        for (int64_t kh = 0; kh < 3; ++kh)
          for (int64_t kw = 0; kw < 3; ++kw) {
            int64_t ih = oh * 2 - 1 + kh, iw = ow * 2 - 1 + kw;
            if (ih < 0 || ih >= 5 || iw < 0 || iw >= 5)
              continue;
            acc +=
                (vx[static_cast<size_t>((c * 5 + ih) * 5 + iw)] - xzp) *
                (vw[static_cast<size_t>(m * 9 + kh * 3 + kw)] - ints(wzp)[static_cast<size_t>(m)]);
          }
        float multiplier = xs * static_cast<float>(values(ws)[static_cast<size_t>(m)]) / ys;
        double q = std::nearbyint(static_cast<double>(acc) * multiplier) + static_cast<double>(yzp);
        want.push_back(static_cast<int64_t>(std::clamp(q, 0.0, 255.0)));
      }
  EXPECT_EQ(ints(y), want);
  EXPECT_EQ(evalError(Op::kQLinearConv, {x, f32({}, {xs}), u8({}, {0}), w, f32({3}, {1, 1, 1}),
                                         i8({}, {0}), f32({}, {ys}), u8({}, {0})}),
            "node 'e' (QLinearConv): x has 2 channels and w is [4,1,3,3], which group 1 does not "
            "fit");
}

} // namespace
} // namespace dlc::optest
