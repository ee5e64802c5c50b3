// What the int8 tests share: text-form weights (the realize-int8 pass tests and the GPU int8
// kernel tests build them the same way) and random int8 input tensors.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ir/tensor.h"

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

/// A tensor of `shape` with random int8 values in [-128, 127] (std::mt19937 seeded with `seed`).
inline Tensor int8Tensor(std::vector<int64_t> shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-128, 127);
  Tensor t = Tensor::zeros(DType::kI8, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.mutableData<int8_t>()[i] = static_cast<int8_t>(dist(rng));
  return t;
}

} // namespace dlc::testing
