// realize-int8: the realized graph (int8 products, rescale, channels-last convolutions) computes
// what the dequantized float graph computes, up to float rounding; and what cannot run as an
// int8 product stays as it was.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "numerics_util.h"
#include "tests/unit/int8_text_util.h"

namespace dlc {
namespace {

using testing::after;
using testing::countOps;
using testing::expectSameResults;
using testing::int8Dense;
using testing::parsed;

std::string floats(int64_t n, uint32_t seed, double lo, double hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::string s;
  for (int64_t i = 0; i < n; ++i)
    s += fmt::format("{}{:.6g}", i ? ", " : "", dist(rng));
  return "dense<[" + s + "]>";
}

// A 1x1 conv with a per-channel weight and a bias, then relu; a 3x3 strided conv whose output
// is added to the block input (the layout moves through the add); a 3-D MatMul with a
// per-tensor weight; a Gemm with transB, alpha and beta.
std::string quantizedText() {
  return fmt::format(
      R"(graph @q(%x: f32[2,16,6,6], %m: f32[2,3,32], %a: f32[4,32]) -> (y1: ?, y2: ?, z: ?, r: ?) {{
  %sx = constant f32[] dense<[0.02]>
  %zx = constant i8[] dense<[0]>
  %xq = quantize_linear(%x, %sx, %zx) : i8[2,16,6,6]
  %xd = dequantize_linear(%xq, %sx, %zx) : f32[2,16,6,6]
  %w1q = constant i8[16,16,1,1] {}
  %w1s = constant f32[16] {}
  %w1 = dequantize_linear(%w1q, %w1s) {{axis = 0}} : f32[16,16,1,1]
  %b1 = constant f32[16] {}
  %c1 = conv(%xd, %w1, %b1) : f32[2,16,6,6]
  %y1 = relu(%c1) : f32[2,16,6,6]
  %w2q = constant i8[16,16,3,3] {}
  %w2s = constant f32[] dense<[0.003]>
  %w2 = dequantize_linear(%w2q, %w2s) : f32[16,16,3,3]
  %c2 = conv(%xd, %w2) {{pads = [1, 1, 1, 1]}} : f32[2,16,6,6]
  %y2 = add(%c2, %xd) : f32[2,16,6,6]
  %mq = quantize_linear(%m, %sx, %zx) : i8[2,3,32]
  %md = dequantize_linear(%mq, %sx, %zx) : f32[2,3,32]
  %wmq = constant i8[32,16] {}
  %wms = constant f32[16] {}
  %wm = dequantize_linear(%wmq, %wms) {{axis = 1}} : f32[32,16]
  %z = matmul(%md, %wm) : f32[2,3,16]
  %aq = quantize_linear(%a, %sx, %zx) : i8[4,32]
  %ad = dequantize_linear(%aq, %sx, %zx) : f32[4,32]
  %wgq = constant i8[8,32] {}
  %wgs = constant f32[8] {}
  %wg = dequantize_linear(%wgq, %wgs) {{axis = 0}} : f32[8,32]
  %cg = constant f32[8] {}
  %r = gemm(%ad, %wg, %cg) {{transB = 1, alpha = 0.5, beta = 2.0}} : f32[4,8]
  return %y1, %y2, %z, %r
}})",
      int8Dense(256, 1), floats(16, 2, 0.001, 0.01), floats(16, 3, -1, 1),
      int8Dense(16 * 16 * 9, 4), int8Dense(32 * 16, 5), floats(16, 6, 0.001, 0.01),
      int8Dense(8 * 32, 7), floats(8, 8, 0.001, 0.01), floats(8, 9, -1, 1));
}

/// How two graphs' integer outputs compare on the same inputs, output by output.
struct LevelDiff {
  std::string name;
  int64_t count = 0;  // elements
  int64_t differ = 0; // elements that differ
  int64_t worst = 0;  // the largest difference in levels
  int64_t spread = 0; // elements of the first graph's output unlike its element 0
};

