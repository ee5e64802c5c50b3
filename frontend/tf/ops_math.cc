// TensorFlow elementwise math, comparisons, logic and reductions -> dlc IR (see convert.h).
//
// TensorFlow's binary ops broadcast as NumPy does, which is the IR's rule too. Where TF and the
// IR differ, the converter composes: integer FloorDiv and FloorMod round toward -inf (the IR's
// Div truncates; its Mod with fmod=0 is the floored one), float FloorMod is x - floor(x/y)*y
// (the IR's Mod needs fmod=1 for floats), Rsqrt is 1/sqrt, SquaredDifference is (x-y)^2. TF's
// reductions with an empty axis list reduce nothing (noop_with_empty_axes=1).
#include "frontend/tf/convert.h"
#include "frontend/tf/ops_random.h"

namespace dlc::tf::detail {

namespace {

/// One IR op on all the node's inputs.
template <Op kOp> Status direct(NodeConverter &c) {
  std::vector<Value *> ins;
  for (int i = 0; i < c.numInputs(); ++i)
    ins.push_back(c.input(i));
  DLC_ASSIGN_OR_RETURN(Value * y, c.op(kOp, std::move(ins)));
  c.setOutputs({y});
  return Status::ok();
}

/// `Not(op(x, y))`: NotEqual.
template <Op kOp> Status negated(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(Value * v, c.op(kOp, {c.input(0), c.input(1)}, {}, "compare"));
  DLC_ASSIGN_OR_RETURN(Value * y, c.op(Op::kNot, {v}));
  c.setOutputs({y});
  return Status::ok();
}

Status requireFloat(NodeConverter &c, int i) {
  if (!isFloat(c.input(i)->dtype()))
    return c.error("input {} must be a float tensor, got {}", i, dtypeName(c.input(i)->dtype()));
  return Status::ok();
}

Status rsqrt(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(Value * s, c.op(Op::kSqrt, {c.input(0)}, {}, "sqrt"));
  DLC_ASSIGN_OR_RETURN(Value * y, c.op(Op::kReciprocal, {s}));
  c.setOutputs({y});
  return Status::ok();
}

Status square(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(Value * y, c.op(Op::kMul, {c.input(0), c.input(0)}));
  c.setOutputs({y});
  return Status::ok();
}

Status squaredDifference(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(Value * d, c.op(Op::kSub, {c.input(0), c.input(1)}, {}, "sub"));
  DLC_ASSIGN_OR_RETURN(Value * y, c.op(Op::kMul, {d, d}));
  c.setOutputs({y});
  return Status::ok();
}

/// x + k or x - k for a scalar k of x's dtype.
Expected<Value *> addScalar(NodeConverter &c, Value *x, double k, std::string_view role) {
  return c.op(Op::kAdd, {x, c.scalar(x->dtype(), k, std::string(role) + "_const")}, {}, role);
}

Status log1p(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(Value * a, addScalar(c, c.input(0), 1.0, "plus_one"));
  DLC_ASSIGN_OR_RETURN(Value * y, c.op(Op::kLog, {a}));
  c.setOutputs({y});
  return Status::ok();
}

Status expm1(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(Value * e, c.op(Op::kExp, {c.input(0)}, {}, "exp"));
  DLC_ASSIGN_OR_RETURN(Value * y, addScalar(c, e, -1.0, ""));
  c.setOutputs({y});
  return Status::ok();
}

Status isFinite(NodeConverter &c) {
  DLC_RETURN_IF_ERROR(requireFloat(c, 0));
  DLC_ASSIGN_OR_RETURN(Value * nan, c.op(Op::kIsNaN, {c.input(0)}, {}, "isnan"));
  DLC_ASSIGN_OR_RETURN(Value * inf, c.op(Op::kIsInf, {c.input(0)}, {}, "isinf"));
  DLC_ASSIGN_OR_RETURN(Value * bad, c.op(Op::kOr, {nan, inf}, {}, "not_finite"));
  DLC_ASSIGN_OR_RETURN(Value * y, c.op(Op::kNot, {bad}));
  c.setOutputs({y});
  return Status::ok();
}

/// FloorDiv: floor(x / y). Floats: Floor(Div). Integers: (x - floormod(x, y)) / y, exact
/// because x - floormod(x, y) is a multiple of y.
Status floorDiv(NodeConverter &c) {
  Value *x = c.input(0), *y = c.input(1);
  Value *out = nullptr;
  if (isFloat(x->dtype())) {
    DLC_ASSIGN_OR_RETURN(Value * q, c.op(Op::kDiv, {x, y}, {}, "div"));
    DLC_ASSIGN_OR_RETURN(out, c.op(Op::kFloor, {q}));
  } else {
    DLC_ASSIGN_OR_RETURN(Value * m,
                         c.op(Op::kMod, {x, y}, {{"fmod", Attribute(int64_t{0})}}, "mod"));
    DLC_ASSIGN_OR_RETURN(Value * d, c.op(Op::kSub, {x, m}, {}, "sub"));
    DLC_ASSIGN_OR_RETURN(out, c.op(Op::kDiv, {d, y}));
  }
  c.setOutputs({out});
  return Status::ok();
}

/// FloorMod: the result has the sign of y. Integers: Mod(fmod=0). Floats: x - floor(x/y)*y.
Status floorMod(NodeConverter &c) {
  Value *x = c.input(0), *y = c.input(1);
  Value *out = nullptr;
  if (isFloat(x->dtype())) {
    DLC_ASSIGN_OR_RETURN(Value * q, c.op(Op::kDiv, {x, y}, {}, "div"));
    DLC_ASSIGN_OR_RETURN(Value * f, c.op(Op::kFloor, {q}, {}, "floor"));
    DLC_ASSIGN_OR_RETURN(Value * p, c.op(Op::kMul, {f, y}, {}, "mul"));
    DLC_ASSIGN_OR_RETURN(out, c.op(Op::kSub, {x, p}));
  } else {
    DLC_ASSIGN_OR_RETURN(out, c.op(Op::kMod, {x, y}, {{"fmod", Attribute(int64_t{0})}}));
  }
  c.setOutputs({out});
  return Status::ok();
}

/// Floor, or the constant a dropout mask floors to when keep_prob is 1 (ops_random.h).
Status floorOp(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(Value * folded, foldDropoutMask(c));
  if (folded) {
    c.setOutputs({folded});
    return Status::ok();
  }
  return direct<Op::kFloor>(c);
}

/// TruncateDiv: integer division rounding toward zero (TensorFlow defines it for integers).
Status truncateDiv(NodeConverter &c) {
  if (isFloat(c.input(0)->dtype()))
    return c.unsupported("TruncateDiv on {} (TensorFlow registers it for integers only)",
                         dtypeName(c.input(0)->dtype()));
  return direct<Op::kDiv>(c);
}

/// TruncateMod: C's %, the sign of x (Mod with fmod=1).
Status truncateMod(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(Value * y,
                       c.op(Op::kMod, {c.input(0), c.input(1)}, {{"fmod", Attribute(int64_t{1})}}));
  c.setOutputs({y});
  return Status::ok();
}

/// DivNoNan: x / y, and 0 where y is 0.
Status divNoNan(NodeConverter &c) {
  Value *x = c.input(0), *y = c.input(1);
  Value *zero = c.scalar(y->dtype(), 0.0, "zero");
  DLC_ASSIGN_OR_RETURN(Value * isZero, c.op(Op::kEqual, {y, zero}, {}, "y_is_zero"));
  DLC_ASSIGN_OR_RETURN(Value * q, c.op(Op::kDiv, {x, y}, {}, "div"));
  DLC_ASSIGN_OR_RETURN(Value * out, c.op(Op::kWhere, {isZero, zero, q}));
  c.setOutputs({out});
  return Status::ok();
}

/// AddN: Sum for floats, a chain of Adds otherwise (Sum is float-only in the IR).
Status addN(NodeConverter &c) {
  if (isFloat(c.input(0)->dtype()))
    return direct<Op::kSum>(c);
  Value *acc = c.input(0);
  for (int i = 1; i < c.numInputs(); ++i) {
    DLC_ASSIGN_OR_RETURN(acc, c.op(Op::kAdd, {acc, c.input(i)}, {},
                                   i + 1 == c.numInputs() ? "" : fmt::format("add{}", i)));
  }
  c.setOutputs({acc});
  return Status::ok();
}

/// ClipByValue: min(max(x, lo), hi); lo and hi broadcast (TensorFlow allows tensors).
Status clipByValue(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(Value * lo, c.op(Op::kMax, {c.input(0), c.input(1)}, {}, "at_least"));
  DLC_ASSIGN_OR_RETURN(Value * y, c.op(Op::kMin, {lo, c.input(2)}));
  c.setOutputs({y});
  return Status::ok();
}

/// The axes of a reduction-like op's input `i` as an i64 value (a constant when it is one).
Expected<Value *> axesInput(NodeConverter &c, int i) {
  if (const Tensor *t = c.constInput(i)) {
    if (!isInteger(t->dtype()))
      return c.error("the axes (input {}) must be integers, got {}", i, dtypeName(t->dtype()));
    return c.constI64(t->toInt64Vector(), "axes");
  }
  return c.cast(c.input(i), DType::kI64, "axes");
}

/// Mean, Sum, Max, Min, Prod, All, Any: reduce input 0 over the axes of input 1.
template <Op kOp> Status reduce(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(bool keep, c.attrBool("keep_dims", false));
  DLC_ASSIGN_OR_RETURN(Value * axes, axesInput(c, 1));
  if (axes->isConstant() && axes->constant().numElements() == 0 && axes->shape().rank() == 1) {
    c.setOutputs({c.input(0)}); // reducing over no axis changes nothing
    return Status::ok();
  }
  if (!axes->isConstant() || axes->constant().rank() == 0) {
    DLC_ASSIGN_OR_RETURN(axes, c.op(Op::kReshape, {axes, c.constI64({-1}, "flat")}, {}, "axes_1d"));
  }
  DLC_ASSIGN_OR_RETURN(Value * y, c.op(kOp, {c.input(0), axes},
                                       {{"keepdims", Attribute(int64_t{keep ? 1 : 0})},
                                        {"noop_with_empty_axes", Attribute(int64_t{1})}}));
  c.setOutputs({y});
  return Status::ok();
}

/// All/Any: boolean reductions are ReduceMin/ReduceMax on bool.
Status reduceBool(NodeConverter &c, bool all) {
  if (c.input(0)->dtype() != DType::kBool)
    return c.error("input 0 must be bool, got {}", dtypeName(c.input(0)->dtype()));
  return all ? reduce<Op::kReduceMin>(c) : reduce<Op::kReduceMax>(c);
}

/// ArgMax/ArgMin: the axis is a constant input; the result drops it; output_type i64 or i32.
template <Op kOp> Status argReduce(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> axis, c.constInts(1, "dimension"));
  if (axis.size() != 1)
    return c.error("the dimension must be one value, got {}", axis.size());
  DLC_ASSIGN_OR_RETURN(DType outType, c.attrType("output_type", DType::kI64));
  DLC_ASSIGN_OR_RETURN(Value * idx,
                       c.op(kOp, {c.input(0)},
                            {{"axis", Attribute(axis[0])}, {"keepdims", Attribute(int64_t{0})}},
                            outType == DType::kI64 ? "" : "i64"));
  DLC_ASSIGN_OR_RETURN(Value * y, c.cast(idx, outType, ""));
  c.setOutputs({y});
  return Status::ok();
}

/// Softmax/LogSoftmax over the last axis.
template <Op kOp> Status softmax(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(Value * y, c.op(kOp, {c.input(0)}, {{"axis", Attribute(int64_t{-1})}}));
  c.setOutputs({y});
  return Status::ok();
}

/// Cumsum(x, axis) with exclusive and reverse.
Status cumsum(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(bool exclusive, c.attrBool("exclusive", false));
  DLC_ASSIGN_OR_RETURN(bool reverse, c.attrBool("reverse", false));
  DLC_ASSIGN_OR_RETURN(Value * axis, c.cast(c.input(1), DType::kI64, "axis"));
  DLC_ASSIGN_OR_RETURN(Value * y, c.op(Op::kCumSum, {c.input(0), axis},
                                       {{"exclusive", Attribute(int64_t{exclusive})},
                                        {"reverse", Attribute(int64_t{reverse})}}));
  c.setOutputs({y});
  return Status::ok();
}

} // namespace

