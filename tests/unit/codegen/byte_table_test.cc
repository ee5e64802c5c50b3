// Epilogue tables (codegen/byte_table.h): which tails become a 256-entry table, and int8 GEMM
// kernels with one running on the host emulator against the reference, bit for bit.
#include <fmt/format.h>

#include "codegen/byte_table.h"
#include "codegen/cuda_prelude.h"
#include "codegen/gemm_kernel.h"
#include "codegen/nvrtc.h"
#include "host_check.h"

namespace dlc::codegen::testing {
namespace {

/// ResNet-50's realized residual block as realize-int8 writes it after an int8 product: rescale,
/// bias, quantize, add the int8 residual in the integer domain (saturated), then the tail
/// `tail` (reading the int8 sum %q2) that gives %y.
std::string residualBlock(int m, int k, int n, const std::string &tail) {
  return fmt::format(
      R"(graph @g(%a: i8[{0},{1}], %b: i8[{2},{1}], %r: i8[{0},{2}]) -> (y: ?) {{
  %m = matmul_integer(%a, %b) {{transB = 1}} : ?
  %f = cast(%m) {{to = f32}} : ?
  %sc = constant f32[] dense<[0.00013]>
  %ms = mul(%f, %sc) : ?
  %bias = constant f32[] dense<[0.37]>
  %ab = add(%ms, %bias) : ?
  %s1 = constant f32[] dense<[0.05]>
  %z = constant i8[] dense<[3]>
  %q = quantize_linear(%ab, %s1, %z) : ?
  %qi = cast(%q) {{to = i32}} : ?
  %ri = cast(%r) {{to = i32}} : ?
  %sum = add(%qi, %ri) : ?
  %zz = constant i32[] dense<[3]>
  %c = sub(%sum, %zz) : ?
  %hi = constant i32[] dense<[127]>
  %lo = constant i32[] dense<[-128]>
  %top = min(%c, %hi) : ?
  %sat = max(%top, %lo) : ?
  %q2 = cast(%sat) {{to = i8}} : ?
{3}  return %y
}})",
      m, k, n, tail);
}

const char *kRequantize = R"(  %d = dequantize_linear(%q2, %s1, %z) : ?
  %re = relu(%d) : ?
  %s2 = constant f32[] dense<[0.031]>
  %y = quantize_linear(%re, %s2, %z) : ?
)";

/// The same tail in realize-int8's fast-requantize form: a multiply by the scale's reciprocal,
/// then a quantization by 1.
const char *kRequantizeFast = R"(  %d = dequantize_linear(%q2, %s1, %z) : ?
  %re = relu(%d) : ?
  %inv = constant f32[] dense<[32.258064]>
  %re2 = mul(%re, %inv) : ?
  %one = constant f32[] dense<[1.0]>
  %y = quantize_linear(%re2, %one, %z) : ?
)";

/// Every int8 level, in a scrambled order.
Tensor int8Data(const std::vector<int64_t> &shape, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t x = seed * 2654435761u + 1;
  for (double &e : v) {
    x = x * 1664525u + 1013904223u;
    e = static_cast<double>(static_cast<int>(x >> 24) - 128);
  }
  return Tensor::fromVector<double>(DType::kF64, shape, v).castTo(DType::kI8);
}

std::map<std::string, Tensor> blockData(int m, int k, int n) {
  return {{"a", int8Data({m, k}, 1)}, {"b", int8Data({n, k}, 2)}, {"r", int8Data({m, n}, 3)}};
}

/// The mma.sync kernels, which the host emulator runs.
EmitOptions mmaSync(bool staged = true, bool tables = true) {
  EmitOptions o;
  o.sm90a = false;
  o.stagedEpilogue = staged;
  o.epilogueTables = tables;
  return o;
}

