#include "runtime/tensor_io.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "ir/file_util.h"

namespace dlc {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
/// NumPy itself refuses headers above 10000 bytes by default; this is generous.
constexpr uint32_t kMaxHeaderSize = 1 << 20;

/// What the header dict says.
struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// A reader for the Python literal NumPy writes: `{'descr': '<f4', 'fortran_order': False,
/// 'shape': (2, 3), }`. Keys may come in any order; whitespace is free.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : s_(text) {}

  Expected<NpyHeader> parse() {
    NpyHeader h;
    bool seenDescr = false, seenOrder = false, seenShape = false;
    DLC_RETURN_IF_ERROR(expect('{'));
    while (true) {
      skipSpace();
      if (peek() == '}')
        break;
      DLC_ASSIGN_OR_RETURN(std::string key, string());
      DLC_RETURN_IF_ERROR(expect(':'));
      skipSpace();
      if (key == "descr") {
        if (peek() == '[')
          return unimplemented("structured dtypes (a list of fields in 'descr') are not supported");
        DLC_ASSIGN_OR_RETURN(h.descr, string());
        seenDescr = true;
      } else if (key == "fortran_order") {
        DLC_ASSIGN_OR_RETURN(h.fortranOrder, boolean());
        seenOrder = true;
      } else if (key == "shape") {
        DLC_ASSIGN_OR_RETURN(h.shape, tuple());
        seenShape = true;
      } else {
        return error(fmt::format("unexpected key '{}'", key));
      }
      skipSpace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      skipSpace();
      if (peek() != '}')
        return error("expected ',' or '}'");
    }
    ++pos_;
    skipSpace();
    if (pos_ != s_.size())
      return error("text after '}'");
    if (!seenDescr || !seenOrder || !seenShape)
      return invalidArgument("malformed header (no '{}')", !seenDescr   ? "descr"
                                                           : !seenOrder ? "fortran_order"
                                                                        : "shape");
    return h;
  }

private:
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skipSpace() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_])))
      ++pos_;
  }
  Status error(const std::string &what) const {
    return invalidArgument("malformed header ({} at offset {})", what, pos_);
  }
  Status expect(char c) {
    skipSpace();
    if (peek() != c)
      return error(fmt::format("expected '{}'", c));
    ++pos_;
    return Status::ok();
  }
  Expected<std::string> string() {
    skipSpace();
    char q = peek();
    if (q != '\'' && q != '"')
      return error("expected a quoted string");
    size_t end = s_.find(q, pos_ + 1);
    if (end == std::string_view::npos)
      return error("unterminated string");
    std::string out(s_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return out;
  }
  Expected<bool> boolean() {
    if (s_.substr(pos_).starts_with("True")) {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_).starts_with("False")) {
      pos_ += 5;
      return false;
    }
    return error("expected True or False");
  }
  Expected<std::vector<int64_t>> tuple() {
    DLC_RETURN_IF_ERROR(expect('('));
    std::vector<int64_t> dims;
    while (true) {
      skipSpace();
      if (peek() == ')')
        break;
      if (!std::isdigit(static_cast<unsigned char>(peek())))
        return error("expected a non-negative integer dim");
      int64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, peek() - '0', &v))
          return error("dim too large");
        ++pos_;
      }
      if (peek() == 'L') // Python 2 long
        ++pos_;
      dims.push_back(v);
      skipSpace();
      if (peek() == ',')
        ++pos_;
      else if (peek() != ')')
        return error("expected ',' or ')' in the shape");
    }
    ++pos_;
    return dims;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

