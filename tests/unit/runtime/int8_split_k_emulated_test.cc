// int8 products with K split on the mma.sync kernels (EmitOptions::int8SplitK), as the GPU runs
// them, on the host emulator against the reference backend: the splits' int32 partial sums go
// through the workspace exactly, so the accumulators match to the last bit even where their sum
// needs more than float's 24 bits, and the reduction kernel runs the requantizing epilogue.
#include <gtest/gtest.h>

#include "unit/int8_text_util.h"
#include "unit/runtime/emulated_util.h"

namespace dlc {
namespace {

/// x [rows, k] times a constant int8 weight [n, k] (transB): the int32 sums, and their rescale,
/// bias and ReLU quantized to int8. Weights near 127 against inputs near 127 make sums of about
/// k * 16000 (past 2^24 at k = 4096), which float partial sums would round.
std::string classifier(int64_t rows, int64_t k, int64_t n) {
  std::string w;
  for (int64_t i = 0; i < n * k; ++i)
    w += fmt::format("{}{}", i ? ", " : "", 127 - (i * 7919) % 5);
  return fmt::format(R"(graph @fc(%x: i8[{0},{1}]) -> (acc: i32[{0},{2}], y: i8[{0},{2}]) {{
  %w = constant i8[{2},{1}] dense<[{3}]>
  %s = constant f32[{2}] {4}
  %b = constant f32[{2}] {5}
  %qs = constant f32[] dense<[0.25]>
  %qz = constant i8[] dense<[-5]>
  %acc = matmul_integer(%x, %w) {{transB = 1}} : i32[{0},{2}]
  %f = cast(%acc) {{to = f32}} : f32[{0},{2}]
  %r = mul(%f, %s) : f32[{0},{2}]
  %a = add(%r, %b) : f32[{0},{2}]
  %u = relu(%a) : f32[{0},{2}]
  %y = quantize_linear(%u, %qs, %qz) : i8[{0},{2}]
  return %acc, %y
}})",
                     rows, k, n, w, testing::dense(n, 3, 1e-5f), testing::dense(n, 4, 8.0f));
}

Tensor nearMax(std::vector<int64_t> shape) {
  Tensor t = Tensor::zeros(DType::kI8, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.mutableData<int8_t>()[i] = static_cast<int8_t>(127 - (i * 104729) % 3);
  return t;
}

/// The names of the program's kernels for graph `text` under `jo`.
std::vector<std::string> kernelNames(const std::string &text, const jit::JitOptions &jo) {
  auto g = parseGraph(text, "fc.dlc");
  EXPECT_TRUE(g) << g.status().message();
  auto program = jit::compileForGpu(**g, {}, jo);
  EXPECT_TRUE(program) << program.status().message();
  std::vector<std::string> names;
  if (program)
    for (const auto &[name, source] : program->sources)
      names.push_back(name);
  return names;
}

bool hasSplitK(const std::vector<std::string> &names) {
  for (const std::string &n : names)
    if (n.size() > 7 && n.substr(n.size() - 7) == "_splitk")
      return true;
  return false;
}

/// Expects the cost model to split K of `text` on an H200's 132 SMs with int8SplitK, and the
/// emulated program to match the reference exactly on `x`.
void expectSplitAndExact(const std::string &text, const Tensor &x) {
  jit::JitOptions jo = testing::emulatedJitOptions();
  jo.lower.emit.numSms = 132;
  jo.lower.emit.int8SplitK = true;
  ASSERT_TRUE(hasSplitK(kernelNames(text, jo)));
  testing::expectEmulatedMatches(text, {{"x", x}}, {0, 0}, jo);
}

TEST(Int8SplitKEmulated, ClassifierSumsAreExactInt32) {
  // ResNet-50's classifier at batch 1 (1 x 1000 x 2048) in small: 2 rows, 64 columns, K = 4096
  // is one block unsplit; the cost model splits it.
  const std::string text = classifier(2, 4096, 64);
  expectSplitAndExact(text, nearMax({2, 4096}));
  // Split by default; whole with int8SplitK off.
  jit::JitOptions jo = testing::emulatedJitOptions();
  jo.lower.emit.numSms = 132;
  EXPECT_TRUE(hasSplitK(kernelNames(text, jo)));
  jo.lower.emit.int8SplitK = false;
  EXPECT_FALSE(hasSplitK(kernelNames(text, jo)));
}

TEST(Int8SplitKEmulated, OnlySmallOutputsSplit) {
  // K splits only where the output is under half a wave of 128 x 64 tiles. ResNet-50's layer4
  // 3x3 convolution (channels-last, 512 -> 512 channels at 7 x 7, K = 4608): at batch 1 its 49
  // x 512 output splits; at batch 32, 1568 x 512 (104 tiles) stays whole, which the cost model
  // alone would split in two (slower on an H100, session 50).
  auto conv = [](int64_t images) {
    return fmt::format(
        R"(graph @c(%x: i8[{0},7,7,512], %w: i8[512,3,3,512]) -> (acc: i32[{0},7,7,512]) {{
  %acc = conv_integer(%x, %w) {{channels_last = 1, pads = [1, 1, 1, 1]}} : i32[{0},7,7,512]
  return %acc
}})",
        images);
  };
  jit::JitOptions jo = testing::emulatedJitOptions();
  jo.lower.emit.numSms = 132;
  EXPECT_TRUE(hasSplitK(kernelNames(conv(1), jo)));
  EXPECT_FALSE(hasSplitK(kernelNames(conv(32), jo)));
}

TEST(Int8SplitKEmulated, RandomRowsMatchTheReference) {
  // Rows past a tile and random data of both signs; then an odd output count, which the
  // reduction kernel sums one element at a time.
  expectSplitAndExact(classifier(19, 4096, 48), testing::int8Tensor({19, 4096}, 9));
  expectSplitAndExact(classifier(3, 4096, 33), testing::int8Tensor({3, 4096}, 10));
}

} // namespace
} // namespace dlc
