// MatMuls that read transposed operands and store transposed products in place
// (fold-transpose-matmul's perm_a / perm_b / perm_y, in the GPU pipeline) against the
// reference backend on random data: attention's head split (Q and V read as [B, H, S, D], K
// as [B, H, D, S] from [B, S, H, D] buffers) and merge (the second product stored as
// [B, S, H, D]) in f32 (the SIMT kernel), f16 and bf16 (tensor cores; the larger shape takes
// the Hopper kernel on sm_90); PyTorch's multi-head attention on a sequence-first input (head
// split through reshapes, scaled Q and K); and a transposed 2-D operand. Skips without a GPU.
#include <gtest/gtest.h>

#include <random>

#include "gpu_test_util.h"

namespace dlc {
namespace {

using rt::testing::randomTensor;

/// Scaled-dot-product attention over x [B, S, H, D]: q = x, k = x / 2, v = relu(x), each
/// split into heads by a transpose the GEMMs fold, the heads merged back to [B, S, H * D] by
/// a transpose the second GEMM stores through (perm_y).
std::string attentionText(DType t, int64_t b, int64_t s, int64_t h, int64_t d) {
  return fmt::format(R"(graph @attn(%x: {0}[{1},{2},{3},{4}]) -> (y: {0}[{1},{2},{5}]) {{
  %half = constant {0}[] dense<[0.5]>
  %k = mul(%x, %half) : {0}[{1},{2},{3},{4}]
  %v = relu(%x) : {0}[{1},{2},{3},{4}]
  %qt = transpose(%x) {{perm = [0, 2, 1, 3]}} : {0}[{1},{3},{2},{4}]
  %kt = transpose(%k) {{perm = [0, 2, 3, 1]}} : {0}[{1},{3},{4},{2}]
  %vt = transpose(%v) {{perm = [0, 2, 1, 3]}} : {0}[{1},{3},{2},{4}]
  %sc = matmul(%qt, %kt) : {0}[{1},{3},{2},{2}]
  %ss = mul(%sc, %half) : {0}[{1},{3},{2},{2}]
  %p = softmax(%ss) {{axis = -1}} : {0}[{1},{3},{2},{2}]
  %c = matmul(%p, %vt) : {0}[{1},{3},{2},{4}]
  %ct = transpose(%c) {{perm = [0, 2, 1, 3]}} : {0}[{1},{2},{3},{4}]
  %shape = constant i64[3] dense<[{1}, {2}, {5}]>
  %y = reshape(%ct, %shape) : {0}[{1},{2},{5}]
  return %y
}})",
                     dtypeName(t), b, s, h, d, h * d);
}

TEST(MatMulViews, FoldedHeadSplitMatchesTheReference) {
  DLC_REQUIRE_GPU(driver);
  struct Case {
    DType t;
    int64_t b, s, h, d;
  };
  const Case cases[] = {
      {DType::kF32, 2, 24, 3, 16},   // SIMT
      {DType::kF16, 2, 40, 4, 64},   // tensor cores, rows not a multiple of the tile
      {DType::kBF16, 3, 72, 2, 32},  //
      {DType::kF16, 8, 256, 12, 64}, // BERT-like heads at sequence 256
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(fmt::format("{} attention b{} s{} h{} d{}", dtypeName(c.t), c.b, c.s, c.h, c.d));
    rt::testing::expectGpuMatchesReference(attentionText(c.t, c.b, c.s, c.h, c.d),
                                           randomTensor(c.t, {c.b, c.s, c.h, c.d}, 5), 1);
  }
}

/// PyTorch's multi-head attention on a sequence-first x [S, B, E]: the head split
/// view(S, B*H, D) -> transpose(0, 1) -> view(B, H, S, D), Q and K scaled after it, V the
/// unscaled split, the heads merged by permute(2, 0, 1, 3) -> view(S, B, E). Every transpose
/// folds: the products read x split to [S, B, H, D] and the second stores [S, B, H, D].
std::string torchMhaText(DType t, int64_t s, int64_t b, int64_t h, int64_t d) {
  return fmt::format(R"(graph @mha(%x: {0}[{1},{2},{5}]) -> (y: {0}[{1},{2},{5}]) {{
  %s3 = constant i64[3] dense<[{1}, {6}, {4}]>
  %s4 = constant i64[4] dense<[{2}, {3}, {1}, {4}]>
  %c = constant {0}[] dense<[0.35]>
  %qs = reshape(%x, %s3) : {0}[{1},{6},{4}]
  %qt = transpose(%qs) {{perm = [1, 0, 2]}} : {0}[{6},{1},{4}]
  %q4 = reshape(%qt, %s4) : {0}[{2},{3},{1},{4}]
  %qm = mul(%q4, %c) : {0}[{2},{3},{1},{4}]
  %kt = transpose(%q4) {{perm = [0, 1, 3, 2]}} : {0}[{2},{3},{4},{1}]
  %km = mul(%kt, %c) : {0}[{2},{3},{4},{1}]
  %sc = matmul(%qm, %km) : {0}[{2},{3},{1},{1}]
  %p = softmax(%sc) {{axis = -1}} : {0}[{2},{3},{1},{1}]
  %ctx = matmul(%p, %q4) : {0}[{2},{3},{1},{4}]
  %ct = transpose(%ctx) {{perm = [2, 0, 1, 3]}} : {0}[{1},{2},{3},{4}]
  %sy = constant i64[3] dense<[{1}, {2}, {5}]>
  %y = reshape(%ct, %sy) : {0}[{1},{2},{5}]
  return %y
}})",
                     dtypeName(t), s, b, h, d, h * d, b * h);
}

TEST(MatMulViews, TorchMultiHeadAttentionMatchesTheReference) {
  DLC_REQUIRE_GPU(driver);
  struct Case {
    DType t;
    int64_t s, b, h, d;
  };
  const Case cases[] = {
      {DType::kF32, 10, 2, 3, 16},
      {DType::kF16, 197, 8, 12, 64}, // ViT-B/16 at batch 8
      {DType::kBF16, 50, 3, 4, 32},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(fmt::format("{} mha s{} b{} h{} d{}", dtypeName(c.t), c.s, c.b, c.h, c.d));
    rt::testing::expectGpuMatchesReference(torchMhaText(c.t, c.s, c.b, c.h, c.d),
                                           randomTensor(c.t, {c.s, c.b, c.h * c.d}, 3), 1);
  }
}

TEST(MatMulViews, TransposedTwoDimensionalOperandMatchesTheReference) {
  DLC_REQUIRE_GPU(driver);
  // x [64, 96]; y = x^T-times-x reads both operands of one buffer, one of them transposed.
  const std::string text = R"(graph @g(%x: f16[64,96]) -> (y: f16[96,96]) {
  %xt = transpose(%x) {perm = [1, 0]} : f16[96,64]
  %y = matmul(%xt, %x) : f16[96,96]
  return %y
})";
  rt::testing::expectGpuMatchesReference(text, randomTensor(DType::kF16, {64, 96}, 9), 1);
}

} // namespace
} // namespace dlc
