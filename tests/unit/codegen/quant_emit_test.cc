// QuantizeLinear / DequantizeLinear as elementwise expressions (codegen/quant_expr.h): the
// emitted source (per-axis parameters read along their axis, not numpy-broadcast), host runs
// against the reference bit for bit (ties at .5, saturation, NaN, per tensor and per axis, int8
// and uint8), fusion into data-movement, GEMM and conv epilogues, and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "codegen/cuda_prelude.h"
#include "codegen/emitters.h"
#include "codegen/nvrtc.h"
#include "host_check.h"
#include "ir/annotations/fusion_roles.h"

namespace dlc::codegen {
namespace {

using testing::emitSource;
using testing::HostCase;
using testing::parseInfer;
using testing::wholeGraph;

/// n values of x for a quantizer whose scale is `scales[c]` along a dimension of x of that
/// many entries, `inner` elements apart: exact ties (k + 0.5) * scale for k in [-140, 140]
/// (both signs of .5, odd and even k), values far out of range, NaN, infinities, and values
/// between levels.
Tensor tieData(DType dtype, const std::vector<int64_t> &shape, const std::vector<float> &scales,
               int64_t inner) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  const float specials[] = {1e9f,
                            -1e9f,
                            std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            0.0f,
                            -0.0f};
  for (int64_t i = 0; i < n; ++i) {
    const float s = scales[static_cast<size_t>((i / inner) % static_cast<int64_t>(scales.size()))];
    const int64_t k = (i * 37) % 281 - 140;
    float x = (static_cast<float>(k) + 0.5f) * s; // a tie when the product is exact
    if (i % 5 == 1)
      x = static_cast<float>(k) * s * 1.37f;
    if (i % 23 == 7)
      x = specials[(i / 23) % 7];
    v[static_cast<size_t>(i)] = x;
  }
  return Tensor::fromVector<float>(DType::kF32, shape, v).castTo(dtype);
}

/// Every integer of an 8-bit type, repeated.
Tensor allLevels(DType dtype, const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  const int64_t lo = dtype == DType::kI8 ? -128 : 0;
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = static_cast<double>(lo + (i * 7) % 256);
  return Tensor::fromVector<double>(DType::kF64, shape, v).castTo(dtype);
}

TEST(QuantEmit, PerAxisParametersAreReadAlongTheirAxis) {
  // scale [3] for x [2,3,4,5] along axis 1: numpy would pair it with the last dim; the kernel
  // reads element i's parameters at (i / 20) % 3.
  auto g = parseInfer(R"(graph @g(%x: f32[2,3,4,5]) -> (y: ?) {
  %s = constant f32[3] dense<[0.5, 0.25, 0.125]>
  %z = constant u8[3] dense<[128, 0, 10]>
  %y = quantize_linear(%x, %s, %z) {axis = 1} : ?
  return %y
})");
  ASSERT_TRUE(g);
  KernelSet set;
  std::string src = emitSource(wholeGraph(*g, "q_axis"), &set);
  EXPECT_NE(src.find("dlc_quantize<unsigned char>((float)(dlc_load(in0v.v[j])), "
                     "dlc_qscale_of(dlc_load(in1[((((i) / 20LL) % 3LL))])), "
                     "(int)(dlc_load(in2[((((i) / 20LL) % 3LL))])))"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("out0[i] = dlc_store<unsigned char>("), std::string::npos) << src;
  testing::expectCompiles(src, "q_axis");
}

TEST(QuantEmit, DequantizeExpressions) {
  auto g = parseInfer(R"(graph @g(%x: i8[16], %w: i32[16], %h: u8[16]) -> (y: ?, v: ?, k: ?) {
  %s = constant f32[] dense<[0.5]>
  %z = constant i8[] dense<[-3]>
  %y = dequantize_linear(%x, %s, %z) : ?
  %t = constant f64[] dense<[0.25]>
  %v = dequantize_linear(%w, %t) : ?
  %sh = constant f16[] dense<[0.125]>
  %k = dequantize_linear(%h, %sh) : ?
  return %y, %v, %k
})");
  ASSERT_TRUE(g);
  std::string src = emitSource(wholeGraph(*g, "dq"));
  // The vector loop loads the one-element scales and zero point once per step; a scale that
  // only dequantizes is a plain load, with no reciprocal.
  EXPECT_NE(src.find("const auto h_in1 = dlc_load(in1[0]);"), std::string::npos) << src;
  EXPECT_EQ(src.find("dlc_qscale_of"), std::string::npos) << src;
  EXPECT_NE(src.find("dlc_dequantize((int)(dlc_load(in0v.v[j])) - (int)(h_in2), (float)(h_in1))"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("dlc_dequantize((long long)(dlc_load(in3v.v[j])), (double)(h_in4))"),
            std::string::npos)
      << src;
  // The scalar loop (the tail) reads them per element.
  EXPECT_NE(src.find("dlc_dequantize((int)(dlc_load(in0[i])) - (int)(dlc_load(in2[0])), "
                     "(float)(dlc_load(in1[0])))"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("const double v"), std::string::npos) << src;
  testing::expectCompiles(src, "dq");
}

TEST(QuantHostRun, QuantizeMatchesTheReferenceBitForBit) {
  const std::vector<float> axisScales = {0.5f, 0.25f, 0.1f};
  testing::expectHostRunsMatchReference({
      // Per tensor, int8 with a zero point: ties round to even, then the zero point.
      {R"(graph @g(%x: f32[1000]) -> (y: ?) {
  %s = constant f32[] dense<[0.5]>
  %z = constant i8[] dense<[-3]>
  %y = quantize_linear(%x, %s, %z) : ?
  return %y
})",
       {{"x", tieData(DType::kF32, {1000}, {0.5f}, 1)}}},
      // Per tensor, no zero point: uint8; a scale that is not a power of two.
      {R"(graph @g(%x: f32[999]) -> (y: ?) {
  %s = constant f32[] dense<[0.1]>
  %y = quantize_linear(%x, %s) : ?
  return %y
})",
       {{"x", tieData(DType::kF32, {999}, {0.1f}, 1)}}},
      // Per axis (axis 1 of 4), uint8 zero points.
      {R"(graph @g(%x: f32[2,3,4,5]) -> (y: ?) {
  %s = constant f32[3] dense<[0.5, 0.25, 0.1]>
  %z = constant u8[3] dense<[128, 0, 10]>
  %y = quantize_linear(%x, %s, %z) {axis = 1} : ?
  return %y
})",
       {{"x", tieData(DType::kF32, {2, 3, 4, 5}, axisScales, 20)}}},
      // Per axis along a middle axis, int8 by output_dtype, no zero point.
      {R"(graph @g(%x: f32[3,4,6]) -> (y: ?) {
  %s = constant f32[4] dense<[0.5, 0.25, 0.1, 3.0]>
  %y = quantize_linear(%x, %s) {axis = -2, output_dtype = i8} : ?
  return %y
})",
       {{"x", tieData(DType::kF32, {3, 4, 6}, {0.5f, 0.25f, 0.1f, 3.0f}, 6)}}},
      // f16 and bf16 x are widened; an f16 scale too.
      {R"(graph @g(%x: f16[300], %b: bf16[300]) -> (y: ?, c: ?) {
  %s = constant f16[] dense<[0.25]>
  %z = constant u8[] dense<[100]>
  %y = quantize_linear(%x, %s, %z) : ?
  %t = constant f32[] dense<[0.5]>
  %zc = constant i8[] dense<[1]>
  %c = quantize_linear(%b, %t, %zc) : ?
  return %y, %c
})",
       {{"x", tieData(DType::kF16, {300}, {0.25f}, 1)},
        {"b", tieData(DType::kBF16, {300}, {0.5f}, 1)}}},
      // Scales outside [2^-60, 2^60] (a subnormal one too) divide after scaling by 2^+-90.
      {R"(graph @g(%x: f32[500]) -> (y: ?) {
  %s = constant f32[] dense<[3.7e-20]>
  %y = quantize_linear(%x, %s) {output_dtype = i8} : ?
  return %y
})",
       {{"x", tieData(DType::kF32, {500}, {3.7e-20f}, 1)}}},
      {R"(graph @g(%x: f32[500]) -> (y: ?) {
  %s = constant f32[] dense<[2.5e+30]>
  %y = quantize_linear(%x, %s) {output_dtype = i8} : ?
  return %y
})",
       {{"x", tieData(DType::kF32, {500}, {2.5e+30f}, 1)}}},
      {R"(graph @g(%x: f32[500]) -> (y: ?) {
  %s = constant f32[] dense<[7e-42]>
  %y = quantize_linear(%x, %s) {output_dtype = i8} : ?
  return %y
})",
       {{"x", tieData(DType::kF32, {500}, {7e-42f}, 1)}}},
      // int32 x divides in double; 16-bit outputs.
      {R"(graph @g(%x: i32[64], %f: f32[64]) -> (y: ?, u: ?) {
  %s = constant f32[] dense<[2.0]>
  %z = constant i16[] dense<[-7]>
  %y = quantize_linear(%x, %s, %z) : ?
  %t = constant f32[] dense<[0.001]>
  %zu = constant u16[] dense<[30000]>
  %u = quantize_linear(%f, %t, %zu) : ?
  return %y, %u
})",
       {{"f", tieData(DType::kF32, {64}, {0.001f}, 1)}}},
  });
}

