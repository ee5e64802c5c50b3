// The CUDA expression of each elementwise and broadcast op (see elementwise_expr.h).
//
// Each function builds one C expression from its operands' expressions. Operands arrive in
// their compute type: float for f32/f16/bf16, double for f64, the C type of the dtype for
// integers and bool (codegen/cuda_prelude.cc converts on load and store). Semantics follow the
// reference kernels in ir/eval/elementwise_eval.cc and its neighbours: integer Div truncates toward
// zero, Mod with fmod=0 takes the divisor's sign, Min/Max propagate NaN, Round is half to even.
// Integer division by zero, which the reference reports as an error, gives 0 on the GPU: a
// kernel cannot fail an element.
#include "codegen/elementwise_expr.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "codegen/quant_expr.h"

namespace dlc::codegen {
namespace {

using Args = std::vector<std::string>;

/// The C type an element of `t` is computed in.
std::string computeType(DType t) {
  switch (t) {
  case DType::kF32:
  case DType::kF16:
  case DType::kBF16:
    return "float";
  case DType::kF64:
    return "double";
  case DType::kI8:
    return "signed char";
  case DType::kI16:
    return "short";
  case DType::kI32:
    return "int";
  case DType::kI64:
    return "long long";
  case DType::kU8:
    return "unsigned char";
  case DType::kU16:
    return "unsigned short";
  case DType::kU32:
    return "unsigned int";
  case DType::kU64:
    return "unsigned long long";
  case DType::kBool:
    return "bool";
  case DType::kUnknown:
    break;
  }
  return "void";
}

DType outType(const Node &n) { return n.output(0)->dtype(); }
DType inType(const Node &n, int i = 0) { return n.input(i)->dtype(); }

/// A float literal in the compute type of `t` that reproduces `v` exactly.
std::string literal(double v, DType t) {
  const bool isDouble = t == DType::kF64;
  if (std::isnan(v))
    return isDouble ? "__longlong_as_double(0x7ff8000000000000LL)" : "__int_as_float(0x7fc00000)";
  if (std::isinf(v)) {
    if (isDouble)
      return v > 0 ? "__longlong_as_double(0x7ff0000000000000LL)"
                   : "__longlong_as_double(0xfff0000000000000LL)";
    return v > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
  }
  if (isDouble)
    return fmt::format("{:.17g}", v).find_first_of(".e") == std::string::npos
               ? fmt::format("{:.17g}.0", v)
               : fmt::format("{:.17g}", v);
  if (isFloat(t)) {
    std::string s = fmt::format("{:.9g}", static_cast<float>(v));
    if (s.find_first_of(".e") == std::string::npos)
      s += ".0";
    return s + "f";
  }
  return fmt::format("(({}){})", computeType(t), static_cast<long long>(v));
}

std::string attrLiteral(const Node &n, const char *name, DType t) {
  return literal(n.getFloat(name), t);
}

Expected<std::string> typed(const Node &n, const std::string &expr) {
  return fmt::format("(({})({}))", computeType(outType(n)), expr);
}

// --- Expression builders (one per op shape) ------------------------------------------------

template <const char *Fn> Expected<std::string> call1(const Node &n, const Args &a) {
  return fmt::format("{}({})", Fn, a[0]);
}

#define DLC_CALL1(name, fn)                                                                        \
  constexpr char name##Name[] = fn;                                                                \
  constexpr CudaExprFn name = call1<name##Name>;

DLC_CALL1(kAcos, "acos")
DLC_CALL1(kAcosh, "acosh")
DLC_CALL1(kAsin, "asin")
DLC_CALL1(kAsinh, "asinh")
DLC_CALL1(kAtan, "atan")
DLC_CALL1(kAtanh, "atanh")
DLC_CALL1(kCeil, "ceil")
DLC_CALL1(kCos, "cos")
DLC_CALL1(kCosh, "cosh")
DLC_CALL1(kExp, "exp")
DLC_CALL1(kFloor, "floor")
DLC_CALL1(kLog, "log")
DLC_CALL1(kRound, "rint")
DLC_CALL1(kSin, "sin")
DLC_CALL1(kSinh, "sinh")
DLC_CALL1(kSqrt, "sqrt")
DLC_CALL1(kTan, "tan")
DLC_CALL1(kTanh, "tanh")
DLC_CALL1(kAbs, "dlc_abs")
DLC_CALL1(kSigmoid, "dlc_sigmoid")
DLC_CALL1(kSign, "dlc_sign")
DLC_CALL1(kSoftplus, "dlc_softplus")
DLC_CALL1(kSoftsign, "dlc_softsign")
DLC_CALL1(kMish, "dlc_mish")
DLC_CALL1(kHardSwish, "dlc_hard_swish")
DLC_CALL1(kIsNaN, "isnan")
#undef DLC_CALL1

template <const char *OpText> Expected<std::string> infix(const Node &n, const Args &a) {
  return typed(n, fmt::format("{} {} {}", a[0], OpText, a[1]));
}
template <const char *OpText> Expected<std::string> predicate(const Node &, const Args &a) {
  return fmt::format("({} {} {})", a[0], OpText, a[1]);
}
constexpr char kPlus[] = "+", kMinus[] = "-", kTimes[] = "*", kBitAnd[] = "&", kBitOr[] = "|",
               kBitXor[] = "^", kEq[] = "==", kLt[] = "<", kLe[] = "<=", kGt[] = ">",
               kGe[] = ">=", kAndText[] = "&&", kOrText[] = "||";

/// Float +, -, * as the round-to-nearest intrinsics: never contracted into an FMA, so that a
/// multiply-then-add rounds twice, as the reference does (an int8 layer's requantization,
/// scale then bias, lands on the reference's level; otherwise a tie could move one level).
template <const char *OpText, const char *FloatFn, const char *DoubleFn>
Expected<std::string> arith(const Node &n, const Args &a) {
  const DType t = outType(n);
  if (t == DType::kF64)
    return fmt::format("{}({}, {})", DoubleFn, a[0], a[1]);
  if (isFloat(t))
    return typed(n, fmt::format("{}({}, {})", FloatFn, a[0], a[1]));
  return typed(n, fmt::format("{} {} {}", a[0], OpText, a[1]));
}
constexpr char kFadd[] = "__fadd_rn", kFsub[] = "__fsub_rn", kFmul[] = "__fmul_rn",
               kDadd[] = "__dadd_rn", kDsub[] = "__dsub_rn", kDmul[] = "__dmul_rn";

Expected<std::string> divExpr(const Node &n, const Args &a) {
  if (isFloat(outType(n)))
    return fmt::format("({} / {})", a[0], a[1]);
  return typed(n, fmt::format("dlc_idiv({}, {})", a[0], a[1]));
}

Expected<std::string> modExpr(const Node &n, const Args &a) {
  const bool fmodMode = n.getInt("fmod") != 0;
  if (isFloat(outType(n))) {
    if (!fmodMode)
      return invalidArgument("floating-point Mod requires fmod=1");
    return fmt::format("fmod({}, {})", a[0], a[1]);
  }
  return typed(
      n, fmt::format("{}({}, {})", fmodMode ? "dlc_imod_trunc" : "dlc_imod_floor", a[0], a[1]));
}

Expected<std::string> powExpr(const Node &n, const Args &a) {
  const DType t = outType(n);
  if (t == DType::kF64)
    return fmt::format("pow({}, (double)({}))", a[0], a[1]);
  if (isFloat(t))
    return fmt::format("dlc_powf({}, (float)({}))", a[0], a[1]);
  return typed(n, fmt::format("dlc_ipow((long long)({}), (double)({}))", a[0], a[1]));
}

Expected<std::string> negExpr(const Node &n, const Args &a) {
  return typed(n, fmt::format("-{}", a[0]));
}
Expected<std::string> reciprocalExpr(const Node &n, const Args &a) {
  return fmt::format("({} / {})", literal(1.0, outType(n)), a[0]);
}
Expected<std::string> reluExpr(const Node &n, const Args &a) {
  return fmt::format("dlc_relu({})", a[0]);
}
Expected<std::string> notExpr(const Node &, const Args &a) { return fmt::format("(!{})", a[0]); }
Expected<std::string> bitNotExpr(const Node &n, const Args &a) {
  return typed(n, fmt::format("~{}", a[0]));
}
Expected<std::string> xorExpr(const Node &, const Args &a) {
  return fmt::format("((bool){} != (bool){})", a[0], a[1]);
}
Expected<std::string> bitShiftExpr(const Node &n, const Args &a) {
  const std::string &dir = n.getString("direction");
  if (dir != "LEFT" && dir != "RIGHT")
    return invalidArgument("BitShift direction must be LEFT or RIGHT, got '{}'", dir);
  return typed(n,
               fmt::format("dlc_shift<{}>({}, {})", dir == "LEFT" ? "true" : "false", a[0], a[1]));
}

Expected<std::string> castExpr(const Node &n, const Args &a) {
  const DType to = outType(n), from = inType(n);
  if (to == DType::kBool)
    return fmt::format("({} != 0)", a[0]);
  if (isInteger(to) && isFloat(from))
    return fmt::format("dlc_float_to_int<{}>({})", computeType(to), a[0]);
  return typed(n, a[0]);
}

Expected<std::string> erfExpr(const Node &n, const Args &a) {
  if (isFloat(outType(n)))
    return fmt::format("erf({})", a[0]);
  return typed(n, fmt::format("erf((double)({}))", a[0]));
}

Expected<std::string> celuExpr(const Node &n, const Args &a) {
  return fmt::format("dlc_celu({}, {})", a[0], attrLiteral(n, "alpha", outType(n)));
}
Expected<std::string> eluExpr(const Node &n, const Args &a) {
  return fmt::format("dlc_elu({}, {})", a[0], attrLiteral(n, "alpha", outType(n)));
}
Expected<std::string> leakyReluExpr(const Node &n, const Args &a) {
  return fmt::format("dlc_leaky_relu({}, {})", a[0], attrLiteral(n, "alpha", outType(n)));
}
Expected<std::string> thresholdedReluExpr(const Node &n, const Args &a) {
  return fmt::format("dlc_thresholded_relu({}, {})", a[0], attrLiteral(n, "alpha", outType(n)));
}
Expected<std::string> seluExpr(const Node &n, const Args &a) {
  const DType t = outType(n);
  return fmt::format("dlc_selu({}, {}, {})", a[0], attrLiteral(n, "alpha", t),
                     attrLiteral(n, "gamma", t));
}
Expected<std::string> hardSigmoidExpr(const Node &n, const Args &a) {
  const DType t = outType(n);
  return fmt::format("dlc_hard_sigmoid({}, {}, {})", a[0], attrLiteral(n, "alpha", t),
                     attrLiteral(n, "beta", t));
}
Expected<std::string> shrinkExpr(const Node &n, const Args &a) {
  const DType t = isFloat(outType(n)) ? outType(n) : DType::kF64;
  return typed(n, fmt::format("dlc_shrink({}, {}, {})", a[0], attrLiteral(n, "lambd", t),
                              attrLiteral(n, "bias", t)));
}
/// Whether every reader of `v` is a multiply by a constant whose every reader quantizes to 8
/// bits by a scale of 1: realize-int8's fast-requantize form of a quantization (its inverse
/// scale, then 1), whose levels are already allowed one step from the exact division's.
bool fastQuantizedTo8Bits(const Value &v) {
  auto isGraphOutput = [](const Value &x) { return x.graph() && x.graph()->isOutput(&x); };
  if (!v.hasUses() || isGraphOutput(v))
    return false;
  for (const Use &u : v.uses()) {
    const Node &m = *u.node;
    const Value *scaled = m.output(0);
    if (m.op() != Op::kMul || m.numInputs() != 2 || !m.input(1 - u.index)->isConstant() ||
        !scaled || !scaled->hasUses() || isGraphOutput(*scaled))
      return false;
    for (const Use &q : scaled->uses()) {
      const DType t = q.node->output(0) ? q.node->output(0)->dtype() : DType::kF32;
      if (q.node->op() != Op::kQuantizeLinear || q.index != 0 ||
          (t != DType::kI8 && t != DType::kU8) || !unreadOperand(*q.node, 1))
        return false;
    }
  }
  return true;
}

Expected<std::string> geluExpr(const Node &n, const Args &a) {
  const std::string &approx = n.getString("approximate");
  // A 16-bit result rounds away far more than dlc_gelu16's approximation errs (it rounds to
  // the correctly rounded f16 more often than erf's form does); float keeps erf. So does an
  // 8-bit quantization of a float result (BERT int8's FFN up-projection): Phi's error under
  // 4e-7 moves x * Phi(x) by less than 2.3e-6 (|x| < 5.7; beyond, both tails are within that
  // of 0 or x), which changes a level only where x / scale lies that close to a tie: within
  // the one step realize-int8's fast-requantize allows (and only in its form of the graph).
  const DType t = outType(n);
  if (approx == "none" && (t == DType::kF16 || t == DType::kBF16 ||
                           (t == DType::kF32 && n.output(0) && fastQuantizedTo8Bits(*n.output(0)))))
    return fmt::format("dlc_gelu16({})", a[0]);
  if (approx == "none")
    return fmt::format("dlc_gelu({})", a[0]);
  if (approx == "tanh")
    return fmt::format("dlc_gelu_tanh({})", a[0]);
  return invalidArgument("Gelu approximate must be 'none' or 'tanh', got '{}'", approx);
}
Expected<std::string> isInfExpr(const Node &n, const Args &a) {
  return fmt::format("dlc_isinf({}, {}, {})", a[0], n.getInt("detect_positive") ? "true" : "false",
                     n.getInt("detect_negative") ? "true" : "false");
}
Expected<std::string> preluExpr(const Node &n, const Args &a) {
  return typed(n, fmt::format("({0} < 0 ? {0} * {1} : {0})", a[0], a[1]));
}
Expected<std::string> whereExpr(const Node &, const Args &a) {
  return fmt::format("({} ? {} : {})", a[0], a[1], a[2]);
}
Expected<std::string> identityExpr(const Node &, const Args &a) { return a[0]; }

Expected<std::string> clipExpr(const Node &n, const Args &a) {
  std::string e = a[0];
  if (a.size() > 1 && !a[1].empty())
    e = fmt::format("dlc_clip_lo({}, {})", e, a[1]);
  if (a.size() > 2 && !a[2].empty())
    e = fmt::format("dlc_clip_hi({}, {})", e, a[2]);
  return e;
}

/// Max/Min/Sum/Mean over any number of operands.
template <const char *Fn> Expected<std::string> fold(const Node &n, const Args &a) {
  std::string e = a[0];
  for (size_t i = 1; i < a.size(); ++i)
    e = fmt::format("{}({}, {})", Fn, e, a[i]);
  return a.size() == 1 ? e : typed(n, e);
}
constexpr char kMaxFn[] = "dlc_max", kMinFn[] = "dlc_min", kAddFn[] = "dlc_add";
Expected<std::string> meanExpr(const Node &n, const Args &a) {
  DLC_ASSIGN_OR_RETURN(std::string sum, fold<kAddFn>(n, a));
  return fmt::format("({} / {})", sum, literal(static_cast<double>(a.size()), outType(n)));
}

} // namespace

CudaExprFn elementwiseExpr(Op op) {
  switch (op) {
  case Op::kAbs:
    return kAbs;
  case Op::kAcos:
    return kAcos;
  case Op::kAcosh:
    return kAcosh;
  case Op::kAdd:
    return arith<kPlus, kFadd, kDadd>;
  case Op::kAnd:
    return predicate<kAndText>;
  case Op::kAsin:
    return kAsin;
  case Op::kAsinh:
    return kAsinh;
  case Op::kAtan:
    return kAtan;
  case Op::kAtanh:
    return kAtanh;
  case Op::kBitShift:
    return bitShiftExpr;
  case Op::kBitwiseAnd:
    return infix<kBitAnd>;
  case Op::kBitwiseNot:
    return bitNotExpr;
  case Op::kBitwiseOr:
    return infix<kBitOr>;
  case Op::kBitwiseXor:
    return infix<kBitXor>;
  case Op::kCast:
  case Op::kCastLike:
    return castExpr;
  case Op::kCeil:
    return kCeil;
  case Op::kCelu:
    return celuExpr;
  case Op::kClip:
    return clipExpr;
  case Op::kCos:
    return kCos;
  case Op::kCosh:
    return kCosh;
  case Op::kDiv:
    return divExpr;
  case Op::kDropout:
    return identityExpr;
  case Op::kElu:
    return eluExpr;
  case Op::kEqual:
    return predicate<kEq>;
  case Op::kErf:
    return erfExpr;
  case Op::kExp:
    return kExp;
  case Op::kFloor:
    return kFloor;
  case Op::kGelu:
    return geluExpr;
  case Op::kGreater:
    return predicate<kGt>;
  case Op::kGreaterOrEqual:
    return predicate<kGe>;
  case Op::kHardSigmoid:
    return hardSigmoidExpr;
  case Op::kHardSwish:
    return kHardSwish;
  case Op::kIsInf:
    return isInfExpr;
  case Op::kIsNaN:
    return kIsNaN;
  case Op::kLeakyRelu:
    return leakyReluExpr;
  case Op::kLess:
    return predicate<kLt>;
  case Op::kLessOrEqual:
    return predicate<kLe>;
  case Op::kLog:
    return kLog;
  case Op::kMax:
    return fold<kMaxFn>;
  case Op::kMean:
    return meanExpr;
  case Op::kMin:
    return fold<kMinFn>;
  case Op::kMish:
    return kMish;
  case Op::kMod:
    return modExpr;
  case Op::kMul:
    return arith<kTimes, kFmul, kDmul>;
  case Op::kNeg:
    return negExpr;
  case Op::kNot:
    return notExpr;
  case Op::kOr:
    return predicate<kOrText>;
  case Op::kPRelu:
    return preluExpr;
  case Op::kQuantizeLinear:
    return quantizeLinearExpr;
  case Op::kDequantizeLinear:
    return dequantizeLinearExpr;
  case Op::kPow:
    return powExpr;
  case Op::kReciprocal:
    return reciprocalExpr;
  case Op::kRelu:
    return reluExpr;
  case Op::kRound:
    return kRound;
  case Op::kSelu:
    return seluExpr;
  case Op::kShrink:
    return shrinkExpr;
  case Op::kSigmoid:
    return kSigmoid;
  case Op::kSign:
    return kSign;
  case Op::kSin:
    return kSin;
  case Op::kSinh:
    return kSinh;
  case Op::kSoftplus:
    return kSoftplus;
  case Op::kSoftsign:
    return kSoftsign;
  case Op::kSqrt:
    return kSqrt;
  case Op::kSub:
    return arith<kMinus, kFsub, kDsub>;
  case Op::kSum:
    return fold<kAddFn>;
  case Op::kTan:
    return kTan;
  case Op::kTanh:
    return kTanh;
  case Op::kThresholdedRelu:
    return thresholdedReluExpr;
  case Op::kWhere:
    return whereExpr;
  case Op::kXor:
    return xorExpr;
  default:
    return nullptr;
  }
}

bool isPlainArithmetic(Op op) {
  switch (op) {
  case Op::kAbs:
  case Op::kAdd:
  case Op::kCast:
  case Op::kClip:
  case Op::kDequantizeLinear:
  case Op::kIdentity:
  case Op::kLeakyRelu:
  case Op::kMax:
  case Op::kMin:
  case Op::kMul:
  case Op::kNeg:
  case Op::kRelu:
  case Op::kSub:
  case Op::kWhere:
    return true;
  default:
    return false;
  }
}

std::string cudaComputeType(DType t) { return computeType(t); }
std::string cudaLiteral(double v, DType t) { return literal(v, t); }

} // namespace dlc::codegen
