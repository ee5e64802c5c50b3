// Bundled models compiled for the GPU with no CPU fallback and run on the host emulator
// (tests/unit/codegen/host_emulator.h) against the reference backend, so that the GPU path of
// a whole model is checked on a machine without a GPU: tiny_unet (issue 14's segmentation-style
// model: ConvTranspose, and Resize to sizes computed from Shape at run time) at sizes that are
// not multiples of its strides, tiny_cnn, and attention blocks as torch and BERT export them
// (fuse-attention's rewrites and the flash-attention kernel).
#include <gtest/gtest.h>

#include <random>

#include "ir/parser.h"
#include "runtime/jit/compile.h"
#include "runtime/jit/gpu_jit.h"
#include "runtime/jit/model.h"
#include "runtime/tensor_compare.h"
#include "unit/codegen/host_emulator.h"
#include "unit/int8_text_util.h"
#include "unit/runtime/emulated_util.h"

namespace dlc {
namespace {

using testing::expectEmulatedMatches;
using testing::uniform;

void expectEmulatedMatchesReference(const std::string &model, const Tensor &x) {
  SCOPED_TRACE(model);
  auto m = Model::load(std::string(DLC_SOURCE_DIR) + "/models/" + model);
  ASSERT_TRUE(m) << m.status().message();
  expectEmulatedMatches(*m, {{"x", x}}, {1e-4, 1e-5});
}

using testing::dense;

/// `dense<[...]>` of n values uniform in [0.001, 0.002): per-channel weight scales.
std::string positive(int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.001f, 0.002f);
  std::string s;
  for (int64_t i = 0; i < n; ++i)
    s += fmt::format("{}{:.4g}", i ? ", " : "", u(rng));
  return "dense<[" + s + "]>";
}

using testing::halfUniform;

// A block repeated (a ResNet's bottlenecks, a transformer's layers) gives kernels that differ
// only in their names: each is compiled once and launched per layer, on that layer's buffers.
TEST(ModelsEmulated, IdenticalKernelsAreCompiledOnce) {
  std::string body, last = "x";
  for (int i = 0; i < 4; ++i) {
    body += fmt::format(R"(  %w{0} = constant f32[24,24] {1}
  %m{0} = matmul(%{2}, %w{0}) : ?
  %r{0} = relu(%m{0}) : ?
)",
                        i, dense(24 * 24, 30 + i, 0.3f), last);
    last = fmt::format("r{}", i);
  }
  auto g = parseGraph(fmt::format("graph @g(%x: f32[5,24]) -> (y: ?) {{\n{}  %y = neg(%{}) : ?\n"
                                  "  return %y\n}}",
                                  body, last));
  ASSERT_TRUE(g) << g.status().message();
  auto m = Model::fromGraph(std::move(*g));
  ASSERT_TRUE(m) << m.status().message();
  int launches = 0, compiled = 0;
  expectEmulatedMatches(*m, {{"x", uniform({5, 24}, 7)}}, {1e-4, 1e-5}, &launches, &compiled);
  EXPECT_EQ(launches, 4) << "four matmul + relu groups, the last with the negation";
  EXPECT_EQ(compiled, 2) << "one matmul + relu kernel for three layers, one for the last";
}