TEST(QuantHostRun, DequantizeMatchesTheReferenceBitForBit) {
  testing::expectHostRunsMatchReference({
      {R"(graph @g(%x: i8[2,3,4,5]) -> (y: ?) {
  %s = constant f32[3] dense<[0.1, 0.3, 7.7]>
  %z = constant i8[3] dense<[-128, 0, 127]>
  %y = dequantize_linear(%x, %s, %z) {axis = 1} : ?
  return %y
})",
       {{"x", allLevels(DType::kI8, {2, 3, 4, 5})}}},
      {R"(graph @g(%x: u8[600]) -> (y: ?) {
  %s = constant f32[] dense<[0.0137]>
  %z = constant u8[] dense<[131]>
  %y = dequantize_linear(%x, %s, %z) : ?
  return %y
})",
       {{"x", allLevels(DType::kU8, {600})}}},
      // Half-precision scales give half outputs, rounded once from the exact product.
      {R"(graph @g(%x: u8[512], %w: i8[512]) -> (y: ?, v: ?) {
  %s = constant f16[] dense<[0.0999755859375]>
  %y = dequantize_linear(%x, %s) : ?
  %t = constant bf16[] dense<[0.30078125]>
  %z = constant i8[] dense<[5]>
  %v = dequantize_linear(%w, %t, %z) : ?
  return %y, %v
})",
       {{"x", allLevels(DType::kU8, {512})}, {"w", allLevels(DType::kI8, {512})}}},
      // int32 and int16 inputs; a double scale.
      {R"(graph @g(%x: i32[40], %h: i16[40]) -> (y: ?, v: ?) {
  %s = constant f32[] dense<[0.1]>
  %z = constant i32[] dense<[-1000000]>
  %y = dequantize_linear(%x, %s, %z) : ?
  %t = constant f64[] dense<[0.1]>
  %v = dequantize_linear(%h, %t) : ?
  return %y, %v
})"},
  });
}

