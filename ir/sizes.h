// Arithmetic on row-major size vectors (a static shape's sizes), shared by the reference
// kernels and codegen.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dlc {

/// The product of sizes[begin, end) (clamped to the vector); 1 for an empty range.
inline int64_t product(const std::vector<int64_t> &sizes, size_t begin = 0, size_t end = SIZE_MAX) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < sizes.size(); ++i)
    p *= sizes[i];
  return p;
}

} // namespace dlc
