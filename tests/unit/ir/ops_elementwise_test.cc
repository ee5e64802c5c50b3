// Shape inference of the elementwise family.
#include "tests/unit/ir/op_infer_test_util.h"

namespace dlc::optest {
namespace {

using Elementwise = OpTest;

TEST_F(Elementwise, UnaryKeepsTypeIncludingSymbols) {
  EXPECT_EQ(infer(Op::kRelu, {in("f32[N,3,?]")}).type(), "f32[N,3,?]");
  EXPECT_EQ(infer(Op::kAbs, {in("i64[*]")}).type(), "i64[*]");
  EXPECT_EQ(infer(Op::kTanh, {in("f16[]")}).type(), "f16[]");
  EXPECT_EQ(infer(Op::kExp, {in("?")}).type(), "?");
}

TEST_F(Elementwise, UnaryRejectsWrongDtypeClass) {
  EXPECT_EQ(infer(Op::kSqrt, {in("i64[3]")}).status.message(),
            "node 'n' (Sqrt): input 0 has dtype i64, expected a float type");
  EXPECT_EQ(infer(Op::kNeg, {in("u8[3]")}).status.message(),
            "node 'n' (Neg): input 0 has dtype u8, expected a signed numeric type");
  EXPECT_EQ(infer(Op::kBitwiseNot, {in("f32[3]")}).status.message(),
            "node 'n' (BitwiseNot): input 0 has dtype f32, expected an integer type");
}

TEST_F(Elementwise, PredicatesGiveBool) {
  EXPECT_EQ(infer(Op::kIsNaN, {in("f32[N,2]")}).type(), "bool[N,2]");
  EXPECT_EQ(infer(Op::kIsInf, {in("f64[*]")}).type(), "bool[*]");
  EXPECT_EQ(infer(Op::kNot, {in("bool[4]")}).type(), "bool[4]");
  EXPECT_EQ(infer(Op::kNot, {in("i32[4]")}).status.message(),
            "node 'n' (Not): input 0 has dtype i32, expected bool");
}

TEST_F(Elementwise, BinaryBroadcastsSymbolicDims) {
  EXPECT_EQ(infer(Op::kAdd, {in("f32[N,1,4]"), in("f32[3,1]")}).type(), "f32[N,3,4]");
  EXPECT_EQ(infer(Op::kMul, {in("f32[N,C]"), in("f32[N,1]")}).type(), "f32[N,C]");
  EXPECT_EQ(infer(Op::kSub, {in("f32[N]"), in("f32[5]")}).type(), "f32[5]");
  EXPECT_EQ(infer(Op::kDiv, {in("f32[N]"), in("f32[M]")}).type(), "f32[?]");
  EXPECT_EQ(infer(Op::kAdd, {in("f32[*]"), in("f32[3]")}).type(), "f32[*]");
  EXPECT_EQ(infer(Op::kPow, {in("f32[2,3]"), in("i64[]")}).type(), "f32[2,3]");
}

TEST_F(Elementwise, BroadcastErrorNamesShapes) {
  EXPECT_EQ(infer(Op::kAdd, {in("f32[2,3]"), in("f32[4]")}).status.message(),
            "node 'n' (Add): shapes [2,3] and [4] cannot be broadcast (dim 3 vs 4)");
}

TEST_F(Elementwise, BinaryRequiresOneDtype) {
  EXPECT_EQ(infer(Op::kAdd, {in("f32[2]"), in("i64[2]")}).status.message(),
            "node 'n' (Add): inputs 0 and 1 have different dtypes (f32 vs i64)");
  // An unknown dtype does not conflict; the known one wins.
  EXPECT_EQ(infer(Op::kAdd, {in("?"), in("i64[2]")}).type(), "i64[*]");
}

TEST_F(Elementwise, ComparisonsAndLogicGiveBool) {
  EXPECT_EQ(infer(Op::kEqual, {in("i64[N]"), in("i64[]")}).type(), "bool[N]");
  EXPECT_EQ(infer(Op::kEqual, {in("bool[2]"), in("bool[2]")}).type(), "bool[2]");
  EXPECT_EQ(infer(Op::kGreaterOrEqual, {in("f32[2,1]"), in("f32[3]")}).type(), "bool[2,3]");
  EXPECT_EQ(infer(Op::kXor, {in("bool[2]"), in("bool[1]")}).type(), "bool[2]");
  EXPECT_EQ(infer(Op::kAnd, {in("f32[2]"), in("f32[2]")}).status.message(),
            "node 'n' (And): input 0 has dtype f32, expected bool");
  EXPECT_EQ(
      infer(Op::kBitShift, {in("i32[2]"), in("i32[2]")}, {{"direction", "LEFT"}}).status.message(),
      "node 'n' (BitShift): input 0 has dtype i32, expected an unsigned integer type");
}

TEST_F(Elementwise, VariadicBroadcastsAll) {
  EXPECT_EQ(infer(Op::kSum, {in("f32[N,1]"), in("f32[1,4]"), in("f32[]")}).type(), "f32[N,4]");
  EXPECT_EQ(infer(Op::kMax, {in("i32[3]")}).type(), "i32[3]");
  EXPECT_EQ(infer(Op::kMean, {in("f32[2]"), in("f32[3]")}).status.message(),
            "node 'n' (Mean): shapes [2] and [3] cannot be broadcast (dim 2 vs 3)");
}

TEST_F(Elementwise, WhereBroadcastsThreeInputs) {
  EXPECT_EQ(infer(Op::kWhere, {in("bool[N,1]"), in("i64[1,4]"), in("i64[]")}).type(), "i64[N,4]");
  EXPECT_EQ(infer(Op::kWhere, {in("f32[2]"), in("i64[2]"), in("i64[2]")}).status.message(),
            "node 'n' (Where): input 0 has dtype f32, expected bool");
  EXPECT_EQ(infer(Op::kWhere, {in("bool[2]"), in("i64[2]"), in("f32[2]")}).status.message(),
            "node 'n' (Where): inputs 1 and 2 have different dtypes (i64 vs f32)");
}

TEST_F(Elementwise, ClipTakesScalarBounds) {
  EXPECT_EQ(infer(Op::kClip, {in("f32[N,3]"), in("f32[]"), in("f32[]")}).type(), "f32[N,3]");
  EXPECT_EQ(infer(Op::kClip, {in("f32[N,3]"), nullptr, in("f32[]")}).type(), "f32[N,3]");
  EXPECT_EQ(infer(Op::kClip, {in("f32[N]")}).type(), "f32[N]");
  EXPECT_EQ(infer(Op::kClip, {in("f32[N]"), in("f32[2]")}).status.message(),
            "node 'n' (Clip): input 1 (min) must be a scalar, got shape [2]");
}

TEST_F(Elementwise, PReluSlopeBroadcastsOneWay) {
  EXPECT_EQ(infer(Op::kPRelu, {in("f32[N,3,H,W]"), in("f32[3,1,1]")}).type(), "f32[N,3,H,W]");
  EXPECT_EQ(infer(Op::kPRelu, {in("f32[N,3]"), in("f32[5]")}).status.message(),
            "node 'n' (PRelu): slope of shape [5] cannot be broadcast to [N,3]");
  EXPECT_EQ(infer(Op::kPRelu, {in("f32[3]"), in("f32[2,3]")}).status.message(),
            "node 'n' (PRelu): slope of shape [2,3] cannot be broadcast to [3]");
}

TEST_F(Elementwise, CastAndCastLike) {
  EXPECT_EQ(infer(Op::kCast, {in("f32[N,3]")}, {{"to", DType::kI64}}).type(), "i64[N,3]");
  EXPECT_EQ(infer(Op::kCastLike, {in("f32[N,3]"), in("f16[]")}).type(), "f16[N,3]");
}

TEST_F(Elementwise, CastPropagatesShapeValues) {
  auto r =
      infer(Op::kCast, {in("i64[2]")}, {{"to", DType::kI32}}, {{0, dims({Dim::symbol("N"), 3})}});
  ASSERT_TRUE(r.status.isOk()) << r.status.message();
  EXPECT_EQ(r.shapeValue(), "[N,3]");
  // Casting to a float is not shape arithmetic.
  auto f =
      infer(Op::kCast, {in("i64[2]")}, {{"to", DType::kF32}}, {{0, dims({Dim::symbol("N"), 3})}});
  EXPECT_EQ(f.shapeValue(), "none");
}

TEST_F(Elementwise, ArithmeticOnShapeValues) {
  std::map<int, std::vector<Dim>> shape = {{0, dims({Dim::symbol("N"), 3, 4})}};
  auto mul = infer(Op::kMul, {in("i64[3]"), constI64({1, 2, 2})}, {}, shape);
  ASSERT_TRUE(mul.status.isOk()) << mul.status.message();
  EXPECT_EQ(mul.type(), "i64[3]");
  EXPECT_EQ(mul.shapeValue(), "[N,6,8]");
  EXPECT_EQ(infer(Op::kAdd, {in("i64[3]"), constI64({0})}, {}, shape).shapeValue(), "[N,3,4]");
  EXPECT_EQ(infer(Op::kSub, {in("i64[3]"), constI64({1})}, {}, shape).shapeValue(), "[?,2,3]");
  EXPECT_EQ(infer(Op::kDiv, {in("i64[3]"), constI64({2})}, {}, shape).shapeValue(), "[?,1,2]");
  // Division by zero and negative results are not dims.
  EXPECT_EQ(infer(Op::kDiv, {in("i64[3]"), constI64({0})}, {}, shape).shapeValue(), "[?,?,?]");
  EXPECT_EQ(infer(Op::kSub, {constI64({1}), in("i64[3]")}, {}, {{1, dims({2, 1, 0})}}).shapeValue(),
            "[?,0,1]");
  // Both operands must be known as dims; floats are never shape values.
  EXPECT_EQ(infer(Op::kMul, {in("i64[3]"), in("i64[3]")}, {}, shape).shapeValue(), "none");
  EXPECT_EQ(infer(Op::kMul, {in("f32[3]"), in("f32[3]")}).shapeValue(), "none");
}

TEST_F(Elementwise, AttributeChecks) {
  EXPECT_EQ(infer(Op::kMod, {in("f32[2]"), in("f32[2]")}).status.message(),
            "node 'n' (Mod): floating-point Mod requires fmod=1");
  EXPECT_TRUE(infer(Op::kMod, {in("f32[2]"), in("f32[2]")}, {{"fmod", 1}}).status.isOk());
  EXPECT_EQ(
      infer(Op::kBitShift, {in("u8[2]"), in("u8[2]")}, {{"direction", "UP"}}).status.message(),
      "node 'n' (BitShift): attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"UP\"");
  EXPECT_EQ(infer(Op::kGelu, {in("f32[2]")}, {{"approximate", "erf"}}).status.message(),
            "node 'n' (Gelu): attribute 'approximate' must be \"none\" or \"tanh\", got \"erf\"");
}

TEST_F(Elementwise, SchemaIsCheckedBeforeInference) {
  EXPECT_EQ(infer(Op::kAdd, {in("f32[2]")}).status.message(),
            "node 'n' (Add): expects 2 inputs, got 1");
  EXPECT_EQ(
      infer(Op::kClip, {in("f32[2]"), in("f32[]"), in("f32[]"), in("f32[]")}).status.message(),
      "node 'n' (Clip): expects 1 to 3 inputs, got 4");
  EXPECT_EQ(infer(Op::kWhere, {in("bool[2]"), nullptr, in("f32[2]")}).status.message(),
            "node 'n' (Where): required input 1 is missing");
  EXPECT_EQ(infer(Op::kCast, {in("f32[2]")}).status.message(),
            "node 'n' (Cast): missing required attribute 'to'");
  EXPECT_EQ(infer(Op::kCast, {in("f32[2]")}, {{"to", 7}}).status.message(),
            "node 'n' (Cast): attribute 'to' is int, expected dtype");
  EXPECT_EQ(infer(Op::kRelu, {in("f32[2]")}, {}, {}, 2).status.message(),
            "node 'n' (Relu): expects 1 outputs, got 2");
}

TEST_F(Elementwise, DefaultsFollowOnnx) {
  Node *n = node(Op::kLeakyRelu, {in("f32[2]")});
  EXPECT_FLOAT_EQ(n->getFloat("alpha"), 0.01f);
  Node *h = node(Op::kHardSigmoid, {in("f32[2]")});
  EXPECT_FLOAT_EQ(h->getFloat("alpha"), 0.2f);
  EXPECT_FLOAT_EQ(h->getFloat("beta"), 0.5f);
  EXPECT_EQ(node(Op::kGelu, {in("f32[2]")})->getString("approximate"), "none");
  EXPECT_EQ(node(Op::kMod, {in("i32[2]"), in("i32[2]")})->getInt("fmod"), 0);
  EXPECT_EQ(node(Op::kCast, {in("i32[2]")})->getInt("saturate"), 1);
  EXPECT_EQ(opDef(Op::kCast).findAttr("to")->kind, AttrKind::kDType);
  EXPECT_EQ(opDef(Op::kSum).maxInputs, -1);
}

TEST_F(Elementwise, FusionKinds) {
  EXPECT_EQ(opDef(Op::kRelu).fusion, FusionKind::kElementwise);
  EXPECT_EQ(opDef(Op::kCast).fusion, FusionKind::kElementwise);
  EXPECT_EQ(opDef(Op::kAdd).fusion, FusionKind::kBroadcast);
  EXPECT_EQ(opDef(Op::kWhere).fusion, FusionKind::kBroadcast);
  EXPECT_EQ(opDef(Op::kPRelu).fusion, FusionKind::kBroadcast);
  EXPECT_EQ(opDef(Op::kClip).fusion, FusionKind::kBroadcast);
  EXPECT_EQ(opDef(Op::kMax).fusion, FusionKind::kBroadcast);
}

} // namespace
} // namespace dlc::optest
