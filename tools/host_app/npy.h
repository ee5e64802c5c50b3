// Minimal NumPy .npy files for the host app: version 1/2/3 headers, little-endian, C order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

namespace host_app {

struct Array {
  DLDataType dtype{};
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  /// A host DLTensor over this array's bytes (valid while the array lives).
  DLTensor tensor();
};

/// Reads `path`; throws std::runtime_error naming the file on anything it cannot read
/// (Fortran order, big-endian, an unknown dtype, a truncated file).
Array readNpy(const std::string &path);

/// Writes `t` (host memory, compact) to `path`; throws std::runtime_error on failure.
void writeNpy(const std::string &path, const DLTensor &t);

} // namespace host_app
