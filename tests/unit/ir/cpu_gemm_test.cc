// The blocked sgemm / dgemm against a naive triple loop: odd sizes that cut every tile and
// block edge, transposes, leading dimensions larger than the rows, alpha / beta, and beta == 0
// with NaN in C.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ir/eval/cpu_gemm.h"

namespace dlc::eval {
namespace {

template <typename T>
void naiveGemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, T alpha, const T *A,
               int64_t lda, const T *B, int64_t ldb, T beta, T *C, int64_t ldc) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += static_cast<double>(transA ? A[k * lda + i] : A[i * lda + k]) *
               static_cast<double>(transB ? B[j * ldb + k] : B[k * ldb + j]);
      T &c = C[i * ldc + j];
      c = static_cast<T>(beta == T(0) ? alpha * acc : alpha * acc + beta * c);
    }
}

struct Case {
  bool transA, transB;
  int64_t M, N, K;
  int64_t padA, padB, padC; // extra leading-dimension elements
  double alpha, beta;
  bool nanC;
};

template <typename T> void runCase(const Case &c, std::mt19937 &rng) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  int64_t rowsA = c.transA ? c.K : c.M, colsA = c.transA ? c.M : c.K;
  int64_t rowsB = c.transB ? c.N : c.K, colsB = c.transB ? c.K : c.N;
  int64_t lda = colsA + c.padA, ldb = colsB + c.padB, ldc = c.N + c.padC;
  std::vector<T> A(static_cast<size_t>(std::max<int64_t>(1, rowsA * lda)));
  std::vector<T> B(static_cast<size_t>(std::max<int64_t>(1, rowsB * ldb)));
  std::vector<T> C(static_cast<size_t>(std::max<int64_t>(1, c.M * ldc)));
  for (T &v : A)
    v = static_cast<T>(dist(rng));
  for (T &v : B)
    v = static_cast<T>(dist(rng));
  for (T &v : C)
    v = c.nanC ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(dist(rng));
  std::vector<T> expected = C, got = C;
  T alpha = static_cast<T>(c.alpha), beta = static_cast<T>(c.beta);
  naiveGemm<T>(c.transA, c.transB, c.M, c.N, c.K, alpha, A.data(), lda, B.data(), ldb, beta,
               expected.data(), ldc);
  if constexpr (std::is_same_v<T, float>)
    sgemm(c.transA, c.transB, c.M, c.N, c.K, alpha, A.data(), lda, B.data(), ldb, beta, got.data(),
          ldc);
  else
    dgemm(c.transA, c.transB, c.M, c.N, c.K, alpha, A.data(), lda, B.data(), ldb, beta, got.data(),
          ldc);
  double tol = (std::is_same_v<T, float> ? 2e-6 : 1e-14) * static_cast<double>(c.K + 4);
  int bad = 0;
  for (int64_t i = 0; i < c.M && bad < 5; ++i)
    for (int64_t j = 0; j < ldc && bad < 5; ++j) {
      T e = expected[static_cast<size_t>(i * ldc + j)], g = got[static_cast<size_t>(i * ldc + j)];
      if (j >= c.N) { // padding between rows must be untouched
        if (!(std::isnan(e) && std::isnan(g)) && e != g)
          ++bad;
        continue;
      }
      if (!(std::abs(static_cast<double>(e) - static_cast<double>(g)) <= tol)) {
        ADD_FAILURE() << "C[" << i << "," << j << "] = " << g << ", expected " << e << " (M=" << c.M
                      << " N=" << c.N << " K=" << c.K << " tA=" << c.transA << " tB=" << c.transB
                      << " alpha=" << c.alpha << " beta=" << c.beta << ")";
        ++bad;
      }
    }
  EXPECT_EQ(bad, 0);
}

TEST(CpuGemm, RandomSizesTransposesAndLeadingDims) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int64_t> small(1, 40), pad(0, 3);
  const double alphas[] = {1.0, -0.5, 2.0};
  const double betas[] = {0.0, 1.0, 0.25};
  for (int iter = 0; iter < 120; ++iter) {
    Case c{(iter & 1) != 0, (iter & 2) != 0, small(rng), small(rng),       small(rng),
           pad(rng),        pad(rng),        pad(rng),   alphas[iter % 3], betas[(iter / 3) % 3],
           iter % 5 == 0};
    if (c.nanC)
      c.beta = 0.0;
    runCase<float>(c, rng);
    runCase<double>(c, rng);
  }
}

TEST(CpuGemm, SizesThatCrossEveryBlockEdge) {
  std::mt19937 rng(99);
  // Past MC (144 / 96), KC (256) and NC (2048 / 1024), with ragged remainders.
  const Case cases[] = {
      {false, false, 150, 37, 300, 1, 2, 3, 1.0, 0.0, true},
      {true, false, 97, 1030, 257, 0, 0, 0, 0.5, 1.0, false},
      {false, true, 7, 2049, 513, 2, 1, 0, 1.0, -1.0, false},
      {true, true, 289, 19, 600, 0, 3, 1, -2.0, 0.5, false},
  };
  for (const Case &c : cases) {
    runCase<float>(c, rng);
    runCase<double>(c, rng);
  }
}

TEST(CpuGemm, DegenerateSizes) {
  std::mt19937 rng(7);
  // K == 0: C = beta * C, and beta == 0 clears NaN.
  runCase<float>({false, false, 5, 6, 0, 0, 0, 0, 1.0, 0.0, true}, rng);
  runCase<float>({false, false, 5, 6, 0, 0, 0, 0, 1.0, 2.0, false}, rng);
  runCase<double>({true, true, 1, 1, 1, 0, 0, 0, 3.0, 0.0, false}, rng);
  // M == 0 / N == 0 touch nothing.
  float c = 42.0f, a = 1.0f, b = 1.0f;
  sgemm(false, false, 0, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1);
  sgemm(false, false, 1, 0, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1);
  EXPECT_EQ(c, 42.0f);
}

TEST(CpuGemm, ExactSmallProduct) {
  // [[1,2],[3,4]] x [[5,6],[7,8]] = [[19,22],[43,50]]; alpha 2, beta 1 on C = 1.
  float A[] = {1, 2, 3, 4}, B[] = {5, 6, 7, 8}, C[] = {1, 1, 1, 1};
  sgemm(false, false, 2, 2, 2, 2.0f, A, 2, B, 2, 1.0f, C, 2);
  EXPECT_EQ(std::vector<float>(C, C + 4), (std::vector<float>{39, 45, 87, 101}));
}

/// Not run by default: prints the sgemm rate for 512^3 (run with
/// --gtest_also_run_disabled_tests --gtest_filter='*Sgemm512*' on a release build).
TEST(CpuGemm, DISABLED_Sgemm512) {
  const int64_t n = 512;
  std::vector<float> A(n * n), B(n * n), C(n * n);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float &v : A)
    v = dist(rng);
  for (float &v : B)
    v = dist(rng);
  sgemm(false, false, n, n, n, 1.0f, A.data(), n, B.data(), n, 0.0f, C.data(), n);
  const int reps = 20;
  auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r)
    sgemm(false, false, n, n, n, 1.0f, A.data(), n, B.data(), n, 0.0f, C.data(), n);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
  std::printf("sgemm 512^3: %.3f ms, %.1f GFLOP/s\n", s * 1e3, 2.0 * n * n * n / s / 1e9);
  EXPECT_TRUE(std::isfinite(C[0]));
}

} // namespace
} // namespace dlc::eval
