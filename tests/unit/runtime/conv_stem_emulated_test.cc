// The stem convolution kernel (codegen/conv_stem.cc, `--stem-conv`) on the host emulator
// against the reference backend: ResNet's 7x7 stride-2 geometry with bias and ReLU, an odd
// stride (16-bit fragment loads), four channels with a 4x4 window, bf16, outputs of another
// width than the input (a float32 cast, an int8 quantization), and images whose tiles end
// inside a row.
#include <gtest/gtest.h>

#include <random>

#include "codegen/gemm_writer.h"
#include "ir/parser.h"
#include "runtime/jit/compile.h"
#include "runtime/jit/model.h"
#include "runtime/tensor_compare.h"
#include "unit/codegen/host_emulator.h"
#include "unit/runtime/emulated_util.h"

namespace dlc {
namespace {

using testing::dense;

struct StemCase {
  std::string name;
  std::string dtype;              // f16 or bf16
  int64_t n, c, h, w, m, k, s, p; // images, channels, height, width, out channels, window...
  std::string tail;               // after the conv: "relu", "cast_f32", "quant", ""
  int sms = 1;                    // EmitOptions::numSms: the small images here fill no more SMs
};

/// The case's graph: conv (+ bias) and its tail, in the case's dtype.
std::string graphText(const StemCase &t) {
  const int64_t oh = (t.h + 2 * t.p - t.k) / t.s + 1, ow = (t.w + 2 * t.p - t.k) / t.s + 1;
  const std::string y = fmt::format("{}[{},{},{},{}]", t.dtype, t.n, t.m, oh, ow);
  std::string body = fmt::format(
      "  %wt = constant {0}[{1},{2},{3},{3}] {4}\n"
      "  %b = constant {0}[{1}] {5}\n"
      "  %y = conv(%x, %wt, %b) {{kernel_shape = [{3}, {3}], strides = [{6}, {6}], pads = [{7}, "
      "{7}, {7}, {7}]}} : {8}\n",
      t.dtype, t.m, t.c, t.k, dense(t.m * t.c * t.k * t.k, 7, 0.3f), dense(t.m, 8, 0.5f), t.s, t.p,
      y);
  std::string ret = "%y", outType = "?";
  if (t.tail == "relu") {
    body += fmt::format("  %r = relu(%y) : {}\n", y);
    ret = "%r";
  } else if (t.tail == "cast_f32") {
    body += fmt::format("  %r = cast(%y) {{to = f32}} : f32[{},{},{},{}]\n", t.n, t.m, oh, ow);
    ret = "%r";
  } else if (t.tail == "quant") {
    body += fmt::format("  %f = cast(%y) {{to = f32}} : f32[{},{},{},{}]\n", t.n, t.m, oh, ow);
    body += "  %qs = constant f32[] dense<[0.02]>\n  %qz = constant i8[] dense<[0]>\n";
    body +=
        fmt::format("  %r = quantize_linear(%f, %qs, %qz) : i8[{},{},{},{}]\n", t.n, t.m, oh, ow);
    ret = "%r";
  }
  return fmt::format("graph @stem(%x: {}[{},{},{},{}]) -> (out: {}) {{\n{}  return {}\n}}", t.dtype,
                     t.n, t.c, t.h, t.w, outType, body, ret);
}

Tensor input(const StemCase &t) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Tensor f = Tensor::zeros(DType::kF32, {t.n, t.c, t.h, t.w});
  for (int64_t i = 0; i < f.numElements(); ++i)
    f.mutableData<float>()[i] = u(rng);
  return f.castTo(t.dtype == "bf16" ? DType::kBF16 : DType::kF16);
}

/// Compiles the case with or without the stem kernel; `used` says whether a kernel of the
/// program is the stem kernel.
Expected<rt::Program> compile(const Model &m, const std::map<std::string, Tensor> &feed, bool stem,
                              int sms, bool *used) {
  DLC_ASSIGN_OR_RETURN(auto dims, bindInputDims(m.graph(), feed));
  jit::JitOptions jo = testing::emulatedJitOptions();
  jo.lower.emit.stemConv = stem;
  jo.lower.emit.numSms = sms;
  DLC_ASSIGN_OR_RETURN(rt::Program p, jit::compileForGpu(m.graph(), dims, jo));
  *used = false;
  for (const auto &[name, source] : p.sources)
    *used = *used || source.find(": stem conv, ") != std::string::npos;
  return p;
}

class StemConvEmulated : public ::testing::TestWithParam<StemCase> {};

TEST_P(StemConvEmulated, MatchesTheReference) {
  const StemCase &t = GetParam();
  auto g = parseGraph(graphText(t), "stem.dlc");
  ASSERT_TRUE(g) << g.status().message() << "\n" << graphText(t);
  auto model = Model::fromGraph(std::move(*g));
  ASSERT_TRUE(model) << model.status().message();
  std::map<std::string, Tensor> feed = {{"x", input(t)}};
  bool used = false;
  auto program = compile(*model, feed, true, t.sms, &used);
  ASSERT_TRUE(program) << program.status().message();
  EXPECT_TRUE(used) << "the conv did not take the stem kernel";
  auto got = codegen::testing::runProgramOnHost(*program, feed);
  ASSERT_TRUE(got) << got.status().message();
  if (t.tail != "quant") {
    testing::expectReferenceOutputs(*model, feed, *got, {2e-2, 2e-2});
  } else { // int8: one level off where the f16 sums of another order land beside a tie
    SessionOptions cpu;
    cpu.backend = Backend::kCpu;
    auto session = model->createSession(cpu);
    ASSERT_TRUE(session) << session.status().message();
    auto want = session->runOrdered(feed);
    ASSERT_TRUE(want) << want.status().message();
    const Tensor a = (*got)[0].tensor.castTo(DType::kF32),
                 b = (*want)[0].tensor.castTo(DType::kF32);
    const Comparison c = compareTensors(a, b, {0.0, 1.0});
    EXPECT_TRUE(c.match) << c.str(a, b);
    int64_t off = 0;
    for (int64_t i = 0; i < a.numElements(); ++i)
      off += a.data<float>()[i] != b.data<float>()[i];
    EXPECT_LT(off, a.numElements() / 50) << "levels one step off";
  }

  bool off = true;
  ASSERT_TRUE(compile(*model, feed, false, t.sms, &off));
  EXPECT_FALSE(off) << "with --no-stem-conv the conv keeps the implicit GEMM";
}

INSTANTIATE_TEST_SUITE_P(
    Geometries, StemConvEmulated,
    ::testing::Values(StemCase{"resnet_7x7_s2", "f16", 2, 3, 32, 28, 64, 7, 2, 3, "relu"},
                      StemCase{"rows_and_tails", "f16", 2, 3, 48, 40, 64, 7, 2, 3, "relu"},
                      StemCase{"odd_stride_5x5", "f16", 1, 1, 12, 10, 32, 5, 1, 2, ""},
                      StemCase{"four_channels_4x4", "bf16", 1, 4, 16, 16, 16, 4, 2, 1, "relu"},
                      StemCase{"cast_to_f32", "f16", 1, 3, 20, 36, 48, 7, 2, 3, "cast_f32"},
                      StemCase{"int8_output", "f16", 3, 3, 32, 32, 64, 7, 2, 3, "quant"}),
    [](const auto &info) { return info.param.name; });

// `--patch-gemm`: ViT's patch embedding (16x16 windows of stride 16, bias) and its tokens
// (flatten, transpose) become a transpose of the image into patch rows and a GEMM; the GPU
// program on the emulator matches the reference, with no conv kernel and no transpose of the
// tokens left.
TEST(PatchGemm, VitPatchEmbeddingMatchesTheReference) {
  const std::string text = fmt::format(
      R"(graph @vit(%x: f16[2,3,32,48]) -> (tokens: ?) {{
  %w = constant f16[64,3,16,16] {}
  %b = constant f16[64] {}
  %fs = constant i64[3] dense<[2, 64, 6]>
  %e = conv(%x, %w, %b) {{kernel_shape = [16, 16], strides = [16, 16]}} : ?
  %f = reshape(%e, %fs) : ?
  %tokens = transpose(%f) {{perm = [0, 2, 1]}} : ?
  return %tokens
}})",
      dense(64 * 3 * 16 * 16, 4, 0.05f), dense(64, 5, 0.5f));
  auto g = parseGraph(text, "vit.dlc");
  ASSERT_TRUE(g) << g.status().message();
  auto model = Model::fromGraph(std::move(*g));
  ASSERT_TRUE(model) << model.status().message();
  StemCase shape{"vit", "f16", 2, 3, 32, 48, 64, 16, 16, 0, ""};
  std::map<std::string, Tensor> feed = {{"x", input(shape)}};
  auto dims = bindInputDims(model->graph(), feed);
  ASSERT_TRUE(dims) << dims.status().message();
  jit::JitOptions jo = testing::emulatedJitOptions();
  jo.lower.emit.patchGemm = true;
  auto program = jit::compileForGpu(model->graph(), *dims, jo);
  ASSERT_TRUE(program) << program.status().message();
  // Two kernels: the image into patch rows, the GEMM with its bias (no conv, no transpose of
  // the tokens).
  std::vector<std::string> kernels;
  for (const auto &[name, source] : program->sources)
    kernels.push_back(name.substr(name.find('_') + 1));
  EXPECT_EQ(kernels, (std::vector<std::string>{"transpose", "matmul_add"}));
  auto got = codegen::testing::runProgramOnHost(*program, feed);
  ASSERT_TRUE(got) << got.status().message();
  testing::expectReferenceOutputs(*model, feed, *got, {2e-2, 2e-2});
}

