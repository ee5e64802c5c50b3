// A read-only memory mapping of a whole file, shared by everything that views into it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "ir/status.h"

namespace dlc::onnx::detail {

class MappedFile {
public:
  /// Maps `path` read-only. On failure the Status message is the system's reason alone
  /// ("No such file or directory", "Is a directory"); callers say which file and why.
  static Expected<std::shared_ptr<MappedFile>> open(const std::string &path);

  ~MappedFile();
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;

  /// nullptr for an empty file.
  const uint8_t *data() const { return data_; }
  size_t size() const { return size_; }

private:
  MappedFile() = default;
  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
};

} // namespace dlc::onnx::detail