std::vector<ConverterRow> mathConverters() {
  return {
      // Binary arithmetic (NumPy broadcasting, as the IR's).
      {"Add", 2, 2, direct<Op::kAdd>},
      {"AddV2", 2, 2, direct<Op::kAdd>},
      {"Sub", 2, 2, direct<Op::kSub>},
      {"Mul", 2, 2, direct<Op::kMul>},
      {"RealDiv", 2, 2, direct<Op::kDiv>},
      {"Div", 2, 2, direct<Op::kDiv>}, // TF's Div kernel truncates integers, as the IR's Div
      {"TruncateDiv", 2, 2, truncateDiv},
      {"FloorDiv", 2, 2, floorDiv},
      {"FloorMod", 2, 2, floorMod},
      {"TruncateMod", 2, 2, truncateMod},
      {"DivNoNan", 2, 2, divNoNan},
      {"Maximum", 2, 2, direct<Op::kMax>},
      {"Minimum", 2, 2, direct<Op::kMin>},
      {"Pow", 2, 2, direct<Op::kPow>},
      {"SquaredDifference", 2, 2, squaredDifference},
      {"AddN", 1, -1, addN},
      {"ClipByValue", 3, 3, clipByValue},
      // Unary math.
      {"Abs", 1, 1, direct<Op::kAbs>},
      {"Neg", 1, 1, direct<Op::kNeg>},
      {"Exp", 1, 1, direct<Op::kExp>},
      {"Expm1", 1, 1, expm1},
      {"Log", 1, 1, direct<Op::kLog>},
      {"Log1p", 1, 1, log1p},
      {"Sqrt", 1, 1, direct<Op::kSqrt>},
      {"Rsqrt", 1, 1, rsqrt},
      {"Square", 1, 1, square},
      {"Reciprocal", 1, 1, direct<Op::kReciprocal>},
      {"Inv", 1, 1, direct<Op::kReciprocal>},
      {"Floor", 1, 1, floorOp},
      {"Ceil", 1, 1, direct<Op::kCeil>},
      {"Round", 1, 1, direct<Op::kRound>}, // half to even, as the IR's Round
      {"Sign", 1, 1, direct<Op::kSign>},
      {"Sin", 1, 1, direct<Op::kSin>},
      {"Cos", 1, 1, direct<Op::kCos>},
      {"Tan", 1, 1, direct<Op::kTan>},
      {"Asin", 1, 1, direct<Op::kAsin>},
      {"Acos", 1, 1, direct<Op::kAcos>},
      {"Atan", 1, 1, direct<Op::kAtan>},
      {"Sinh", 1, 1, direct<Op::kSinh>},
      {"Cosh", 1, 1, direct<Op::kCosh>},
      {"Asinh", 1, 1, direct<Op::kAsinh>},
      {"Acosh", 1, 1, direct<Op::kAcosh>},
      {"Atanh", 1, 1, direct<Op::kAtanh>},
      {"IsNan", 1, 1, direct<Op::kIsNaN>},
      {"IsInf", 1, 1, direct<Op::kIsInf>},
      {"IsFinite", 1, 1, isFinite},
      // Comparisons and logic.
      {"Equal", 2, 2, direct<Op::kEqual>},
      {"NotEqual", 2, 2, negated<Op::kEqual>},
      {"Less", 2, 2, direct<Op::kLess>},
      {"LessEqual", 2, 2, direct<Op::kLessOrEqual>},
      {"Greater", 2, 2, direct<Op::kGreater>},
      {"GreaterEqual", 2, 2, direct<Op::kGreaterOrEqual>},
      {"LogicalAnd", 2, 2, direct<Op::kAnd>},
      {"LogicalOr", 2, 2, direct<Op::kOr>},
      {"LogicalNot", 1, 1, direct<Op::kNot>},
      // Reductions and their relatives.
      {"Mean", 2, 2, reduce<Op::kReduceMean>},
      {"Sum", 2, 2, reduce<Op::kReduceSum>},
      {"Max", 2, 2, reduce<Op::kReduceMax>},
      {"Min", 2, 2, reduce<Op::kReduceMin>},
      {"Prod", 2, 2, reduce<Op::kReduceProd>},
      {"All", 2, 2, [](NodeConverter &c) { return reduceBool(c, true); }},
      {"Any", 2, 2, [](NodeConverter &c) { return reduceBool(c, false); }},
      {"ArgMax", 2, 2, argReduce<Op::kArgMax>},
      {"ArgMin", 2, 2, argReduce<Op::kArgMin>},
      {"Softmax", 1, 1, softmax<Op::kSoftmax>},
      {"LogSoftmax", 1, 1, softmax<Op::kLogSoftmax>},
      {"Cumsum", 2, 2, cumsum},
  };
}

} // namespace dlc::tf::detail
