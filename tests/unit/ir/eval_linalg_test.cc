// Reference evaluation of the linear-algebra family: MatMul (1-D operands, batch
// broadcasting) and Gemm against a naive loop, the integer and quantized matmuls, Einsum on
// both of its paths, and Det.
#include <limits>

#include "tests/unit/ir/eval_test_util.h"

namespace dlc::optest {
namespace {

class LinalgEval : public EvalTest {};

/// numpy matmul by definition, on doubles.
std::vector<double> naiveMatMul(const Tensor &a, const Tensor &b, std::vector<int64_t> &shape) {
  std::vector<int64_t> sa = a.shape(), sb = b.shape();
  if (sa.size() == 1)
    sa.insert(sa.begin(), 1);
  if (sb.size() == 1)
    sb.push_back(1);
  int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  std::vector<int64_t> ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  std::vector<int64_t> batch = broadcastShape(ba, bb);
  shape = batch;
  if (a.rank() > 1)
    shape.push_back(m);
  if (b.rank() > 1)
    shape.push_back(n);
  std::vector<double> va = values(a), vb = values(b), out;
  int64_t nb = 1;
  for (int64_t d : batch)
    nb *= d;
  for (int64_t bi = 0; bi < nb; ++bi) {
    std::vector<int64_t> c = coordsOf(bi, batch);
    int64_t ia = broadcastIndex(c, ba), ib = broadcastIndex(c, bb);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p)
          s += va[static_cast<size_t>(ia * m * k + i * k + p)] *
               vb[static_cast<size_t>(ib * k * n + p * n + j)];
        out.push_back(s);
      }
  }
  return out;
}

TEST_F(LinalgEval, MatMulMatchesNaiveLoopOnRandomShapes) {
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{3}, {3}},
      {{3}, {3, 4}},
      {{2, 3}, {3}},
      {{2, 3}, {3, 4}},
      {{5, 2, 3}, {3, 4}},
      {{2, 3}, {5, 3, 4}},
      {{2, 1, 2, 3}, {3, 3, 1}},
      {{0, 3}, {3, 2}},
      {{2, 0}, {0, 2}},
  };
  for (DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kI32, DType::kU8}) {
    for (auto &[sa, sb] : shapes) {
      Tensor a = isFloat(dtype) ? randomFloat(dtype, sa) : randomInt(dtype, sa, 0, 9);
      Tensor b = isFloat(dtype) ? randomFloat(dtype, sb) : randomInt(dtype, sb, 0, 9);
      std::vector<int64_t> shape;
      std::vector<double> want = naiveMatMul(a, b, shape);
      Tensor r = eval1(Op::kMatMul, {a, b});
      SCOPED_TRACE(std::string(dtypeName(dtype)) + " " + Shape::fromSizes(sa).str() + " x " +
                   Shape::fromSizes(sb).str());
      EXPECT_EQ(r.dtype(), dtype);
      EXPECT_EQ(r.shape(), shape);
      if (dtype == DType::kU8) // wraps modulo 256
        for (double &w : want)
          w = static_cast<double>(static_cast<uint8_t>(static_cast<int64_t>(w)));
      double rtol = dtype == DType::kF16 ? 1e-2 : dtype == DType::kF32 ? 1e-5 : 1e-12;
      expectClose(values(r), want, rtol, dtype == DType::kF16 ? 1e-2 : 1e-5);
    }
  }
  EXPECT_EQ(evalError(Op::kMatMul, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2}, {1, 2})}),
            "node 'e' (MatMul): inner dimensions differ: 3 vs 2 (shapes [2,3] and [2])");
}