TEST(ByteTable, TheRequantizingTailOfAResidualBlock) {
  auto g = parseInfer(residualBlock(64, 64, 64, kRequantize));
  ASSERT_TRUE(g);
  const FusedGroup group = wholeGraph(*g);
  auto table = findByteTable(group);
  ASSERT_TRUE(table);
  // The index is the int32 sum of the two int8 values, before its saturating clamp: 511 values
  // from -256, and the clamp (Sub, Min, Max, the cast to int8) goes into the table.
  EXPECT_EQ(table->index->name(), "sum");
  ASSERT_EQ(table->nodes.size(), 7u); // Sub, Min, Max, Cast, DQ, Relu, Q
  EXPECT_EQ(table->nodes[0]->op(), Op::kSub);
  EXPECT_EQ(table->nodes[3]->op(), Op::kCast);
  EXPECT_EQ(table->nodes[4]->op(), Op::kDequantizeLinear);
  EXPECT_EQ(table->nodes[6]->op(), Op::kQuantizeLinear);
  EXPECT_EQ(table->result->name(), "y");
  EXPECT_EQ(table->lo, -256);
  EXPECT_EQ(table->entries, 511);
  EXPECT_EQ(table->bytes(), 511u);
  EXPECT_EQ(table->lookup("e10"), "dlc_tab[(int)(e10) + 256]");

  // The kernel fills the table before its main loop and loads from it per element; without
  // the option it computes the tail per element.
  const std::string src = emitSource(group, nullptr, mmaSync());
  const auto fill = src.find("__shared__ signed char dlc_tab[511];");
  ASSERT_NE(fill, std::string::npos) << src;
  EXPECT_LT(fill, src.find("auto dlc_epv")) << src;
  EXPECT_NE(src.find("= dlc_tab[(int)("), std::string::npos) << src;
  const std::string perElement = emitSource(group, nullptr, mmaSync(true, false));
  EXPECT_EQ(perElement.find("dlc_tab"), std::string::npos);
  // %s1 scales both a quantization and a dequantization: hoisted once with its reciprocal
  // (dlc_qscale), which the dequantization reads back as a float; no scale is hoisted as a
  // plain float that a quantization then takes the reciprocal of per element. The mma.sync
  // kernel loads it at the top and computes the reciprocal once its first tiles' loads are
  // issued (before the table fill), so that nothing waits for the scale before them.
  for (const std::string &s : {src, perElement}) {
    const size_t raw = s.find("const float h_in");
    ASSERT_NE(raw, std::string::npos) << s;
    const std::string h = s.substr(raw + 12, s.find("_raw", raw) - raw - 12);
    EXPECT_NE(s.find("dlc_qscale " + h + ";"), std::string::npos) << h << "\n" << s;
    const size_t late = s.find(h + " = dlc_qscale_of(" + h + "_raw);");
    EXPECT_LT(s.find("dlc_cp_async_commit();"), late) << s;
    EXPECT_LT(late, s.find("dlc_cp_async_wait<STAGES - 2>();")) << s;
    for (size_t at = s.find("const auto h_"); at != std::string::npos;
         at = s.find("const auto h_", at + 1)) {
      const size_t name = at + std::string("const auto ").size();
      const std::string h = s.substr(name, s.find(' ', name) - name);
      EXPECT_EQ(s.find("dlc_qscale_of(" + h + ")"), std::string::npos) << h << "\n" << s;
    }
  }
}

TEST(ByteTable, AUnitScaleInAHopperKernelsTable) {
  // The Hopper kernel fills its table at once, from hoisted scalars only; the unit scale of
  // fast-requantize's quantization is not hoisted (nothing reads it) and must not stop the
  // fill (it did: "the epilogue table reads 'one', which is not one element").
  auto g = parseInfer(residualBlock(256, 128, 128, kRequantizeFast));
  ASSERT_TRUE(g);
  const FusedGroup group = wholeGraph(*g);
  ASSERT_TRUE(findByteTable(group));
  auto set = gemm::emitGemmGroup(group, EmitOptions{}, gemm::parseTileConfig("128x128x128/wgs4"));
  ASSERT_TRUE(set) << set.status().message();
  const std::string &src = set->kernels[0].source;
  EXPECT_NE(src.find("dlc_tab["), std::string::npos) << src;
  EXPECT_NE(src.find("dlc_quantize_unit<signed char>"), std::string::npos) << src;
  EXPECT_EQ(src.find("dlc_qscale_of(1"), std::string::npos) << src; // no reciprocal of 1
}

