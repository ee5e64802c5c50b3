#include "frontend/onnx/external_data.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <optional>

namespace dlc::onnx::detail {

namespace fs = std::filesystem;

namespace {

Expected<int64_t> parseNonNegative(const std::string &key, const std::string &text) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || v < 0)
    return invalidArgument("external data {} '{}' is not a non-negative integer", key, text);
  return v;
}

// Whether `path` equals `dir` or lies below it (both canonical).
bool isInside(const fs::path &path, const fs::path &dir) {
  auto [d, p] = std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
  // A trailing empty component (from a trailing separator) of dir does not count.
  return d == dir.end() || (std::next(d) == dir.end() && d->empty());
}

} // namespace

Expected<std::string> ExternalData::resolve(const std::string &location) const {
  if (dir_.empty())
    return invalidArgument("external data is not allowed (the model has no directory)");
  if (location.empty())
    return invalidArgument("external data has no 'location'");
  fs::path loc(location);
  if (loc.is_absolute() || loc.has_root_path())
    return invalidArgument("external data location '{}' is an absolute path", location);
  for (const fs::path &part : loc)
    if (part == "..")
      return invalidArgument("external data location '{}' escapes the model directory", location);
  std::error_code ec;
  fs::path dir = fs::weakly_canonical(fs::path(dir_), ec);
  if (ec)
    return invalidArgument("cannot resolve the model directory '{}': {}", dir_, ec.message());
  fs::path full = fs::weakly_canonical(fs::path(dir_) / loc, ec);
  if (ec)
    return invalidArgument("cannot resolve external data location '{}': {}", location,
                           ec.message());
  if (!isInside(full, dir))
    return invalidArgument("external data location '{}' resolves outside the model directory",
                           location);
  return full.string();
}

Expected<std::shared_ptr<MappedFile>> ExternalData::map(const std::string &path,
                                                        const std::string &location) {
  auto it = files_.find(path);
  if (it != files_.end())
    return it->second;
  auto file = MappedFile::open(path);
  if (!file)
    return Status(file.status().code(), fmt::format("cannot open external data file '{}': {}",
                                                    location, file.status().message()));
  files_.emplace(path, *file);
  return *file;
}

Expected<Tensor> ExternalData::load(const ::onnx::TensorProto &proto, const TensorHeader &h) {
  std::string location;
  std::optional<int64_t> offset, length;
  for (const auto &entry : proto.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset") {
      DLC_ASSIGN_OR_RETURN(offset, parseNonNegative("offset", entry.value()));
    } else if (entry.key() == "length") {
      DLC_ASSIGN_OR_RETURN(length, parseNonNegative("length", entry.value()));
    }
    // Other keys (`checksum`, ...) carry nothing dlc needs.
  }
  DLC_ASSIGN_OR_RETURN(std::string path, resolve(location));
  DLC_ASSIGN_OR_RETURN(std::shared_ptr<MappedFile> file, map(path, location));
  uint64_t size = file->size();
  uint64_t start = static_cast<uint64_t>(offset.value_or(0));
  if (start > size)
    return invalidArgument("external data offset {} is past the end of '{}' ({} bytes)", start,
                           location, size);
  if (length) {
    if (static_cast<uint64_t>(*length) > size - start)
      return invalidArgument(
          "external data offset {} + length {} is past the end of '{}' ({} bytes)", start, *length,
          location, size);
    if (*length != h.bytes)
      return invalidArgument("external data length {} does not match {} ({} bytes)", *length,
                             h.typeStr(), h.bytes);
  } else if (static_cast<uint64_t>(h.bytes) > size - start) {
    return invalidArgument("external data '{}' has {} bytes after offset {} but {} needs {}",
                           location, size - start, start, h.typeStr(), h.bytes);
  }
  const uint8_t *base = file->data() ? file->data() + start : nullptr;
  auto buffer = Buffer::view(base, static_cast<size_t>(h.bytes), file);
  return Tensor::fromBuffer(h.dtype, h.dims, std::move(buffer));
}

} // namespace dlc::onnx::detail
