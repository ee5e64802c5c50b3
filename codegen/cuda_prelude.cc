#include "codegen/cuda_prelude.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <unordered_map>

#include "codegen/elementwise_expr.h"
#include "ir/status.h"

namespace dlc::codegen {

namespace {

/// The prelude's opening: the fp16/bf16 headers every kernel's storage types need.
constexpr std::string_view kHeader = R"cuda(// dlc prelude
#include <cuda_fp16.h>
#include <cuda_bf16.h>
)cuda";

/// One helper of the prelude (a function, or a few overloads or related definitions).
struct HelperDef {
  /// The `dlc_*` identifiers it defines, separated by spaces; the first one names the helper.
  std::string_view names;
  /// The helpers its text uses (by name); each comes earlier in the table.
  std::string_view deps;
  /// Its source, after the one newline that opens the raw string.
  std::string_view text;
};

// Helpers in the order a prelude emits them (a helper's dependencies first).
constexpr HelperDef kHelpers[] = {
    {"dlc_load dlc_store dlc_store_impl", "", R"cuda(

// --- Load/store conversions between storage and compute types ------------------------------
__device__ __forceinline__ float dlc_load(__half x) { return __half2float(x); }
__device__ __forceinline__ float dlc_load(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class T> __device__ __forceinline__ T dlc_load(T x) { return x; }

template <class S> struct dlc_store_impl {
  template <class C> static __device__ __forceinline__ S conv(C x) { return (S)x; }
};
template <> struct dlc_store_impl<__half> {
  template <class C> static __device__ __forceinline__ __half conv(C x) {
    return __float2half_rn((float)x);
  }
};
template <> struct dlc_store_impl<__nv_bfloat16> {
  template <class C> static __device__ __forceinline__ __nv_bfloat16 conv(C x) {
    return __float2bfloat16_rn((float)x);
  }
};
template <> struct dlc_store_impl<bool> {
  template <class C> static __device__ __forceinline__ bool conv(C x) { return x != 0; }
};
template <class S, class C> __device__ __forceinline__ S dlc_store(C x) {
  return dlc_store_impl<S>::conv(x);
}
)cuda"},
    {"dlc_abs", "", R"cuda(

// --- Helpers named by the op table's CUDA expressions ---------------------------------------
template <class T> __device__ __forceinline__ T dlc_abs(T x) { return x < T(0) ? T(-x) : x; }
__device__ __forceinline__ float dlc_abs(float x) { return fabsf(x); }
__device__ __forceinline__ double dlc_abs(double x) { return fabs(x); }
__device__ __forceinline__ unsigned char dlc_abs(unsigned char x) { return x; }
__device__ __forceinline__ unsigned short dlc_abs(unsigned short x) { return x; }
__device__ __forceinline__ unsigned int dlc_abs(unsigned int x) { return x; }
__device__ __forceinline__ unsigned long long dlc_abs(unsigned long long x) { return x; }

)cuda"},
    {"dlc_relu", "", R"cuda(
template <class T> __device__ __forceinline__ T dlc_relu(T x) { return x < T(0) ? T(0) : x; }
)cuda"},
    {"dlc_sign", "", R"cuda(
template <class T> __device__ __forceinline__ T dlc_sign(T x) {
  return x != x ? x : T((x > T(0)) - (x < T(0)));
}
)cuda"},
    {"dlc_sigmoid", "", R"cuda(
template <class T> __device__ __forceinline__ T dlc_sigmoid(T x) {
  return T(1) / (T(1) + exp(-x));
}
)cuda"},
    {"dlc_softplus", "", R"cuda(
template <class T> __device__ __forceinline__ T dlc_softplus(T x) { return log(exp(x) + T(1)); }
)cuda"},
    {"dlc_softsign", "dlc_abs", R"cuda(
template <class T> __device__ __forceinline__ T dlc_softsign(T x) {
  return x / (T(1) + dlc_abs(x));
}
)cuda"},
    {"dlc_mish", "dlc_softplus", R"cuda(
template <class T> __device__ __forceinline__ T dlc_mish(T x) {
  return x * tanh(dlc_softplus(x));
}
)cuda"},
    {"dlc_hard_swish", "", R"cuda(
template <class T> __device__ __forceinline__ T dlc_hard_swish(T x) {
  T y = x / T(6) + T(0.5);
  y = y < T(0) ? T(0) : (y > T(1) ? T(1) : y);
  return x * y;
}
)cuda"},
    {"dlc_hard_sigmoid", "", R"cuda(
template <class T> __device__ __forceinline__ T dlc_hard_sigmoid(T x, T alpha, T beta) {
  T y = alpha * x + beta;
  return y < T(0) ? T(0) : (y > T(1) ? T(1) : y);
}
)cuda"},
    {"dlc_celu", "", R"cuda(
template <class T> __device__ __forceinline__ T dlc_celu(T x, T alpha) {
  return (x > T(0) ? x : T(0)) + (alpha * (exp(x / alpha) - T(1)) < T(0)
                                      ? alpha * (exp(x / alpha) - T(1))
                                      : T(0));
}
)cuda"},
    {"dlc_elu", "", R"cuda(
template <class T> __device__ __forceinline__ T dlc_elu(T x, T alpha) {
  return x < T(0) ? alpha * (exp(x) - T(1)) : x;
}
)cuda"},
    {"dlc_leaky_relu", "", R"cuda(
template <class T> __device__ __forceinline__ T dlc_leaky_relu(T x, T alpha) {
  return x < T(0) ? x * alpha : x;
}
)cuda"},
    {"dlc_thresholded_relu", "", R"cuda(
template <class T> __device__ __forceinline__ T dlc_thresholded_relu(T x, T alpha) {
  return x > alpha ? x : T(0);
}
)cuda"},
    {"dlc_selu", "", R"cuda(
template <class T> __device__ __forceinline__ T dlc_selu(T x, T alpha, T gamma) {
  return x <= T(0) ? gamma * (alpha * exp(x) - alpha) : gamma * x;
}
)cuda"},
    {"dlc_shrink", "", R"cuda(
template <class T, class L> __device__ __forceinline__ T dlc_shrink(T x, L lambd, L bias) {
  return x < -lambd ? T(x + bias) : (x > lambd ? T(x - bias) : T(0));
}
)cuda"},
    {"dlc_gelu", "", R"cuda(
template <class T> __device__ __forceinline__ T dlc_gelu(T x) {
  return T(0.5) * x * (T(1) + erf(x * T(0.70710678118654752440)));
}
)cuda"},
    // GELU with a 16-bit result, in float: x * Phi(x), Phi(-|x|) = exp2(|x| * P(|x|) - 1) with
    // P of degree 5 fitted to log2(erfc(|x| / sqrt 2)) on |x| <= 4 sqrt 2 (P held at its end
    // beyond: the tail keeps decaying). Phi's error stays under 4e-7, and rounded to f16 the
    // results differ from the correctly rounded GELU in 102 of the 42,752 f16 inputs below 60
    // in magnitude, by one unit, against 331 (two units at most) for erff's 0.5x(1 + erf):
    // 1 + erf cancels where x is negative, exp2 of the tail does not. 12 instructions and one
    // MUFU against erff's ~26: ViT's FFN up-projection runs its epilogue while the tensor cores
    // idle (H100, session 37: 29.9 us with GELU, 24.5 with ReLU).
    {"dlc_gelu16", "", R"cuda(
__device__ __forceinline__ float dlc_gelu16(float x) {
  const float s = fabsf(x), c = fminf(s, 5.65685425f);
  float p = 2.967076944e-05f;
  p = fmaf(p, c, -7.161399117e-04f);
  p = fmaf(p, c, 7.814069279e-03f);
  p = fmaf(p, c, -5.286079645e-02f);
  p = fmaf(p, c, -4.592258632e-01f);
  p = fmaf(p, c, -1.151083827e+00f);
  const float z = fmaf(p, s, -1.0f);
  float e;
#ifdef __CUDA_ARCH__
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(z));
#else // tests' host emulation
  e = exp2f(z);
#endif
  return x * (x < 0.0f ? e : 1.0f - e);
}
)cuda"},
    {"dlc_gelu_tanh", "", R"cuda(
template <class T> __device__ __forceinline__ T dlc_gelu_tanh(T x) {
  return T(0.5) * x *
         (T(1) + tanh(T(0.79788456080286535588) * (x + T(0.044715) * x * x * x)));
}
)cuda"},
    {"dlc_isinf", "", R"cuda(
template <class T> __device__ __forceinline__ bool dlc_isinf(T x, bool pos, bool neg) {
  return isinf(x) && (x > T(0) ? pos : neg);
}
)cuda"},
    {"dlc_max dlc_min", "", R"cuda(
// Min/Max propagate NaN (numpy maximum/minimum semantics).
template <class T> __device__ __forceinline__ T dlc_max(T a, T b) {
  return a != a ? a : (b != b ? b : (a < b ? b : a));
}
template <class T> __device__ __forceinline__ T dlc_min(T a, T b) {
  return a != a ? a : (b != b ? b : (b < a ? b : a));
}
)cuda"},
    {"dlc_add", "", R"cuda(
template <class T> __device__ __forceinline__ T dlc_add(T a, T b) { return a + b; }
)cuda"},
    {"dlc_clip_lo dlc_clip_hi", "", R"cuda(
template <class T, class B> __device__ __forceinline__ T dlc_clip_lo(T x, B lo) {
  return x < T(lo) ? T(lo) : x;
}
template <class T, class B> __device__ __forceinline__ T dlc_clip_hi(T x, B hi) {
  return x > T(hi) ? T(hi) : x;
}
)cuda"},
    {"dlc_idiv", "", R"cuda(
// Integer division truncates toward zero; division by zero gives 0 (a kernel cannot fail).
template <class T> __device__ __forceinline__ T dlc_idiv(T a, T b) {
  return b == T(0) ? T(0) : T(a / b);
}
)cuda"},
    {"dlc_imod_trunc dlc_imod_floor", "", R"cuda(
template <class T> __device__ __forceinline__ T dlc_imod_trunc(T a, T b) {
  return b == T(0) ? T(0) : T(a % b);
}
template <class T> __device__ __forceinline__ T dlc_imod_floor(T a, T b) {
  if (b == T(0))
    return T(0);
  T r = T(a % b);
  return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? T(r + b) : r;
}
)cuda"},
    {"dlc_powf", "", R"cuda(
__device__ __forceinline__ float dlc_powf(float a, float b) { return powf(a, b); }
)cuda"},
    {"dlc_ipow", "", R"cuda(
__device__ __forceinline__ long long dlc_ipow(long long a, double e) {
  double r = pow((double)a, e);
  if (r != r)
    return 0;
  if (r >= 9.2233720368547758e18)
    return 0x7fffffffffffffffLL;
  if (r <= -9.2233720368547758e18)
    return (long long)(-9.2233720368547758e18);
  return (long long)r;
}
)cuda"},
    {"dlc_shift", "", R"cuda(
template <bool Left, class T, class U> __device__ __forceinline__ T dlc_shift(T a, U b) {
  if ((unsigned long long)b >= sizeof(T) * 8)
    return T(0);
  return Left ? T(a << b) : T(a >> b);
}
)cuda"},
    {"dlc_limits", "", R"cuda(
template <class T> struct dlc_limits;
#define DLC_LIMITS(T, LO, HI)                                                                      \
  template <> struct dlc_limits<T> {                                                               \
    static __device__ __forceinline__ double lo() { return (double)(LO); }                         \
    static __device__ __forceinline__ double hi() { return (double)(HI); }                         \
    static __device__ __forceinline__ T min() { return (T)(LO); }                                  \
    static __device__ __forceinline__ T max() { return (T)(HI); }                                  \
  };
DLC_LIMITS(signed char, -128, 127)
DLC_LIMITS(short, -32768, 32767)
DLC_LIMITS(int, -2147483647 - 1, 2147483647)
DLC_LIMITS(long long, -9223372036854775807LL - 1, 9223372036854775807LL)
DLC_LIMITS(unsigned char, 0, 255)
DLC_LIMITS(unsigned short, 0, 65535)
DLC_LIMITS(unsigned int, 0, 4294967295u)
DLC_LIMITS(unsigned long long, 0, 18446744073709551615ull)
#undef DLC_LIMITS
)cuda"},
    {"dlc_float_to_int", "dlc_limits", R"cuda(
// Float to integer: truncation toward zero, saturating, NaN -> 0 (the reference's Cast).
template <class I, class F> __device__ __forceinline__ I dlc_float_to_int(F x) {
  double v = (double)x;
  if (v != v)
    return I(0);
  if (v <= dlc_limits<I>::lo())
    return dlc_limits<I>::min();
  if (v >= dlc_limits<I>::hi())
    return dlc_limits<I>::max();
  return (I)v;
}
)cuda"},
    {"dlc_quantize dlc_quantize_unit dlc_quantize_wide dlc_quant_level dlc_quant_recip dlc_qscale "
     "dlc_qscale_of "
     "dlc_quant_div",
     "dlc_limits", R"cuda(
// 1/s in double to within 2^-52 (relative): the hardware's approximation and two Newton steps;
// exact for 0, inf and NaN. A function of s alone, so a kernel computes it once per scale.
// (Not __frcp_rn: a per-axis scale is not hoisted, and its slow path is a call per element.)
__device__ __forceinline__ double dlc_quant_recip(float s) {
  const double d = (double)s;
  double r;
#ifdef __CUDA_ARCH__
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(d));
#else // tests' host emulation
  r = 1.0 / d;
#endif
  if (r != 0.0 && r - r == 0.0) { // finite and nonzero
    r = fma(r, fma(-d, r, 1.0), r);
    r = fma(r, fma(-d, r, 1.0), r);
  }
  return r;
}
// A quantization scale with what its division needs, computed once per scale (GEMM epilogues
// hoist it out of the element loop: gemm_kernel.cc). x / s = (x * p) / (s * p) for the power of
// two p that brings s into [2^-60, 2^60] (1 for every scale calibration gives).
struct dlc_qscale {
  float sn; // the scale s times p
  float r;  // RN(1/sn): 1/sn in double rounded once (1/sn is never within 2^-50 of a float
            // midpoint, so that is the correctly rounded float reciprocal)
  float p;  // 1, 2^90 or 2^-90
  // s itself (sn times 1/p, both exact), for a dequantization that shares the scale.
  __device__ __forceinline__ explicit operator float() const {
    return sn * (p > 1.0f ? 0x1p-90f : p < 1.0f ? 0x1p90f : 1.0f);
  }
};
__device__ __forceinline__ dlc_qscale dlc_qscale_of(float s) {
  const float a = fabsf(s);
  const float p = a < 0x1p-60f ? 0x1p90f : a > 0x1p60f ? 0x1p-90f : 1.0f; // NaN: 1
  const float sn = s * p;
  return {sn, __double2float_rn(dlc_quant_recip(sn)), p};
}
__device__ __forceinline__ dlc_qscale dlc_qscale_of(double s) { return dlc_qscale_of((float)s); }
__device__ __forceinline__ const dlc_qscale &dlc_qscale_of(const dlc_qscale &q) { return q; }
// x / s as QuantizeLinear rounds it, branch-free and without __fdiv_rn (whose slow path is a
// subroutine call, which inside an unrolled GEMM epilogue costs registers and spills): with
// x' = x * p (exact, or so large or small that the level saturates or is 0), y = x' * RN(1/sn),
// then two corrections y += (x' - y*sn) * RN(1/sn), the remainder exact in an FMA: the first
// brings y within an ulp of x'/sn, the second makes it the correctly rounded quotient
// (Markstein's theorem; 3*10^8 random, near-tie and special cases over every scale give the
// levels x / s gives, and the same quotient wherever it matters). Where
// |y| >= 2^24 (or inf, NaN: scale 0 or inf too) the level saturates or is the zero point, and
// y is kept; where |x/s| < 1/4, the only place an intermediate could underflow, the level is 0.
__device__ __forceinline__ float dlc_quant_div(float x, const dlc_qscale &q) {
  const float xp = x * q.p;
  const float y = xp * q.r;
  const float c = fminf(fmaxf(y, -0x1p24f), 0x1p24f);
  float z = fmaf(fmaf(-c, q.sn, xp), q.r, c);
  z = fmaf(fmaf(-z, q.sn, xp), q.r, z);
  return fabsf(y) < 0x1p24f ? z : y;
}
// The level of a quotient q: saturate(round_half_even(q) + zero point), NaN -> the zero point.
// For an 8-bit Q, in integers after one conversion that rounds and saturates to 16 bits (NaN
// gives 0; a level past 16 bits saturates Q all the same, as |zp| < 2^9): 4 instructions where
// the float form (round, NaN select, add, clamp, convert) takes 7; with a zero point of 0, the
// conversion saturates to Q itself.
template <class Q> __device__ __forceinline__ Q dlc_quant_level(float q, int zp) {
  if constexpr (sizeof(Q) == 1) {
#ifdef __CUDA_ARCH__
    // With a zero point of 0 (symmetric quantization; a literal in the kernels, so the test
    // folds) one conversion rounds, saturates to 8 bits and maps NaN to 0: no clamp after it.
    if (zp == 0) {
      int r;
      if ((Q)-1 < (Q)0)
        asm("cvt.rni.sat.s8.f32 %0, %1;" : "=r"(r) : "f"(q));
      else
        asm("cvt.rni.sat.u8.f32 %0, %1;" : "=r"(r) : "f"(q));
      return (Q)r;
    }
#endif
    int s;
#ifdef __CUDA_ARCH__
    short h;
    asm("cvt.rni.sat.s16.f32 %0, %1;" : "=h"(h) : "f"(q));
    s = h;
#else // tests' host emulation
    s = q != q ? 0 : (int)rintf(fminf(fmaxf(q, -32768.0f), 32767.0f));
#endif
    const int i = s + zp, lo = (int)dlc_limits<Q>::lo(), hi = (int)dlc_limits<Q>::hi();
    return (Q)(i < lo ? lo : i > hi ? hi : i);
  } else {
    float r = rintf(q);
    r = r != r ? 0.0f : r;
    r += (float)zp;
    r = fminf(fmaxf(r, (float)dlc_limits<Q>::lo()), (float)dlc_limits<Q>::hi());
    return (Q)(int)r;
  }
}
// QuantizeLinear of one element (codegen/quant_expr.h): saturate(round_half_even(x / scale) +
// zero point), x / scale the correctly rounded float quotient; NaN -> the zero point. Q is an
// 8- or 16-bit integer, so a sum rounded above 2^24 saturates all the same. Selects, not
// branches, so that a GEMM epilogue stays one block.
template <class Q>
__device__ __forceinline__ Q dlc_quantize(float x, const dlc_qscale &scale, int zp) {
  return dlc_quant_level<Q>(dlc_quant_div(x, scale), zp);
}
// The same with a scale of exactly 1 (a constant; x / 1 is x): no division.
template <class Q> __device__ __forceinline__ Q dlc_quantize_unit(float x, int zp) {
  return dlc_quant_level<Q>(x, zp);
}
// The same for an int32 x, divided in double as the reference does.
template <class Q> __device__ __forceinline__ Q dlc_quantize_wide(double x, double scale, int zp) {
  double r = rint(__ddiv_rn(x, scale));
  if (r != r)
    r = 0.0;
  r += (double)zp;
  if (r <= dlc_limits<Q>::lo())
    return dlc_limits<Q>::min();
  if (r >= dlc_limits<Q>::hi())
    return dlc_limits<Q>::max();
  return (Q)r;
}
)cuda"},
    {"dlc_dequantize", "", R"cuda(
// DequantizeLinear of one element: (x - zero point) * scale with one rounding, never contracted
// into an FMA. c = x - zero point, exact; int: 8/16-bit x (exact in float, so the float product
// is the exact product rounded once); long long: int32 x, multiplied in double.
__device__ __forceinline__ float dlc_dequantize(int c, float scale) {
  return __fmul_rn((float)c, scale);
}
__device__ __forceinline__ float dlc_dequantize(long long c, float scale) {
  return (float)__dmul_rn((double)c, (double)scale);
}
__device__ __forceinline__ double dlc_dequantize(long long c, double scale) {
  return __dmul_rn((double)c, scale);
}
)cuda"},
    {"dlc_vec", "", R"cuda(

// --- Vectorised access: N elements of T moved as one aligned load or store ---------------------
template <class T, int N> struct alignas(sizeof(T) * N) dlc_vec {
  T v[N];
};
)cuda"},
    {"dlc_vmove dlc_vload dlc_vstore", "dlc_vec", R"cuda(
// N adjacent elements moved in pieces of at most 16 bytes when `vec` (both addresses then
// aligned to a piece), else one by one. The staged GEMM epilogue's loads and stores.
template <class T, int N> __device__ __forceinline__ void dlc_vmove(T *d, const T *s, bool vec) {
  constexpr int P = N * sizeof(T) < 16 ? N : 16 / sizeof(T);
  if (vec) {
#pragma unroll
    for (int i = 0; i < N; i += P)
      *reinterpret_cast<dlc_vec<T, P> *>(d + i) = *reinterpret_cast<const dlc_vec<T, P> *>(s + i);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i)
      d[i] = s[i];
  }
}
template <class T, int N>
__device__ __forceinline__ void dlc_vload(dlc_vec<T, N> &d, const T *p, bool vec) {
  dlc_vmove<T, N>(d.v, p, vec);
}
template <class T, int N>
__device__ __forceinline__ void dlc_vstore(T *p, const dlc_vec<T, N> &s, bool vec) {
  dlc_vmove<T, N>(p, s.v, vec);
}
)cuda"},
    {"dlc_imin dlc_imax", "", R"cuda(

// --- Index arithmetic of data-movement kernels (codegen/index_expr.h) -------------------------
template <class A, class B>
__device__ __forceinline__ auto dlc_imin(A a, B b) -> decltype(a + b) {
  return a < b ? a : b;
}
template <class A, class B>
__device__ __forceinline__ auto dlc_imax(A a, B b) -> decltype(a + b) {
  return a < b ? b : a;
}
)cuda"},
    {"dlc_grid_dependency", "", R"cuda(
// Programmatic dependent launch (sm_90+; rt::LaunchStep::waitsForGrid): waits until the grids
// before this one have completed and their writes are visible, then lets the next kernel's
// launch begin. A kernel calls it before touching global memory. The host emulator runs one
// kernel at a time: nothing to do there.
__device__ __forceinline__ void dlc_grid_dependency() {
#ifndef DLC_HOST_EMULATION
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}
)cuda"},
    {"dlc_grid_wait", "", R"cuda(
// The same wait, the next kernel launched only once this one's blocks have all exited.
__device__ __forceinline__ void dlc_grid_wait() {
#ifndef DLC_HOST_EMULATION
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
)cuda"},
    {"dlc_smem_u32", "", R"cuda(

// --- Tensor-core and tiling helpers (gemm.cc, conv.cc) --------------------------------------
__device__ __forceinline__ unsigned dlc_smem_u32(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
)cuda"},
    // The tests' host emulator (tests/unit/codegen/host_emulator.cc) defines
    // DLC_HOST_EMULATION and gives its own versions of the inline-PTX helpers below.
    {"dlc_cp_async16 dlc_cp_async_commit dlc_cp_async_wait", "", R"cuda(
#ifndef DLC_HOST_EMULATION
// Asynchronous global->shared copies; `pred` false zero-fills the destination (no read).
__device__ __forceinline__ void dlc_cp_async16(unsigned dst, const void *src, bool pred) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(pred ? 16 : 0));
}
__device__ __forceinline__ void dlc_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void dlc_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
#endif
)cuda"},
    {"dlc_ldmatrix_x4 dlc_ldmatrix_x4_trans", "", R"cuda(
#ifndef DLC_HOST_EMULATION
__device__ __forceinline__ void dlc_ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void dlc_ldmatrix_x4_trans(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
#endif
)cuda"},
    {"dlc_mma_f16 dlc_mma_bf16 dlc_mma_tf32", "", R"cuda(
#ifndef DLC_HOST_EMULATION
// D = A * B + D, m16n8k16 (f16 or bf16 inputs) or m16n8k8 (tf32), f32 accumulators.
__device__ __forceinline__ void dlc_mma_f16(float (&d)[4], const unsigned (&a)[4],
                                            unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
               "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void dlc_mma_bf16(float (&d)[4], const unsigned (&a)[4],
                                             unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
               "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void dlc_mma_tf32(float (&d)[4], const unsigned (&a)[4],
                                             unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, "
               "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
#endif
)cuda"},
    {"dlc_mma_s8", "", R"cuda(
#ifndef DLC_HOST_EMULATION
// D = A * B + D, m16n8k32, int8 inputs, int32 accumulators (exact).
__device__ __forceinline__ void dlc_mma_s8(int (&d)[4], const unsigned (&a)[4], unsigned b0,
                                           unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, "
               "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
#endif
)cuda"},
    {"dlc_to_tf32", "", R"cuda(
__device__ __forceinline__ unsigned dlc_to_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}
)cuda"},
    {"dlc_bits16", "", R"cuda(
// Raw 16-bit patterns of a stored element (for packing shared-memory tiles).
__device__ __forceinline__ unsigned short dlc_bits16(__half x) { return __half_as_ushort(x); }
__device__ __forceinline__ unsigned short dlc_bits16(__nv_bfloat16 x) {
  return __bfloat16_as_ushort(x);
}
)cuda"},
    {"dlc_store2 dlc_store2_exact", "dlc_load", R"cuda(
// Two adjacent elements stored at once (`p` aligned to two elements).
template <class S> __device__ __forceinline__ void dlc_store2(S *p, float a, float b) {
  p[0] = dlc_store<S>(a);
  p[1] = dlc_store<S>(b);
}
template <> __device__ __forceinline__ void dlc_store2<__half>(__half *p, float a, float b) {
  *reinterpret_cast<__half2 *>(p) = __floats2half2_rn(a, b);
}
template <>
__device__ __forceinline__ void dlc_store2<__nv_bfloat16>(__nv_bfloat16 *p, float a, float b) {
  *reinterpret_cast<__nv_bfloat162 *>(p) = __floats2bfloat162_rn(a, b);
}
template <> __device__ __forceinline__ void dlc_store2<float>(float *p, float a, float b) {
  *reinterpret_cast<float2 *>(p) = make_float2(a, b);
}
// Integer pairs (int8 GEMM epilogues), stored as they come, never through float.
template <class S> __device__ __forceinline__ void dlc_store2_exact(S *p, S a, S b) {
  p[0] = a;
  p[1] = b;
}
template <>
__device__ __forceinline__ void dlc_store2_exact<signed char>(signed char *p, signed char a,
                                                             signed char b) {
  *reinterpret_cast<char2 *>(p) = make_char2(a, b);
}
template <>
__device__ __forceinline__ void dlc_store2_exact<unsigned char>(unsigned char *p,
                                                                unsigned char a,
                                                                unsigned char b) {
  *reinterpret_cast<uchar2 *>(p) = make_uchar2(a, b);
}
)cuda"},
    // The Hopper GEMM main loop (codegen/sm90_gemm.cuh, after the PTX wrappers of
    // codegen/sm90_ptx.cuh; sm_90a only, so a program that uses it is compiled for sm_90a).
    {
        "dlc_sm90",
        "",
#include "codegen/sm90_ptx.cuh.inc"
// then the main loop (adjacent literals: one text)
#include "codegen/sm90_gemm.cuh.inc"
    },
    // Fused attention (codegen/attention.cuh; any sm_80+ target).
    {
        "dlc_attn",
        "dlc_smem_u32 dlc_cp_async16 dlc_ldmatrix_x4 dlc_mma_f16",
#include "codegen/attention.cuh.inc"
    },
};

constexpr size_t kNumHelpers = std::size(kHelpers);
static_assert(kNumHelpers <= 64, "HelperSet holds 64 helpers");

/// The first name of `names` (space-separated).
std::string_view firstName(std::string_view names) { return names.substr(0, names.find(' ')); }

/// The helpers by index: each `dlc_*` identifier -> its helper, and each helper's text and
/// dependencies (as a bit set, closed: a dependency's own dependencies are included).
struct HelperTable {
  std::unordered_map<std::string_view, size_t> byName;
  std::bitset<64> deps[kNumHelpers];
  std::string_view text[kNumHelpers];

  HelperTable() {
    for (size_t i = 0; i < kNumHelpers; ++i) {
      const HelperDef &h = kHelpers[i];
      text[i] = h.text.substr(1); // the newline after R"cuda(
      forEachWord(h.names, [&](std::string_view n) {
        DLC_CHECK(byName.emplace(n, i).second, "prelude helper name {} defined twice", n);
      });
      forEachWord(h.deps, [&](std::string_view d) {
        auto it = byName.find(d);
        DLC_CHECK(it != byName.end(), "prelude helper {} uses {}, which comes later or is unknown",
                  firstName(h.names), d);
        deps[i].set(it->second);
        deps[i] |= deps[it->second];
      });
    }
  }

  template <typename F> static void forEachWord(std::string_view s, F f) {
    while (!s.empty()) {
      const size_t end = std::min(s.find(' '), s.size());
      if (end > 0)
        f(s.substr(0, end));
      s.remove_prefix(std::min(end + 1, s.size()));
    }
  }

  static const HelperTable &get() {
    static const HelperTable t;
    return t;
  }
};

bool identChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

} // namespace