TEST(QuantHostRun, FusedChainsMatchTheReference) {
  testing::expectHostRunsMatchReference({
      // DQ (per axis) -> relu -> Q (per tensor), and the DQ value as a second output.
      {R"(graph @g(%x: i8[4,3,8]) -> (q: ?, d: ?) {
  %s = constant f32[3] dense<[0.5, 0.125, 1.5]>
  %z = constant i8[3] dense<[3, -3, 0]>
  %d = dequantize_linear(%x, %s, %z) {axis = 1} : ?
  %r = relu(%d) : ?
  %t = constant f32[] dense<[0.25]>
  %zq = constant u8[] dense<[7]>
  %q = quantize_linear(%r, %t, %zq) : ?
  return %q, %d
})",
       {{"x", allLevels(DType::kI8, {4, 3, 8})}}},
      // Q -> DQ (fake quantization) per axis 0, then an add.
      {R"(graph @g(%x: f32[5,40], %b: f32[40]) -> (y: ?) {
  %s = constant f32[5] dense<[0.5, 0.25, 0.1, 2.0, 0.03]>
  %z = constant i8[5] dense<[0, 1, -1, 100, -100]>
  %q = quantize_linear(%x, %s, %z) {axis = 0} : ?
  %d = dequantize_linear(%q, %s, %z) {axis = 0} : ?
  %y = add(%d, %b) : ?
  return %y
})",
       {{"x", tieData(DType::kF32, {5, 40}, {0.5f, 0.25f, 0.1f, 2.0f, 0.03f}, 40)}}},
      // A DQ whose x is broadcast in the group: its per-axis scale [3] pairs with dim 0 of
      // x [3,1] (view [3,1]), while the group iterates over [3,4].
      {R"(graph @g(%x: i8[3,1], %y: f32[3,4]) -> (o: ?) {
  %s = constant f32[3] dense<[0.5, 0.25, 2.0]>
  %d = dequantize_linear(%x, %s) {axis = 0} : ?
  %o = add(%d, %y) : ?
  return %o
})"},
  });
}

