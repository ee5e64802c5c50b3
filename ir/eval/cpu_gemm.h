// The reference backend's single-precision matrix multiply, shared by MatMul, Gemm, Conv
// (as implicit im2col) and the RNNs.
#pragma once

#include <cstdint>

namespace dlc::eval {

/// C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C, row-major with leading dimensions
/// lda/ldb/ldc; op(X) is X or its transpose. beta == 0 ignores C's previous contents (NaN
/// included). Blocked for cache reuse.
void sgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
           int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc);

/// Double-precision version (f64 models), same contract.
void dgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, double alpha, const double *A,
           int64_t lda, const double *B, int64_t ldb, double beta, double *C, int64_t ldc);

} // namespace dlc::eval
