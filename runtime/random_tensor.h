// Random input tensors for `dlc run --random` and the tests: reproducible from a seed on every
// platform (std::mt19937_64 is specified exactly; the std distributions are not, so values
// are made from its raw bits).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "ir/tensor.h"

namespace dlc {

/// Floats uniform in [-1, 1) (f16/bf16 rounded), integers uniform in [0, 8), bools 0/1. A
/// shape past the reference backend's per-tensor limit (or whose size overflows) is an error.
Expected<Tensor> randomTensor(DType dtype, const std::vector<int64_t> &shape, std::mt19937_64 &rng);

} // namespace dlc