TEST_F(LinalgEval, GemmTransposesScalesAndBroadcastsC) {
  for (int trans = 0; trans < 4; ++trans) {
    bool ta = trans & 1, tb = trans & 2;
    Tensor a =
        randomFloat(DType::kF32, ta ? std::vector<int64_t>{4, 3} : std::vector<int64_t>{3, 4});
    Tensor b =
        randomFloat(DType::kF32, tb ? std::vector<int64_t>{5, 4} : std::vector<int64_t>{4, 5});
    Tensor c = randomFloat(DType::kF32, {3, 1});
    Tensor r =
        eval1(Op::kGemm, {a, b, c},
              {{"transA", ta ? 1 : 0}, {"transB", tb ? 1 : 0}, {"alpha", 0.5f}, {"beta", -2.0f}});
    ASSERT_EQ(r.shape(), (std::vector<int64_t>{3, 5}));
    std::vector<double> va = values(a), vb = values(b), vc = values(c), want;
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 5; ++j) {
        double s = 0;
        for (int64_t p = 0; p < 4; ++p)
          s += va[static_cast<size_t>(ta ? p * 3 + i : i * 4 + p)] *
               vb[static_cast<size_t>(tb ? j * 4 + p : p * 5 + j)];
        want.push_back(0.5 * s - 2 * vc[static_cast<size_t>(i)]);
      }
    expectClose(values(r), want, 1e-5, 1e-5);
  }
  // beta == 0 ignores C, NaN included (the ONNX reference does the same).
  Tensor nanC = f32({1}, {std::numeric_limits<float>::quiet_NaN()});
  EXPECT_EQ(values(eval1(Op::kGemm, {f32({1, 1}, {2}), f32({1, 1}, {3}), nanC}, {{"beta", 0.0f}})),
            (std::vector<double>{6}));
  EXPECT_EQ(ints(eval1(Op::kGemm, {i32({1, 2}, {2, 3}), i32({2, 1}, {4, 5}), i32({}, {1})})),
            (std::vector<int64_t>{24}));
  EXPECT_EQ(evalError(Op::kGemm,
                      {f32({2, 2}, {1, 2, 3, 4}), f32({2, 2}, {1, 2, 3, 4}), f32({3}, {1, 2, 3})}),
            "node 'e' (Gemm): shapes [2,2] and [3] cannot be broadcast (dim 2 vs 3)");
  EXPECT_EQ(evalError(Op::kGemm, {f32({2, 2}, {1, 2, 3, 4}), f32({2, 2}, {1, 2, 3, 4}),
                                  f32({2, 2, 1}, {1, 2, 3, 4})}),
            "node 'e' (Gemm): C of shape [2,2,1] does not broadcast to the result's shape [2,2]");
}

TEST_F(LinalgEval, MatMulIntegerSubtractsZeroPointsPerRowAndColumn) {
  Tensor a = u8({2, 3}, {10, 20, 30, 40, 50, 60}), b = i8({3, 2}, {1, -2, 3, -4, 5, -6});
  // a's zero point per row [M], b's per column [N].
  Tensor r = eval1(Op::kMatMulInteger, {a, b, u8({2}, {10, 40}), i8({2}, {1, -1})});
  EXPECT_EQ(r.dtype(), DType::kI32);
  // rows of a - azp: [0,10,20], [0,10,20]; columns of b - bzp: [0,2,4], [-1,-3,-5]
  EXPECT_EQ(ints(r), (std::vector<int64_t>{100, -130, 100, -130}));
  Tensor s = eval1(Op::kMatMulInteger, {a, b, u8({}, {10})});
  EXPECT_EQ(ints(s), (std::vector<int64_t>{130, -160, 400, -520}));
  EXPECT_EQ(evalError(Op::kMatMulInteger, {a, b, i8({}, {1})}),
            "node 'e' (MatMulInteger): a_zero_point has dtype i8, but its input has dtype u8");
}

