// Elementwise family: unary math and activations (FusionKind::kElementwise), and binary,
// variadic and ternary ops with numpy broadcasting (kBroadcast). Shape inference follows the
// ONNX spec, including its type constraints (comparisons and logic give bool, Cast gives
// `to`, CastLike gives the target's dtype). Add/Sub/Mul/Div and Cast also propagate the
// symbolic value of small integer shape tensors, so Reshape targets computed from Shape()
// resolve during infer-shapes.
#include <optional>

#include "ir/ops/families.h"
#include "ir/ops/infer_checks.h"
#include "ir/ops/util.h"

namespace dlc::ops {

namespace {

using TC = TypeClass;

// --- Unary ----------------------------------------------------------------------------------

/// Output 0 has input 0's type; input 0 must be of class C.
template <TC C> Status inferUnary(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkInputDType(ctx, 0, C));
  ctx.setOutputType(0, ctx.inputType(0));
  return Status::ok();
}

/// A bool tensor of input 0's shape; input 0 must be of class C (IsNaN, IsInf, Not).
template <TC C> Status inferPredicate(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkInputDType(ctx, 0, C));
  ctx.setOutputType(0, TensorType(DType::kBool, ctx.inputType(0).shape));
  return Status::ok();
}

Status inferGelu(InferContext &ctx) {
  const std::string &mode = ctx.node().getString("approximate");
  if (mode != "none" && mode != "tanh")
    return ctx.error("attribute 'approximate' must be \"none\" or \"tanh\", got \"{}\"", mode);
  return inferUnary<TC::kFloat>(ctx);
}

// --- Broadcasting -----------------------------------------------------------------------------

enum class Out : uint8_t { kSame, kBool };

/// All present inputs of class C and one dtype; output shape is their broadcast.
template <TC C, Out O> Status inferBroadcast(InferContext &ctx) {
  std::vector<int> all;
  for (int i = 0; i < ctx.numInputs(); ++i) {
    DLC_RETURN_IF_ERROR(checkInputDType(ctx, i, C));
    all.push_back(i);
  }
  DLC_ASSIGN_OR_RETURN(DType dtype, commonDType(ctx, all));
  DLC_ASSIGN_OR_RETURN(Shape shape, broadcastInputs(ctx));
  ctx.setOutputType(0, TensorType(O == Out::kBool ? DType::kBool : dtype, std::move(shape)));
  return Status::ok();
}

enum class Arith : uint8_t { kAdd, kSub, kMul, kDiv };

/// a op b on known sizes; nullopt on overflow, division by zero or a negative result (a dim
/// cannot hold it).
std::optional<int64_t> arithSizes(Arith k, int64_t a, int64_t b) {
  int64_t r = 0;
  switch (k) {
  case Arith::kAdd:
    if (__builtin_add_overflow(a, b, &r))
      return std::nullopt;
    break;
  case Arith::kSub:
    r = a - b;
    break; // both >= 0: cannot overflow
  case Arith::kMul:
    if (__builtin_mul_overflow(a, b, &r))
      return std::nullopt;
    break;
  case Arith::kDiv:
    if (b == 0)
      return std::nullopt;
    r = a / b;
    break;
  }
  if (r < 0)
    return std::nullopt;
  return r;
}

bool isSize(const Dim &d, int64_t v) { return d.isKnown() && d.value() == v; }

Dim arithDim(Arith k, const Dim &a, const Dim &b) {
  if (a.isKnown() && b.isKnown()) {
    auto r = arithSizes(k, a.value(), b.value());
    return r ? Dim(*r) : Dim::unknown();
  }
  // Identities keep a symbol: N + 0, N - 0, N * 1, N / 1.
  bool addLike = k == Arith::kAdd || k == Arith::kSub;
  int64_t identity = addLike ? 0 : 1;
  if (isSize(b, identity))
    return a;
  if ((k == Arith::kAdd || k == Arith::kMul) && isSize(a, identity))
    return b;
  return Dim::unknown();
}

/// Numeric broadcast, plus the symbolic value of an integer 0-D/1-D result when both operands
/// are known as dims.
template <Arith K> Status inferArith(InferContext &ctx) {
  DLC_RETURN_IF_ERROR((inferBroadcast<TC::kNumeric, Out::kSame>(ctx)));
  const TensorType &out = ctx.outputType(0);
  if (!isInteger(out.dtype) || !out.shape.isRanked() || out.shape.rank() > 1)
    return Status::ok();
  auto a = ctx.inputAsDims(0), b = ctx.inputAsDims(1);
  if (!a || !b || a->empty() || b->empty())
    return Status::ok();
  size_t n = std::max(a->size(), b->size());
  if ((a->size() != n && a->size() != 1) || (b->size() != n && b->size() != 1))
    return Status::ok();
  std::vector<Dim> dims;
  for (size_t i = 0; i < n; ++i)
    dims.push_back(arithDim(K, (*a)[a->size() == 1 ? 0 : i], (*b)[b->size() == 1 ? 0 : i]));
  ctx.setOutputShapeValue(0, std::move(dims));
  return Status::ok();
}

