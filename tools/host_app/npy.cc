#include "npy.h"

#include <cstring>
#include <fstream>
#include <stdexcept>

namespace host_app {
namespace {

struct Descr {
  const char *text;
  DLDataType dtype;
};

// numpy's descr strings and their DLPack types (bool as uint1, dlc's convention).
const Descr kDescrs[] = {
    {"<f4", {kDLFloat, 32, 1}}, {"<f2", {kDLFloat, 16, 1}}, {"<f8", {kDLFloat, 64, 1}},
    {"|i1", {kDLInt, 8, 1}},    {"<i2", {kDLInt, 16, 1}},   {"<i4", {kDLInt, 32, 1}},
    {"<i8", {kDLInt, 64, 1}},   {"|u1", {kDLUInt, 8, 1}},   {"<u2", {kDLUInt, 16, 1}},
    {"<u4", {kDLUInt, 32, 1}},  {"<u8", {kDLUInt, 64, 1}},  {"|b1", {kDLUInt, 1, 1}},
};

[[noreturn]] void fail(const std::string &path, const std::string &what) {
  throw std::runtime_error(path + ": " + what);
}

size_t elementBytes(const DLDataType &t) { return t.bits == 1 ? 1 : t.bits / 8; }

/// The text after `key` in the header dict, e.g. "'descr': '<f4'" -> "'<f4', ...".
std::string after(const std::string &header, const std::string &key, const std::string &path) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos)
    fail(path, "the .npy header has no '" + key + "'");
  size_t colon = header.find(':', k);
  if (colon == std::string::npos)
    fail(path, "malformed .npy header");
  size_t start = header.find_first_not_of(' ', colon + 1);
  return start == std::string::npos ? std::string() : header.substr(start);
}

} // namespace

DLTensor Array::tensor() {
  DLTensor t{};
  t.data = bytes.data();
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(shape.size());
  t.dtype = dtype;
  t.shape = shape.data();
  return t;
}

Array readNpy(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    fail(path, "cannot open the file");
  char magic[8];
  if (!f.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    fail(path, "not a .npy file");
  uint32_t headerLen = 0;
  if (magic[6] == 1) {
    uint8_t b[2];
    if (!f.read(reinterpret_cast<char *>(b), 2))
      fail(path, "truncated .npy header");
    headerLen = b[0] | (b[1] << 8);
  } else {
    uint8_t b[4];
    if (!f.read(reinterpret_cast<char *>(b), 4))
      fail(path, "truncated .npy header");
    headerLen = b[0] | (b[1] << 8) | (b[2] << 16) | (uint32_t(b[3]) << 24);
  }
  if (headerLen > (1u << 20))
    fail(path, "the .npy header is implausibly large");
  std::string header(headerLen, '\0');
  if (!f.read(header.data(), headerLen))
    fail(path, "truncated .npy header");

  Array a;
  std::string descr = after(header, "descr", path);
  bool known = false;
  for (const Descr &d : kDescrs)
    if (descr.rfind(std::string("'") + d.text + "'", 0) == 0) {
      a.dtype = d.dtype;
      known = true;
    }
  if (!known)
    fail(path, "unsupported dtype " + descr.substr(0, descr.find(',')) +
                   " (little-endian numbers and bool only)");
  if (after(header, "fortran_order", path).rfind("False", 0) != 0)
    fail(path, "Fortran-ordered arrays are not supported; save a C-ordered copy");
  std::string shape = after(header, "shape", path);
  if (shape.empty() || shape[0] != '(')
    fail(path, "malformed shape in the .npy header");
  size_t pos = 1;
  while (pos < shape.size() && shape[pos] != ')') {
    if (shape[pos] == ',' || shape[pos] == ' ') {
      ++pos;
      continue;
    }
    size_t used = 0;
    a.shape.push_back(std::stoll(shape.substr(pos), &used));
    if (a.shape.back() < 0)
      fail(path, "negative dim in the .npy shape");
    pos += used;
  }
  size_t n = 1;
  for (int64_t d : a.shape)
    n *= static_cast<size_t>(d);
  a.bytes.resize(n * elementBytes(a.dtype));
  if (!f.read(reinterpret_cast<char *>(a.bytes.data()),
              static_cast<std::streamsize>(a.bytes.size())))
    fail(path, "truncated: the data is shorter than the header's shape says");
  return a;
}

void writeNpy(const std::string &path, const DLTensor &t) {
  const char *descr = nullptr;
  for (const Descr &d : kDescrs)
    if (d.dtype.code == t.dtype.code && d.dtype.bits == t.dtype.bits)
      descr = d.text;
  if (!descr)
    fail(path, "no .npy dtype for this tensor");
  std::string shape = "(";
  size_t n = 1;
  for (int32_t i = 0; i < t.ndim; ++i) {
    shape += std::to_string(t.shape[i]) + (t.ndim == 1 ? ",)" : i + 1 < t.ndim ? ", " : ")");
    n *= static_cast<size_t>(t.shape[i]);
  }
  if (t.ndim == 0)
    shape += ")";
  std::string header =
      std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  const uint16_t len = static_cast<uint16_t>(header.size());
  f.write("\x93NUMPY\x01\x00", 8);
  f.put(static_cast<char>(len & 0xFF));
  f.put(static_cast<char>(len >> 8));
  f << header;
  f.write(static_cast<const char *>(t.data) + t.byte_offset,
          static_cast<std::streamsize>(n * elementBytes(t.dtype)));
  if (!f)
    fail(path, "cannot write the file");
}

} // namespace host_app
