// Working copies of float tensors for the reference kernels that compute in f32 or f64 (the
// recurrent, random and signal evaluators), on top of ir/eval/eval_util.h.
//
// Precision rule of the reference backend: f32 and f64 compute natively; f16 and bf16 are
// widened to f32 (exactly), computed there, and rounded once when the result is stored.
#pragma once

#include <type_traits>
#include <vector>

#include "ir/eval/eval_util.h"
#include "ir/tensor.h"

namespace dlc::eval {

/// The elements of a float tensor as T (float or double): exact for f16/bf16/f32 into float
/// and for every float dtype into double.
template <typename T> std::vector<T> floatValues(const Tensor &t) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  constexpr DType kT = std::is_same_v<T, float> ? DType::kF32 : DType::kF64;
  Tensor wide = t.castTo(kT);
  const T *p = wide.data<T>();
  return std::vector<T>(p, p + wide.numElements());
}

/// A tensor of `dtype` holding `values` (computed in T), each rounded once to `dtype` (ONNX
/// Cast semantics for integer dtypes).
template <typename T>
Tensor tensorFromValues(DType dtype, std::vector<int64_t> shape, const std::vector<T> &values) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  constexpr DType kT = std::is_same_v<T, float> ? DType::kF32 : DType::kF64;
  return castTensor(Tensor::fromVector<T>(kT, std::move(shape), values), dtype);
}

} // namespace dlc::eval