Status inferPow(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkInputDType(ctx, 0, TC::kNumeric));
  DLC_RETURN_IF_ERROR(checkInputDType(ctx, 1, TC::kNumeric));
  DLC_ASSIGN_OR_RETURN(Shape shape, broadcastInputs(ctx));
  ctx.setOutputType(0, TensorType(ctx.inputType(0).dtype, std::move(shape)));
  return Status::ok();
}

Status inferMod(InferContext &ctx) {
  int64_t fmod = ctx.node().getInt("fmod");
  if (fmod != 0 && fmod != 1)
    return ctx.error("attribute 'fmod' must be 0 or 1, got {}", fmod);
  DLC_RETURN_IF_ERROR((inferBroadcast<TC::kNumeric, Out::kSame>(ctx)));
  if (fmod == 0 && isFloat(ctx.outputType(0).dtype))
    return ctx.error("floating-point Mod requires fmod=1");
  return Status::ok();
}

Status inferBitShift(InferContext &ctx) {
  const std::string &dir = ctx.node().getString("direction");
  if (dir != "LEFT" && dir != "RIGHT")
    return ctx.error("attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"{}\"", dir);
  return inferBroadcast<TC::kUnsigned, Out::kSame>(ctx);
}

Status inferPRelu(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkInputDType(ctx, 0, TC::kNumeric));
  DLC_RETURN_IF_ERROR(commonDType(ctx, {0, 1}).status());
  DLC_RETURN_IF_ERROR(
      checkUnidirectional(ctx, ctx.inputType(1).shape, ctx.inputType(0).shape, "slope"));
  ctx.setOutputType(0, ctx.inputType(0));
  return Status::ok();
}

Status inferWhere(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkInputDType(ctx, 0, TC::kBool));
  DLC_ASSIGN_OR_RETURN(DType dtype, commonDType(ctx, {1, 2}));
  DLC_ASSIGN_OR_RETURN(Shape shape, broadcastInputs(ctx));
  ctx.setOutputType(0, TensorType(dtype, std::move(shape)));
  return Status::ok();
}

Status inferClip(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkInputDType(ctx, 0, TC::kNumeric));
  DLC_RETURN_IF_ERROR(commonDType(ctx, {0, 1, 2}).status());
  for (int i : {1, 2}) {
    if (!ctx.hasInput(i))
      continue;
    auto n = ctx.inputType(i).shape.numElements();
    if (n && *n != 1)
      return ctx.error("input {} ({}) must be a scalar, got shape {}", i, i == 1 ? "min" : "max",
                       ctx.inputType(i).shape.str());
  }
  ctx.setOutputType(0, ctx.inputType(0));
  return Status::ok();
}

// --- Casts ------------------------------------------------------------------------------------

Status inferCast(InferContext &ctx) {
  DType to = ctx.node().getDType("to");
  if (to == DType::kUnknown)
    return ctx.error("attribute 'to' must be a known dtype");
  ctx.setOutputType(0, TensorType(to, ctx.inputType(0).shape));
  if (isInteger(to) && isInteger(ctx.inputType(0).dtype))
    if (auto dims = ctx.inputAsDims(0))
      ctx.setOutputShapeValue(0, std::move(*dims));
  return Status::ok();
}

Status inferCastLike(InferContext &ctx) {
  ctx.setOutputType(0, TensorType(ctx.inputType(1).dtype, ctx.inputType(0).shape));
  return Status::ok();
}

// --- Rows -------------------------------------------------------------------------------------

OpDef unary(Op op, InferFn infer, std::vector<AttrSpec> attrs = {}) {
  OpDef d;
  d.op = op;
  d.fusion = FusionKind::kElementwise;
  d.attrs = std::move(attrs);
  d.infer = infer;
  return d;
}

OpDef nary(Op op, int minIn, int maxIn, InferFn infer, std::vector<AttrSpec> attrs = {}) {
  OpDef d;
  d.op = op;
  d.minInputs = minIn;
  d.maxInputs = maxIn;
  d.fusion = FusionKind::kBroadcast;
  d.attrs = std::move(attrs);
  d.infer = infer;
  return d;
}

OpDef binary(Op op, InferFn infer) { return nary(op, 2, 2, infer); }

} // namespace

