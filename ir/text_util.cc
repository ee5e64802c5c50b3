#include "ir/text_util.h"

#include <bit>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "ir/text_lexer.h"

namespace dlc::text {

namespace {
constexpr uint32_t kF32QuietNan = 0x7fc00000u;
constexpr uint64_t kF64QuietNan = 0x7ff8000000000000ull;
constexpr uint16_t kF16QuietNan = 0x7e00u;
constexpr uint16_t kBF16QuietNan = 0x7fc0u;

bool isDigit(char c) { return c >= '0' && c <= '9'; }

/// Makes sure a finite shortest decimal reads back as a float ("1" -> "1.0").
std::string withPoint(std::string s) {
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s;
}

template <typename T> std::string shortest(T v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  return withPoint(std::string(buf, res.ptr));
}

/// `nan(0x...)`: the bits inside, if the word has that form with at most `digits` hex digits.
std::optional<uint64_t> nanBits(std::string_view w, size_t digits) {
  if (!w.starts_with("nan(0x") || !w.ends_with(")"))
    return std::nullopt;
  std::string_view hex = w.substr(6, w.size() - 7);
  if (hex.empty() || hex.size() > digits)
    return std::nullopt;
  uint64_t bits = 0;
  auto [p, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), bits, 16);
  if (ec != std::errc() || p != hex.data() + hex.size())
    return std::nullopt;
  return bits;
}

/// A finite decimal number word, parsed by from_chars; nullopt if malformed or out of range.
template <typename T> std::optional<T> parseFinite(std::string_view w) {
  if (!isNumberWord(w) || w.find_first_of("xX(") != std::string_view::npos)
    return std::nullopt;
  T v{};
  auto [p, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
  if (ec != std::errc() || p != w.data() + w.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}
} // namespace

std::string quoteString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u >= 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string formatName(std::string_view s) {
  bool bare = !s.empty();
  for (char c : s)
    bare = bare && isNameChar(c);
  return bare ? std::string(s) : quoteString(s);
}

std::string formatSymbol(std::string_view s) {
  bool bare = !s.empty() && !isDigit(s[0]) && s[0] != '-' && s[0] != '.' && !isNumberWord(s);
  for (char c : s)
    bare = bare && isNameChar(c);
  return bare ? std::string(s) : quoteString(s);
}

std::string formatDim(const Dim &d) {
  if (d.isKnown())
    return std::to_string(d.value());
  if (d.isSymbol())
    return formatSymbol(d.symbolName());
  return "?";
}

std::string formatType(const TensorType &t) {
  if (t.dtype == DType::kUnknown && !t.shape.isRanked())
    return "?";
  std::string s(dtypeName(t.dtype));
  if (!t.shape.isRanked())
    return s + "[*]";
  s += '[';
  for (size_t i = 0; i < t.shape.dims().size(); ++i) {
    if (i)
      s += ',';
    s += formatDim(t.shape.dims()[i]);
  }
  return s + ']';
}

std::string formatF32(float v) {
  if (std::isnan(v)) {
    uint32_t bits = std::bit_cast<uint32_t>(v);
    return bits == kF32QuietNan ? "nan" : fmt::format("nan(0x{:08x})", bits);
  }
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  return shortest(v);
}

std::string formatF64(double v) {
  if (std::isnan(v)) {
    uint64_t bits = std::bit_cast<uint64_t>(v);
    return bits == kF64QuietNan ? "nan" : fmt::format("nan(0x{:016x})", bits);
  }
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  return shortest(v);
}

std::string formatF16(uint16_t bits) {
  if ((bits & 0x7fffu) > 0x7c00u)
    return bits == kF16QuietNan ? "nan" : fmt::format("nan(0x{:04x})", bits);
  return formatF32(halfToFloat(bits));
}

std::string formatBF16(uint16_t bits) {
  if ((bits & 0x7fffu) > 0x7f80u)
    return bits == kBF16QuietNan ? "nan" : fmt::format("nan(0x{:04x})", bits);
  return formatF32(bf16ToFloat(bits));
}

bool isNumberWord(std::string_view w) {
  if (w == "inf" || w == "-inf" || w == "nan" || w.starts_with("nan("))
    return true;
  size_t i = !w.empty() && w[0] == '-' ? 1 : 0;
  if (i < w.size() && isDigit(w[i]))
    return true;
  return i + 1 < w.size() && w[i] == '.' && isDigit(w[i + 1]);
}

bool isIntegerWord(std::string_view w) {
  size_t i = !w.empty() && w[0] == '-' ? 1 : 0;
  if (i == w.size())
    return false;
  for (; i < w.size(); ++i)
    if (!isDigit(w[i]))
      return false;
  return true;
}

bool isFloatWord(std::string_view w) {
  if (!isNumberWord(w))
    return false;
  if (w == "inf" || w == "-inf" || w.starts_with("nan"))
    return true;
  if (w.find_first_of("xX") != std::string_view::npos)
    return false; // hex bytes `0x...` are not floats
  return w.find_first_of(".eE") != std::string_view::npos;
}

std::optional<int64_t> parseI64(std::string_view w) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
  if (w.empty() || ec != std::errc() || p != w.data() + w.size())
    return std::nullopt;
  return v;
}

std::optional<uint64_t> parseU64(std::string_view w) {
  uint64_t v = 0;
  if (w.empty() || !isDigit(w[0]))
    return std::nullopt;
  auto [p, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
  if (ec != std::errc() || p != w.data() + w.size())
    return std::nullopt;
  return v;
}

std::optional<float> parseF32(std::string_view w) {
  if (w == "inf" || w == "-inf")
    return w[0] == '-' ? -INFINITY : INFINITY;
  if (w == "nan")
    return std::bit_cast<float>(kF32QuietNan);
  if (w.starts_with("nan(")) {
    auto bits = nanBits(w, 8);
    if (!bits)
      return std::nullopt;
    float v = std::bit_cast<float>(static_cast<uint32_t>(*bits));
    return std::isnan(v) ? std::optional<float>(v) : std::nullopt;
  }
  return parseFinite<float>(w);
}

std::optional<double> parseF64(std::string_view w) {
  if (w == "inf" || w == "-inf")
    return w[0] == '-' ? -static_cast<double>(INFINITY) : static_cast<double>(INFINITY);
  if (w == "nan")
    return std::bit_cast<double>(kF64QuietNan);
  if (w.starts_with("nan(")) {
    auto bits = nanBits(w, 16);
    if (!bits)
      return std::nullopt;
    double v = std::bit_cast<double>(*bits);
    return std::isnan(v) ? std::optional<double>(v) : std::nullopt;
  }
  return parseFinite<double>(w);
}

std::optional<uint16_t> parseF16(std::string_view w) {
  if (w == "nan")
    return kF16QuietNan;
  if (w.starts_with("nan(")) {
    auto bits = nanBits(w, 4);
    return bits && (*bits & 0x7fffu) > 0x7c00u ? std::optional<uint16_t>(*bits) : std::nullopt;
  }
  auto f = parseF32(w);
  if (!f)
    return std::nullopt;
  return floatToHalf(*f);
}

std::optional<uint16_t> parseBF16(std::string_view w) {
  if (w == "nan")
    return kBF16QuietNan;
  if (w.starts_with("nan(")) {
    auto bits = nanBits(w, 4);
    return bits && (*bits & 0x7fffu) > 0x7f80u ? std::optional<uint16_t>(*bits) : std::nullopt;
  }
  auto f = parseF32(w);
  if (!f)
    return std::nullopt;
  return floatToBf16(*f);
}

} // namespace dlc::text
