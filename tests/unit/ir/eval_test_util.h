// Test helpers for reference evaluation (ir/eval/eval.h): a fixture that evaluates a fresh node,
// tensor builders and readers, seeded random inputs (never all zeros) and a plain
// broadcasting index for writing expectations by hand.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "ir/eval/eval.h"
#include "tests/unit/ir/op_infer_test_util.h"

namespace dlc::optest {

class EvalTest : public OpTest {
protected:
  /// Evaluates, through eval::evaluate, a fresh node of `op` named "e" whose inputs are constants
  /// holding `inputs` (an empty tensor is an absent input). Errors read
  /// "node 'e' (Type): ...".
  Expected<std::vector<Tensor>> eval(Op op, std::vector<Tensor> inputs, AttrMap attrs = {},
                                     int numOutputs = 1) {
    std::vector<Value *> operands;
    for (const Tensor &t : inputs)
      operands.push_back(t.empty() ? nullptr : g.addConstant("c", t));
    Node *n = node(op, operands, "e", numOutputs);
    for (auto &[k, a] : attrs)
      n->setAttr(k, a);
    EXPECT_TRUE(eval::hasEval(op)) << opName(op);
    return eval::evaluate(*n, inputs);
  }
  /// Output `index` of a successful eval (an empty tensor, and a test failure, otherwise).
  Tensor eval1(Op op, std::vector<Tensor> inputs, AttrMap attrs = {}, int index = 0,
               int numOutputs = 1) {
    auto r = eval(op, std::move(inputs), std::move(attrs), numOutputs);
    EXPECT_TRUE(r.hasValue()) << r.status().message();
    return r.hasValue() ? r->at(static_cast<size_t>(index)) : Tensor();
  }
  /// The error message of an eval that must fail.
  std::string evalError(Op op, std::vector<Tensor> inputs, AttrMap attrs = {}, int numOutputs = 1) {
    auto r = eval(op, std::move(inputs), std::move(attrs), numOutputs);
    EXPECT_FALSE(r.hasValue());
    return r.status().message();
  }

  std::mt19937 rng{12345};

  /// Uniform in [lo, hi], with exact zeros replaced by 0.5 (inputs are never all zeros).
  std::vector<double> randomValues(int64_t n, double lo = -3, double hi = 3) {
    std::uniform_real_distribution<double> dist(lo, hi);
    std::vector<double> v(static_cast<size_t>(n));
    for (double &x : v) {
      x = dist(rng);
      if (x == 0)
        x = 0.5;
    }
    return v;
  }
  /// Integers uniform in [lo, hi], never all zeros.
  std::vector<int64_t> randomInts(int64_t n, int64_t lo, int64_t hi) {
    std::uniform_int_distribution<int64_t> dist(lo, hi);
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (int64_t &x : v)
      x = dist(rng);
    if (n > 0 && std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 0; }))
      v[0] = 1;
    return v;
  }
  /// A random shape of rank in [0, maxRank], dims in [1, maxDim].
  std::vector<int64_t> randomShape(int maxRank = 4, int64_t maxDim = 4) {
    int rank = std::uniform_int_distribution<int>(0, maxRank)(rng);
    std::vector<int64_t> s(static_cast<size_t>(rank));
    for (int64_t &d : s)
      d = std::uniform_int_distribution<int64_t>(1, maxDim)(rng);
    return s;
  }
  /// A shape that broadcasts with `s`: a suffix of it with some dims replaced by 1.
  std::vector<int64_t> broadcastPartner(const std::vector<int64_t> &s) {
    size_t keep = std::uniform_int_distribution<size_t>(0, s.size())(rng);
    std::vector<int64_t> p(s.end() - static_cast<ptrdiff_t>(keep), s.end());
    for (int64_t &d : p)
      if (std::uniform_int_distribution<int>(0, 2)(rng) == 0)
        d = 1;
    if (keep == s.size() && std::uniform_int_distribution<int>(0, 1)(rng) == 0)
      p.insert(p.begin(), 2); // sometimes the longer one
    return p;
  }
  /// A random tensor of float dtype (f32, f64, f16, bf16) and shape.
  Tensor randomFloat(DType dtype, std::vector<int64_t> shape, double lo = -3, double hi = 3) {
    Tensor t = Tensor::zeros(DType::kF64, shape);
    std::vector<double> v = randomValues(t.numElements(), lo, hi);
    std::copy(v.begin(), v.end(), t.mutableData<double>());
    return t.castTo(dtype);
  }
  Tensor randomInt(DType dtype, std::vector<int64_t> shape, int64_t lo, int64_t hi) {
    Tensor t = Tensor::zeros(DType::kI64, shape);
    std::vector<int64_t> v = randomInts(t.numElements(), lo, hi);
    std::copy(v.begin(), v.end(), t.mutableData<int64_t>());
    return t.castTo(dtype);
  }
};

