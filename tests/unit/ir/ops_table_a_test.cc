// The op-table rows of the elementwise, reduction, linalg and quantization families exist,
// name their op, and have shape inference.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ir/op.h"

namespace dlc {
namespace {

const char *const kFamilyOps[] = {
    // elementwise
    "Abs", "Acos", "Acosh", "Add", "And", "Asin", "Asinh", "Atan", "Atanh", "BitShift",
    "BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor", "Cast", "CastLike", "Ceil", "Celu",
    "Clip", "Cos", "Cosh", "Div", "Elu", "Equal", "Erf", "Exp", "Floor", "Gelu", "Greater",
    "GreaterOrEqual", "HardSigmoid", "HardSwish", "IsInf", "IsNaN", "LeakyRelu", "Less",
    "LessOrEqual", "Log", "Max", "Mean", "Min", "Mish", "Mod", "Mul", "Neg", "Not", "Or", "PRelu",
    "Pow", "Reciprocal", "Relu", "Round", "Selu", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh",
    "Softplus", "Softsign", "Sqrt", "Sub", "Sum", "Tan", "Tanh", "ThresholdedRelu", "Where", "Xor",
    // reduction
    "ArgMax", "ArgMin", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
    "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare", "Softmax",
    "LogSoftmax", "Hardmax", "TopK", "CumSum",
    // linalg
    "MatMul", "MatMulInteger", "Gemm", "Einsum", "Det", "QLinearMatMul",
    // quantization
    "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv"};

TEST(OpTableFamiliesA, EveryOpHasARowWithInference) {
  std::vector<std::string> missing;
  for (const char *name : kFamilyOps) {
    auto op = opFromOnnx(name);
    ASSERT_TRUE(op.has_value()) << name << " is not in ir/ops.def";
    const OpDef &def = opDef(*op);
    EXPECT_EQ(def.op, *op) << name;
    if (!def.infer)
      missing.push_back(name);
    EXPECT_GE(def.minInputs, 1) << name;
    EXPECT_TRUE(def.maxInputs == -1 || def.maxInputs >= def.minInputs) << name;
    EXPECT_GE(def.minOutputs, 1) << name;
  }
  EXPECT_TRUE(missing.empty()) << "no inference: " << ::testing::PrintToString(missing);
  EXPECT_EQ(sizeof(kFamilyOps) / sizeof(kFamilyOps[0]), 95u);
}

TEST(OpTableFamiliesA, AttributeSchemasHaveOnnxDefaults) {
  const OpDef &selu = opDef(Op::kSelu);
  ASSERT_NE(selu.findAttr("alpha"), nullptr);
  EXPECT_FLOAT_EQ(selu.findAttr("alpha")->defaultValue->f(), 1.67326319217681884765625f);
  EXPECT_FLOAT_EQ(selu.findAttr("gamma")->defaultValue->f(), 1.05070102214813232421875f);
  const OpDef &q = opDef(Op::kQuantizeLinear);
  EXPECT_EQ(q.findAttr("axis")->defaultValue->i(), 1);
  EXPECT_EQ(q.findAttr("saturate")->defaultValue->i(), 1);
  EXPECT_FALSE(q.findAttr("output_dtype")->defaultValue.has_value());
  EXPECT_EQ(q.findAttr("output_dtype")->kind, AttrKind::kDType);
  EXPECT_TRUE(opDef(Op::kEinsum).findAttr("equation")->required);
  EXPECT_EQ(opDef(Op::kQLinearConv).findAttr("auto_pad")->defaultValue->s(), "NOTSET");
  EXPECT_FLOAT_EQ(opDef(Op::kShrink).findAttr("lambd")->defaultValue->f(), 0.5f);
  EXPECT_EQ(opDef(Op::kIsInf).findAttr("detect_negative")->defaultValue->i(), 1);
}

} // namespace
} // namespace dlc
