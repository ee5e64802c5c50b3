// Reference evaluation of the elementwise ops used by constant folding of shape arithmetic.
#include <cmath>
#include <limits>

#include "tests/unit/ir/op_infer_test_util.h"

namespace dlc::optest {
namespace {

class ElementwiseEval : public OpTest {
protected:
  /// Evaluates a fresh node of `op` named "e" on `inputs`.
  Expected<std::vector<Tensor>> eval(Op op, std::vector<Tensor> inputs, AttrMap attrs = {}) {
    Node *n = node(op, {}, "e");
    for (auto &[k, a] : attrs)
      n->setAttr(k, a);
    EXPECT_NE(opDef(op).eval, nullptr);
    return opDef(op).eval(*n, inputs);
  }
  /// The single result of a successful eval.
  Tensor eval1(Op op, std::vector<Tensor> inputs, AttrMap attrs = {}) {
    auto r = eval(op, std::move(inputs), std::move(attrs));
    EXPECT_TRUE(r.hasValue()) << r.status().message();
    return r.hasValue() ? r->at(0) : Tensor();
  }
};

Tensor i64(std::vector<int64_t> shape, std::vector<int64_t> v) {
  return Tensor::fromVector<int64_t>(DType::kI64, std::move(shape), v);
}
Tensor i32(std::vector<int64_t> shape, std::vector<int32_t> v) {
  return Tensor::fromVector<int32_t>(DType::kI32, std::move(shape), v);
}
Tensor f32(std::vector<int64_t> shape, std::vector<float> v) {
  return Tensor::fromVector<float>(DType::kF32, std::move(shape), v);
}
Tensor boolean(std::vector<int64_t> shape, std::vector<uint8_t> v) {
  Tensor t = Tensor::zeros(DType::kBool, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i)
    t.mutableData<bool>()[i] = v[i] != 0;
  return t;
}

std::vector<float> floats(const Tensor &t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numElements());
}
std::vector<bool> bools(const Tensor &t) {
  return std::vector<bool>(t.data<bool>(), t.data<bool>() + t.numElements());
}

TEST_F(ElementwiseEval, AddBroadcastsI64) {
  Tensor r = eval1(Op::kAdd, {i64({2, 3}, {1, 2, 3, 4, 5, 6}), i64({3}, {10, 20, 30})});
  EXPECT_EQ(r.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.toInt64Vector(), (std::vector<int64_t>{11, 22, 33, 14, 25, 36}));
}

TEST_F(ElementwiseEval, AddBroadcastsBothWaysF32AndI32) {
  Tensor r = eval1(Op::kAdd, {f32({2, 1}, {1, 2}), f32({1, 3}, {10, 20, 30})});
  EXPECT_EQ(r.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(floats(r), (std::vector<float>{11, 21, 31, 12, 22, 32}));
  Tensor s = eval1(Op::kSub, {i32({3}, {5, 6, 7}), i32({}, {1})});
  EXPECT_EQ(s.dtype(), DType::kI32);
  EXPECT_EQ(s.toInt64Vector(), (std::vector<int64_t>{4, 5, 6}));
  Tensor m = eval1(Op::kMul, {i64({2}, {3, -4}), i64({}, {5})});
  EXPECT_EQ(m.toInt64Vector(), (std::vector<int64_t>{15, -20}));
}

TEST_F(ElementwiseEval, F16IsComputedInF32) {
  Tensor a = f32({2}, {1.5f, 2.0f}).castTo(DType::kF16);
  Tensor r = eval1(Op::kAdd, {a, a});
  EXPECT_EQ(r.dtype(), DType::kF16);
  EXPECT_EQ(r.elementAsDouble(0), 3.0);
  EXPECT_EQ(r.elementAsDouble(1), 4.0);
}

TEST_F(ElementwiseEval, IntegerDivTruncatesTowardZero) {
  Tensor r = eval1(Op::kDiv, {i64({4}, {7, -7, 7, -7}), i64({4}, {2, 2, -2, -2})});
  EXPECT_EQ(r.toInt64Vector(), (std::vector<int64_t>{3, -3, -3, 3}));
  int64_t lo = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(eval1(Op::kDiv, {i64({}, {lo}), i64({}, {-1})}).toInt64Vector()[0], lo);
}

TEST_F(ElementwiseEval, IntegerDivByZeroIsAnError) {
  auto r = eval(Op::kDiv, {i64({2}, {1, 2}), i64({2}, {1, 0})});
  ASSERT_FALSE(r.hasValue());
  EXPECT_EQ(r.status().message(), "node 'e' (Div): integer division by zero");
  auto r32 = eval(Op::kDiv, {i32({1}, {1}), i32({}, {0})});
  EXPECT_EQ(r32.status().message(), "node 'e' (Div): integer division by zero");
  // Floats follow IEEE.
  EXPECT_TRUE(std::isinf(floats(eval1(Op::kDiv, {f32({}, {1}), f32({}, {0})}))[0]));
}

TEST_F(ElementwiseEval, BroadcastAndDtypeErrorsNameTheNode) {
  EXPECT_EQ(eval(Op::kAdd, {i64({2}, {1, 2}), i64({3}, {1, 2, 3})}).status().message(),
            "node 'e' (Add): shapes [2] and [3] cannot be broadcast (dim 2 vs 3)");
  EXPECT_EQ(eval(Op::kAdd, {i64({}, {1}), f32({}, {1})}).status().message(),
            "node 'e' (Add): inputs 0 and 1 have different dtypes (i64 vs f32)");
  EXPECT_EQ(eval(Op::kAdd, {i64({}, {1})}).status().message(),
            "node 'e' (Add): expects 2 inputs, got 1");
}

TEST_F(ElementwiseEval, ComparisonsGiveBool) {
  Tensor eq = eval1(Op::kEqual, {i64({3}, {1, 2, 3}), i64({}, {2})});
  EXPECT_EQ(eq.dtype(), DType::kBool);
  EXPECT_EQ(bools(eq), (std::vector<bool>{false, true, false}));
  EXPECT_EQ(bools(eval1(Op::kLess, {f32({2}, {1, 3}), f32({}, {2})})),
            (std::vector<bool>{true, false}));
  EXPECT_EQ(bools(eval1(Op::kGreater, {i32({2}, {1, 3}), i32({}, {2})})),
            (std::vector<bool>{false, true}));
  EXPECT_EQ(bools(eval1(Op::kOr, {boolean({2}, {0, 1}), boolean({}, {0})})),
            (std::vector<bool>{false, true}));
  EXPECT_EQ(bools(eval1(Op::kAnd, {boolean({2}, {0, 1}), boolean({}, {1})})),
            (std::vector<bool>{false, true}));
  EXPECT_EQ(bools(eval1(Op::kNot, {boolean({2}, {0, 1})})), (std::vector<bool>{true, false}));
}

TEST_F(ElementwiseEval, WhereBroadcasts) {
  Tensor r = eval1(Op::kWhere, {boolean({2, 1}, {1, 0}), i64({1, 3}, {1, 2, 3}), i64({}, {-1})});
  EXPECT_EQ(r.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.toInt64Vector(), (std::vector<int64_t>{1, 2, 3, -1, -1, -1}));
  EXPECT_EQ(eval(Op::kWhere, {i64({}, {1}), i64({}, {1}), i64({}, {1})}).status().message(),
            "node 'e' (Where): condition has dtype i64, expected bool");
}

TEST_F(ElementwiseEval, CastConverts) {
  Tensor r = eval1(Op::kCast, {f32({3}, {1.7f, -1.7f, 3.0f})}, {{"to", DType::kI64}});
  EXPECT_EQ(r.dtype(), DType::kI64);
  EXPECT_EQ(r.toInt64Vector(), (std::vector<int64_t>{1, -1, 3}));
  Tensor f = eval1(Op::kCast, {i64({2}, {4, -2})}, {{"to", DType::kF32}});
  EXPECT_EQ(floats(f), (std::vector<float>{4, -2}));
  EXPECT_EQ(eval(Op::kCast, {i64({}, {1})}).status().message(),
            "node 'e' (Cast): attribute 'to' must be a known dtype");
}

TEST_F(ElementwiseEval, NegAbsMaxMinOnIntegers) {
  int64_t lo = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(eval1(Op::kNeg, {i64({3}, {1, -2, lo})}).toInt64Vector(),
            (std::vector<int64_t>{-1, 2, lo}));
  EXPECT_EQ(eval1(Op::kAbs, {i64({3}, {1, -2, lo})}).toInt64Vector(),
            (std::vector<int64_t>{1, 2, lo}));
  EXPECT_EQ(eval1(Op::kMax, {i64({3}, {1, 5, 3}), i64({}, {2}), i64({1}, {4})}).toInt64Vector(),
            (std::vector<int64_t>{4, 5, 4}));
  EXPECT_EQ(eval1(Op::kMin, {i64({3}, {1, 5, 3}), i64({}, {2})}).toInt64Vector(),
            (std::vector<int64_t>{1, 2, 2}));
  EXPECT_EQ(eval1(Op::kMax, {i64({2}, {7, 8})}).toInt64Vector(), (std::vector<int64_t>{7, 8}));
}

TEST_F(ElementwiseEval, OnlyTheShapeArithmeticOpsHaveEval) {
  EXPECT_NE(opDef(Op::kAdd).eval, nullptr);
  EXPECT_EQ(opDef(Op::kSqrt).eval, nullptr);
  EXPECT_EQ(opDef(Op::kPow).eval, nullptr);
}

} // namespace
} // namespace dlc::optest
