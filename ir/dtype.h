// Element types of tensors.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace dlc {

/// X(Enum, text name, size in bytes, C++ storage type)
#define DLC_DTYPES(X)                                                                              \
  X(F32, "f32", 4, float)                                                                          \
  X(F16, "f16", 2, uint16_t)                                                                       \
  X(BF16, "bf16", 2, uint16_t)                                                                     \
  X(F64, "f64", 8, double)                                                                         \
  X(I8, "i8", 1, int8_t)                                                                           \
  X(I16, "i16", 2, int16_t)                                                                        \
  X(I32, "i32", 4, int32_t)                                                                        \
  X(I64, "i64", 8, int64_t)                                                                        \
  X(U8, "u8", 1, uint8_t)                                                                          \
  X(U16, "u16", 2, uint16_t)                                                                       \
  X(U32, "u32", 4, uint32_t)                                                                       \
  X(U64, "u64", 8, uint64_t)                                                                       \
  X(Bool, "bool", 1, bool)

enum class DType : uint8_t {
  kUnknown = 0, // not inferred yet; never on a verified graph's values
#define X(e, n, s, t) k##e,
  DLC_DTYPES(X)
#undef X
};

/// Text name ("f32"); "?" for kUnknown.
std::string_view dtypeName(DType t);
/// Parses a text name; nullopt if unknown.
std::optional<DType> parseDType(std::string_view name);
/// Bytes per element (0 for kUnknown).
int64_t dtypeSize(DType t);

inline bool isFloat(DType t) {
  return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16 || t == DType::kF64;
}
inline bool isSignedInt(DType t) {
  return t == DType::kI8 || t == DType::kI16 || t == DType::kI32 || t == DType::kI64;
}
inline bool isUnsignedInt(DType t) {
  return t == DType::kU8 || t == DType::kU16 || t == DType::kU32 || t == DType::kU64;
}
inline bool isInteger(DType t) { return isSignedInt(t) || isUnsignedInt(t); }
inline bool isNumeric(DType t) { return isFloat(t) || isInteger(t); }

/// IEEE half and bfloat16 conversions (round to nearest even).
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bf16ToFloat(uint16_t b);
uint16_t floatToBf16(float f);

} // namespace dlc
