// Blocked GEMM after Goto and van de Geijn ("Anatomy of high-performance matrix
// multiplication"): op(B) is packed into KC x NC panels of NR-wide slivers, op(A) into MC x KC
// blocks of MR-tall slivers, and a register-tiled MR x NR micro-kernel runs over the packed
// data. The micro-kernel is plain C++ with compile-time trip counts, so the compiler keeps
// the accumulator tile in vector registers. On x86-64 with GCC the micro-kernel is also
// compiled for x86-64-v3 (AVX2, FMA) and x86-64-v4 (AVX-512) and picked at load time
// (target_clones), so a portable build still uses the host's widest vectors. Single-threaded:
// callers (and the runtime) own parallelism.
#include "ir/eval/cpu_gemm.h"

#include <algorithm>
#include <cstring>
#include <vector>

// Not under the sanitizers: their instrumented ifunc resolvers run before the runtime is up.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) &&                             \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define DLC_GEMM_CLONES                                                                            \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define DLC_GEMM_CLONES
#endif

namespace dlc::eval {

namespace {

/// Tile sizes per element type: MR x NR accumulators, KC deep, MC rows of A and NC columns of
/// B per packed block (A block ~ L2, B sliver ~ L1).
template <typename T> struct Tiles;
template <> struct Tiles<float> {
  static constexpr int64_t MR = 6, NR = 16, KC = 256, MC = 144, NC = 2048;
};
template <> struct Tiles<double> {
  static constexpr int64_t MR = 6, NR = 8, KC = 256, MC = 96, NC = 1024;
};

/// Element (i, k) of op(A).
template <typename T> inline T at(const T *A, int64_t ld, bool trans, int64_t row, int64_t col) {
  return trans ? A[col * ld + row] : A[row * ld + col];
}

/// Packs rows [i0, i0 + mc) x cols [k0, k0 + kc) of op(A) into MR-tall slivers, k-major
/// within each sliver, zero-padding the last sliver.
template <typename T>
void packA(const T *A, int64_t lda, bool transA, int64_t i0, int64_t mc, int64_t k0, int64_t kc,
           T *out) {
  constexpr int64_t MR = Tiles<T>::MR;
  for (int64_t s = 0; s < mc; s += MR) {
    int64_t rows = std::min(MR, mc - s);
    for (int64_t k = 0; k < kc; ++k) {
      T *dst = out + k * MR;
      for (int64_t r = 0; r < rows; ++r)
        dst[r] = at(A, lda, transA, i0 + s + r, k0 + k);
      for (int64_t r = rows; r < MR; ++r)
        dst[r] = T(0);
    }
    out += MR * kc;
  }
}

/// Packs rows [k0, k0 + kc) x cols [j0, j0 + nc) of op(B) into NR-wide slivers, k-major
/// within each sliver, zero-padding the last sliver.
template <typename T>
void packB(const T *B, int64_t ldb, bool transB, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
           T *out) {
  constexpr int64_t NR = Tiles<T>::NR;
  for (int64_t s = 0; s < nc; s += NR) {
    int64_t cols = std::min(NR, nc - s);
    if (!transB && cols == NR) {
      for (int64_t k = 0; k < kc; ++k)
        std::memcpy(out + k * NR, B + (k0 + k) * ldb + j0 + s, NR * sizeof(T));
    } else {
      for (int64_t k = 0; k < kc; ++k) {
        T *dst = out + k * NR;
        for (int64_t c = 0; c < cols; ++c)
          dst[c] = at(B, ldb, transB, k0 + k, j0 + s + c);
        for (int64_t c = cols; c < NR; ++c)
          dst[c] = T(0);
      }
    }
    out += NR * kc;
  }
}

/// acc[MR][NR] = sum over k of a[k][:] (outer) b[k][:], from packed slivers.
template <typename T>
[[gnu::always_inline]] inline void microKernelBody(int64_t kc, const T *__restrict a,
                                                   const T *__restrict b, T *__restrict acc) {
  constexpr int64_t MR = Tiles<T>::MR, NR = Tiles<T>::NR;
  T c[MR][NR] = {};
  for (int64_t k = 0; k < kc; ++k) {
    const T *bk = b + k * NR;
#pragma GCC unroll 16
    for (int64_t i = 0; i < MR; ++i) {
      T ai = a[k * MR + i];
#pragma GCC unroll 1
      for (int64_t j = 0; j < NR; ++j)
        c[i][j] += ai * bk[j];
    }
  }
  for (int64_t i = 0; i < MR; ++i)
    for (int64_t j = 0; j < NR; ++j)
      acc[i * NR + j] = c[i][j];
}

DLC_GEMM_CLONES
void microKernelF32(int64_t kc, const float *a, const float *b, float *acc) {
  microKernelBody<float>(kc, a, b, acc);
}
DLC_GEMM_CLONES
void microKernelF64(int64_t kc, const double *a, const double *b, double *acc) {
  microKernelBody<double>(kc, a, b, acc);
}
inline void microKernel(int64_t kc, const float *a, const float *b, float *acc) {
  microKernelF32(kc, a, b, acc);
}
inline void microKernel(int64_t kc, const double *a, const double *b, double *acc) {
  microKernelF64(kc, a, b, acc);
}

/// C tile (mr x nr valid of MR x NR) = alpha * acc + (first ? beta * C : C), where beta == 0
/// on the first pass ignores C's old contents.
template <typename T>
inline void storeTile(const T *acc, int64_t mr, int64_t nr, T alpha, T beta, bool first, T *C,
                      int64_t ldc) {
  constexpr int64_t NR = Tiles<T>::NR;
  for (int64_t i = 0; i < mr; ++i) {
    T *c = C + i * ldc;
    const T *s = acc + i * NR;
    if (!first)
      for (int64_t j = 0; j < nr; ++j)
        c[j] += alpha * s[j];
    else if (beta == T(0))
      for (int64_t j = 0; j < nr; ++j)
        c[j] = alpha * s[j];
    else
      for (int64_t j = 0; j < nr; ++j)
        c[j] = alpha * s[j] + beta * c[j];
  }
}

/// The macro-kernel over one packed A block (mc x kc) and one packed B panel (kc x nc).
template <typename T>
void macroKernel(int64_t mc, int64_t nc, int64_t kc, const T *pa, const T *pb, T alpha, T beta,
                 bool first, T *C, int64_t ldc) {
  constexpr int64_t MR = Tiles<T>::MR, NR = Tiles<T>::NR;
  alignas(64) T acc[MR * NR];
  for (int64_t j = 0; j < nc; j += NR) {
    int64_t nr = std::min(NR, nc - j);
    for (int64_t i = 0; i < mc; i += MR) {
      int64_t mr = std::min(MR, mc - i);
      microKernel(kc, pa + i * kc, pb + j * kc, acc);
      storeTile<T>(acc, mr, nr, alpha, beta, first, C + i * ldc + j, ldc);
    }
  }
}

/// C = beta * C (beta == 0 writes zeros): the whole result when K == 0 or alpha == 0.
template <typename T> void scaleC(int64_t M, int64_t N, T beta, T *C, int64_t ldc) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      C[i * ldc + j] = beta == T(0) ? T(0) : beta * C[i * ldc + j];
}

template <typename T>
void gemmBlocked(bool transA, bool transB, int64_t M, int64_t N, int64_t K, T alpha, const T *A,
                 int64_t lda, const T *B, int64_t ldb, T beta, T *C, int64_t ldc) {
  using Tl = Tiles<T>;
  if (M <= 0 || N <= 0)
    return;
  if (K <= 0) {
    scaleC(M, N, beta, C, ldc);
    return;
  }
  int64_t kcMax = std::min(Tl::KC, K);
  int64_t mcMax = std::min(Tl::MC, (M + Tl::MR - 1) / Tl::MR * Tl::MR);
  int64_t ncMax = std::min(Tl::NC, (N + Tl::NR - 1) / Tl::NR * Tl::NR);
  std::vector<T> packedA(static_cast<size_t>(mcMax * kcMax));
  std::vector<T> packedB(static_cast<size_t>(ncMax * kcMax));
  for (int64_t j0 = 0; j0 < N; j0 += Tl::NC) {
    int64_t nc = std::min(Tl::NC, N - j0);
    for (int64_t k0 = 0; k0 < K; k0 += Tl::KC) {
      int64_t kc = std::min(Tl::KC, K - k0);
      packB(B, ldb, transB, k0, kc, j0, nc, packedB.data());
      for (int64_t i0 = 0; i0 < M; i0 += Tl::MC) {
        int64_t mc = std::min(Tl::MC, M - i0);
        packA(A, lda, transA, i0, mc, k0, kc, packedA.data());
        macroKernel<T>(mc, nc, kc, packedA.data(), packedB.data(), alpha, beta, k0 == 0,
                       C + i0 * ldc + j0, ldc);
      }
    }
  }
}

} // namespace

void sgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
           int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  gemmBlocked(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void dgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, double alpha, const double *A,
           int64_t lda, const double *B, int64_t ldb, double beta, double *C, int64_t ldc) {
  gemmBlocked(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

} // namespace dlc::eval
