// QuantizeLinear / DequantizeLinear on the GPU (codegen/quant_expr.h) against the reference
// backend, bit for bit: per tensor and per axis, int8 and uint8, inputs exactly at .5 ties,
// saturation and NaN, standalone, fused into elementwise chains and into GEMM and conv
// epilogues. No CPU fallback, arena poisoned; every step must be a kernel. Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "gpu_test_util.h"
#include "ir/parser.h"
#include "runtime/jit/model.h"

namespace dlc {
namespace {

/// Random floats in [-range, range] with every third one an exact tie (k + 0.5) * scale, for
/// the scale of its channel (`scales` along a dim `inner` elements apart), and a few values far
/// out of range, NaN and infinities.
Tensor tieFloats(const std::vector<int64_t> &shape, const std::vector<float> &scales, int64_t inner,
                 float range, uint32_t seed, DType dtype = DType::kF32) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-range, range);
  std::uniform_int_distribution<int> level(-140, 140);
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const float s = scales[static_cast<size_t>((i / inner) % static_cast<int64_t>(scales.size()))];
    float x = dist(rng);
    if (i % 3 == 0)
      x = (static_cast<float>(level(rng)) + 0.5f) * s;
    if (i % 101 == 50)
      x = i % 2 ? 1e6f : -1e6f;
    if (i % 1009 == 3)
      x = std::numeric_limits<float>::quiet_NaN();
    if (i % 1013 == 5)
      x = -std::numeric_limits<float>::infinity();
    v[static_cast<size_t>(i)] = x;
  }
  return Tensor::fromVector<float>(DType::kF32, shape, v).castTo(dtype);
}

/// Random integers of an integer dtype over its whole 8-bit range (or [lo, hi]).
Tensor randomInts(DType dtype, const std::vector<int64_t> &shape, uint32_t seed, int lo = -128,
                  int hi = 127) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  if (dtype == DType::kU8 && lo < 0) {
    lo = 0;
    hi = 255;
  }
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<double> v(static_cast<size_t>(n));
  for (double &x : v)
    x = dist(rng);
  return Tensor::fromVector<double>(DType::kF64, shape, v).castTo(dtype);
}

/// The text IR literal of `n` copies of the values `pattern` cycles through.
std::string dense(const std::vector<double> &pattern, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i)
    s += fmt::format("{}{}", i ? ", " : "", pattern[i % pattern.size()]);
  return "dense<[" + s + "]>";
}

/// Runs `text` on the GPU (no CPU fallback, poisoned arena) and on the reference backend, and
/// expects every output to hold the same bytes. `kernels`: how many kernels the GPU program
/// must launch (0: any).
void expectGpuMatchesReference(const std::string &text, const std::map<std::string, Tensor> &in,
                               size_t kernels = 0) {
  SCOPED_TRACE(text);
  DLC_REQUIRE_GPU(driver);
  auto g = parseGraph(text);
  ASSERT_TRUE(g) << g.status().message();
  auto model = Model::fromGraph(std::move(*g));
  ASSERT_TRUE(model) << model.status().message();
  SessionOptions gpuOpts;
  gpuOpts.backend = Backend::kGpu;
  gpuOpts.cpuFallback = false;
  gpuOpts.poison = true;
  auto gpu = model->createSession(gpuOpts);
  ASSERT_TRUE(gpu) << gpu.status().message();
  SessionOptions cpuOpts;
  cpuOpts.backend = Backend::kCpu;
  auto cpu = model->createSession(cpuOpts);
  ASSERT_TRUE(cpu) << cpu.status().message();
  auto got = gpu->run(in);
  ASSERT_TRUE(got) << got.status().message();
  auto want = cpu->run(in);
  ASSERT_TRUE(want) << want.status().message();
  for (const auto &[name, w] : *want) {
    ASSERT_TRUE(got->count(name)) << name;
    const Tensor &t = got->at(name);
    ASSERT_EQ(t.dtype(), w.dtype()) << name;
    ASSERT_EQ(t.numElements(), w.numElements()) << name;
    const size_t es = static_cast<size_t>(dtypeSize(w.dtype()));
    for (int64_t i = 0; i < w.numElements(); ++i)
      ASSERT_EQ(std::memcmp(static_cast<const uint8_t *>(t.raw()) + i * es,
                            static_cast<const uint8_t *>(w.raw()) + i * es, es),
                0)
          << name << "[" << i << "] is " << t.elementAsDouble(i) << ", the reference "
          << w.elementAsDouble(i);
  }
  auto steps = gpu->profileGpu(in, 1);
  ASSERT_TRUE(steps) << steps.status().message();
  size_t launched = 0;
  for (const Session::StepProfile &s : *steps) {
    EXPECT_NE(s.kind, "host") << s.origin << " ran on the CPU";
    launched += s.kind == "kernel";
  }
  if (kernels) {
    EXPECT_EQ(launched, kernels);
  }
}

