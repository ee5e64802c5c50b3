// The attention family (codegen/attention.cc over codegen/attention.cuh): which Attention
// nodes it takes, that its kernels compile with NVRTC, and what they compute, run on the host
// emulator (host_emulator.h emulates cp.async, ldmatrix and mma.sync from the PTX fragment
// layouts) against the reference backend on random data: sequences that are not multiples of
// the 64-row tiles, several key tiles, head sizes 64 and 128, f16 and bf16, the views of BERT
// ([B, S, H, D] read as [B, H, S, D]), of ONNX's 3-D form and of ViT's packed projection
// (strided operands), grouped-query heads, float and
// bool masks that broadcast, the causal mask, and a row whose keys are all masked (NaN, as the
// unfused softmax gives).
#include <random>

#include "host_check.h"
#include "ir/eval/eval_util.h"

namespace dlc::codegen::testing {
namespace {

/// Uniform in [-range, range), rounded to `t`.
Tensor randomData(DType t, const std::vector<int64_t> &shape, unsigned seed, float range) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-range, range);
  Tensor f = Tensor::zeros(DType::kF32, shape);
  for (int64_t i = 0; i < f.numElements(); ++i)
    f.mutableData<float>()[i] = u(rng);
  return eval::castTensor(f, t);
}

std::string bertText(const char *t, int64_t b, int64_t s, int64_t h, int64_t d) {
  return fmt::format(
      R"(graph @bert(%q: {0}[{1},{2},{3},{4}], %k: {0}[{1},{2},{3},{4}], %v: {0}[{1},{2},{3},{4}], %m: {0}[{1},1,1,{2}]) -> (y: {0}[{1},{2},{3},{4}]) {{
  %y = attention(%q, %k, %v, %m) {{scale = 0.125, perm_q = [0, 2, 1, 3], perm_k = [0, 2, 1, 3], perm_v = [0, 2, 1, 3], perm_y = [0, 2, 1, 3]}} : ?
  return %y
}})",
      t, b, s, h, d);
}

TEST(AttentionEmit, SupportsWhatTheKernelRuns) {
  struct Case {
    std::string text;
    const char *refusal; // "" when supported
  };
  const Case cases[] = {
      {bertText("f16", 2, 77, 2, 64), ""},
      {bertText("f32", 2, 77, 2, 64), "f16 and bf16"},
      {bertText("f16", 2, 77, 2, 32), "head size 64 or 128"},
      {R"(graph @g(%q: bf16[1,2,5,64], %k: bf16[1,2,5,64], %v: bf16[1,2,5,64]) -> (y: bf16[1,2,5,64]) {
  %y = attention(%q, %k, %v) {softcap = 30.0} : ?
  return %y
})",
       "softcap"},
      // The head-size axis of Q is not contiguous: read as [B, H, D, S] transposed.
      {R"(graph @g(%q: f16[1,2,64,5], %k: f16[1,2,5,64], %v: f16[1,2,5,64]) -> (y: f16[1,2,5,64]) {
  %y = attention(%q, %k, %v) {perm_q = [0, 1, 3, 2]} : ?
  return %y
})",
       "16-byte chunks"},
      // Strided Q 4 elements into the buffer: its rows do not start on 16-byte chunks.
      {R"(graph @g(%qkv: f16[5,2,392], %k: f16[2,2,5,64], %v: f16[2,2,5,64]) -> (y: f16[2,2,5,64]) {
  %y = attention(%qkv, %k, %v) {sizes_q = [2, 2, 5, 64], strides_q = [392, 64, 784, 1], offset_q = 4} : ?
  return %y
})",
       "16-byte chunks"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.text);
    auto g = parseInfer(c.text);
    ASSERT_TRUE(g);
    std::string why;
    const bool ok = gpuSupports(*anchorOf(*g), &why);
    EXPECT_EQ(ok, std::string(c.refusal).empty()) << why;
    EXPECT_NE(why.find(c.refusal), std::string::npos) << why;
  }
}