// Attention as exporters write it, in float16, through the whole GPU pipeline (fuse-attention
// with its operand rewrites, the flash-attention kernel, the GEMMs) on the emulator.
// torch.nn.MultiheadAttention with batch_first inside a residual block (torchvision's ViT):
// everything between the in-projection and the out-projection folds into the attention's
// strided operands and perm_y, leaving three kernels.
TEST(ModelsEmulated, TorchMultiHeadAttentionRunsAsThreeKernels) {
  constexpr int64_t B = 2, L = 70, E = 128, H = 2, D = E / H;
  const std::string text =
      fmt::format(R"(graph @mha(%x: f16[{0},{1},{2}]) -> (y: f16[{0},{1},{2}]) {{
  %w_in = constant f16[{2},{5}] {6}
  %b_in = constant f16[{5}] {7}
  %w_out = constant f16[{2},{2}] {8}
  %b_out = constant f16[{2}] {9}
  %c = constant f16[] dense<[0.3535]>
  %s1 = constant i64[4] dense<[{1}, {0}, 3, {2}]>
  %a0 = constant i64[1] dense<[0]>
  %a3 = constant i64[1] dense<[3]>
  %i0 = constant i64[] dense<[0]>
  %i1 = constant i64[] dense<[1]>
  %i2 = constant i64[] dense<[2]>
  %s2 = constant i64[3] dense<[{1}, {10}, {4}]>
  %s3 = constant i64[4] dense<[{0}, {3}, {1}, {4}]>
  %s4 = constant i64[2] dense<[{11}, {2}]>
  %s5 = constant i64[3] dense<[{1}, {0}, {2}]>
  %xt = transpose(%x) {{perm = [1, 0, 2]}} : ?
  %pm = matmul(%xt, %w_in) : ?
  %p = add(%b_in, %pm) : ?
  %pr = reshape(%p, %s1) : ?
  %pu = unsqueeze(%pr, %a0) : ?
  %pt = transpose(%pu) {{perm = [3, 1, 2, 0, 4]}} : ?
  %ps = squeeze(%pt, %a3) : ?
  %q0 = gather(%ps, %i0) {{axis = 0}} : ?
  %k0 = gather(%ps, %i1) {{axis = 0}} : ?
  %v0 = gather(%ps, %i2) {{axis = 0}} : ?
  %q2 = reshape(%q0, %s2) : ?
  %k2 = reshape(%k0, %s2) : ?
  %v2 = reshape(%v0, %s2) : ?
  %q1 = transpose(%q2) {{perm = [1, 0, 2]}} : ?
  %k1 = transpose(%k2) {{perm = [1, 0, 2]}} : ?
  %v1 = transpose(%v2) {{perm = [1, 0, 2]}} : ?
  %q = reshape(%q1, %s3) : ?
  %k = reshape(%k1, %s3) : ?
  %v = reshape(%v1, %s3) : ?
  %kt = transpose(%k) {{perm = [0, 1, 3, 2]}} : ?
  %qs = mul(%q, %c) : ?
  %ks = mul(%kt, %c) : ?
  %sc = matmul(%qs, %ks) : ?
  %pb = softmax(%sc) {{axis = -1}} : ?
  %o = matmul(%pb, %v) : ?
  %ot = transpose(%o) {{perm = [2, 0, 1, 3]}} : ?
  %or = reshape(%ot, %s4) : ?
  %op = gemm(%or, %w_out, %b_out) {{transB = 1}} : ?
  %os = reshape(%op, %s5) : ?
  %ob = transpose(%os) {{perm = [1, 0, 2]}} : ?
  %y = add(%ob, %x) : ?
  return %y
}})",
                  B, L, E, H, D, 3 * E, dense(E * 3 * E, 1, 0.15f), dense(3 * E, 2, 0.1f),
                  dense(E * E, 3, 0.15f), dense(E, 4, 0.1f), B * H, L * B);
  auto g = parseGraph(text);
  ASSERT_TRUE(g) << g.status().message();
  auto m = Model::fromGraph(std::move(*g));
  ASSERT_TRUE(m) << m.status().message();
  int launches = 0;
  expectEmulatedMatches(*m, {{"x", halfUniform({B, L, E}, 5)}}, {1e-2, 1e-2}, &launches);
  EXPECT_EQ(launches, 3) << "in-projection, attention, out-projection with the residual";
}

// BERT's self-attention between the projections %p0, %p1, %p2 (split into heads) and the
// context %ct: the heads transposed, Q Kᵀ / sqrt(D) + mask, softmax, times V, transposed back.
constexpr const char *kBertHeads = R"(  %q = transpose(%p0) {perm = [0, 2, 1, 3]} : ?
  %k = transpose(%p1) {perm = [0, 2, 3, 1]} : ?
  %v = transpose(%p2) {perm = [0, 2, 1, 3]} : ?
  %s0 = matmul(%q, %k) : ?
  %s1 = div(%s0, %sqrt_d) : ?
  %s = add(%s1, %mask) : ?
  %pb = softmax(%s) {axis = -1} : ?
  %c = matmul(%pb, %v) : ?
  %ct = transpose(%c) {perm = [0, 2, 1, 3]} : ?
)";

// BERT's self-attention: query, key and value projections of one input merge into one GEMM
// the attention reads through strided operands; two kernels (the output dense layer is
// outside this block).
TEST(ModelsEmulated, BertSelfAttentionRunsAsTwoKernels) {
  constexpr int64_t B = 2, S = 77, E = 128, H = 2, D = E / H;
  std::string projections;
  for (int i = 0; i < 3; ++i)
    projections += fmt::format(R"(  %w{0} = constant f16[{1},{1}] {2}
  %b{0} = constant f16[{1}] {3}
  %m{0} = matmul(%x, %w{0}) : ?
  %a{0} = add(%b{0}, %m{0}) : ?
  %p{0} = reshape(%a{0}, %heads) : ?
)",
                               i, E, dense(E * E, 10 + i, 0.15f), dense(E, 20 + i, 0.1f));
  const std::string text = fmt::format(
      R"(graph @bert(%x: f16[{0},{1},{2}], %mask: f16[{0},1,1,{1}]) -> (y: f16[{0},{1},{2}]) {{
  %heads = constant i64[4] dense<[{0}, {1}, {3}, {4}]>
  %merged = constant i64[3] dense<[{0}, {1}, {2}]>
  %sqrt_d = constant f16[] dense<[8.0]>
{5}{6}  %y = reshape(%ct, %merged) : ?
  return %y
}})",
      B, S, E, H, D, projections, kBertHeads);
  auto g = parseGraph(text);
  ASSERT_TRUE(g) << g.status().message();
  auto m = Model::fromGraph(std::move(*g));
  ASSERT_TRUE(m) << m.status().message();
  Tensor mask = Tensor::zeros(DType::kF16, {B, 1, 1, S});
  for (int64_t j = 70; j < S; ++j) // padding keys of batch 0
    mask.mutableData<uint16_t>()[j] = 0xF8E2;
  int launches = 0;
  expectEmulatedMatches(*m, {{"x", halfUniform({B, S, E}, 6)}, {"mask", mask}}, {1e-2, 1e-2},
                        &launches);
  EXPECT_EQ(launches, 2) << "the merged projection, the attention";
}

