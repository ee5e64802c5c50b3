#include "ir/tensor_text.h"

#include <cstring>
#include <limits>

#include "ir/text_util.h"

namespace dlc::text {

namespace {
template <typename T> T load(const uint8_t *p, int64_t i) {
  T v;
  std::memcpy(&v, p + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}

std::string formatElement(DType dt, const uint8_t *p, int64_t i) {
  switch (dt) {
  case DType::kF32:
    return formatF32(load<float>(p, i));
  case DType::kF64:
    return formatF64(load<double>(p, i));
  case DType::kF16:
    return formatF16(load<uint16_t>(p, i));
  case DType::kBF16:
    return formatBF16(load<uint16_t>(p, i));
  case DType::kBool:
    return p[i] ? "true" : "false";
  case DType::kI8:
    return std::to_string(load<int8_t>(p, i));
  case DType::kI16:
    return std::to_string(load<int16_t>(p, i));
  case DType::kI32:
    return std::to_string(load<int32_t>(p, i));
  case DType::kI64:
    return std::to_string(load<int64_t>(p, i));
  case DType::kU8:
    return std::to_string(load<uint8_t>(p, i));
  case DType::kU16:
    return std::to_string(load<uint16_t>(p, i));
  case DType::kU32:
    return std::to_string(load<uint32_t>(p, i));
  case DType::kU64:
    return std::to_string(load<uint64_t>(p, i));
  case DType::kUnknown:
    break;
  }
  return "?";
}

template <typename T> void store(T v, std::vector<uint8_t> &out) {
  uint8_t bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  out.insert(out.end(), bytes, bytes + sizeof(T));
}

Status badElement(DType dt, std::string_view word) {
  return invalidArgument("expected {} value, got '{}'", dtypeName(dt), word);
}

template <typename T>
Status appendSigned(DType dt, std::string_view word, std::vector<uint8_t> &out) {
  if (!isIntegerWord(word))
    return badElement(dt, word);
  auto v = parseI64(word);
  if (!v || *v < std::numeric_limits<T>::min() || *v > std::numeric_limits<T>::max())
    return invalidArgument("integer {} is out of range for {}", word, dtypeName(dt));
  store(static_cast<T>(*v), out);
  return Status::ok();
}

template <typename T>
Status appendUnsigned(DType dt, std::string_view word, std::vector<uint8_t> &out) {
  if (!isIntegerWord(word))
    return badElement(dt, word);
  auto v = parseU64(word);
  if (!v || *v > std::numeric_limits<T>::max())
    return invalidArgument("integer {} is out of range for {}", word, dtypeName(dt));
  store(static_cast<T>(*v), out);
  return Status::ok();
}

template <typename T, typename Parse>
Status appendFloat(DType dt, std::string_view word, std::vector<uint8_t> &out, Parse parse) {
  auto v = parse(word);
  if (!v)
    return badElement(dt, word);
  store(static_cast<T>(*v), out);
  return Status::ok();
}
} // namespace

std::string formatHash(const Tensor &t) { return fmt::format("{:016x}", t.hash()); }

std::string formatDense(const Tensor &t, const PrintOptions &opts) {
  const uint8_t *p = static_cast<const uint8_t *>(t.raw());
  if (t.numElements() <= opts.inlineLimit) {
    std::string s = "dense<[";
    for (int64_t i = 0; i < t.numElements(); ++i) {
      if (i)
        s += ", ";
      s += formatElement(t.dtype(), p, i);
    }
    return s + "]>";
  }
  if (opts.printConstants) {
    std::string s = "dense<0x";
    s.reserve(static_cast<size_t>(t.byteSize()) * 2 + 10);
    static const char kHex[] = "0123456789abcdef";
    for (int64_t i = 0; i < t.byteSize(); ++i) {
      s += kHex[p[i] >> 4];
      s += kHex[p[i] & 15];
    }
    return s + ">";
  }
  return "dense<hash:\"" + formatHash(t) + "\">";
}

std::string formatTensor(const Tensor &t, const PrintOptions &opts) {
  return formatType(t.type()) + " " + formatDense(t, opts);
}

Status appendElement(DType dt, std::string_view word, std::vector<uint8_t> &out) {
  switch (dt) {
  case DType::kBool:
    if (word != "true" && word != "false")
      return invalidArgument("expected true or false, got '{}'", word);
    out.push_back(word == "true" ? 1 : 0);
    return Status::ok();
  case DType::kF32:
    return appendFloat<float>(dt, word, out, parseF32);
  case DType::kF64:
    return appendFloat<double>(dt, word, out, parseF64);
  case DType::kF16:
    return appendFloat<uint16_t>(dt, word, out, parseF16);
  case DType::kBF16:
    return appendFloat<uint16_t>(dt, word, out, parseBF16);
  case DType::kI8:
    return appendSigned<int8_t>(dt, word, out);
  case DType::kI16:
    return appendSigned<int16_t>(dt, word, out);
  case DType::kI32:
    return appendSigned<int32_t>(dt, word, out);
  case DType::kI64:
    return appendSigned<int64_t>(dt, word, out);
  case DType::kU8:
    return appendUnsigned<uint8_t>(dt, word, out);
  case DType::kU16:
    return appendUnsigned<uint16_t>(dt, word, out);
  case DType::kU32:
    return appendUnsigned<uint32_t>(dt, word, out);
  case DType::kU64:
    return appendUnsigned<uint64_t>(dt, word, out);
  case DType::kUnknown:
    break;
  }
  return invalidArgument("a tensor literal needs a known dtype");
}

Status decodeHexBytes(std::string_view word, std::vector<uint8_t> &out) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    return -1;
  };
  if (!word.starts_with("0x"))
    return invalidArgument("expected hex bytes '0x...', got '{}'", word);
  std::string_view hex = word.substr(2);
  if (hex.size() % 2 != 0)
    return invalidArgument("hex bytes need an even number of digits, got {}", hex.size());
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0)
      return invalidArgument("bad hex digit '{}' in tensor bytes", hi < 0 ? hex[i] : hex[i + 1]);
    out.push_back(static_cast<uint8_t>(hi * 16 + lo));
  }
  return Status::ok();
}

} // namespace dlc::text