TEST(AttentionEmit, KernelsCompileForSm90) {
  std::string sources;
  int i = 0;
  for (const std::string &text :
       {bertText("f16", 2, 77, 2, 64), bertText("bf16", 1, 200, 3, 128)}) {
    auto g = parseInfer(text);
    ASSERT_TRUE(g);
    sources += emitSource(wholeGraph(*g, fmt::format("attn{}", i++)));
  }
  // ViT's 197 keys both ways: every key/value tile resident (EmitOptions::attentionResidentKv,
  // the default) and streamed through two stages.
  auto vit = parseInfer(bertText("f16", 1, 197, 2, 64));
  ASSERT_TRUE(vit);
  EmitOptions streamed;
  streamed.attentionResidentKv = false;
  sources += emitSource(wholeGraph(*vit, "attn_resident"));
  sources += emitSource(wholeGraph(*vit, "attn_streamed"), nullptr, streamed);
  expectCompiles(sources, "attention");
}

TEST(AttentionEmit, HostRunsMatchTheReference) {
  std::vector<HostCase> cases;
  {
    // BERT's layout, 77 queries and keys (two row tiles, two key tiles, both partial), an f16
    // mask [B, 1, 1, S] with large negative entries.
    Tensor mask = randomData(DType::kF16, {2, 1, 1, 77}, 4, 1.0f);
    for (int64_t j = 70; j < 77; ++j)
      mask.mutableData<uint16_t>()[j] = 0xF8E2; // -20000 in f16: padding keys of batch 0
    cases.push_back({bertText("f16", 2, 77, 2, 64),
                     {{"q", randomData(DType::kF16, {2, 77, 2, 64}, 1, 1.0f)},
                      {"k", randomData(DType::kF16, {2, 77, 2, 64}, 2, 1.0f)},
                      {"v", randomData(DType::kF16, {2, 77, 2, 64}, 3, 1.0f)},
                      {"m", mask}},
                     1e-2});
  }
  // bf16, head size 128, 40 queries over 130 keys (three key tiles), causal.
  cases.push_back(
      {R"(graph @causal(%q: bf16[1,2,40,128], %k: bf16[1,2,130,128], %v: bf16[1,2,130,128]) -> (y: bf16[1,2,40,128]) {
  %y = attention(%q, %k, %v) {is_causal = 1} : ?
  return %y
})",
       {{"q", randomData(DType::kBF16, {1, 2, 40, 128}, 5, 1.0f)},
        {"k", randomData(DType::kBF16, {1, 2, 130, 128}, 6, 1.0f)},
        {"v", randomData(DType::kBF16, {1, 2, 130, 128}, 7, 1.0f)}},
       3e-2});
  // Key tails of each length in 16-key steps: 90 keys end in a tile of 26 (two steps), 100 in
  // one of 36 (three), 80 in one of 16 (one, whole); 20 queries leave three warps without rows.
  for (int64_t sk : {90, 100, 80})
    cases.push_back(
        {fmt::format(
             R"(graph @tail(%q: f16[1,2,20,64], %k: f16[1,2,{0},64], %v: f16[1,2,{0},64]) -> (y: f16[1,2,20,64]) {{
  %y = attention(%q, %k, %v) : ?
  return %y
}})",
             sk),
         {{"q", randomData(DType::kF16, {1, 2, 20, 64}, 13, 1.0f)},
          {"k", randomData(DType::kF16, {1, 2, sk, 64}, 14, 1.0f)},
          {"v", randomData(DType::kF16, {1, 2, sk, 64}, 15, 1.0f)}},
         1e-2});
  {
    // ONNX's 3-D form with grouped-query heads (4 query heads over 2 key/value heads) and a
    // bool mask [Sq, Sk] that broadcasts over batch and heads; query 3 sees no key at all,
    // query 5 only keys of the second tile (64..69): the first tile's softmax sees -inf only.
    Tensor mask = Tensor::zeros(DType::kBool, {33, 70});
    std::mt19937 rng(8);
    for (int64_t i = 0; i < mask.numElements(); ++i)
      mask.mutableData<bool>()[i] = i / 70 != 3 && (i / 70 != 5 || i % 70 >= 64) && rng() % 4 != 0;
    cases.push_back(
        {R"(graph @gqa(%q: f16[2,33,256], %k: f16[2,70,128], %v: f16[2,70,128], %m: bool[33,70]) -> (y: f16[2,33,256]) {
  %y = attention(%q, %k, %v, %m) {q_num_heads = 4, kv_num_heads = 2, scale = 0.2} : ?
  return %y
})",
         {{"q", randomData(DType::kF16, {2, 33, 256}, 9, 1.0f)},
          {"k", randomData(DType::kF16, {2, 70, 128}, 10, 1.0f)},
          {"v", randomData(DType::kF16, {2, 70, 128}, 11, 1.0f)},
          {"m", mask}},
         1e-2});
  }
  // ViT's packed projection [S, B, 3 * H * D] (torch's multi-head attention), Q, K and V read
  // straight out of it as strided operands, Y stored [S, B, H, D].
  cases.push_back({R"(graph @packed(%qkv: f16[70,2,384]) -> (y: f16[70,2,2,64]) {
  %y = attention(%qkv, %qkv, %qkv) {sizes_q = [2, 2, 70, 64], strides_q = [384, 64, 768, 1], sizes_k = [2, 2, 70, 64], strides_k = [384, 64, 768, 1], offset_k = 128, sizes_v = [2, 2, 70, 64], strides_v = [384, 64, 768, 1], offset_v = 256, perm_y = [2, 0, 1, 3]} : ?
  return %y
})",
                   {{"qkv", randomData(DType::kF16, {70, 2, 384}, 12, 1.0f)}},
                   1e-2});
  // With every key/value tile resident (EmitOptions::attentionResidentKv): BERT's layout (two
  // tiles), the key tails (two tiles) and ViT's 197 keys (four tiles, the last of 5 keys) at head
  // size 64, and the causal case at 128 (three tiles: streamed, since only two fit).
  // The cases above stream (attentionResidentKv off); their copies keep the tiles resident.
  const size_t streamed = cases.size();
  for (size_t c = 0; c < streamed; ++c) {
    cases[c].options.attentionResidentKv = false;
    HostCase resident = cases[c];
    resident.options.attentionResidentKv = true;
    cases.push_back(std::move(resident));
  }
  {
    HostCase vit = {
        R"(graph @vit(%q: f16[1,2,197,64], %k: f16[1,2,197,64], %v: f16[1,2,197,64]) -> (y: f16[1,2,197,64]) {
  %y = attention(%q, %k, %v) {scale = 0.125} : ?
  return %y
})",
        {{"q", randomData(DType::kF16, {1, 2, 197, 64}, 16, 1.0f)},
         {"k", randomData(DType::kF16, {1, 2, 197, 64}, 17, 1.0f)},
         {"v", randomData(DType::kF16, {1, 2, 197, 64}, 18, 1.0f)}},
        1e-2};
    vit.options.attentionResidentKv = false;
    cases.push_back(vit);
    vit.options.attentionResidentKv = true;
    cases.push_back(vit);
  }
  expectHostRunsMatchReference(cases);
}