std::vector<LevelDiff> levelDiffs(const Graph &first, const Graph &second,
                                  const std::map<std::string, Tensor> &inputs) {
  auto a = ReferenceExecutor::create(first);
  auto b = ReferenceExecutor::create(second);
  EXPECT_TRUE(a && b);
  if (!a || !b)
    return {};
  auto ra = a->run(inputs);
  auto rb = b->run(inputs);
  EXPECT_TRUE(ra && rb);
  if (!ra || !rb || ra->size() != rb->size())
    return {};
  std::vector<LevelDiff> diffs;
  for (size_t i = 0; i < ra->size(); ++i) {
    const Tensor &x = (*ra)[i].tensor, &y = (*rb)[i].tensor;
    LevelDiff d{(*ra)[i].name, x.numElements()};
    for (int64_t k = 0; k < x.numElements(); ++k) {
      const int64_t e = std::abs(x.elementAsInt64(k) - y.elementAsInt64(k));
      d.differ += e != 0;
      d.worst = std::max(d.worst, e);
      d.spread += x.elementAsInt64(k) != x.elementAsInt64(0);
    }
    diffs.push_back(d);
  }
  return diffs;
}

TEST(RealizeInt8, IntegerProductsComputeWhatTheFloatGraphComputes) {
  auto g = parsed(quantizedText());
  ASSERT_TRUE(g);
  auto r = after(*g, "realize-int8,dce");
  EXPECT_EQ(countOps(*r, Op::kConvInteger), 2);
  EXPECT_EQ(countOps(*r, Op::kMatMulInteger), 2);
  EXPECT_EQ(countOps(*r, Op::kConv) + countOps(*r, Op::kMatMul) + countOps(*r, Op::kGemm), 0);
  // Dequantized weights are gone (realized); the layout moved through relu and the add: one
  // transpose in for the shared input, one back per convolution output.
  EXPECT_EQ(countOps(*r, Op::kTranspose), 3);
  // The int32 sums are exact; the float rescale rounds differently from the float products.
  expectSameResults(*g, *r, 1e-5);
  expectSameResults(*g, *r, 1e-5, /*seed=*/7);
}

TEST(RealizeInt8, WhatHasNoInt8KernelStaysFloat) {
  // A nonzero zero point, uint8 data, a weight computed at run time, a grouped conv.
  auto g = parsed(
      fmt::format(R"(graph @n(%x: f32[1,16,4,4], %w: f32[16,16,1,1]) -> (a: ?, b: ?, c: ?, d: ?) {{
  %s = constant f32[] dense<[0.02]>
  %z3 = constant i8[] dense<[3]>
  %zu = constant u8[] dense<[128]>
  %z0 = constant i8[] dense<[0]>
  %q3 = quantize_linear(%x, %s, %z3) : i8[1,16,4,4]
  %d3 = dequantize_linear(%q3, %s, %z3) : f32[1,16,4,4]
  %qu = quantize_linear(%x, %s, %zu) : u8[1,16,4,4]
  %du = dequantize_linear(%qu, %s, %zu) : f32[1,16,4,4]
  %q0 = quantize_linear(%x, %s, %z0) : i8[1,16,4,4]
  %d0 = dequantize_linear(%q0, %s, %z0) : f32[1,16,4,4]
  %wq = constant i8[16,16,1,1] {}
  %wd = dequantize_linear(%wq, %s) : f32[16,16,1,1]
  %wgq = constant i8[16,4,1,1] {}
  %wgd = dequantize_linear(%wgq, %s) : f32[16,4,1,1]
  %a = conv(%d3, %wd) : f32[1,16,4,4]
  %b = conv(%du, %wd) : f32[1,16,4,4]
  %c = conv(%d0, %w) : f32[1,16,4,4]
  %d = conv(%d0, %wgd) {{group = 4}} : f32[1,16,4,4]
  return %a, %b, %c, %d
}})",
                  int8Dense(256, 1), int8Dense(64, 2)));
  ASSERT_TRUE(g);
  std::ostringstream log;
  auto r = after(*g, "realize-int8", &log);
  EXPECT_EQ(countOps(*r, Op::kConvInteger), 0) << log.str();
  EXPECT_EQ(countOps(*r, Op::kConv), 4);
  const std::string text = log.str();
  EXPECT_NE(text.find("zero point 0"), std::string::npos) << text;
  EXPECT_NE(text.find("not int8"), std::string::npos) << text;
  EXPECT_NE(text.find("not a dequantized int8 constant"), std::string::npos) << text;
  EXPECT_NE(text.find("group 1"), std::string::npos) << text;
  // The dequantized constant weights the convolutions keep are folded to float.
  EXPECT_EQ(countOps(*r, Op::kDequantizeLinear), 3);
  expectSameResults(*g, *r, 0);
}

} // namespace
} // namespace dlc