TEST_F(LinalgEval, QLinearMatMulRequantizesWithRoundingAndSaturation) {
  // The spec's test case (test_qlinearmatmul_2D).
  Tensor a = u8({2, 4}, {208, 236, 0, 238, 3, 214, 255, 29});
  Tensor b = u8({4, 3}, {152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247});
  std::vector<Tensor> in = {a,
                            f32({}, {0.0066f}),
                            u8({}, {113}),
                            b,
                            f32({}, {0.00705f}),
                            u8({}, {114}),
                            f32({}, {0.0107f}),
                            u8({}, {118})};
  Tensor r = eval1(Op::kQLinearMatMul, in);
  EXPECT_EQ(r.dtype(), DType::kU8);
  EXPECT_EQ(ints(r), (std::vector<int64_t>{168, 115, 255, 1, 66, 151}));
  // Per-row a_scale: doubling row 1's scale doubles its dequantized product.
  in[1] = f32({2}, {0.0066f, 0.0132f});
  Tensor p = eval1(Op::kQLinearMatMul, in);
  EXPECT_EQ(ints(p)[0], 168);
  EXPECT_EQ(ints(p)[3], 0); // 2 * (1 - 118) + 118 saturates at 0
  // A 1-D operand keeps numpy's shape rules.
  in[0] = u8({4}, {208, 236, 0, 238});
  in[1] = f32({}, {0.0066f});
  Tensor v = eval1(Op::kQLinearMatMul, in);
  EXPECT_EQ(v.shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(ints(v), (std::vector<int64_t>{168, 115, 255}));
}

TEST_F(LinalgEval, EinsumMatchesExplicitSums) {
  Tensor a = randomFloat(DType::kF64, {2, 3, 4}), b = randomFloat(DType::kF64, {2, 4, 5});
  std::vector<double> va = values(a), vb = values(b);
  // Batched matmul (the sgemm/dgemm path), with the output transposed.
  Tensor bm = eval1(Op::kEinsum, {a, b}, {{"equation", "bij,bjk->bki"}});
  EXPECT_EQ(bm.shape(), (std::vector<int64_t>{2, 5, 3}));
  std::vector<double> want;
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t k = 0; k < 5; ++k)
      for (int64_t i = 0; i < 3; ++i) {
        double s = 0;
        for (int64_t j = 0; j < 4; ++j)
          s += va[static_cast<size_t>(n * 12 + i * 4 + j)] *
               vb[static_cast<size_t>(n * 20 + j * 5 + k)];
        want.push_back(s);
      }
  expectClose(values(bm), want, 1e-12);
  // The same contraction in f32 through sgemm, and with an ellipsis.
  Tensor bm32 = eval1(Op::kEinsum, {a.castTo(DType::kF32), b.castTo(DType::kF32)},
                      {{"equation", "...ij,...jk->...ki"}});
  expectClose(values(bm32), want, 1e-5, 1e-5);
  // The general path: a trace, a diagonal, a sum, implicit output order, and integers.
  Tensor sq = f64({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_EQ(values(eval1(Op::kEinsum, {sq}, {{"equation", "ii"}})), (std::vector<double>{15}));
  EXPECT_EQ(values(eval1(Op::kEinsum, {sq}, {{"equation", "ii->i"}})),
            (std::vector<double>{1, 5, 9}));
  EXPECT_EQ(values(eval1(Op::kEinsum, {sq}, {{"equation", "ij->"}})), (std::vector<double>{45}));
  EXPECT_EQ(values(eval1(Op::kEinsum, {sq}, {{"equation", "ba"}})),
            (std::vector<double>{1, 4, 7, 2, 5, 8, 3, 6, 9})); // implicit: "ab", a transpose
  Tensor x = i64({2, 3}, {1, 2, 3, 4, 5, 6}), y = i64({3}, {1, 0, -1});
  EXPECT_EQ(ints(eval1(Op::kEinsum, {x, y, y}, {{"equation", "ij,j,j->i"}})),
            (std::vector<int64_t>{4, 10}));
  // Size-1 dims broadcast in the ellipsis: [2,1,3] with [4,3] -> [2,4].
  Tensor e =
      eval1(Op::kEinsum,
            {f32({2, 1, 3}, {1, 1, 1, 2, 2, 2}), f32({4, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1})},
            {{"equation", "...j,...j->..."}});
  EXPECT_EQ(e.shape(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(values(e), (std::vector<double>{1, 1, 1, 3, 2, 2, 2, 6}));
  EXPECT_EQ(evalError(Op::kEinsum, {sq, f64({2}, {1, 2})}, {{"equation", "ij,j->i"}}),
            "node 'e' (Einsum): label 'j' has sizes 3 and 2");
  EXPECT_EQ(evalError(Op::kEinsum, {sq}, {{"equation", "ijk"}}),
            "node 'e' (Einsum): input 0 has rank 2 but its term 'ijk' has 3 labels");
}

TEST_F(LinalgEval, DetFactorsWithPivoting) {
  // The first matrix needs a row swap (its top-left is 0); the second is singular.
  Tensor x = f32({3, 2, 2}, {0, 2, 3, 4, 1, 2, 2, 4, 4, 7, 2, 6});
  Tensor r = eval1(Op::kDet, {x});
  EXPECT_EQ(r.shape(), (std::vector<int64_t>{3}));
  expectClose(values(r), {-6, 0, 10}, 1e-6);
  Tensor m = randomFloat(DType::kF64, {3, 3});
  std::vector<double> v = values(m);
  double want = v[0] * (v[4] * v[8] - v[5] * v[7]) - v[1] * (v[3] * v[8] - v[5] * v[6]) +
                v[2] * (v[3] * v[7] - v[4] * v[6]);
  expectClose(values(eval1(Op::kDet, {m})), {want}, 1e-12, 1e-12);
  EXPECT_EQ(values(eval1(Op::kDet, {Tensor::zeros(DType::kF64, {0, 0})})),
            (std::vector<double>{1}));
  EXPECT_EQ(evalError(Op::kDet, {f32({2, 3}, {1, 2, 3, 4, 5, 6})}),
            "node 'e' (Det): input must be a batch of square matrices, got shape [2,3]");
}

} // namespace
} // namespace dlc::optest
