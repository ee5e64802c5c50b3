#include "ir/ops/gemm_kernel.h"

namespace dlc::ops {

namespace {
// Straightforward triple loop; the blocked version replaces it.
template <typename T>
void gemmRef(bool transA, bool transB, int64_t M, int64_t N, int64_t K, T alpha, const T *A,
             int64_t lda, const T *B, int64_t ldb, T beta, T *C, int64_t ldc) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      T acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc +=
            (transA ? A[k * lda + i] : A[i * lda + k]) * (transB ? B[j * ldb + k] : B[k * ldb + j]);
      T &c = C[i * ldc + j];
      c = beta == T(0) ? alpha * acc : alpha * acc + beta * c;
    }
}
} // namespace

void sgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
           int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  gemmRef(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void dgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, double alpha, const double *A,
           int64_t lda, const double *B, int64_t ldb, double beta, double *C, int64_t ldc) {
  gemmRef(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

} // namespace dlc::ops