namespace dlc {
namespace {

/// Every pair (a, b) of int8 values, as two [65536] tensors.
std::map<std::string, Tensor> everyInt8Pair() {
  Tensor a = Tensor::zeros(DType::kI8, {65536}), b = Tensor::zeros(DType::kI8, {65536});
  for (int i = 0; i < 65536; ++i) {
    a.mutableData<int8_t>()[i] = static_cast<int8_t>(i / 256 - 128);
    b.mutableData<int8_t>()[i] = static_cast<int8_t>(i % 256 - 128);
  }
  return {{"a", a}, {"b", b}};
}

TEST(RealizeInt8, RequantizationOnItsOwnGridIsExactInIntegers) {
  // Q(DQ(a)), Q(relu(DQ(a))) and Q(DQ(a) + DQ(b)) on one grid become a, max(a, z) and the
  // saturating integer sum: equal to the float graph for every pair of int8 values, over
  // scales from tiny to large and zero points at both ends.
  for (const char *scale : {"0.05", "0.0078125", "3.3e-07", "123.457", "1e+25"})
    for (int zero : {0, -128, 127, 5}) {
      SCOPED_TRACE(fmt::format("scale {} zero point {}", scale, zero));
      auto g =
          parsed(fmt::format(R"(graph @rq(%a: i8[65536], %b: i8[65536]) -> (d: ?, r: ?, s: ?) {{
  %sc = constant f32[] dense<[{0}]>
  %z = constant i8[] dense<[{1}]>
  %da = dequantize_linear(%a, %sc, %z) : f32[65536]
  %db = dequantize_linear(%b, %sc, %z) : f32[65536]
  %d = quantize_linear(%da, %sc, %z) : i8[65536]
  %u = relu(%da) : f32[65536]
  %r = quantize_linear(%u, %sc, %z) : i8[65536]
  %t = add(%da, %db) : f32[65536]
  %s = quantize_linear(%t, %sc, %z) : i8[65536]
  return %d, %r, %s
}})",
                             scale, zero));
      ASSERT_TRUE(g);
      auto r = after(*g, "realize-int8,dce");
      EXPECT_EQ(countOps(*r, Op::kQuantizeLinear), 0);
      for (const LevelDiff &d : levelDiffs(*g, *r, everyInt8Pair()))
        EXPECT_EQ(d.differ, 0) << "output " << d.name;
    }
}