TEST(QuantGpu, QuantizePerTensorInt8AndUint8) {
  expectGpuMatchesReference(
      R"(graph @g(%x: f32[100003], %u: f32[4096]) -> (y: i8[100003], v: u8[4096]) {
  %s = constant f32[] dense<[0.0625]>
  %z = constant i8[] dense<[-3]>
  %y = quantize_linear(%x, %s, %z) : i8[100003]
  %t = constant f32[] dense<[0.1]>
  %v = quantize_linear(%u, %t) : u8[4096]
  return %y, %v
})",
      {{"x", tieFloats({100003}, {0.0625f}, 1, 12.0f, 1)},
       {"u", tieFloats({4096}, {0.1f}, 1, 30.0f, 2)}});
}

TEST(QuantGpu, QuantizePerAxisInt8AndUint8) {
  const std::vector<float> sc = {0.5f, 0.25f, 0.1f, 0.03f, 2.0f, 0.0625f, 1.5f, 0.2f};
  const std::string scales = dense({0.5, 0.25, 0.1, 0.03, 2.0, 0.0625, 1.5, 0.2}, 8);
  expectGpuMatchesReference(
      fmt::format(
          R"(graph @g(%x: f32[4,8,16,16], %w: f32[16,8]) -> (y: u8[4,8,16,16], v: i8[16,8]) {{
  %s = constant f32[8] {0}
  %z = constant u8[8] {1}
  %y = quantize_linear(%x, %s, %z) {{axis = 1}} : u8[4,8,16,16]
  %zi = constant i8[8] {2}
  %v = quantize_linear(%w, %s, %zi) {{axis = -1}} : i8[16,8]
  return %y, %v
}})",
          scales, dense({128, 0, 10, 255, 3, 100, 200, 50}, 8),
          dense({0, -1, 1, -128, 127, 5, -5, 0}, 8)),
      {{"x", tieFloats({4, 8, 16, 16}, sc, 256, 20.0f, 3)},
       {"w", tieFloats({16, 8}, sc, 1, 20.0f, 4)}});
}

TEST(QuantGpu, QuantizeHalfInputsAndOpset21Attributes) {
  expectGpuMatchesReference(
      R"(graph @g(%x: f16[3000], %b: bf16[3000]) -> (y: i8[3000], c: u8[3000]) {
  %s = constant f16[] dense<[0.25]>
  %y = quantize_linear(%x, %s) {output_dtype = i8, saturate = 1} : i8[3000]
  %t = constant f32[] dense<[0.5]>
  %zc = constant u8[] dense<[128]>
  %c = quantize_linear(%b, %t, %zc) : u8[3000]
  return %y, %c
})",
      {{"x", tieFloats({3000}, {0.25f}, 1, 40.0f, 5, DType::kF16)},
       {"b", tieFloats({3000}, {0.5f}, 1, 80.0f, 6, DType::kBF16)}});
}

TEST(QuantGpu, DequantizePerTensorAndPerAxis) {
  expectGpuMatchesReference(
      fmt::format(R"(graph @g(%x: i8[2,16,9,9], %u: u8[5000]) -> (y: f32[2,16,9,9], v: f32[5000]) {{
  %s = constant f32[16] {0}
  %z = constant i8[16] {1}
  %y = dequantize_linear(%x, %s, %z) {{axis = 1}} : f32[2,16,9,9]
  %t = constant f32[] dense<[0.0137]>
  %zu = constant u8[] dense<[131]>
  %v = dequantize_linear(%u, %t, %zu) : f32[5000]
  return %y, %v
}})",
                  dense({0.1, 0.3, 7.7, 0.0039, 1e-5, 3.0}, 16), dense({-128, 0, 127, 3, -3}, 16)),
      {{"x", randomInts(DType::kI8, {2, 16, 9, 9}, 7)}, {"u", randomInts(DType::kU8, {5000}, 8)}});
}