TEST(StemConv, RefusesWhatItCannotRun) {
  codegen::gemm::ConvGather g;
  g.images = 32, g.channels = 3, g.h = g.w = 224, g.oh = g.ow = 112, g.kh = g.kw = 7;
  g.strideH = g.strideW = 2, g.padH = g.padW = 3;
  std::string why;
  EXPECT_TRUE(codegen::gemm::stemConvFits(g, 64, 1, DType::kF16, DType::kF16, 132, &why)) << why;
  EXPECT_FALSE(codegen::gemm::stemConvFits(g, 64, 1, DType::kF32, DType::kF32, 132, &why));
  EXPECT_EQ(why, "the stem kernel takes f16 or bf16, not f32");
  EXPECT_FALSE(codegen::gemm::stemConvFits(g, 96, 1, DType::kF16, DType::kF16, 132, &why));
  EXPECT_EQ(why, "the stem kernel takes 16 to 64 output channels, a multiple of 16");
  g.channels = 8;
  EXPECT_FALSE(codegen::gemm::stemConvFits(g, 64, 1, DType::kF16, DType::kF16, 132, &why));
  EXPECT_EQ(why, "the stem kernel is for at most 4 input channels without groups");
  g.channels = 3, g.images = 2; // 98 tiles on 132 SMs
  EXPECT_FALSE(codegen::gemm::stemConvFits(g, 64, 1, DType::kF16, DType::kF16, 132, &why));
  EXPECT_EQ(why, "the stem kernel's 98 tiles of 256 pixels would leave SMs idle");
  EXPECT_TRUE(codegen::gemm::stemConvFits(g, 64, 1, DType::kF16, DType::kF16, 98, &why)) << why;
  g.images = 32, g.oh = g.ow = 111;
  EXPECT_FALSE(codegen::gemm::stemConvFits(g, 64, 1, DType::kF16, DType::kF16, 132, &why));
  EXPECT_EQ(why, "the stem kernel's stores need output planes a multiple of 8 pixels");
}

} // namespace
} // namespace dlc