TEST(RealizeInt8, FastRequantizeFoldsTheScalesWithinOneLevel) {
  // A conv with per-channel weights, bias and relu, and a Gemm with a bias, each quantized at
  // its output: fast-requantize divides the rescale and bias by the output scale and leaves a
  // quantization by 1. Against the exact requantization every level is within one step and
  // almost all are equal (a tie within a few roundings is rare).
  const std::string text = fmt::format(
      R"(graph @fq(%x: f32[2,16,6,6], %a: f32[64,32]) -> (y: ?, r: ?) {{
  %sx = constant f32[] dense<[0.02]>
  %zx = constant i8[] dense<[0]>
  %xq = quantize_linear(%x, %sx, %zx) : i8[2,16,6,6]
  %xd = dequantize_linear(%xq, %sx, %zx) : f32[2,16,6,6]
  %w1q = constant i8[16,16,3,3] {}
  %w1s = constant f32[16] {}
  %w1 = dequantize_linear(%w1q, %w1s) {{axis = 0}} : f32[16,16,3,3]
  %b1 = constant f32[16] {}
  %c1 = conv(%xd, %w1, %b1) {{pads = [1, 1, 1, 1]}} : f32[2,16,6,6]
  %u1 = relu(%c1) : f32[2,16,6,6]
  %so = constant f32[] dense<[0.0137]>
  %zo = constant i8[] dense<[-5]>
  %y = quantize_linear(%u1, %so, %zo) : i8[2,16,6,6]
  %aq = quantize_linear(%a, %sx, %zx) : i8[64,32]
  %ad = dequantize_linear(%aq, %sx, %zx) : f32[64,32]
  %wgq = constant i8[48,32] {}
  %wgs = constant f32[48] {}
  %wg = dequantize_linear(%wgq, %wgs) {{axis = 0}} : f32[48,32]
  %cg = constant f32[48] {}
  %g0 = gemm(%ad, %wg, %cg) {{transB = 1}} : f32[64,48]
  %sg = constant f32[] dense<[0.0031]>
  %r = quantize_linear(%g0, %sg, %zx) : i8[64,48]
  return %y, %r
}})",
      int8Dense(16 * 16 * 9, 11), floats(16, 12, 0.001, 0.01), floats(16, 13, -0.2, 0.2),
      int8Dense(48 * 32, 14), floats(48, 15, 0.0005, 0.002), floats(48, 16, -0.1, 0.1));
  auto g = parsed(text);
  ASSERT_TRUE(g);
  auto exact = after(*g, "realize-int8,dce");
  std::ostringstream log;
  auto fast = after(*g, "realize-int8{fast-requantize=true},dce", &log);
  // Both quantizations now divide by 1; the exact graph keeps its scales.
  auto unitScales = [](const Graph &h) {
    int n = 0;
    for (const Node *q : h.nodes())
      n += q->op() == Op::kQuantizeLinear && q->input(1)->isConstant() &&
           q->input(1)->constant().elementAsDouble(0) == 1.0;
    return n;
  };
  EXPECT_EQ(unitScales(*exact), 0);
  EXPECT_EQ(unitScales(*fast), 4); // y and r folded, the inputs' xq and aq multiplied
  for (uint64_t seed : {1, 2, 3})
    for (const LevelDiff &d : levelDiffs(*exact, *fast, testing::randomInputs(*g, seed))) {
      EXPECT_LE(d.worst, 1) << "output " << d.name;
      EXPECT_LE(d.differ * 100, d.count) << "output " << d.name;
      EXPECT_GT(d.spread * 2, d.count) << "output " << d.name << ": levels vary";
    }
}