// The same block quantized as `dlc quantize` writes it (QDQ on the projections' input,
// per-channel int8 weights; the attention itself stays float), run in fp16: realize-int8 makes
// each projection an int8 GEMM with its rescale and bias, and the three still merge into one
// (the weights stacked, the per-channel scales and the biases side by side), and the
// context's quantization for the output projection joins the attention kernel's epilogue.
// Unmerged, the three projections would be three kernels; unfused, the quantization one.
TEST(ModelsEmulated, Int8BertSelfAttentionMergesItsProjections) {
  constexpr int64_t B = 2, S = 40, E = 128, H = 2, D = E / H;
  std::string projections;
  for (int i = 0; i < 3; ++i)
    projections += fmt::format(R"(  %wq{0} = constant i8[{1},{1}] {2}
  %ws{0} = constant f32[{1}] {3}
  %b{0} = constant f32[{1}] {4}
  %w{0} = dequantize_linear(%wq{0}, %ws{0}) {{axis = 1}} : ?
  %m{0} = matmul(%xdq, %w{0}) : ?
  %a{0} = add(%m{0}, %b{0}) : ?
  %p{0} = reshape(%a{0}, %heads) : ?
)",
                               i, E, testing::int8Dense(E * E, 40 + i), positive(E, 50 + i),
                               dense(E, 20 + i, 0.1f));
  std::string text = fmt::format(
      R"(graph @bert8(%x: f32[{0},{1},{2}], %mask: f32[{0},1,1,{1}]) -> (y: f32[{0},{1},{2}]) {{
  %heads = constant i64[4] dense<[{0}, {1}, {3}, {4}]>
  %merged = constant i64[3] dense<[{0}, {1}, {2}]>
  %sqrt_d = constant f32[] dense<[8.0]>
  %xs = constant f32[] dense<[0.008]>
  %xz = constant i8[] dense<[0]>
  %xq = quantize_linear(%x, %xs, %xz) : ?
  %xdq = dequantize_linear(%xq, %xs, %xz) : ?
{5}{8}  %cs = constant f32[] dense<[0.004]>
  %ctq = quantize_linear(%ct, %cs, %xz) : ?
  %cm = reshape(%ctq, %merged) : ?
  %cdq = dequantize_linear(%cm, %cs, %xz) : ?
  %woq = constant i8[{2},{2}] {6}
  %wos = constant f32[{2}] {7}
  %wo = dequantize_linear(%woq, %wos) {{axis = 1}} : ?
  %y = matmul(%cdq, %wo) : ?
  return %y
}})",
      B, S, E, H, D, projections, testing::int8Dense(E * E, 60), positive(E, 61), kBertHeads);
  auto g = parseGraph(text);
  ASSERT_TRUE(g) << g.status().message();
  auto m = Model::fromGraph(std::move(*g));
  ASSERT_TRUE(m) << m.status().message();
  Tensor mask = Tensor::zeros(DType::kF32, {B, 1, 1, S});
  for (int64_t j = 33; j < S; ++j) // padding keys of batch 0
    mask.mutableData<float>()[j] = -10000.0f;
  int launches = 0;
  expectEmulatedMatches(*m, {{"x", uniform({B, S, E}, 8)}, {"mask", mask}}, {2e-2, 2e-2}, &launches,
                        nullptr, "fp16");
  EXPECT_EQ(launches, 4) << "the input's quantization, the merged int8 projection, the attention "
                            "with the context's quantization, the output projection";
}

TEST(ModelsEmulated, TinyUnetMatchesTheReference) {
  expectEmulatedMatchesReference("tiny_unet.onnx", uniform({2, 3, 13, 11}, 1));
  expectEmulatedMatchesReference("tiny_unet.onnx", uniform({1, 3, 16, 8}, 2));
}

TEST(ModelsEmulated, TinyCnnMatchesTheReference) {
  expectEmulatedMatchesReference("tiny_cnn.onnx", uniform({2, 3, 32, 32}, 3));
}

} // namespace
} // namespace dlc
