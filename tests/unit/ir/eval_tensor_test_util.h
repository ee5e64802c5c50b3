// Helpers for the reference-evaluation tests of the tensor and misc families: constants,
// seeded random data (never all zeros), single-node evaluation and its error message.
#pragma once

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops_tensor_test_util.h"

namespace dlc::evaltest {

using tensortest::values;

inline Value *f32(Graph &g, std::vector<int64_t> shape, std::vector<float> v) {
  return g.addConstant("f", Tensor::fromVector<float>(DType::kF32, std::move(shape), v));
}
inline Value *f64(Graph &g, std::vector<int64_t> shape, std::vector<double> v) {
  return g.addConstant("d", Tensor::fromVector<double>(DType::kF64, std::move(shape), v));
}
inline Value *i64(Graph &g, std::vector<int64_t> shape, std::vector<int64_t> v) {
  return g.addConstant("i", Tensor::fromVector<int64_t>(DType::kI64, std::move(shape), v));
}
inline Value *i32(Graph &g, std::vector<int64_t> shape, std::vector<int32_t> v) {
  return g.addConstant("i", Tensor::fromVector<int32_t>(DType::kI32, std::move(shape), v));
}
inline Value *boolean(Graph &g, std::vector<int64_t> shape, std::vector<bool> v) {
  Tensor t = Tensor::zeros(DType::kBool, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i)
    t.mutableData<bool>()[i] = v[i];
  return g.addConstant("b", t);
}
inline Value *scalarI64(Graph &g, int64_t v) { return i64(g, {}, {v}); }
inline Value *scalarF32(Graph &g, float v) { return f32(g, {}, {v}); }

inline int64_t count(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Uniform values in [lo, hi) from a fixed seed; never all zeros.
inline std::vector<float> randomFloats(int64_t n, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float &x : v)
    x = dist(gen);
  if (n > 0)
    v[0] = v[0] == 0.0f ? 0.5f : v[0];
  return v;
}
inline Value *randomF32(Graph &g, std::vector<int64_t> shape, uint32_t seed, float lo = -1,
                        float hi = 1) {
  int64_t n = count(shape);
  return f32(g, std::move(shape), randomFloats(n, seed, lo, hi));
}

/// Evaluates `n` on its constant inputs; fails the test on error.
inline std::vector<Tensor> evalAll(const Node *n) {
  auto r = tensortest::evalConstants(n);
  EXPECT_TRUE(r.hasValue()) << r.status().message();
  return r.hasValue() ? *r : std::vector<Tensor>(static_cast<size_t>(n->numOutputs()));
}
inline Tensor eval1(const Node *n) { return evalAll(n)[0]; }

/// The evaluation's error message, or "ok" when it succeeds.
inline std::string evalError(const Node *n) {
  auto r = tensortest::evalConstants(n);
  return r.hasValue() ? "ok" : r.status().message();
}

inline std::vector<float> asF32(const Tensor &t) { return values<float>(t.castTo(DType::kF32)); }
inline std::vector<double> asF64(const Tensor &t) { return values<double>(t.castTo(DType::kF64)); }

/// Element-wise |a - b| <= atol + rtol * |b|, reporting the first mismatch.
template <typename T>
inline void expectClose(const std::vector<T> &got, const std::vector<T> &want, double atol,
                        double rtol = 0) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = static_cast<double>(got[i]), w = static_cast<double>(want[i]);
    ASSERT_LE(std::fabs(g - w), atol + rtol * std::fabs(w))
        << "element " << i << ": got " << g << ", want " << w;
  }
}

} // namespace dlc::evaltest