TEST(RealizeInt8, FastRequantizeMultipliesWhatItCannotFold) {
  // A rescaled value read twice and a product that is not an int32 one cannot take the scale
  // into their constants: their quantizations multiply by the scale's reciprocal (4) and
  // quantize by 1, within one level of the exact division. A computed scale keeps its division.
  auto g = parsed(R"(graph @nf(%m: i32[4,8], %f: f32[4,8], %s: f32[]) -> (a: ?, b: ?, c: ?, d: ?) {
  %c = cast(%m) {to = f32} : f32[4,8]
  %k = constant f32[] dense<[0.5]>
  %x = mul(%c, %k) : f32[4,8]
  %z = constant i8[] dense<[0]>
  %a = quantize_linear(%x, %s, %z) : i8[4,8]
  %t = constant f32[] dense<[0.25]>
  %x2 = mul(%c, %k) : f32[4,8]
  %b = quantize_linear(%x2, %t, %z) : i8[4,8]
  %d = relu(%x2) : f32[4,8]
  %y = mul(%f, %k) : f32[4,8]
  %c2 = quantize_linear(%y, %t, %z) : i8[4,8]
  return %a, %b, %c2, %d
})");
  ASSERT_TRUE(g);
  auto fast = after(*g, "realize-int8{fast-requantize=true}");
  std::map<std::string, const Node *> byOutput;
  for (const Node *n : fast->nodes())
    if (n->output(0))
      byOutput[n->output(0)->name()] = n;
  for (const char *name : {"b", "c2"}) {
    const Node *q = byOutput.at(name);
    ASSERT_EQ(q->op(), Op::kQuantizeLinear);
    EXPECT_EQ(q->input(1)->constant().elementAsDouble(0), 1.0) << name;
    const Node *mul = q->input(0)->producer();
    ASSERT_TRUE(mul && mul->op() == Op::kMul) << name;
    EXPECT_EQ(mul->input(1)->constant().elementAsDouble(0), 4.0) << name;
    EXPECT_FALSE(mul->input(0)->isConstant()) << name; // x2's or y's own constant is untouched
  }
  EXPECT_FALSE(byOutput.at("a")->input(1)->isConstant());
  // 1/0.25 is exact: the levels are the exact division's.
  auto exact = after(*g, "realize-int8");
  for (uint64_t seed : {1, 2})
    for (const LevelDiff &d : levelDiffs(*exact, *fast, testing::randomInputs(*g, seed)))
      EXPECT_EQ(d.differ, 0) << "output " << d.name;
}

TEST(RealizeInt8, InverseScaleLevelsAreWithinOneOfTheDivision) {
  // 1/0.0137 is not a float: x * RN(1/s) moves a level only next to a tie. Over 4096 values of
  // a GELU spread across the int8 range, no level is more than one step away and almost all
  // are the exact division's.
  auto g = parsed(R"(graph @q(%x: f32[64,64]) -> (y: ?) {
  %g = gelu(%x) : f32[64,64]
  %s = constant f32[] dense<[0.0137]>
  %z = constant i8[] dense<[-20]>
  %y = quantize_linear(%g, %s, %z) : i8[64,64]
  return %y
})");
  ASSERT_TRUE(g);
  auto exact = after(*g, "realize-int8");
  auto fast = after(*g, "realize-int8{fast-requantize=true}");
  EXPECT_EQ(countOps(*exact, Op::kMul), 0);
  EXPECT_EQ(countOps(*fast, Op::kMul), 1);
  Tensor x = Tensor::zeros(DType::kF32, {64, 64});
  for (int64_t i = 0; i < x.numElements(); ++i)
    x.mutableData<float>()[i] = -1.0f + 3.0f * static_cast<float>(i) / 4096.0f;
  for (const LevelDiff &d : levelDiffs(*exact, *fast, {{"x", x}})) {
    EXPECT_LE(d.worst, 1) << "output " << d.name;
    EXPECT_LE(d.differ * 100, d.count) << "output " << d.name;
    EXPECT_GT(d.spread * 2, d.count) << "output " << d.name << ": levels vary";
  }
}

} // namespace
} // namespace dlc