void HelperSet::add(std::string_view name) {
  const HelperTable &t = HelperTable::get();
  auto it = t.byName.find(name);
  DLC_CHECK(it != t.byName.end(), "no prelude helper named {}", name);
  bits_.set(it->second);
  bits_ |= t.deps[it->second];
}

std::string HelperSet::str() const {
  std::string s;
  for (size_t i = 0; i < kNumHelpers; ++i)
    if (bits_[i])
      s += fmt::format("{}{}", s.empty() ? "" : " ", firstName(kHelpers[i].names));
  return s;
}

HelperSet helpersNamedIn(std::string_view code) {
  const HelperTable &t = HelperTable::get();
  HelperSet set;
  for (size_t at = code.find("dlc_"); at != std::string_view::npos;
       at = code.find("dlc_", at + 1)) {
    if (at > 0 && identChar(code[at - 1]))
      continue;
    size_t end = at;
    while (end < code.size() && identChar(code[end]))
      ++end;
    auto it = t.byName.find(code.substr(at, end - at));
    if (it == t.byName.end())
      continue; // a kernel's own name (dlc_smem, dlc_ep, ...)
    set.bits_.set(it->second);
    set.bits_ |= t.deps[it->second];
  }
  return set;
}

std::string cudaPrelude(const HelperSet &helpers) {
  const HelperTable &t = HelperTable::get();
  std::string s(kHeader);
  for (size_t i = 0; i < kNumHelpers; ++i)
    if (helpers.bits_[i])
      s += t.text[i];
  return s;
}

std::string_view cudaPrelude() {
  static const std::string all = [] {
    HelperSet every;
    for (const HelperDef &h : kHelpers)
      every.add(firstName(h.names));
    return cudaPrelude(every);
  }();
  return all;
}

std::string cudaStorageType(DType t) {
  switch (t) {
  case DType::kF16:
    return "__half";
  case DType::kBF16:
    return "__nv_bfloat16";
  default:
    return cudaComputeType(t);
  }
}

} // namespace dlc::codegen
