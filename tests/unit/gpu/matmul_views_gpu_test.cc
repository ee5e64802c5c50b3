// MatMuls that read transposed operands and store transposed products in place
// (fold-transpose-matmul's perm_a / perm_b / perm_y, in the GPU pipeline) against the
// reference backend on random data: attention's head split (Q and V read as [B, H, S, D], K
// as [B, H, D, S] from [B, S, H, D] buffers) and merge (the second product stored as
// [B, S, H, D]) in f32 (the SIMT kernel), f16 and bf16 (tensor cores; the larger shape takes
// the Hopper kernel on sm_90); PyTorch's multi-head attention on a sequence-first input (head
// split through reshapes, scaled Q and K); and a transposed 2-D operand. Skips without a GPU.
#include <gtest/gtest.h>

#include <random>

#include "attention_graphs.h"
#include "gpu_test_util.h"

namespace dlc {
namespace {

using rt::testing::randomTensor;

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
    rt::testing::expectGpuMatchesReference(testing::attentionText(c.t, c.b, c.s, c.h, c.d),
                                           randomTensor(c.t, {c.b, c.s, c.h, c.d}, 5), 1);
  }
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
    rt::testing::expectGpuMatchesReference(testing::torchMhaText(c.t, c.s, c.b, c.h, c.d),
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
