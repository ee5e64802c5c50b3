// Element-type plumbing for the reference kernels that compute on values (not just move
// bytes): dispatch on a dtype's storage type, and the f32/f64 working copies of float tensors.
//
// Precision rule of the reference backend: f32 and f64 compute natively; f16 and bf16 are
// widened to f32 (exactly), computed there, and rounded once when the result is stored.
#pragma once

#include <type_traits>
#include <vector>

#include "ir/tensor.h"

namespace dlc::ops {

/// f16 and bf16: stored as uint16_t, computed in f32.
inline bool isHalfFloat(DType t) { return t == DType::kF16 || t == DType::kBF16; }

/// The dtype a value of `t` is computed in: f32 for f16/bf16, else `t` itself.
inline DType computeDType(DType t) { return isHalfFloat(t) ? DType::kF32 : t; }

/// Calls `f.template operator()<T>()` with T the C++ storage type of `t` for every dtype that
/// computes natively (all but f16, bf16 and unknown). Returns false for those three.
template <typename F> bool visitNativeDType(DType t, F &&f) {
  switch (t) {
#define X(e, n, s, ty)                                                                             \
  case DType::k##e:                                                                                \
    if constexpr (!std::is_same_v<ty, uint16_t> || DType::k##e == DType::kU16) {                   \
      f.template operator()<ty>();                                                                 \
      return true;                                                                                 \
    }                                                                                              \
    return false;
    DLC_DTYPES(X)
#undef X
  default:
    return false;
  }
}

/// The elements of a float tensor as T (float or double): exact for f16/bf16/f32 into float
/// and for every float dtype into double.
template <typename T> std::vector<T> floatValues(const Tensor &t) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  constexpr DType kT = std::is_same_v<T, float> ? DType::kF32 : DType::kF64;
  Tensor wide = t.castTo(kT);
  const T *p = wide.data<T>();
  return std::vector<T>(p, p + wide.numElements());
}

/// A tensor of `dtype` holding `values` (computed in T), each rounded once to `dtype`.
template <typename T>
Tensor tensorFromValues(DType dtype, std::vector<int64_t> shape, const std::vector<T> &values) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  constexpr DType kT = std::is_same_v<T, float> ? DType::kF32 : DType::kF64;
  return Tensor::fromVector<T>(kT, std::move(shape), values).castTo(dtype);
}

} // namespace dlc::ops