TEST(QuantHostRun, AUnitScaleQuantizesWithoutDividing) {
  // A constant scale of exactly 1 (what realize-int8's fast-requantize leaves) takes
  // dlc_quantize_unit: ties, NaN, infinities and saturation as the reference gives them, in an
  // elementwise kernel and in an int8 GEMM's epilogue (the mma.sync family, which the emulator
  // runs; distinct int8 data).
  const std::string elementwise = R"(graph @g(%x: f32[1000]) -> (y: ?) {
  %s = constant f32[] dense<[1.0]>
  %z = constant i8[] dense<[-3]>
  %y = quantize_linear(%x, %s, %z) : ?
  return %y
})";
  const std::string gemm = R"(graph @g(%a: i8[96,64], %b: i8[80,64]) -> (y: ?) {
  %m = matmul_integer(%a, %b) {transB = 1} : ?
  %f = cast(%m) {to = f32} : ?
  %sc = constant f32[] dense<[0.0123]>
  %ms = mul(%f, %sc) : ?
  %bias = constant f32[] dense<[-3.5]>
  %ab = add(%ms, %bias) : ?
  %r = relu(%ab) : ?
  %one = constant f32[] dense<[1.0]>
  %z = constant u8[] dense<[7]>
  %y = quantize_linear(%r, %one, %z) : ?
  return %y
})";
  for (const std::string &text : {elementwise, gemm}) {
    auto g = parseInfer(text);
    ASSERT_TRUE(g);
    const std::string src = emitSource(wholeGraph(*g, "unit"));
    EXPECT_NE(src.find("dlc_quantize_unit<"), std::string::npos) << src;
    EXPECT_EQ(src.find("dlc_quantize<"), std::string::npos) << src;
  }
  EmitOptions mmaSync;
  mmaSync.sm90a = false;
  testing::expectHostRunsMatchReference({
      {elementwise, {{"x", tieData(DType::kF32, {1000}, {1.0f}, 1)}}},
      {gemm, {}, 0, mmaSync},
  });
}

TEST(QuantHostRun, QuantizeInADataMovementEpilogue) {
  // transpose [2,3,4] -> [2,4,3], then Q along axis 1 (4 channels).
  testing::expectHostRunsMatchReference({
      {R"(graph @g(%x: f32[2,3,4]) -> (y: ?) {
  %t = transpose(%x) {perm = [0, 2, 1]} : ?
  %s = constant f32[4] dense<[0.5, 0.25, 0.1, 2.0]>
  %z = constant i8[4] dense<[1, 2, 3, 4]>
  %y = quantize_linear(%t, %s, %z) {axis = 1} : ?
  return %y
})",
       {{"x", tieData(DType::kF32, {2, 3, 4}, {0.5f}, 1)}}},
  });
}

TEST(QuantEmit, QuantizeFusesIntoGemmAndConvEpilogues) {
  // The int8 GEMM epilogue's shape: scale, bias, relu, residual, then Q per output channel.
  auto mm = parseInfer(R"(graph @g(%a: f32[64,32], %b: f32[32,6], %r: f32[64,6]) -> (y: ?) {
  %m = matmul(%a, %b) : ?
  %sc = constant f32[] dense<[0.5]>
  %ms = mul(%m, %sc) : ?
  %bias = constant f32[6] dense<[0.25, -0.5, 1.0, 0.0, 2.0, 0.75]>
  %ab = add(%ms, %bias) : ?
  %re = relu(%ab) : ?
  %res = add(%re, %r) : ?
  %s = constant f32[6] dense<[0.5, 0.25, 0.1, 2.0, 1.5, 0.03]>
  %z = constant i8[6] dense<[0, 1, -1, 5, -5, 127]>
  %y = quantize_linear(%res, %s, %z) {axis = 1} : ?
  return %y
})");
  ASSERT_TRUE(mm);
  std::string gemm = emitSource(wholeGraph(*mm, "mm_q"));
  EXPECT_NE(gemm.find("dlc_quantize<signed char>("), std::string::npos) << gemm;
  EXPECT_NE(gemm.find("dlc_store<signed char>("), std::string::npos) << gemm;
  // The one-element %sc is loaded once, before the epilogue, not per element.
  const auto hoist = gemm.find("const auto h_in");
  ASSERT_NE(hoist, std::string::npos) << gemm;
  EXPECT_LT(hoist, gemm.find("auto dlc_ep = ")) << gemm;

  // A one-element Q scale is hoisted with its reciprocal (dlc_qscale), computed once.
  auto scalar = parseInfer(R"(graph @g(%a: f32[64,32], %b: f32[32,6]) -> (y: ?) {
  %m = matmul(%a, %b) : ?
  %s = constant f32[] dense<[0.37]>
  %z = constant i8[] dense<[3]>
  %y = quantize_linear(%m, %s, %z) : ?
  return %y
})");
  ASSERT_TRUE(scalar);
  std::string sq = emitSource(wholeGraph(*scalar, "mm_qs"));
  const auto qs = sq.find("const dlc_qscale h_in");
  ASSERT_NE(qs, std::string::npos) << sq;
  EXPECT_LT(qs, sq.find("auto dlc_ep = ")) << sq;
  EXPECT_NE(sq.find("dlc_quantize<signed char>((float)(ea), dlc_qscale_of(h_in"), std::string::npos)
      << sq;

  // Conv NCHW: the scale [8] pairs with dim 1 of [2,8,6,6]: (oidx / 36) % 8.
  auto conv = parseInfer(R"(graph @g(%x: f32[2,4,6,6], %w: f32[8,4,1,1]) -> (y: ?) {
  %c = conv(%x, %w) : ?
  %s = constant f32[8] dense<[0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]>
  %z = constant u8[8] dense<[128, 128, 128, 128, 128, 128, 128, 128]>
  %y = quantize_linear(%c, %s, %z) {axis = 1} : ?
  return %y
})");
  ASSERT_TRUE(conv);
  std::string cv = emitSource(wholeGraph(*conv, "conv_q"));
  EXPECT_NE(cv.find("dlc_quantize<unsigned char>("), std::string::npos) << cv;
  EXPECT_NE(cv.find("/ 36) % 8)"), std::string::npos) << cv;
  // (The GEMM templates warn about unused tile constants: compiled without the warning check.)
  const std::string both = gemm + cv + sq;
  auto mod = compileCuda(cudaPrelude(helpersNamedIn(both)) + both, "epilogues");
  ASSERT_TRUE(mod) << mod.status().message();
  EXPECT_FALSE(mod->cubin.empty());
}