std::vector<OpDef> elementwiseOps() {
  constexpr auto kFloat = inferUnary<TC::kFloat>;
  constexpr auto kNumeric = inferUnary<TC::kNumeric>;
  constexpr auto kSigned = inferUnary<TC::kSignedNumeric>;
  constexpr auto kArithmetic = inferBroadcast<TC::kNumeric, Out::kSame>;
  constexpr auto kCompare = inferBroadcast<TC::kNumeric, Out::kBool>;
  constexpr auto kLogic = inferBroadcast<TC::kBool, Out::kBool>;
  constexpr auto kBitwise = inferBroadcast<TC::kInteger, Out::kSame>;
  constexpr auto kFloatN = inferBroadcast<TC::kFloat, Out::kSame>;
  const auto alpha = [](float v) { return std::vector<AttrSpec>{floatAttr("alpha", v)}; };
  return {
      unary(Op::kAbs, kNumeric, {}),
      unary(Op::kAcos, kFloat, {}),
      unary(Op::kAcosh, kFloat, {}),
      binary(Op::kAdd, inferArith<Arith::kAdd>),
      binary(Op::kAnd, kLogic),
      unary(Op::kAsin, kFloat, {}),
      unary(Op::kAsinh, kFloat, {}),
      unary(Op::kAtan, kFloat, {}),
      unary(Op::kAtanh, kFloat, {}),
      nary(Op::kBitShift, 2, 2, inferBitShift, {requiredAttr("direction", AttrKind::kString)}),
      binary(Op::kBitwiseAnd, kBitwise),
      unary(Op::kBitwiseNot, inferUnary<TC::kInteger>, {}),
      binary(Op::kBitwiseOr, kBitwise),
      binary(Op::kBitwiseXor, kBitwise),
      unary(Op::kCast, inferCast, {requiredAttr("to", AttrKind::kDType), intAttr("saturate", 1)}),
      nary(Op::kCastLike, 2, 2, inferCastLike, {intAttr("saturate", 1)}),
      unary(Op::kCeil, kFloat, {}),
      unary(Op::kCelu, kFloat, alpha(1.0f)),
      nary(Op::kClip, 1, 3, inferClip, {}),
      unary(Op::kCos, kFloat, {}),
      unary(Op::kCosh, kFloat, {}),
      binary(Op::kDiv, inferArith<Arith::kDiv>),
      unary(Op::kElu, kFloat, alpha(1.0f)),
      binary(Op::kEqual, inferBroadcast<TC::kAny, Out::kBool>),
      unary(Op::kErf, kNumeric, {}),
      unary(Op::kExp, kFloat, {}),
      unary(Op::kFloor, kFloat, {}),
      unary(Op::kGelu, inferGelu, {stringAttr("approximate", "none")}),
      binary(Op::kGreater, kCompare),
      binary(Op::kGreaterOrEqual, kCompare),
      unary(Op::kHardSigmoid, kFloat, {floatAttr("alpha", 0.2f), floatAttr("beta", 0.5f)}),
      unary(Op::kHardSwish, kFloat, {}),
      unary(Op::kIsInf, inferPredicate<TC::kFloat>,
            {intAttr("detect_negative", 1), intAttr("detect_positive", 1)}),
      unary(Op::kIsNaN, inferPredicate<TC::kFloat>, {}),
      unary(Op::kLeakyRelu, kFloat, alpha(0.01f)),
      binary(Op::kLess, kCompare),
      binary(Op::kLessOrEqual, kCompare),
      unary(Op::kLog, kFloat, {}),
      nary(Op::kMax, 1, -1, kArithmetic, {}),
      nary(Op::kMean, 1, -1, kFloatN, {}),
      nary(Op::kMin, 1, -1, kArithmetic, {}),
      unary(Op::kMish, kFloat, {}),
      nary(Op::kMod, 2, 2, inferMod, {intAttr("fmod", 0)}),
      binary(Op::kMul, inferArith<Arith::kMul>),
      unary(Op::kNeg, kSigned, {}),
      unary(Op::kNot, inferPredicate<TC::kBool>, {}),
      binary(Op::kOr, kLogic),
      binary(Op::kPRelu, inferPRelu),
      binary(Op::kPow, inferPow),
      unary(Op::kReciprocal, kFloat, {}),
      unary(Op::kRelu, kSigned, {}),
      unary(Op::kRound, kFloat, {}),
      unary(Op::kSelu, kFloat,
            {floatAttr("alpha", 1.67326319217681884765625f),
             floatAttr("gamma", 1.05070102214813232421875f)}),
      unary(Op::kShrink, kNumeric, {floatAttr("bias", 0.0f), floatAttr("lambd", 0.5f)}),
      unary(Op::kSigmoid, kFloat, {}),
      unary(Op::kSign, kNumeric, {}),
      unary(Op::kSin, kFloat, {}),
      unary(Op::kSinh, kFloat, {}),
      unary(Op::kSoftplus, kFloat, {}),
      unary(Op::kSoftsign, kFloat, {}),
      unary(Op::kSqrt, kFloat, {}),
      binary(Op::kSub, inferArith<Arith::kSub>),
      nary(Op::kSum, 1, -1, kFloatN, {}),
      unary(Op::kTan, kFloat, {}),
      unary(Op::kTanh, kFloat, {}),
      unary(Op::kThresholdedRelu, kFloat, alpha(1.0f)),
      nary(Op::kWhere, 3, 3, inferWhere, {}),
      binary(Op::kXor, kLogic),
  };
}

} // namespace dlc::ops
