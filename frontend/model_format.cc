#include "frontend/model_format.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "ir/file_util.h"

namespace dlc {

namespace {

constexpr size_t kSniffBytes = 4096;

bool readVarint(std::string_view b, size_t &pos, uint64_t &out) {
  out = 0;
  for (int shift = 0; shift < 64 && pos < b.size(); shift += 7) {
    const auto byte = static_cast<uint8_t>(b[pos++]);
    out |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80))
      return true;
  }
  return false;
}

/// The top-level protobuf fields in `b` (field number, wire type), as far as they parse.
std::vector<std::pair<uint64_t, int>> topLevelFields(std::string_view b) {
  std::vector<std::pair<uint64_t, int>> fields;
  size_t pos = 0;
  while (pos < b.size() && fields.size() < 64) {
    uint64_t tag = 0, v = 0;
    if (!readVarint(b, pos, tag) || tag >> 3 == 0)
      break;
    const int wt = static_cast<int>(tag & 7);
    fields.emplace_back(tag >> 3, wt);
    if (wt == 0) {
      if (!readVarint(b, pos, v))
        break;
    } else if (wt == 2) {
      if (!readVarint(b, pos, v))
        break;
      pos += v; // may run past the sniffed bytes: the scan just ends
    } else if (wt == 1) {
      pos += 8;
    } else if (wt == 5) {
      pos += 4;
    } else {
      break;
    }
  }
  return fields;
}

/// Text after whitespace and `#` comments (text protobuf's comments).
std::string_view skipTextNoise(std::string_view s) {
  for (;;) {
    size_t i = s.find_first_not_of(" \t\r\n");
    if (i == std::string_view::npos)
      return {};
    s.remove_prefix(i);
    if (s[0] != '#')
      return s;
    size_t nl = s.find('\n');
    if (nl == std::string_view::npos)
      return {};
    s.remove_prefix(nl);
  }
}

bool isText(std::string_view b) {
  for (char c : b)
    if (c == 0 ||
        (static_cast<unsigned char>(c) < 0x20 && !std::isspace(static_cast<unsigned char>(c))))
      return false;
  return true;
}

std::string hexHead(std::string_view b) {
  std::string s;
  for (size_t i = 0; i < b.size() && i < 8; ++i)
    s += fmt::format("{}{:02x}", i ? " " : "", static_cast<uint8_t>(b[i]));
  return s;
}

} // namespace

std::string_view modelFormatName(ModelFormat f) {
  switch (f) {
  case ModelFormat::kOnnx:
    return "onnx";
  case ModelFormat::kTfGraphDef:
    return "tf";
  case ModelFormat::kTfText:
    return "tf (text)";
  case ModelFormat::kDlcText:
    return "dlc";
  }
  return "?";
}

Expected<std::optional<ModelFormat>> parseModelFormatFlag(std::string_view flag) {
  if (flag.empty() || flag == "auto")
    return std::optional<ModelFormat>();
  if (flag == "onnx")
    return std::optional<ModelFormat>(ModelFormat::kOnnx);
  if (flag == "tf")
    return std::optional<ModelFormat>(ModelFormat::kTfGraphDef);
  if (flag == "dlc")
    return std::optional<ModelFormat>(ModelFormat::kDlcText);
  return invalidArgument("--format '{}': expected onnx, tf or dlc (or auto: decide by content)",
                         flag);
}

Expected<ModelFormat> detectModelFormat(const std::string &path,
                                        std::optional<ModelFormat> forced) {
  if (Status regular = checkRegularFile(path); !regular.isOk())
    return regular.withContext(path);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return notFound("{}: cannot open file: {}", path, std::strerror(errno));
  std::string head(kSniffBytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  const bool text = !head.empty() && isText(head);
  if (forced) {
    if (*forced == ModelFormat::kTfGraphDef && text)
      return ModelFormat::kTfText;
    return *forced;
  }
  if (head.empty())
    return invalidArgument("{}: the file is empty", path);
  if (text) {
    std::string_view t = skipTextNoise(head);
    if (t.starts_with("graph") || t.starts_with("//"))
      return ModelFormat::kDlcText;
    if (t.starts_with("node") || t.starts_with("versions") || t.starts_with("library"))
      return ModelFormat::kTfText;
    // A binary protobuf can be printable by chance only when tiny; fall through for those.
    if (head.size() > 64)
      return invalidArgument("{}: a text file that is neither dlc's text IR (it starts with "
                             "`graph`) nor a text GraphDef (it starts with `node {{`): it "
                             "starts with \"{}\"",
                             path, std::string(t.substr(0, std::min<size_t>(t.size(), 24))));
  }
  std::vector<std::pair<uint64_t, int>> fields = topLevelFields(head);
  if (!fields.empty()) {
    if (fields[0] == std::pair<uint64_t, int>{1, 0})
      return ModelFormat::kOnnx; // ModelProto.ir_version
    if (fields[0] == std::pair<uint64_t, int>{1, 2})
      return ModelFormat::kTfGraphDef; // GraphDef.node
    for (auto [field, wt] : fields) {
      if ((field == 7 || field == 8) && wt == 2)
        return ModelFormat::kOnnx; // ModelProto.graph / opset_import
      if (field == 1 && wt == 2)
        return ModelFormat::kTfGraphDef;
    }
  }
  if (path.ends_with(".onnx"))
    return ModelFormat::kOnnx;
  if (path.ends_with(".pbtxt"))
    return ModelFormat::kTfText;
  return invalidArgument(
      "{}: not a model dlc can read: it starts with bytes {}, which is neither an ONNX "
      "ModelProto (first field ir_version, a varint: 08 ...) nor a TensorFlow GraphDef (first "
      "field a NodeDef: 0a ...) nor text; if it is one of them, say which with --format onnx|tf",
      path, hexHead(head));
}

} // namespace dlc
