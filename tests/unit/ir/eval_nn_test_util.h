// Helpers for the nn family's reference-evaluation tests: run one node through eval::evaluate,
// make random tensors with fixed seeds, read results as doubles, compare with tolerances.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ir/eval/eval.h"
#include "ir/graph.h"
#include "ir/op.h"

namespace dlc::nntest {

/// A graph in which each test builds one node and evaluates it.
class NnEval : public ::testing::Test {
protected:
  /// Evaluates a fresh node of `op` named "n" on `inputs` (an empty Tensor is an absent
  /// optional input) with `attrs`; `numOutputs` node outputs.
  Expected<std::vector<Tensor>> eval(Op op, const std::vector<Tensor> &inputs, AttrMap attrs = {},
                                     int numOutputs = 1) {
    std::vector<Value *> values;
    for (const Tensor &t : inputs)
      values.push_back(t.empty() ? nullptr : g.addInput("in", t.type()));
    Node *n = g.createNode(op, values, numOutputs, "n");
    for (auto &[k, a] : attrs)
      n->setAttr(k, a);
    return eval::evaluate(*n, inputs);
  }
  /// Output 0 of a successful eval (a test failure otherwise).
  Tensor eval1(Op op, const std::vector<Tensor> &inputs, AttrMap attrs = {}) {
    auto r = eval(op, inputs, std::move(attrs));
    EXPECT_TRUE(r.hasValue()) << r.status().message();
    return r.hasValue() ? r->at(0) : Tensor();
  }
  /// The message of a failed eval.
  std::string evalError(Op op, const std::vector<Tensor> &inputs, AttrMap attrs = {},
                        int numOutputs = 1) {
    auto r = eval(op, inputs, std::move(attrs), numOutputs);
    EXPECT_FALSE(r.hasValue());
    return r.hasValue() ? "" : r.status().message();
  }

  Graph g;
};

/// Uniform random values in [lo, hi) (never all zeros), as `dtype` (f32, f64, f16, bf16).
inline Tensor randomTensor(std::vector<int64_t> shape, uint32_t seed, DType dtype = DType::kF32,
                           double lo = -1.0, double hi = 1.0) {
  Tensor t = Tensor::zeros(DType::kF64, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.mutableData<double>()[i] = dist(rng);
  return t.castTo(dtype);
}

inline Tensor f32(std::vector<int64_t> shape, const std::vector<float> &v) {
  return Tensor::fromVector<float>(DType::kF32, std::move(shape), v);
}
inline Tensor i64(std::vector<int64_t> shape, const std::vector<int64_t> &v) {
  return Tensor::fromVector<int64_t>(DType::kI64, std::move(shape), v);
}

/// All elements as doubles.
inline std::vector<double> values(const Tensor &t) {
  std::vector<double> v(static_cast<size_t>(t.numElements()));
  for (int64_t i = 0; i < t.numElements(); ++i)
    v[static_cast<size_t>(i)] = t.elementAsDouble(i);
  return v;
}

/// Every element of `got` within atol + rtol * |expected| of `expected` (NaN matches NaN);
/// reports the first few mismatches.
inline void expectClose(const Tensor &got, const std::vector<double> &expected, double atol,
                        double rtol = 0.0, const std::string &what = "") {
  ASSERT_EQ(got.numElements(), static_cast<int64_t>(expected.size())) << what;
  int bad = 0;
  for (size_t i = 0; i < expected.size() && bad < 5; ++i) {
    double g = got.elementAsDouble(static_cast<int64_t>(i)), e = expected[i];
    bool ok =
        (std::isnan(g) && std::isnan(e)) || g == e || std::abs(g - e) <= atol + rtol * std::abs(e);
    if (!ok) {
      ADD_FAILURE() << what << " element " << i << ": got " << g << ", expected " << e;
      ++bad;
    }
  }
}

} // namespace dlc::nntest