TEST(QuantEmit, FusionRolesFollowTheLayout) {
  auto g = parseInfer(R"(graph @g(%x: f32[4,6], %sd: f32[]) -> (a: ?, b: ?, c: ?) {
  %s = constant f32[6] dense<[0.5, 0.5, 0.5, 0.5, 0.5, 0.5]>
  %a = quantize_linear(%x, %s) {axis = 1} : ?
  %b = quantize_linear(%x, %sd) : ?
  %sb = constant f32[4,3] dense<[0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]>
  %c = quantize_linear(%x, %sb) {axis = 1, block_size = 2} : ?
  return %a, %b, %c
})");
  ASSERT_TRUE(g);
  const auto &nodes = g->nodes();
  EXPECT_EQ(classifyForFusion(*nodes[0]).role, FusionRole::kElementwise);
  EXPECT_EQ(classifyForFusion(*nodes[1]).role, FusionRole::kElementwise); // computed scale
  EXPECT_EQ(classifyForFusion(*nodes[2]).role, FusionRole::kOpaque);
  EXPECT_EQ(classifyForFusion(*nodes[2]).why, "blocked quantization");
  std::string why;
  EXPECT_TRUE(gpuSupports(*nodes[0], &why)) << why;
  EXPECT_FALSE(gpuSupports(*nodes[2], &why));
  EXPECT_EQ(why, "QuantizeLinear with block_size 2 (blocked quantization) has no GPU kernel");
}

TEST(QuantEmit, UnsupportedDTypesAreRefusedWithAReason) {
  auto g = parseInfer(R"(graph @g(%x: f32[4], %h: i16[4]) -> (a: ?, b: ?) {
  %s = constant f32[] dense<[0.5]>
  %z = constant i32[] dense<[0]>
  %a = quantize_linear(%x, %s, %z) : ?
  %sh = constant f16[] dense<[0.5]>
  %b = dequantize_linear(%h, %sh) : ?
  return %a, %b
})");
  ASSERT_TRUE(g);
  std::string why;
  EXPECT_FALSE(gpuSupports(*g->nodes()[0], &why));
  EXPECT_EQ(why, "QuantizeLinear to i32 has no GPU kernel (i8, u8, i16, u16 only)");
  EXPECT_FALSE(gpuSupports(*g->nodes()[1], &why));
  EXPECT_EQ(why, "DequantizeLinear of i16 input with a f16 scale has no GPU kernel (a "
                 "half-precision scale needs 8-bit input)");
  // Fusion goes by the layout; placement then keeps such a node off the GPU.
  EXPECT_TRUE(isElementwiseNode(*g->nodes()[0]));
}

} // namespace
} // namespace dlc::codegen
