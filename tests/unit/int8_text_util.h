// Text-form literals that the int8 tests share: the realize-int8 pass tests and the GPU int8
// kernel tests build their weights the same way.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <random>
#include <string>

namespace dlc::testing {

/// `dense<[...]>` of n random int8 values in [-127, 127] (std::mt19937 seeded with `seed`).
inline std::string int8Dense(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-127, 127);
  std::string s;
  for (int64_t i = 0; i < n; ++i)
    s += fmt::format("{}{}", i ? ", " : "", dist(rng));
  return "dense<[" + s + "]>";
}

} // namespace dlc::testing