TEST(AttentionEmit, ResidentKeysAndValuesWhereTheyFit) {
  // 197 keys at head size 64: four tiles resident (Q 8 KiB + 4 x 16 KiB of K and V); 300 keys
  // (five tiles) and head size 128 over 197 keys (four tiles of 32 KiB) stream through two stages.
  struct Case {
    int64_t keys, head;
    int kvTiles;
    uint32_t shared;
  };
  for (const Case &c : {Case{197, 64, 4, 73728}, Case{128, 64, 2, 40960}, Case{300, 64, 0, 40960},
                        Case{197, 128, 0, 81920}, Case{100, 128, 2, 81920}}) {
    SCOPED_TRACE(fmt::format("{} keys, head size {}", c.keys, c.head));
    auto g = parseInfer(fmt::format(
        R"(graph @g(%q: f16[1,2,20,{1}], %k: f16[1,2,{0},{1}], %v: f16[1,2,{0},{1}]) -> (y: f16[1,2,20,{1}]) {{
  %y = attention(%q, %k, %v) : ?
  return %y
}})",
        c.keys, c.head));
    ASSERT_TRUE(g);
    EmitOptions opts;
    opts.attentionResidentKv = true;
    KernelSet set;
    const std::string src = emitSource(wholeGraph(*g, "attn"), &set, opts);
    ASSERT_EQ(set.kernels.size(), 1u);
    EXPECT_EQ(set.kernels[0].launch.sharedBytes, c.shared);
    EXPECT_NE(src.find(fmt::format("dlc_attn::StoreY, {}>(p, dlc_smem)", c.kvTiles)),
              std::string::npos)
        << src;
    // Off, every sequence streams.
    EmitOptions off;
    off.attentionResidentKv = false;
    KernelSet plain;
    emitSource(wholeGraph(*g, "attn"), &plain, off);
    EXPECT_EQ(plain.kernels[0].launch.sharedBytes, (64 + 4 * 64) * c.head * 2);
  }
}

} // namespace
} // namespace dlc::codegen::testing
