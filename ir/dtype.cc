#include "ir/dtype.h"
#include "ir/dtype_bulk.h"

#include <bit>
#include <cmath>
#include <cstring>
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace dlc {

std::string_view dtypeName(DType t) {
  switch (t) {
  case DType::kUnknown:
    return "?";
#define X(e, n, s, ty)                                                                             \
  case DType::k##e:                                                                                \
    return n;
    DLC_DTYPES(X)
#undef X
  }
  return "?";
}

std::optional<DType> parseDType(std::string_view name) {
#define X(e, n, s, ty)                                                                             \
  if (name == n)                                                                                   \
    return DType::k##e;
  DLC_DTYPES(X)
#undef X
  return std::nullopt;
}

int64_t dtypeSize(DType t) {
  switch (t) {
  case DType::kUnknown:
    return 0;
#define X(e, n, s, ty)                                                                             \
  case DType::k##e:                                                                                \
    return s;
    DLC_DTYPES(X)
#undef X
  }
  return 0;
}

namespace {

[[gnu::always_inline]] inline float halfToFloatImpl(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | ((127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

[[gnu::always_inline]] inline uint16_t floatToHalfImpl(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) // inf or nan
    return sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u);
  if (absx >= 0x477ff000u) // rounds to >= 65520: overflow to inf
    return sign | 0x7c00u;
  if (absx < 0x38800000u) { // result is subnormal or zero
    float a = std::bit_cast<float>(absx);
    // Scale so the subnormal's units land in the integer part, then round half to even.
    float scaled = a * 16777216.0f; // 2^24
    uint32_t m = static_cast<uint32_t>(std::nearbyint(scaled));
    return sign | static_cast<uint16_t>(m);
  }
  uint32_t mant = absx & 0x7fffffu;
  uint32_t exp = (absx >> 23) - 127 + 15;
  uint32_t half = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  // Round half to even without a branch (the dropped bits are data, not predictable): up when
  // rest > half an ulp, or exactly half with an odd result. A carry runs into the exponent.
  half += (rest + (half & 1u)) > 0x1000u ? 1u : 0u;
  return sign | static_cast<uint16_t>(half);
}

[[gnu::always_inline]] inline float bf16ToFloatImpl(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

[[gnu::always_inline]] inline uint16_t floatToBf16Impl(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40u); // quiet nan
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

} // namespace

float halfToFloat(uint16_t h) { return halfToFloatImpl(h); }
uint16_t floatToHalf(float f) { return floatToHalfImpl(f); }
float bf16ToFloat(uint16_t b) { return bf16ToFloatImpl(b); }
uint16_t floatToBf16(float f) { return floatToBf16Impl(f); }

namespace {

/// dst[i] = convert(src[i]) over n elements, with `convert` inlined.
template <class S, class D, class F>
[[gnu::always_inline]] inline void convertAll(const S *src, D *dst, size_t n, F convert) {
  for (size_t i = 0; i < n; ++i)
    dst[i] = convert(src[i]);
}

} // namespace

#if defined(__x86_64__)
// The bulk f16 conversions with x86's F16C instructions (every x86-64 CPU since 2012), chosen at
// run time: 8 elements per instruction where the scalar code takes a branchy loop each. F16C
// rounds to nearest even and handles subnormals, infinities and overflow exactly as the scalar
// code; only NaNs differ (F16C keeps payload bits), so a group of 8 holding a NaN goes through
// the scalar code and every result is bit-identical to it.
bool hasF16c() {
  // AVX as the compiler checks it (with the OS's YMM state); F16C from CPUID leaf 1, ECX bit
  // 29 (clang's __builtin_cpu_supports does not know "f16c").
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &a, &b, &c, &d) != 0 &&
           (c & (1u << 29)) != 0;
  }();
  return has;
}

[[gnu::target("avx,f16c")]] void halfToFloatF16c(const uint16_t *src, float *dst, size_t n) {
  size_t i = 0;
  const __m128i absMask = _mm_set1_epi16(0x7fff), inf = _mm_set1_epi16(0x7c00);
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i));
    if (_mm_movemask_epi8(_mm_cmpgt_epi16(_mm_and_si128(h, absMask), inf)) != 0) {
      convertAll(src + i, dst + i, 8, halfToFloatImpl); // a NaN
      continue;
    }
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  convertAll(src + i, dst + i, n - i, halfToFloatImpl);
}

[[gnu::target("avx,f16c")]] void floatToHalfF16c(const float *src, uint16_t *dst, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 f = _mm256_loadu_ps(src + i);
    if (_mm256_movemask_ps(_mm256_cmp_ps(f, f, _CMP_UNORD_Q)) != 0) {
      convertAll(src + i, dst + i, 8, floatToHalfImpl); // a NaN
      continue;
    }
    _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + i),
                     _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  convertAll(src + i, dst + i, n - i, floatToHalfImpl);
}
#endif

void halfToFloat(const uint16_t *src, float *dst, size_t n) {
#if defined(__x86_64__)
  if (hasF16c())
    return halfToFloatF16c(src, dst, n);
#endif
  convertAll(src, dst, n, halfToFloatImpl);
}
void floatToHalf(const float *src, uint16_t *dst, size_t n) {
#if defined(__x86_64__)
  if (hasF16c())
    return floatToHalfF16c(src, dst, n);
#endif
  convertAll(src, dst, n, floatToHalfImpl);
}
void bf16ToFloat(const uint16_t *src, float *dst, size_t n) {
  convertAll(src, dst, n, bf16ToFloatImpl);
}
void floatToBf16(const float *src, uint16_t *dst, size_t n) {
  convertAll(src, dst, n, floatToBf16Impl);
}

} // namespace dlc