TEST(ByteTable, WideIndicesTheChainBounds) {
  std::vector<std::unique_ptr<Graph>> graphs; // the tables point into them
  auto tableFor = [&](const std::string &text) {
    graphs.push_back(parseInfer(text));
    EXPECT_TRUE(graphs.back());
    return graphs.back() ? findByteTable(wholeGraph(*graphs.back())) : std::nullopt;
  };
  auto block = [](const std::string &residual, bool offsetIsInput) {
    std::string text = residualBlock(64, 64, 64, kRequantize);
    text.replace(text.find("%r: i8[64,64]"), 13,
                 "%r: " + residual + "[64,64]" + (offsetIsInput ? ", %zz: i32[]" : ""));
    if (offsetIsInput)
      text.replace(text.find("  %zz = constant i32[] dense<[3]>\n"), 34, "");
    return text;
  };
  // The sum's offset a graph input: the table still takes the sum (the offset is read once,
  // when the table is filled).
  auto table = tableFor(block("i8", true));
  ASSERT_TRUE(table);
  EXPECT_EQ(table->index->name(), "sum");
  EXPECT_EQ(table->entries, 511);
  // An unsigned residual: the sum takes [-128, 382], 511 values from -128.
  table = tableFor(block("u8", false));
  ASSERT_TRUE(table);
  EXPECT_EQ(table->index->name(), "sum");
  EXPECT_EQ(table->lo, -128);
  EXPECT_EQ(table->lookup("x"), "dlc_tab[(int)(x) + 128]");
  // A 16-bit residual: the sum takes 65791 values, too many; a 32-bit one is unbounded. The
  // index is the clamped sum then, before its conversion to int8: 256 values from -128.
  for (const char *residual : {"i16", "i32"}) {
    table = tableFor(block(residual, false));
    ASSERT_TRUE(table) << residual;
    EXPECT_EQ(table->index->name(), "sat") << residual;
    EXPECT_EQ(table->lo, -128) << residual;
    EXPECT_EQ(table->entries, 256) << residual;
  }
  // No table for the 8-bit value (its tail, dequantize and ReLU, is cheaper than a lookup): no
  // wider one either, however much of the clamp it would take.
  EXPECT_FALSE(tableFor(residualBlock(
      64, 64, 64, "  %d = dequantize_linear(%q2, %s1, %z) : ?\n  %y = relu(%d) : ?\n")));
}

TEST(ByteTable, TailsThatStayPerElement) {
  std::vector<std::unique_ptr<Graph>> graphs; // the tables point into them
  auto tableFor = [&](const std::string &tail) {
    graphs.push_back(parseInfer(residualBlock(64, 64, 64, tail)));
    EXPECT_TRUE(graphs.back());
    return graphs.back() ? findByteTable(wholeGraph(*graphs.back())) : std::nullopt;
  };
  // Cheaper than a table load: dequantize and ReLU.
  EXPECT_FALSE(tableFor("  %d = dequantize_linear(%q2, %s1, %z) : ?\n  %y = relu(%d) : ?\n"));
  // The output depends on a float value beside the 8-bit one.
  EXPECT_FALSE(tableFor("  %d = dequantize_linear(%q2, %s1, %z) : ?\n"
                        "  %e = add(%d, %ab) : ?\n"
                        "  %y = quantize_linear(%e, %s1, %z) : ?\n"));
  // A per-element operand (the residual) inside the tail.
  EXPECT_FALSE(tableFor("  %d = dequantize_linear(%q2, %s1, %z) : ?\n"
                        "  %rf = cast(%r) {to = f32} : ?\n"
                        "  %e = mul(%d, %rf) : ?\n"
                        "  %y = quantize_linear(%e, %s1, %z) : ?\n"));
  // A dearer tail to a float output: a table of floats.
  auto sigmoid = tableFor("  %d = dequantize_linear(%q2, %s1, %z) : ?\n  %y = sigmoid(%d) : ?\n");
  ASSERT_TRUE(sigmoid);
  EXPECT_EQ(sigmoid->bytes(), 511u * 4u); // indexed by the sum
}