// --- Builders and readers ---------------------------------------------------------------------

inline Tensor f32(std::vector<int64_t> shape, std::vector<float> v) {
  return Tensor::fromVector<float>(DType::kF32, std::move(shape), v);
}
inline Tensor f64(std::vector<int64_t> shape, std::vector<double> v) {
  return Tensor::fromVector<double>(DType::kF64, std::move(shape), v);
}
inline Tensor i64(std::vector<int64_t> shape, std::vector<int64_t> v) {
  return Tensor::fromVector<int64_t>(DType::kI64, std::move(shape), v);
}
inline Tensor i32(std::vector<int64_t> shape, std::vector<int32_t> v) {
  return Tensor::fromVector<int32_t>(DType::kI32, std::move(shape), v);
}
inline Tensor i8(std::vector<int64_t> shape, std::vector<int8_t> v) {
  return Tensor::fromVector<int8_t>(DType::kI8, std::move(shape), v);
}
inline Tensor u8(std::vector<int64_t> shape, std::vector<uint8_t> v) {
  return Tensor::fromVector<uint8_t>(DType::kU8, std::move(shape), v);
}
inline Tensor boolean(std::vector<int64_t> shape, std::vector<int> v) {
  Tensor t = Tensor::zeros(DType::kBool, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i)
    t.mutableData<bool>()[i] = v[i] != 0;
  return t;
}
inline Tensor scalarI64(int64_t v) { return Tensor::scalarI64(v); }

/// All elements as double (any dtype).
inline std::vector<double> values(const Tensor &t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numElements(); ++i)
    v.push_back(t.elementAsDouble(i));
  return v;
}
/// All elements as int64 (any dtype).
inline std::vector<int64_t> ints(const Tensor &t) { return t.toInt64Vector(); }

/// Row-major strides of `shape`.
inline std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    s[i - 1] = s[i] * shape[i];
  return s;
}

/// The coordinates of flat index `i` in `shape`.
inline std::vector<int64_t> coordsOf(int64_t i, const std::vector<int64_t> &shape) {
  std::vector<int64_t> c(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    c[d] = i % shape[d];
    i /= shape[d];
  }
  return c;
}

/// The flat index in an operand of shape `s` that broadcasts to output coordinates `c`.
inline int64_t broadcastIndex(const std::vector<int64_t> &c, const std::vector<int64_t> &s) {
  int64_t idx = 0;
  size_t offset = c.size() - s.size();
  for (size_t d = 0; d < s.size(); ++d)
    idx = idx * s[d] + (s[d] == 1 ? 0 : c[d + offset]);
  return idx;
}

/// numpy's broadcast of two shapes (they must broadcast).
inline std::vector<int64_t> broadcastShape(std::vector<int64_t> a, std::vector<int64_t> b) {
  if (a.size() < b.size())
    std::swap(a, b);
  b.insert(b.begin(), a.size() - b.size(), 1);
  for (size_t d = 0; d < a.size(); ++d)
    a[d] = a[d] == 1 ? b[d] : a[d];
  return a;
}

/// |got - want| <= atol + rtol * |want|, elementwise, NaN matching NaN.
inline void expectClose(const std::vector<double> &got, const std::vector<double> &want,
                        double rtol = 1e-6, double atol = 1e-7) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << ": got " << got[i] << ", want NaN";
      continue;
    }
    if (got[i] == want[i])
      continue;
    EXPECT_LE(std::fabs(got[i] - want[i]), atol + rtol * std::fabs(want[i]))
        << "element " << i << ": got " << got[i] << ", want " << want[i];
  }
}

} // namespace dlc::optest
