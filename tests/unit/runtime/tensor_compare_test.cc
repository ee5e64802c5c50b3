// Tensor comparison: tolerances, NaN, infinities, exact integers, type mismatches, reports.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "runtime/random_tensor.h"
#include "runtime/tensor_compare.h"

namespace dlc {
namespace {

Tensor f32(std::vector<float> v) {
  return Tensor::fromVector<float>(DType::kF32, {static_cast<int64_t>(v.size())}, v);
}

TEST(TensorCompare, WithinToleranceMatches) {
  Tolerance tol{1e-3, 1e-7};
  Comparison c = compareTensors(f32({1.0f, 100.0f, 0}), f32({1.0005f, 100.09f, 0}), tol);
  EXPECT_TRUE(c.match);
  EXPECT_EQ(c.mismatches, 0);
  EXPECT_NEAR(c.maxAbsError, 0.09, 1e-5);
  EXPECT_NEAR(c.maxRelError, 0.0009, 1e-6);
}

TEST(TensorCompare, OutsideToleranceReportsTheFirstElement) {
  Tolerance tol{1e-3, 1e-7};
  Tensor a = Tensor::fromVector<float>(DType::kF32, {2, 2}, {1, 2, 3, 4});
  Tensor e = Tensor::fromVector<float>(DType::kF32, {2, 2}, {1, 2, 3.5f, 5});
  Comparison c = compareTensors(a, e, tol);
  EXPECT_FALSE(c.match);
  EXPECT_EQ(c.mismatches, 2);
  EXPECT_EQ(c.firstMismatch, 2);
  EXPECT_EQ(c.str(a, e), "max abs error 1, max rel error 0.2; 2 of 4 elements differ, first at "
                         "[1,0]: 3 vs expected 3.5");
}

TEST(TensorCompare, NanEqualsNanOnly) {
  Tolerance tol;
  float nan = std::nanf("");
  EXPECT_TRUE(compareTensors(f32({nan, 1}), f32({nan, 1}), tol).match);
  Comparison c = compareTensors(f32({nan}), f32({1}), tol);
  EXPECT_FALSE(c.match);
  EXPECT_TRUE(std::isinf(c.maxAbsError));
  EXPECT_FALSE(compareTensors(f32({1}), f32({nan}), tol).match);
}

TEST(TensorCompare, InfinitiesMustBeEqual) {
  Tolerance tol;
  float inf = INFINITY;
  EXPECT_TRUE(compareTensors(f32({inf, -inf}), f32({inf, -inf}), tol).match);
  EXPECT_FALSE(compareTensors(f32({inf}), f32({-inf}), tol).match);
  EXPECT_FALSE(compareTensors(f32({1e30f}), f32({inf}), tol).match);
}

TEST(TensorCompare, ZeroExpectedGivesInfiniteRelativeError) {
  Comparison c = compareTensors(f32({1e-9f}), f32({0}), Tolerance{1e-3, 1e-7});
  EXPECT_TRUE(c.match); // within atol
  EXPECT_TRUE(std::isinf(c.maxRelError));
}

TEST(TensorCompare, IntegersAndBoolsAreExact) {
  Tolerance loose{1.0, 10.0};
  Tensor a = Tensor::vectorI64({1, 2, 3});
  Tensor e = Tensor::vectorI64({1, 2, 4});
  Comparison c = compareTensors(a, e, loose);
  EXPECT_FALSE(c.match);
  EXPECT_EQ(c.str(a, e), "max abs error 1, max rel error 0.25; 1 of 3 elements differ, first at "
                         "[2]: 3 vs expected 4");
  Tensor t = Tensor::fromVector<uint8_t>(DType::kBool, {2}, {1, 0});
  Tensor f = Tensor::fromVector<uint8_t>(DType::kBool, {2}, {1, 1});
  EXPECT_TRUE(compareTensors(t, t, loose).match);
  EXPECT_EQ(compareTensors(t, f, loose).str(t, f),
            "max abs error 1, max rel error 1; 1 of 2 elements differ, first at [1]: false vs "
            "expected true");
  Tensor big = Tensor::fromVector<uint64_t>(DType::kU64, {1}, {~0ull});
  Tensor bigger = Tensor::fromVector<uint64_t>(DType::kU64, {1}, {~0ull - 1});
  EXPECT_FALSE(compareTensors(big, bigger, loose).match);
}

TEST(TensorCompare, DtypeAndShapeMustMatch) {
  Tolerance tol;
  Tensor a = f32({1, 2});
  Tensor d = Tensor::fromVector<double>(DType::kF64, {2}, {1, 2});
  Comparison c = compareTensors(a, d, tol);
  EXPECT_FALSE(c.match);
  EXPECT_EQ(c.str(a, d), "dtype f32, expected f64");
  Tensor r = a.reshaped({2, 1});
  EXPECT_EQ(compareTensors(a, r, tol).str(a, r), "shape [2], expected [2,1]");
}

TEST(TensorCompare, ElementIndex) {
  EXPECT_EQ(elementIndexStr({2, 3, 4}, 23), "[1,2,3]");
  EXPECT_EQ(elementIndexStr({}, 0), "[]");
}

TEST(RandomTensor, SeededRangedAndNotConstant) {
  std::mt19937_64 a(42), b(42), c(43);
  Tensor x = randomTensor(DType::kF32, {64}, a).value();
  EXPECT_TRUE(x.identical(randomTensor(DType::kF32, {64}, b).value()));
  EXPECT_FALSE(x.identical(randomTensor(DType::kF32, {64}, c).value()));
  double lo = 1, hi = -1;
  for (int64_t i = 0; i < x.numElements(); ++i) {
    lo = std::min(lo, x.elementAsDouble(i));
    hi = std::max(hi, x.elementAsDouble(i));
  }
  EXPECT_GE(lo, -1.0);
  EXPECT_LT(hi, 1.0);
  EXPECT_LT(lo, -0.5);
  EXPECT_GT(hi, 0.5);
  Tensor ints = randomTensor(DType::kI32, {256}, a).value();
  std::set<int64_t> seen;
  for (int64_t v : ints.toInt64Vector())
    seen.insert(v);
  EXPECT_EQ(seen, (std::set<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  Tensor bools = randomTensor(DType::kBool, {64}, a).value();
  std::set<int64_t> bs;
  for (int64_t v : bools.toInt64Vector())
    bs.insert(v);
  EXPECT_EQ(bs, (std::set<int64_t>{0, 1}));
}

TEST(RandomTensor, HugeShapesAreErrorsNotCrashes) {
  // Shapes a model may declare: a byte size that wraps (it used to allocate 64 bytes and write
  // the whole tensor), an element count that overflows (an abort), and one too large to
  // allocate (an abort). Each is now an error that says what was asked for.
  std::mt19937_64 rng(1);
  auto wraps = randomTensor(DType::kF32, {int64_t{1} << 62}, rng);
  ASSERT_FALSE(wraps.hasValue());
  EXPECT_EQ(wraps.status().message(),
            "a tensor would be f32[4611686018427387904], whose byte size overflows int64");
  auto overflows = randomTensor(DType::kF32, {int64_t{1} << 40, int64_t{1} << 40}, rng);
  ASSERT_FALSE(overflows.hasValue());
  EXPECT_EQ(overflows.status().message(), "tensor: number of elements overflows int64");
  auto large = randomTensor(DType::kF32, {1 << 20, 1 << 20, 1024}, rng);
  ASSERT_FALSE(large.hasValue());
  EXPECT_EQ(large.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(large.status().message().find("past the limit of"), std::string::npos)
      << large.status().message();
  // Tensor::tryZeros: the same sizes from outside any limit are errors too.
  EXPECT_FALSE(Tensor::tryZeros(DType::kF64, {int64_t{1} << 61}).hasValue());
  EXPECT_FALSE(Tensor::tryZeros(DType::kF32, {int64_t{1} << 40, int64_t{1} << 40}).hasValue());
}

} // namespace
} // namespace dlc