TEST(ByteTable, KernelsWithATableCompile) {
  // NVRTC, for sm_90: the staged epilogue, the fragment one (whose heavy epilogue, sigmoid, is
  // an outlined lambda reading the block's table), and the Hopper kernel (sm_90a).
  std::vector<std::unique_ptr<Graph>> graphs;
  std::string source;
  auto add = [&](const std::string &tail, EmitOptions o, const std::string &name,
                 const char *tile = nullptr) {
    graphs.push_back(parseInfer(residualBlock(256, 128, 128, tail)));
    ASSERT_TRUE(graphs.back());
    const FusedGroup group = wholeGraph(*graphs.back(), name);
    std::string src;
    if (tile) {
      auto set = gemm::emitGemmGroup(group, o, gemm::parseTileConfig(tile));
      ASSERT_TRUE(set) << set.status().message();
      src = set->kernels[0].source;
    } else {
      src = emitSource(group, nullptr, o);
    }
    EXPECT_NE(src.find("dlc_tab["), std::string::npos) << name;
    source += src;
  };
  const std::string sigmoid =
      "  %d = dequantize_linear(%q2, %s1, %z) : ?\n  %y = sigmoid(%d) : ?\n";
  add(kRequantize, mmaSync(), "staged");
  add(sigmoid, mmaSync(false), "fragment");
  add(kRequantize, EmitOptions{}, "hopper", "128x128x128/wgs4");
  add(kRequantizeFast, EmitOptions{}, "hopper_unit_scale", "128x128x128/wgs4");
  EXPECT_NE(source.find("__attribute__((noinline))"), std::string::npos);
  EXPECT_NE(source.find("dlc_sm90::"), std::string::npos);
  NvrtcOptions sm90a;
  sm90a.archSpecific = true;
  auto mod = compileCuda(cudaPrelude(helpersNamedIn(source)) + source, "tables", sm90a);
  ASSERT_TRUE(mod) << mod.status().message();
  EXPECT_NE(mod->ptx.find("ld.shared.u8"), std::string::npos);
}

TEST(ByteTableHost, ResidualBlocksMatchTheReferenceBitForBit) {
  // The staged epilogue (dlc_epv) and the fragment one (dlc_ep / dlc_ep2), rows and columns
  // that end inside a tile, the table on and off; outputs compared byte for byte.
  std::vector<HostCase> cases;
  for (auto [m, k, n] : {std::tuple{128, 64, 128}, std::tuple{200, 96, 72}})
    for (bool staged : {true, false})
      for (bool tables : {true, false})
        cases.push_back(
            {residualBlock(m, k, n, kRequantize), blockData(m, k, n), 0, mmaSync(staged, tables)});
  // The fast-requantize tail through the 511-entry table, whose clamp saturates sums both ways
  // (the residual takes every int8 level, the quantized product too at this scale).
  cases.push_back(
      {residualBlock(128, 64, 128, kRequantizeFast), blockData(128, 64, 128), 0, mmaSync()});
  // A table of floats (sigmoid of the dequantized sum), within float rounding of the
  // reference's expf.
  cases.push_back({residualBlock(200, 96, 72,
                                 "  %d = dequantize_linear(%q2, %s1, %z) : ?\n"
                                 "  %y = sigmoid(%d) : ?\n"),
                   blockData(200, 96, 72), 1e-6, mmaSync()});
  expectHostRunsMatchReference(cases);
}

} // namespace
} // namespace dlc::codegen::testing