TEST(QuantGpu, DequantizedInt8FeedsFloatOpsInOneKernel) {
  // DQ (per axis) -> add -> relu -> Q (per tensor), all one elementwise kernel; every step is
  // exact, so the uint8 result matches bit for bit.
  expectGpuMatchesReference(
      fmt::format(R"(graph @g(%x: i8[8,32,64], %y: f32[8,32,64]) -> (q: u8[8,32,64]) {{
  %s = constant f32[32] {0}
  %z = constant i8[32] {1}
  %d = dequantize_linear(%x, %s, %z) {{axis = 1}} : f32[8,32,64]
  %a = add(%d, %y) : f32[8,32,64]
  %r = relu(%a) : f32[8,32,64]
  %t = constant f32[] dense<[0.25]>
  %zq = constant u8[] dense<[7]>
  %q = quantize_linear(%r, %t, %zq) : u8[8,32,64]
  return %q
}})",
                  dense({0.5, 0.125, 1.5, 0.25}, 32), dense({3, -3, 0, 1}, 32)),
      {{"x", randomInts(DType::kI8, {8, 32, 64}, 9)},
       {"y", tieFloats({8, 32, 64}, {0.25f}, 1, 10.0f, 10)}},
      1);
}

TEST(QuantGpu, FakeQuantPairPerAxis) {
  const std::vector<float> sc = {0.5f, 0.25f, 0.1f, 2.0f, 0.03f};
  expectGpuMatchesReference(fmt::format(R"(graph @g(%x: f32[5,1000]) -> (y: f32[5,1000]) {{
  %s = constant f32[5] {0}
  %z = constant i8[5] {1}
  %q = quantize_linear(%x, %s, %z) {{axis = 0}} : i8[5,1000]
  %y = dequantize_linear(%q, %s, %z) {{axis = 0}} : f32[5,1000]
  return %y
}})",
                                        dense({0.5, 0.25, 0.1, 2.0, 0.03}, 5),
                                        dense({0, 1, -1, 100, -100}, 5)),
                            {{"x", tieFloats({5, 1000}, sc, 1000, 30.0f, 11)}}, 1);
}

TEST(QuantGpu, QuantizeInTheInt8GemmEpilogueShape) {
  // matmul -> mul(scale) -> add(bias) -> relu -> add(residual) -> Q per output channel. Small
  // integer operands and power-of-two scales make every float step exact in any order (and
  // with or without FMA contraction), so the int8 output must match bit for bit; odd sums
  // halved give .5 ties.
  expectGpuMatchesReference(
      fmt::format(R"(graph @g(%a: f32[96,64], %b: f32[64,80], %r: f32[96,80]) -> (y: i8[96,80]) {{
  %m = matmul(%a, %b) : f32[96,80]
  %sc = constant f32[] dense<[0.5]>
  %ms = mul(%m, %sc) : f32[96,80]
  %bias = constant f32[80] {0}
  %ab = add(%ms, %bias) : f32[96,80]
  %re = relu(%ab) : f32[96,80]
  %res = add(%re, %r) : f32[96,80]
  %s = constant f32[80] {1}
  %z = constant i8[80] {2}
  %y = quantize_linear(%res, %s, %z) {{axis = 1}} : i8[96,80]
  return %y
}})",
                  dense({0.5, -1.5, 2.0, 0.0}, 80), dense({2.0, 1.0, 0.5, 4.0, 0.25}, 80),
                  dense({0, 3, -3, 10}, 80)),
      {{"a", randomInts(DType::kI32, {96, 64}, 12, -4, 4).castTo(DType::kF32)},
       {"b", randomInts(DType::kI32, {64, 80}, 13, -4, 4).castTo(DType::kF32)},
       {"r", randomInts(DType::kI32, {96, 80}, 14, -8, 8).castTo(DType::kF32)}});
}

