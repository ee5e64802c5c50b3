#include "ir/dtype.h"

#include <bit>
#include <cmath>
#include <cstring>

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

float halfToFloat(uint16_t h) {
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

uint16_t floatToHalf(float f) {
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
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
    ++half;
  return sign | static_cast<uint16_t>(half);
}

float bf16ToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

uint16_t floatToBf16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40u); // quiet nan
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

} // namespace dlc
