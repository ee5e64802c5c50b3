// Shape inference of the linear-algebra family.
#include "ir/ops/einsum.h"
#include "tests/unit/ir/op_infer_test_util.h"

namespace dlc::optest {
namespace {

using Linalg = OpTest;

TEST_F(Linalg, MatMul2D) {
  EXPECT_EQ(infer(Op::kMatMul, {in("f32[M,K]"), in("f32[K,N]")}).type(), "f32[M,N]");
  EXPECT_EQ(infer(Op::kMatMul, {in("f32[2,3]"), in("f32[3,4]")}).type(), "f32[2,4]");
  EXPECT_EQ(infer(Op::kMatMul, {in("f32[2,?]"), in("f32[3,4]")}).type(), "f32[2,4]");
}

TEST_F(Linalg, MatMulOneDimensionalOperands) {
  EXPECT_EQ(infer(Op::kMatMul, {in("f32[3]"), in("f32[3]")}).type(), "f32[]");
  EXPECT_EQ(infer(Op::kMatMul, {in("f32[3]"), in("f32[B,3,4]")}).type(), "f32[B,4]");
  EXPECT_EQ(infer(Op::kMatMul, {in("f32[B,2,3]"), in("f32[3]")}).type(), "f32[B,2]");
}

TEST_F(Linalg, MatMulBroadcastsBatchDims) {
  EXPECT_EQ(infer(Op::kMatMul, {in("f32[B,1,S,64]"), in("f32[12,64,T]")}).type(), "f32[B,12,S,T]");
  EXPECT_EQ(infer(Op::kMatMul, {in("f32[2,S,4]"), in("f32[3,4,5]")}).status.message(),
            "node 'n' (MatMul): batch dimensions of shapes [2,S,4] and [3,4,5] cannot be "
            "broadcast");
}

TEST_F(Linalg, MatMulErrors) {
  EXPECT_EQ(infer(Op::kMatMul, {in("f32[2,3]"), in("f32[4,5]")}).status.message(),
            "node 'n' (MatMul): inner dimensions differ: 3 vs 4 (shapes [2,3] and [4,5])");
  EXPECT_EQ(infer(Op::kMatMul, {in("f32[]"), in("f32[4,5]")}).status.message(),
            "node 'n' (MatMul): operands must have rank >= 1, got shapes [] and [4,5]");
  EXPECT_EQ(infer(Op::kMatMul, {in("f32[2,3]"), in("f16[3,5]")}).status.message(),
            "node 'n' (MatMul): inputs 0 and 1 have different dtypes (f32 vs f16)");
  EXPECT_EQ(infer(Op::kMatMul, {in("f32[*]"), in("f32[3,5]")}).type(), "f32[*]");
}

TEST_F(Linalg, IntegerAndQuantizedMatMul) {
  EXPECT_EQ(infer(Op::kMatMulInteger, {in("u8[N,3]"), in("i8[3,4]")}).type(), "i32[N,4]");
  EXPECT_EQ(
      infer(Op::kMatMulInteger, {in("u8[N,3]"), in("i8[3,4]"), in("i8[]")}).status.message(),
      "node 'n' (MatMulInteger): zero point (input 2) has dtype i8, but input 0 has dtype u8");
  EXPECT_EQ(infer(Op::kQLinearMatMul, {in("u8[N,3]"), in("f32[]"), in("u8[]"), in("i8[3,4]"),
                                       in("f32[]"), in("i8[]"), in("f32[]"), in("i8[]")})
                .type(),
            "i8[N,4]");
}

TEST_F(Linalg, Gemm) {
  EXPECT_EQ(infer(Op::kGemm, {in("f32[N,K]"), in("f32[K,M]"), in("f32[M]")}).type(), "f32[N,M]");
  EXPECT_EQ(
      infer(Op::kGemm, {in("f32[3,N]"), in("f32[5,3]")}, {{"transA", 1}, {"transB", 1}}).type(),
      "f32[N,5]");
  EXPECT_EQ(infer(Op::kGemm, {in("f32[*]"), in("f32[3,5]")}).type(), "f32[?,5]");
  EXPECT_EQ(infer(Op::kGemm, {in("f32[2,3,4]"), in("f32[4,5]")}).status.message(),
            "node 'n' (Gemm): input A must be 2-D, got shape [2,3,4]");
  EXPECT_EQ(infer(Op::kGemm, {in("f32[2,3]"), in("f32[4,5]")}).status.message(),
            "node 'n' (Gemm): inner dimensions differ: 3 vs 4 (shapes [2,3] and [4,5])");
  EXPECT_EQ(infer(Op::kGemm, {in("f32[2,3]"), in("f32[3,5]"), in("f32[2,5,1]")}).status.message(),
            "node 'n' (Gemm): C of shape [2,5,1] cannot be broadcast to [2,5]");
  Node *n = node(Op::kGemm, {in("f32[2,3]"), in("f32[3,5]")});
  EXPECT_FLOAT_EQ(n->getFloat("alpha"), 1.0f);
  EXPECT_FLOAT_EQ(n->getFloat("beta"), 1.0f);
  EXPECT_EQ(n->getInt("transA"), 0);
}

class Einsum : public OpTest {
protected:
  InferResult run(std::string eq, std::vector<std::string> types) {
    std::vector<Value *> inputs;
    for (const auto &t : types)
      inputs.push_back(in(t));
    return infer(Op::kEinsum, std::move(inputs), {{"equation", std::move(eq)}});
  }
};

TEST_F(Einsum, ExplicitOutputs) {
  EXPECT_EQ(run("ij,jk->ik", {"f32[M,K]", "f32[K,N]"}).type(), "f32[M,N]");
  EXPECT_EQ(run("bij, bjk -> bik", {"f32[B,2,3]", "f32[B,3,4]"}).type(), "f32[B,2,4]");
  EXPECT_EQ(run("ij->ji", {"f32[2,3]"}).type(), "f32[3,2]");
  EXPECT_EQ(run("ii->i", {"f32[3,3]"}).type(), "f32[3]");
  EXPECT_EQ(run("ij->", {"f32[2,3]"}).type(), "f32[]");
  EXPECT_EQ(run("i,j->ij", {"f32[2]", "f32[?]"}).type(), "f32[2,?]");
}

TEST_F(Einsum, ImplicitOutputIsSortedSingleUseLabels) {
  EXPECT_EQ(run("ij,jk", {"f32[2,3]", "f32[3,4]"}).type(), "f32[2,4]");
  EXPECT_EQ(run("ba", {"f32[2,3]"}).type(), "f32[3,2]");
  EXPECT_EQ(run("ii", {"f32[3,3]"}).type(), "f32[]");
}

TEST_F(Einsum, Ellipsis) {
  EXPECT_EQ(run("...ij,...jk->...ik", {"f32[B,2,3]", "f32[3,4]"}).type(), "f32[B,2,4]");
  EXPECT_EQ(run("...ij,...jk->...ik", {"f32[5,1,2,3]", "f32[7,3,4]"}).type(), "f32[5,7,2,4]");
  EXPECT_EQ(run("i...j->j...i", {"f32[2,5,6,3]"}).type(), "f32[3,5,6,2]");
  EXPECT_EQ(run("...ij", {"f32[B,2,3]"}).type(), "f32[B,2,3]");
  EXPECT_EQ(run("...ij->ij", {"f32[2,3]"}).type(), "f32[2,3]"); // the ellipsis covers nothing
  EXPECT_EQ(run("...ij->...ji", {"f32[*]"}).type(), "f32[*]");
  EXPECT_EQ(run("...ij->ji", {"f32[*]"}).type(), "f32[?,?]");
}

TEST_F(Einsum, Errors) {
  EXPECT_EQ(run("ij,jk->ik", {"f32[2,3]", "f32[4,5]"}).status.message(),
            "node 'n' (Einsum): einsum label 'j' has sizes 3 and 4");
  EXPECT_EQ(run("ij,jk->ik", {"f32[2,3]"}).status.message(),
            "node 'n' (Einsum): einsum equation 'ij,jk->ik' has 2 input terms for 1 inputs");
  EXPECT_EQ(run("ij->ik", {"f32[2,3]"}).status.message(),
            "node 'n' (Einsum): einsum output label 'k' does not appear in any input");
  EXPECT_EQ(run("ij->ii", {"f32[2,3]"}).status.message(),
            "node 'n' (Einsum): einsum label 'i' appears more than once in the output");
  EXPECT_EQ(run("i2->i", {"f32[2,3]"}).status.message(),
            "node 'n' (Einsum): invalid character '2' in einsum equation 'i2->i'");
  EXPECT_EQ(run("ijk->i", {"f32[2,3]"}).status.message(),
            "node 'n' (Einsum): einsum input 0 has rank 2 but its term 'ijk' has 3 labels");
  EXPECT_EQ(run("...i..->i", {"f32[2,3]"}).status.message(),
            "node 'n' (Einsum): malformed ellipsis in einsum equation '...i..->i'");
  EXPECT_EQ(run("...ij,...jk->...ik", {"f32[2,2,3]", "f32[5,3,4]"}).status.message(),
            "node 'n' (Einsum): einsum input 1: ellipsis dims [5] do not broadcast with [2]");
  // Like numpy: dims under an ellipsis cannot silently disappear from the output.
  EXPECT_EQ(run("...ij->ij", {"f32[B,2,3]"}).status.message(),
            "node 'n' (Einsum): einsum output has no '...' but the inputs' ellipsis covers 1 dims");
}

TEST(EinsumParse, TermsAndEllipsisPositions) {
  auto eq = ops::parseEinsum("a...b, c -> ...");
  ASSERT_TRUE(eq.hasValue()) << eq.status().message();
  ASSERT_EQ(eq->inputs.size(), 2u);
  EXPECT_EQ(eq->inputs[0].labels, "ab");
  EXPECT_EQ(eq->inputs[0].ellipsis, 1);
  EXPECT_EQ(eq->inputs[1].labels, "c");
  EXPECT_EQ(eq->inputs[1].ellipsis, -1);
  ASSERT_TRUE(eq->output.has_value());
  EXPECT_EQ(eq->output->labels, "");
  EXPECT_EQ(eq->output->ellipsis, 0);
  EXPECT_FALSE(ops::parseEinsum("ab")->output.has_value());
}

TEST_F(Linalg, Det) {
  EXPECT_EQ(infer(Op::kDet, {in("f32[N,3,3]")}).type(), "f32[N]");
  EXPECT_EQ(infer(Op::kDet, {in("f32[S,S]")}).type(), "f32[]");
  EXPECT_EQ(infer(Op::kDet, {in("f32[2,3]")}).status.message(),
            "node 'n' (Det): input matrices must be square, got shape [2,3]");
  EXPECT_EQ(infer(Op::kDet, {in("f32[3]")}).status.message(),
            "node 'n' (Det): input must have rank >= 2, got shape [3]");
}

TEST_F(Linalg, FusionKinds) {
  EXPECT_EQ(opDef(Op::kMatMul).fusion, FusionKind::kOutFusable);
  EXPECT_EQ(opDef(Op::kGemm).fusion, FusionKind::kOutFusable);
  EXPECT_EQ(opDef(Op::kEinsum).fusion, FusionKind::kOpaque);
}

TEST_F(Linalg, AttentionFourDimensional) {
  // [B, H, S, D] operands; K and V may have another sequence length, V another head size.
  EXPECT_EQ(
      infer(Op::kAttention, {in("f16[B,12,S,64]"), in("f16[B,12,T,64]"), in("f16[B,12,T,32]")})
          .type(),
      "f16[B,12,S,32]");
  // Grouped-query heads, a mask that broadcasts over batch and heads.
  EXPECT_EQ(infer(Op::kAttention,
                  {in("f32[2,8,5,16]"), in("f32[2,2,7,16]"), in("f32[2,2,7,16]"), in("bool[5,7]")})
                .type(),
            "f32[2,8,5,16]");
  // dlc's views: BERT's [B, S, H, D] buffers read as [B, H, S, D], Y stored back as [B, S, H, D].
  const std::vector<int64_t> heads = {0, 2, 1, 3};
  EXPECT_EQ(infer(Op::kAttention,
                  {in("f16[2,128,12,64]"), in("f16[2,128,12,64]"), in("f16[2,128,12,64]")},
                  {{"perm_q", Attribute(heads)},
                   {"perm_k", Attribute(heads)},
                   {"perm_v", Attribute(heads)},
                   {"perm_y", Attribute(heads)}})
                .type(),
            "f16[2,128,12,64]");
}

TEST_F(Linalg, AttentionStridedOperands) {
  // Q, K and V read out of one packed projection [S, B, 3 * H * D] (ViT's): strided operands
  // of any stored rank, Y of the 4-D form.
  using V = std::vector<int64_t>;
  auto strided = [](const char *x, V sizes, V strides, int64_t offset) {
    return AttrMap{{fmt::format("sizes_{}", x), Attribute(sizes)},
                   {fmt::format("strides_{}", x), Attribute(strides)},
                   {fmt::format("offset_{}", x), Attribute(offset)}};
  };
  auto attrs = [&](int64_t vOffset) {
    auto a = strided("q", {2, 12, 197, 64}, {2304, 64, 4608, 1}, 0);
    a.merge(strided("k", {2, 12, 197, 64}, {2304, 64, 4608, 1}, 768));
    a.merge(strided("v", {2, 12, 197, 64}, {2304, 64, 4608, 1}, vOffset));
    a.emplace("perm_y", Attribute(V{2, 0, 1, 3}));
    return a;
  };
  const std::vector<std::string> qkv = {"f16[197,2,2304]", "f16[197,2,2304]", "f16[197,2,2304]"};
  EXPECT_EQ(infer(Op::kAttention, {in(qkv[0]), in(qkv[1]), in(qkv[2])}, attrs(1536)).type(),
            "f16[197,2,12,64]");
  // V one element further reaches past the buffer.
  EXPECT_EQ(
      infer(Op::kAttention, {in(qkv[0]), in(qkv[1]), in(qkv[2])}, attrs(1537)).status.message(),
      "node 'n' (Attention): the view sizes_v [2, 12, 197, 64] at strides_v [2304, 64, "
      "4608, 1] from element 1537 reaches element 907776 of a buffer of 907776 "
      "([197,2,2304])");
  // A strided operand takes no perm, and sizes come with strides.
  auto withPerm = strided("q", {2, 4, 5, 16}, {640, 16, 64, 1}, 0);
  withPerm.emplace("perm_q", Attribute(V{0, 2, 1, 3}));
  EXPECT_EQ(
      infer(Op::kAttention, {in("f32[1280]"), in("f32[2,4,5,16]"), in("f32[2,4,5,16]")}, withPerm)
          .status.message(),
      "node 'n' (Attention): a strided operand (strides_q) takes no perm_q");
  EXPECT_EQ(infer(Op::kAttention, {in("f32[1280]"), in("f32[2,4,5,16]"), in("f32[2,4,5,16]")},
                  {{"sizes_q", Attribute(V{2, 4, 5, 16})}})
                .status.message(),
            "node 'n' (Attention): sizes_q and strides_q give the 4 axes [B, H, S, D]; got [2, "
            "4, 5, 16] and []");
  // The other operands are then 4-D.
  EXPECT_EQ(infer(Op::kAttention, {in("f32[1280]"), in("f32[2,5,64]"), in("f32[2,5,64]")},
                  strided("q", {2, 4, 5, 16}, {640, 16, 64, 1}, 0))
                .status.message(),
            "node 'n' (Attention): Q, K and V must each be 4-D or strided, got shapes [1280], "
            "[2,5,64] and [2,5,64]");
}

TEST_F(Linalg, AttentionThreeDimensional) {
  // ONNX's 3-D form: [B, S, heads * head size], the heads from the attributes.
  EXPECT_EQ(infer(Op::kAttention, {in("f32[2,S,256]"), in("f32[2,T,128]"), in("f32[2,T,64]")},
                  {{"q_num_heads", Attribute(int64_t{4})}, {"kv_num_heads", Attribute(int64_t{2})}})
                .type(),
            "f32[2,S,128]");
  EXPECT_EQ(infer(Op::kAttention, {in("f32[2,S,256]"), in("f32[2,T,128]"), in("f32[2,T,64]")})
                .status.message(),
            "node 'n' (Attention): 3-D Q, K and V need the attributes q_num_heads and "
            "kv_num_heads");
  EXPECT_EQ(infer(Op::kAttention, {in("f32[2,S,250]"), in("f32[2,T,128]"), in("f32[2,T,64]")},
                  {{"q_num_heads", Attribute(int64_t{4})}, {"kv_num_heads", Attribute(int64_t{2})}})
                .status.message(),
            "node 'n' (Attention): Q's hidden size 250 is not a multiple of its 4 heads");
}

TEST_F(Linalg, AttentionErrors) {
  EXPECT_EQ(infer(Op::kAttention, {in("f32[2,4,5,16]"), in("f32[2,4,7,8]"), in("f32[2,4,7,8]")})
                .status.message(),
            "node 'n' (Attention): the head sizes of Q and K differ: 16 vs 8 (Q [2,4,5,16], K "
            "[2,4,7,8], V [2,4,7,8])");
  EXPECT_EQ(infer(Op::kAttention, {in("f32[2,6,5,16]"), in("f32[2,4,7,16]"), in("f32[2,4,7,16]")})
                .status.message(),
            "node 'n' (Attention): Q's 6 heads are not a multiple of K's and V's 4");
  EXPECT_EQ(infer(Op::kAttention, {in("f32[2,4,5,16]"), in("f32[2,4,7,16]"), in("f32[2,4,7,16]"),
                                   in("f32[2,1,5,6]")})
                .status.message(),
            "node 'n' (Attention): attn_mask [2,1,5,6] does not broadcast to the scores [2, 4, 5, "
            "7]");
  EXPECT_EQ(infer(Op::kAttention,
                  {in("f32[2,4,5,16]"), in("f32[2,4,7,16]"), in("f32[2,4,7,16]"), in("i32[5,7]")})
                .status.message(),
            "node 'n' (Attention): attn_mask must be bool or a float type, got i32");
  EXPECT_EQ(infer(Op::kAttention, {in("f32[2,5,16]"), in("f32[2,7,16]"), in("f32[2,7,16]")},
                  {{"perm_q", Attribute(std::vector<int64_t>{0, 2, 1})}})
                .status.message(),
            "node 'n' (Attention): perm_q needs 4-D operands; Q, K and V are 3-D");
  EXPECT_EQ(infer(Op::kAttention, {in("f32[2,4,5,16]"), in("f32[2,4,7,16]"), in("f32[2,4,7,16]")},
                  {{"perm_k", Attribute(std::vector<int64_t>{0, 1, 1, 3})}})
                .status.message(),
            "node 'n' (Attention): perm_k [0, 1, 1, 3] is not a permutation of the operand's 4 "
            "axes");
  EXPECT_EQ(infer(Op::kAttention, {in("i32[2,4,5,16]"), in("i32[2,4,7,16]"), in("i32[2,4,7,16]")})
                .status.message()
                .substr(0, 40),
            "node 'n' (Attention): input 0 has dtype ");
}

} // namespace
} // namespace dlc::optest