TEST(QuantGpu, QuantizeInAConvEpiloguePerChannel) {
  // Conv NCHW, then Q along axis 1 (the output channels): exact integer sums again.
  expectGpuMatchesReference(
      fmt::format(R"(graph @g(%x: f32[2,8,10,10], %w: f32[16,8,3,3]) -> (y: u8[2,16,8,8]) {{
  %c = conv(%x, %w) : f32[2,16,8,8]
  %s = constant f32[16] {0}
  %z = constant u8[16] {1}
  %y = quantize_linear(%c, %s, %z) {{axis = 1}} : u8[2,16,8,8]
  return %y
}})",
                  dense({2.0, 1.0, 0.5, 4.0, 0.25, 8.0}, 16), dense({128, 0, 100, 30}, 16)),
      {{"x", randomInts(DType::kI32, {2, 8, 10, 10}, 15, -3, 3).castTo(DType::kF32)},
       {"w", randomInts(DType::kI32, {16, 8, 3, 3}, 16, -3, 3).castTo(DType::kF32)}});
}

TEST(QuantGpu, ComputedScalesAndZeroPointsFromGraphInputs) {
  // The ONNX node tests' form: scale and zero point are graph inputs, per axis.
  expectGpuMatchesReference(
      R"(graph @g(%x: f32[1,3,3,2], %s: f32[3], %z: u8[3], %q: u8[1,3,3,2]) -> (y: u8[1,3,3,2], d: f32[1,3,3,2]) {
  %y = quantize_linear(%x, %s, %z) {axis = 1} : u8[1,3,3,2]
  %d = dequantize_linear(%q, %s, %z) {axis = 1} : f32[1,3,3,2]
  return %y, %d
})",
      {{"x", tieFloats({1, 3, 3, 2}, {1.0f, 2.0f, 4.0f}, 6, 300.0f, 17)},
       {"s", Tensor::fromVector<float>(DType::kF32, {3}, {1, 2, 4})},
       {"z", Tensor::fromVector<uint8_t>(DType::kU8, {3}, {84, 24, 196})},
       {"q", randomInts(DType::kU8, {1, 3, 3, 2}, 18)}});
}

TEST(QuantGpu, VerifyChecksAnInt8ModelWhoseLastLayerNormRunsInHalf) {
  // With --precision fp16 the layer norm that reads an int8 matmul's requantized output runs in
  // float16 and the float32 output is its cast, while the layer norm's value keeps the
  // output's name (BERT int8's last layer): --verify must check that value as itself (it
  // compared it with the float32 output, a dtype mismatch).
  DLC_REQUIRE_GPU(driver);
  SessionOptions so;
  so.precision = "fp16";
  rt::testing::expectGpuMatchesReference(
      fmt::format(R"(graph @g(%x: f32[64,64]) -> (y: ?) {{
  %s = constant f32[] dense<[0.05]>
  %z = constant i8[] dense<[0]>
  %xq = quantize_linear(%x, %s, %z) : i8[64,64]
  %xd = dequantize_linear(%xq, %s, %z) : f32[64,64]
  %wq = constant i8[64,48] {}
  %ws = constant f32[] dense<[0.02]>
  %w = dequantize_linear(%wq, %ws, %z) : f32[64,48]
  %m = matmul(%xd, %w) : f32[64,48]
  %g = constant f32[48] {}
  %b = constant f32[48] {}
  %t = constant f32[] dense<[0.25]>
  %mq = quantize_linear(%m, %t, %z) : i8[64,48]
  %md = dequantize_linear(%mq, %t, %z) : f32[64,48]
  %y = layer_normalization(%md, %g, %b) {{axis = -1}} : f32[64,48]
  return %y
}})",
                  dense({3, -7, 12, 0, -1, 5, 9, -11}, 64 * 48), dense({1.0, 0.5, 2.0}, 48),
                  dense({0.0, 0.25, -0.5}, 48)),
      randomInts(DType::kI32, {64, 64}, 19, -6, 6).castTo(DType::kF32), 2, so);
}

} // namespace
} // namespace dlc
