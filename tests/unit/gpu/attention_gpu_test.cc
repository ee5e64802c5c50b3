// The fused attention kernel (fuse-attention + codegen/attention.cuh, `--fused-attention`) on
// the GPU against the reference backend, on random data: BERT's layout at its real size
// (b8 s128 h12 d64) and at sequence lengths that are not multiples of the 64-row tiles, with
// and without a mask; PyTorch's multi-head attention at ViT-B/16's size (s197 b8 h12 d64,
// sequence-first views); head size 128; f16 and bf16. Each case checks that the compiled graph
// holds an Attention node (the test would otherwise pass on the unfused kernels), that the
// kernel's output matches the reference evaluation of that node (verifyGpuAgainstReference,
// GPU outputs poisoned first), and that the model's output matches the unfused model on the
// reference backend. Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>

#include "attention_graphs.h"
#include "gpu_test_util.h"
#include "runtime/jit/compile.h"
#include "runtime/tensor_compare.h"

namespace dlc {
namespace {

using rt::testing::modelOf;
using rt::testing::randomTensor;

/// attentionText with an additive mask [B, 1, 1, S] (a constant: every 7th key of batch 0 at
/// -10000, the padding a tokenizer's mask gives) added to the scaled scores.
std::string maskedAttentionText(DType t, int64_t b, int64_t s, int64_t h, int64_t d) {
  std::string mask;
  for (int64_t i = 0; i < b * s; ++i)
    mask += fmt::format("{}{}", i ? ", " : "", i < s && i % 7 == 3 ? -10000.0 : 0.0);
  std::string text = testing::attentionText(t, b, s, h, d);
  const std::string scaled =
      fmt::format("%ss = mul(%sc, %half) : {0}[{1},{2},{3},{3}]", dtypeName(t), b, h, s);
  const size_t at = text.find(scaled);
  EXPECT_NE(at, std::string::npos);
  text.insert(at + scaled.size(),
              fmt::format("\n  %m = constant {0}[{1},1,1,{2}] dense<[{3}]>\n  %sm = add(%ss, %m) "
                          ": {0}[{1},{4},{2},{2}]",
                          dtypeName(t), b, s, mask, h));
  const std::string softmax = "softmax(%ss)";
  text.replace(text.find(softmax), softmax.size(), "softmax(%sm)");
  return text;
}

/// The number of Attention nodes in the graph the GPU pipeline (with fuse-attention, asking
/// the real GPU backend what it supports) makes of `model`.
int fusedAttentions(const Model &model) {
  jit::JitOptions jo;
  jo.fuseAttention = true;
  jo.strictPlacement = true;
  auto compiled = jit::prepareForGpu(model.graph(), {}, jo);
  EXPECT_TRUE(compiled) << compiled.status().message();
  int fused = 0;
  for (const Node *n : compiled ? (*compiled)->nodes() : std::vector<Node *>{})
    fused += n->op() == Op::kAttention;
  return fused;
}

/// The model's output y on the GPU alone (fused attention) and on the reference backend.
void runBoth(const Model &model, const Tensor &x, Tensor *got, Tensor *want) {
  SessionOptions so;
  so.backend = Backend::kGpu;
  so.cpuFallback = false;
  so.fusedAttention = true;
  auto gpu = model.createSession(so);
  ASSERT_TRUE(gpu) << gpu.status().message();
  auto out = gpu->run({{"x", x}});
  ASSERT_TRUE(out) << out.status().message();
  SessionOptions cpuOpts;
  cpuOpts.backend = Backend::kCpu;
  auto cpu = model.createSession(cpuOpts);
  ASSERT_TRUE(cpu) << cpu.status().message();
  auto ref = cpu->run({{"x", x}});
  ASSERT_TRUE(ref) << ref.status().message();
  *got = out->at("y");
  *want = ref->at("y");
}

void expectFusedMatches(const std::string &text, const Tensor &x) {
  auto model = modelOf(text);
  ASSERT_TRUE(model) << model.status().message() << "\n" << text;
  ASSERT_EQ(fusedAttentions(*model), 1) << "fuse-attention did not fuse the attention";
  SessionOptions so;
  so.backend = Backend::kGpu;
  so.cpuFallback = false;
  so.fusedAttention = true;
  // The kernel against the reference evaluation of the Attention node.
  auto report = verifyGpuAgainstReference(*model, {{"x", x}}, so);
  ASSERT_TRUE(report) << report.status().message();
  EXPECT_TRUE(report->divergence.empty()) << report->divergence;
  EXPECT_GE(report->compared, 1);
  // The whole model against the unfused model on the reference backend.
  Tensor got, ref;
  ASSERT_NO_FATAL_FAILURE(runBoth(*model, x, &got, &ref));
  rt::testing::expectMatches(got, ref);
}

// Without a GPU too: the GPU pipeline fuses every case below into one Attention node.
TEST(FusedAttention, TheGpuPipelineFusesTheTestGraphs) {
  for (const std::string &text : {maskedAttentionText(DType::kF16, 8, 128, 12, 64),
                                  testing::attentionText(DType::kBF16, 3, 200, 2, 128),
                                  testing::torchMhaText(DType::kF16, 197, 8, 12, 64)}) {
    auto model = modelOf(text);
    ASSERT_TRUE(model) << model.status().message();
    EXPECT_EQ(fusedAttentions(*model), 1) << text;
  }
  // float32 has no fused kernel: the products stay.
  auto f32 = modelOf(testing::attentionText(DType::kF32, 2, 24, 3, 64));
  ASSERT_TRUE(f32) << f32.status().message();
  EXPECT_EQ(fusedAttentions(*f32), 0);
}

TEST(FusedAttention, BertLayoutMatchesTheReference) {
  DLC_REQUIRE_GPU(driver);
  struct Case {
    DType t;
    int64_t b, s, h, d;
    bool mask;
  };
  const Case cases[] = {
      {DType::kF16, 8, 128, 12, 64, true},  // BERT-base b8 s128
      {DType::kF16, 2, 77, 4, 64, false},   // partial row and key tiles
      {DType::kBF16, 3, 200, 2, 128, true}, // head size 128, four key tiles
      {DType::kF16, 1, 1, 2, 64, false},    // one query, one key
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(fmt::format("{} attention b{} s{} h{} d{}{}", dtypeName(c.t), c.b, c.s, c.h, c.d,
                             c.mask ? " masked" : ""));
    const std::string text = c.mask ? maskedAttentionText(c.t, c.b, c.s, c.h, c.d)
                                    : testing::attentionText(c.t, c.b, c.s, c.h, c.d);
    expectFusedMatches(text, randomTensor(c.t, {c.b, c.s, c.h, c.d}, 5));
  }
}

TEST(FusedAttention, TorchMultiHeadAttentionMatchesTheReference) {
  DLC_REQUIRE_GPU(driver);
  struct Case {
    DType t;
    int64_t s, b, h, d;
  };
  const Case cases[] = {
      {DType::kF16, 197, 8, 12, 64}, // ViT-B/16 at batch 8
      {DType::kBF16, 50, 3, 4, 128},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(fmt::format("{} mha s{} b{} h{} d{}", dtypeName(c.t), c.s, c.b, c.h, c.d));
    expectFusedMatches(testing::torchMhaText(c.t, c.s, c.b, c.h, c.d),
                       randomTensor(c.t, {c.s, c.b, c.h * c.d}, 3));
  }
}

// An int8 model's context: Y quantized for the output projection, the quantization in the
// attention kernel's epilogue (Y rounded to f16 first, as the unfused graph stores it). The
// int8 output is within one step of the reference everywhere (a step apart where the kernel's
// f16 products round a value across a rounding boundary).
TEST(FusedAttention, QuantizedContextMatchesTheReference) {
  DLC_REQUIRE_GPU(driver);
  constexpr int64_t B = 8, S = 128, H = 12, D = 64;
  std::string text = testing::attentionText(DType::kF16, B, S, H, D);
  const std::string head = fmt::format("-> (y: f16[{},{},{}])", B, S, H * D);
  text.replace(text.find(head), head.size(), fmt::format("-> (y: i8[{},{},{}])", B, S, H * D));
  const std::string merge = fmt::format("%y = reshape(%ct, %shape) : f16[{},{},{}]", B, S, H * D);
  text.replace(text.find(merge), merge.size(),
               "%qs = constant f32[] dense<[0.01]>\n  %qz = constant i8[] dense<[0]>\n"
               "  %cq = quantize_linear(%ct, %qs, %qz) : ?\n  %y = reshape(%cq, %shape) : ?");
  auto model = modelOf(text);
  ASSERT_TRUE(model) << model.status().message() << "\n" << text;
  ASSERT_EQ(fusedAttentions(*model), 1);
  Tensor got, ref;
  ASSERT_NO_FATAL_FAILURE(runBoth(*model, randomTensor(DType::kF16, {B, S, H, D}, 6), &got, &ref));
  ASSERT_EQ(got.dtype(), DType::kI8);
  int64_t apart = 0, nonzero = 0;
  for (int64_t i = 0; i < ref.numElements(); ++i) {
    const int diff = std::abs(got.data<int8_t>()[i] - ref.data<int8_t>()[i]);
    ASSERT_LE(diff, 1) << "element " << i;
    apart += diff;
    nonzero += ref.data<int8_t>()[i] != 0;
  }
  EXPECT_LT(apart, ref.numElements() / 10) << "more than 10% of the outputs a step apart";
  EXPECT_GT(nonzero, ref.numElements() / 4) << "a quantization that loses most values tests little";
}

} // namespace
} // namespace dlc