/// The dlc dtype of a NumPy descr, or an error saying why there is none.
Expected<DType> dtypeFromDescr(const std::string &descr) {
  if (descr.find('O') != std::string::npos && descr.size() <= 2)
    return invalidArgument("object arrays ('{}') are not supported", descr);
  if (descr.size() < 2)
    return invalidArgument("unsupported dtype '{}'", descr);
  char order = descr[0];
  char kind = descr[1];
  std::string sizeText = descr.substr(2);
  bool sizeOk = !sizeText.empty() && sizeText.size() <= 2 &&
                std::all_of(sizeText.begin(), sizeText.end(), ::isdigit);
  int size = sizeOk ? std::stoi(sizeText) : 0;
  if (std::string_view("<>|=").find(order) == std::string_view::npos || !sizeOk)
    return invalidArgument("unsupported dtype '{}'", descr);
  if (kind == 'c')
    return invalidArgument("complex dtype '{}' is not supported", descr);
  std::optional<DType> t;
  switch (kind) {
  case 'f':
    t = size == 2 ? DType::kF16 : size == 4 ? DType::kF32 : size == 8 ? DType::kF64 : t;
    break;
  case 'i':
    t = size == 1   ? DType::kI8
        : size == 2 ? DType::kI16
        : size == 4 ? DType::kI32
        : size == 8 ? DType::kI64
                    : t;
    break;
  case 'u':
    t = size == 1   ? DType::kU8
        : size == 2 ? DType::kU16
        : size == 4 ? DType::kU32
        : size == 8 ? DType::kU64
                    : t;
    break;
  case 'b':
    t = size == 1 ? DType::kBool : t;
    break;
  default:
    break;
  }
  if (!t)
    return invalidArgument("unsupported dtype '{}'", descr);
  if (order == '>' && size > 1)
    return invalidArgument("big-endian dtype '{}' is not supported; save little-endian data "
                           "(arr.astype('<{}{}'))",
                           descr, kind, size);
  return *t;
}

