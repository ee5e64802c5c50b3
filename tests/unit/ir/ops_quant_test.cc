// Shape inference of the quantization family.
#include "tests/unit/ir/op_infer_test_util.h"

namespace dlc::optest {
namespace {

using Quant = OpTest;

TEST_F(Quant, QuantizeLinearDtypeComesFromZeroPoint) {
  EXPECT_EQ(infer(Op::kQuantizeLinear, {in("f32[N,3]"), in("f32[]"), in("i8[]")}).type(),
            "i8[N,3]");
  EXPECT_EQ(infer(Op::kQuantizeLinear, {in("f32[N,3]"), in("f32[]")}).type(), "u8[N,3]");
  EXPECT_EQ(
      infer(Op::kQuantizeLinear, {in("f32[N,3]"), in("f32[]")}, {{"output_dtype", DType::kI16}})
          .type(),
      "i16[N,3]");
  EXPECT_EQ(infer(Op::kQuantizeLinear, {in("f32[N,3]"), in("f32[]"), in("u8[]")},
                  {{"output_dtype", DType::kI8}})
                .status.message(),
            "node 'n' (QuantizeLinear): output_dtype i8 does not match y_zero_point's dtype u8");
}

TEST_F(Quant, PerAxisScaleMustMatchTheAxis) {
  EXPECT_EQ(infer(Op::kQuantizeLinear, {in("f32[N,3,8,8]"), in("f32[3]"), in("u8[3]")}).type(),
            "u8[N,3,8,8]");
  EXPECT_EQ(infer(Op::kQuantizeLinear, {in("f32[N,3,8,8]"), in("f32[4]")}).status.message(),
            "node 'n' (QuantizeLinear): y_scale has 4 elements but axis 1 of x has size 3");
  EXPECT_EQ(
      infer(Op::kDequantizeLinear, {in("i8[64,3]"), in("f32[64]")}, {{"axis", 2}}).status.message(),
      "node 'n' (DequantizeLinear): axis 2 is out of range for rank 2");
}

TEST_F(Quant, DequantizeLinearGivesTheScaleDtype) {
  EXPECT_EQ(infer(Op::kDequantizeLinear, {in("i8[N,3]"), in("f32[]"), in("i8[]")}).type(),
            "f32[N,3]");
  EXPECT_EQ(infer(Op::kDequantizeLinear, {in("u8[N,3]"), in("f16[]")}).type(), "f16[N,3]");
  EXPECT_EQ(infer(Op::kDequantizeLinear, {in("i32[N]"), in("f32[]")}).type(), "f32[N]");
  EXPECT_EQ(infer(Op::kDequantizeLinear, {in("u8[N]"), in("f32[]"), in("i8[]")}).status.message(),
            "node 'n' (DequantizeLinear): x_zero_point has dtype i8, but x has dtype u8");
}

TEST_F(Quant, DynamicQuantizeLinear) {
  auto r = infer(Op::kDynamicQuantizeLinear, {in("f32[N,3]")}, {}, {}, 3);
  ASSERT_TRUE(r.status.isOk()) << r.status.message();
  EXPECT_EQ(r.type(0), "u8[N,3]");
  EXPECT_EQ(r.type(1), "f32[]");
  EXPECT_EQ(r.type(2), "u8[]");
}

class QLinearConv : public OpTest {
protected:
  InferResult run(const char *x, const char *w, AttrMap attrs = {}) {
    return infer(
        Op::kQLinearConv,
        {in(x), in("f32[]"), in("u8[]"), in(w), in("f32[]"), in("i8[]"), in("f32[]"), in("u8[]")},
        std::move(attrs));
  }
};

TEST_F(QLinearConv, OutputSizes) {
  EXPECT_EQ(
      run("u8[N,3,224,224]", "i8[64,3,7,7]",
          {{"strides", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{3, 3, 3, 3}}})
          .type(),
      "u8[N,64,112,112]");
  EXPECT_EQ(run("u8[1,8,10]", "i8[4,8,3]", {{"dilations", std::vector<int64_t>{2}}}).type(),
            "u8[1,4,6]");
  EXPECT_EQ(run("u8[N,3,H,W]", "i8[16,3,1,1]").type(), "u8[N,16,H,W]");
  EXPECT_EQ(run("u8[N,3,H,W]", "i8[16,3,3,3]").type(), "u8[N,16,?,?]");
  EXPECT_EQ(run("u8[N,3,H,15]", "i8[16,3,3,3]",
                {{"auto_pad", "SAME_UPPER"}, {"strides", std::vector<int64_t>{1, 2}}})
                .type(),
            "u8[N,16,H,8]");
  EXPECT_EQ(run("u8[N,3,9,9]", "i8[16,3,3,3]", {{"auto_pad", "VALID"}}).type(), "u8[N,16,7,7]");
  EXPECT_EQ(run("u8[N,8,9,9]", "i8[16,2,3,3]", {{"group", 4}}).type(), "u8[N,16,7,7]");
}

TEST_F(QLinearConv, Errors) {
  EXPECT_EQ(run("u8[N,4,9,9]", "i8[16,3,3,3]").status.message(),
            "node 'n' (QLinearConv): x has 4 channels, but w expects 3 x group 1");
  EXPECT_EQ(run("u8[N,3,2,2]", "i8[16,3,3,3]").status.message(),
            "node 'n' (QLinearConv): spatial dim 0: input size 2 with padding 0 is smaller than "
            "the kernel extent 3");
  EXPECT_EQ(
      run("u8[N,3,9,9]", "i8[16,3,3,3]", {{"strides", std::vector<int64_t>{1}}}).status.message(),
      "node 'n' (QLinearConv): attribute 'strides' has 1 values, expected 2");
  EXPECT_EQ(run("u8[N,3,9]", "i8[16,3,3,3]").status.message(),
            "node 'n' (QLinearConv): inputs x [N,3,9] and w [16,3,3,3] must have the same rank");
  EXPECT_EQ(run("u8[N,3,9,9]", "i8[16,3,3,3]", {{"auto_pad", "SAME"}}).status.message(),
            "node 'n' (QLinearConv): attribute 'auto_pad' has unknown value \"SAME\"");
}

} // namespace
} // namespace dlc::optest
