// Spelling of the text IR's atoms, shared by the printer and the parser: names, strings,
// dims and types, and numbers that re-parse bit-exactly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ir/shape.h"

namespace dlc::text {

/// `"..."` with `\" \\ \n \t` escaped and every other byte outside 0x20..0x7e as `\xHH`.
std::string quoteString(std::string_view s);
/// A name as written after `%` / `@` or as an output or attribute name: bare when it is a
/// non-empty run of [A-Za-z0-9_.$-], quoted otherwise.
std::string formatName(std::string_view s);
/// A dim symbol: bare when it starts with [A-Za-z_$] and continues with name characters (so
/// it cannot be read as a number), quoted otherwise.
std::string formatSymbol(std::string_view s);
/// `7`, `N`, `?`.
std::string formatDim(const Dim &d);
/// `f32[N,3]`, `f32[*]`, `?[2]` (unknown dtype, known shape), `?` (nothing known).
std::string formatType(const TensorType &t);

/// Floats that re-parse to the same bits: the shortest decimal that round-trips, always with
/// a '.' or an exponent; `inf`, `-inf`; `nan` for the canonical quiet NaN and `nan(0x...)`
/// with the storage bits for any other NaN.
std::string formatF32(float v);
std::string formatF64(double v);
/// f16 / bf16: the float they hold, spelled as formatF32 (NaN bits are the 16-bit ones).
std::string formatF16(uint16_t bits);
std::string formatBF16(uint16_t bits);

/// A word written as a number: it starts with a digit, `.digit`, `-digit`, `-.digit`, or is
/// `inf`, `-inf`, `nan`, `nan(...)`.
bool isNumberWord(std::string_view w);
/// `-?[0-9]+`.
bool isIntegerWord(std::string_view w);
/// A number word that is meant as a float: not an integer, not hex, and it has a '.', an
/// exponent, or is inf/nan.
bool isFloatWord(std::string_view w);

std::optional<int64_t> parseI64(std::string_view w);
std::optional<uint64_t> parseU64(std::string_view w);
/// Parses a float word (integers accepted); nullopt if malformed or out of range.
std::optional<float> parseF32(std::string_view w);
std::optional<double> parseF64(std::string_view w);
/// Parse as f32 then convert (round to nearest even); `nan(0xHHHH)` gives the 16 bits.
std::optional<uint16_t> parseF16(std::string_view w);
std::optional<uint16_t> parseBF16(std::string_view w);

} // namespace dlc::text