namespace dlc {
namespace {

TEST(RealizeInt8, QLinearOpsBecomeIntegerOpsThatComputeTheSame) {
  // QLinearMatMul (uint8 per-row/per-column scales, int8 per-tensor, batched a) and
  // DynamicQuantizeLinear, against the reference's own evaluation of those ops, exactly.
  auto g = parsed(
      R"(graph @q(%a: u8[5,16], %as: f32[5], %az: u8[5], %b: u8[16,7], %bs: f32[7], %bz: u8[7], %ys: f32[], %yz: u8[], %c: i8[2,3,16], %cs: f32[], %d: i8[16,4], %x: f32[3,11]) -> (y: ?, z: ?, q: ?, qs: ?, qz: ?) {
  %y = qlinear_matmul(%a, %as, %az, %b, %bs, %bz, %ys, %yz) : ?
  %cz = constant i8[] dense<[3]>
  %zs = constant f32[] dense<[0.37]>
  %zz = constant i8[] dense<[-5]>
  %z = qlinear_matmul(%c, %cs, %cz, %d, %cs, %cz, %zs, %zz) : ?
  %q, %qs, %qz = dynamic_quantize_linear(%x) : ?, ?, ?
  return %y, %z, %q, %qs, %qz
})");
  ASSERT_TRUE(g);
  auto r = after(*g, "realize-int8,dce");
  EXPECT_EQ(countOps(*r, Op::kQLinearMatMul), 0);
  EXPECT_EQ(countOps(*r, Op::kDynamicQuantizeLinear), 0);
  EXPECT_EQ(countOps(*r, Op::kMatMulInteger), 2);
  for (uint64_t seed : {1, 2, 3, 4})
    expectSameResults(*g, *r, 0.0, seed);
}

TEST(RealizeInt8, DynamicQuantizeLinearOfOneSignOrZeros) {
  // The range always includes 0; an all-zero input has scale 1 and zero point 0.
  for (const char *data : {"dense<[0.5, 1.5, 3.0, 2.25]>", "dense<[-0.5, -1.5, -3.0, -2.25]>",
                           "dense<[0.0, 0.0, 0.0, 0.0]>"}) {
    SCOPED_TRACE(data);
    auto g = parsed(fmt::format(R"(graph @q() -> (q: ?, qs: ?, qz: ?) {{
  %x = constant f32[4] {}
  %q, %qs, %qz = dynamic_quantize_linear(%x) : ?, ?, ?
  return %q, %qs, %qz
}})",
                                data));
    ASSERT_TRUE(g);
    auto r = after(*g, "realize-int8,dce");
    EXPECT_EQ(countOps(*r, Op::kDynamicQuantizeLinear), 0);
    expectSameResults(*g, *r, 0.0);
  }
}

} // namespace
} // namespace dlc

namespace dlc {
namespace {

TEST(RealizeInt8, QLinearConvBecomesAnIntegerConvThatComputesTheSame) {
  // Per-channel weight scales and zero points, a bias, two groups, padding and a stride;
  // and an int8 one with per-tensor parameters. Exactly the reference's QLinearConv.
  auto g = parsed(
      R"(graph @q(%x: u8[2,4,7,7], %xs: f32[], %xz: u8[], %w: u8[6,2,3,3], %ws: f32[6], %wz: u8[6], %ys: f32[], %yz: u8[], %b: i32[6], %c: i8[1,3,5,5], %v: i8[4,3,1,1]) -> (y: ?, z: ?) {
  %y = qlinear_conv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %b) {group = 2, pads = [1, 1, 1, 1], strides = [2, 2]} : ?
  %cs = constant f32[] dense<[0.02]>
  %cz = constant i8[] dense<[1]>
  %vs = constant f32[] dense<[0.5]>
  %vz = constant i8[] dense<[0]>
  %zs = constant f32[] dense<[0.3]>
  %zz = constant i8[] dense<[-7]>
  %z = qlinear_conv(%c, %cs, %cz, %v, %vs, %vz, %zs, %zz) : ?
  return %y, %z
})");
  ASSERT_TRUE(g);
  auto r = after(*g, "realize-int8,dce");
  EXPECT_EQ(countOps(*r, Op::kQLinearConv), 0);
  EXPECT_EQ(countOps(*r, Op::kConvInteger), 2);
  for (uint64_t seed : {1, 2, 3})
    expectSameResults(*g, *r, 0.0, seed);
}

} // namespace
} // namespace dlc