std::string shapeTuple(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += fmt::format("{}{}", i ? ", " : "", shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

uint32_t readLe(const char *p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i)
    v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

} // namespace

std::string npyDescr(DType dtype) {
  switch (dtype) {
  case DType::kF16:
    return "<f2";
  case DType::kF32:
    return "<f4";
  case DType::kF64:
    return "<f8";
  case DType::kBool:
    return "|b1";
  case DType::kI8:
    return "|i1";
  case DType::kU8:
    return "|u1";
  default:
    break;
  }
  if (isSignedInt(dtype))
    return fmt::format("<i{}", dtypeSize(dtype));
  if (isUnsignedInt(dtype))
    return fmt::format("<u{}", dtypeSize(dtype));
  return "";
}

namespace {

/// Where the array lies in a `.npy` file of `fileSize` bytes whose first bytes are `head` (at
/// least the magic, the version, the header length and the header, or the whole file).
struct NpyLayout {
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t dataOffset;
  uint64_t dataBytes;
};

Expected<NpyLayout> parseNpyLayout(std::string_view head, uint64_t fileSize) {
  if (head.size() < kMagicSize || std::memcmp(head.data(), kMagic, kMagicSize) != 0)
    return invalidArgument("not a .npy file (it does not start with \\x93NUMPY)");
  if (head.size() < 10)
    return invalidArgument("truncated header");
  int major = static_cast<uint8_t>(head[6]), minor = static_cast<uint8_t>(head[7]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    return unimplemented("unsupported .npy format version {}.{}", major, minor);
  uint64_t prefix = major == 1 ? 10 : 12;
  if (head.size() < prefix)
    return invalidArgument("truncated header");
  uint32_t headerSize = readLe(head.data() + 8, major == 1 ? 2 : 4);
  if (headerSize > kMaxHeaderSize)
    return invalidArgument("header of {} bytes is too large", headerSize);
  if (fileSize < prefix + headerSize || head.size() < prefix + headerSize)
    return invalidArgument("truncated header");

  DLC_ASSIGN_OR_RETURN(NpyHeader h, HeaderParser(head.substr(prefix, headerSize)).parse());
  DLC_ASSIGN_OR_RETURN(DType dtype, dtypeFromDescr(h.descr));
  if (h.fortranOrder)
    return unimplemented("Fortran-ordered arrays are not supported; save a C-ordered array "
                         "(np.ascontiguousarray)");
  DLC_ASSIGN_OR_RETURN(int64_t count, checkedNumElements(h.shape, "the array"));
  uint64_t bytes;
  if (__builtin_mul_overflow(static_cast<uint64_t>(count), dtypeSize(dtype), &bytes))
    return invalidArgument("the array's byte size overflows");
  std::string type = TensorType(dtype, Shape::fromSizes(h.shape)).str();
  uint64_t available = fileSize - prefix - headerSize;
  if (available < bytes)
    return invalidArgument("truncated data: the header says {} ({} bytes), the file has {}", type,
                           bytes, available);
  if (available > bytes)
    return invalidArgument("{} bytes after the data of the {} array", available - bytes, type);
  return NpyLayout{dtype, std::move(h.shape), prefix + headerSize, bytes};
}

/// NumPy treats any nonzero byte of a bool array as true; dlc stores 0 or 1.
void normalizeBools(Tensor &t) {
  if (t.dtype() != DType::kBool)
    return;
  auto *p = static_cast<uint8_t *>(t.mutableRaw());
  for (int64_t i = 0; i < t.numElements(); ++i)
    p[i] = p[i] != 0;
}

} // namespace

Expected<Tensor> parseNpy(std::string_view bytes, std::string_view source) {
  auto fail = [&](const Status &st) { return st.withContext(std::string(source)); };
  auto layout = parseNpyLayout(bytes, bytes.size());
  if (!layout)
    return fail(layout.status());
  auto t = Tensor::tryZeros(layout->dtype, layout->shape);
  if (!t)
    return fail(t.status());
  if (layout->dataBytes > 0)
    std::memcpy(t->mutableRaw(), bytes.data() + layout->dataOffset, layout->dataBytes);
  normalizeBools(*t);
  return std::move(*t);
}

Expected<Tensor> readNpy(const std::string &path) {
  if (Status regular = checkRegularFile(path); !regular.isOk())
    return regular.withContext(path);
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in)
    return notFound("{}: cannot open file", path);
  auto fileSize = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  auto fail = [&](const Status &st) { return st.withContext(path); };

  // The header (at most 12 + kMaxHeaderSize bytes) is parsed from the file's first bytes, then
  // the data goes straight into the tensor.
  std::string head(static_cast<size_t>(std::min<uint64_t>(fileSize, 12 + kMaxHeaderSize)), '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  auto layout = parseNpyLayout(head, fileSize);
  if (!layout)
    return fail(layout.status());
  auto t = Tensor::tryZeros(layout->dtype, layout->shape);
  if (!t)
    return fail(t.status());
  in.clear();
  in.seekg(static_cast<std::streamoff>(layout->dataOffset));
  in.read(static_cast<char *>(t->mutableRaw()), static_cast<std::streamsize>(layout->dataBytes));
  if (static_cast<uint64_t>(in.gcount()) != layout->dataBytes)
    return fail(invalidArgument("read error"));
  normalizeBools(*t);
  return std::move(*t);
}

Status writeNpy(const std::string &path, const Tensor &t) {
  std::string descr = npyDescr(t.dtype());
  if (descr.empty())
    return unimplemented("{}: {} has no NumPy dtype; convert the tensor first", path,
                         dtypeName(t.dtype()));
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr,
                                 shapeTuple(t.shape()));
  // Pad with spaces and a final newline so the data starts at a multiple of 64 bytes.
  bool v2 = dict.size() + 1 + 10 > 65535;
  size_t prefix = v2 ? 12 : 10;
  size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  std::string header = dict + std::string(total - prefix - dict.size() - 1, ' ') + "\n";
  std::string pre(kMagic, kMagicSize);
  pre += static_cast<char>(v2 ? 2 : 1);
  pre += '\0';
  uint32_t n = static_cast<uint32_t>(header.size());
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i)
    pre += static_cast<char>((n >> (8 * i)) & 0xff);

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    return notFound("{}: cannot open file for writing", path);
  out.write(pre.data(), static_cast<std::streamsize>(pre.size()));
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  if (t.byteSize() > 0)
    out.write(static_cast<const char *>(t.raw()), t.byteSize());
  if (!out.flush())
    return invalidArgument("{}: error writing the file", path);
  return Status::ok();
}

} // namespace dlc
