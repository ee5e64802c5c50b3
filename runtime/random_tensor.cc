#include "runtime/random_tensor.h"

#include "ir/eval/eval_util.h"

namespace dlc {

namespace {

template <typename T> void fill(Tensor &t, std::mt19937_64 &rng, T (*make)(uint64_t)) {
  T *p = t.mutableData<T>();
  for (int64_t i = 0; i < t.numElements(); ++i)
    p[i] = make(rng());
}

/// Uniform in [-1, 1) from the top 53 bits.
double unitDouble(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-52 - 1.0; }

} // namespace

Expected<Tensor> randomTensor(DType dtype, const std::vector<int64_t> &shape,
                              std::mt19937_64 &rng) {
  DLC_ASSIGN_OR_RETURN(Tensor t, eval::newTensor(dtype, shape));
  switch (dtype) {
  case DType::kF32:
    fill<float>(t, rng, [](uint64_t b) { return static_cast<float>(unitDouble(b)); });
    break;
  case DType::kF64:
    fill<double>(t, rng, unitDouble);
    break;
  case DType::kF16:
    fill<uint16_t>(t, rng,
                   [](uint64_t b) { return floatToHalf(static_cast<float>(unitDouble(b))); });
    break;
  case DType::kBF16:
    fill<uint16_t>(t, rng,
                   [](uint64_t b) { return floatToBf16(static_cast<float>(unitDouble(b))); });
    break;
  case DType::kBool:
    fill<bool>(t, rng, [](uint64_t b) { return (b >> 63) != 0; });
    break;
#define DLC_INT_CASE(E, T)                                                                         \
  case DType::E:                                                                                   \
    fill<T>(t, rng, [](uint64_t b) { return static_cast<T>(b >> 61); });                           \
    break;
    DLC_INT_CASE(kI8, int8_t)
    DLC_INT_CASE(kI16, int16_t)
    DLC_INT_CASE(kI32, int32_t)
    DLC_INT_CASE(kI64, int64_t)
    DLC_INT_CASE(kU8, uint8_t)
    DLC_INT_CASE(kU16, uint16_t)
    DLC_INT_CASE(kU32, uint32_t)
    DLC_INT_CASE(kU64, uint64_t)
#undef DLC_INT_CASE
  case DType::kUnknown:
    break;
  }
  return t;
}

} // namespace dlc
