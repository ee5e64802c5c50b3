#include "ir/printer.h"

#include <bit>
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "ir/tensor_text.h"
#include "ir/text_util.h"
#include "tests/unit/ir/text_test_graphs.h"

namespace dlc {
namespace {

using namespace dlc::text;

TEST(Printer, PrintsTheDocumentedExample) {
  Graph g("mlp");
  Value *x = g.addInput("x", TensorType(DType::kF32, Shape({Dim::symbol("N"), Dim(784)})));
  std::vector<float> wdata(784 * 128, 0.5f);
  Value *w0 = g.addConstant("w0", Tensor::fromVector<float>(DType::kF32, {784, 128}, wdata));
  g.addConstant("b0", Tensor::fromVector<float>(DType::kF32, {4}, {0.5f, -1.0f, 0.0f, 2.0f}));
  g.addConstant("shape", Tensor::vectorI64({-1, 128}));
  Node *mm = g.createNode(Op::kMatMul, {x, w0}, 1, "MatMul_0");
  g.renameValue(mm->output(0), "h");
  mm->output(0)->setType(TensorType(DType::kF32, Shape({Dim::symbol("N"), Dim(128)})));
  mm->setDevice(Device::gpu(0));
  Node *split = g.createNode(Op::kSplit, {mm->output(0), nullptr}, 2);
  split->setAttr("num_outputs", Attribute(int64_t{2}));
  split->setAttr("axis", Attribute(int64_t{1}));
  TensorType half(DType::kF32, Shape({Dim::symbol("N"), Dim(64)}));
  g.renameValue(split->output(0), "a");
  g.renameValue(split->output(1), "b");
  split->output(0)->setType(half);
  split->output(1)->setType(half);
  Node *drop = g.createNode(Op::kDropout, {split->output(0)}, 2);
  g.renameValue(drop->output(0), "d");
  drop->output(0)->setType(half);
  drop->removeOutput(1);
  g.addOutput("y", drop->output(0), TensorType(DType::kF32, Shape({Dim::symbol("N"), Dim(10)})));

  std::string hash = formatHash(w0->constant());
  EXPECT_EQ(printGraph(g),
            "graph @mlp(%x: f32[N,784]) -> (y: f32[N,10]) {\n"
            "  %w0 = constant f32[784,128] dense<hash:\"" +
                hash +
                "\">\n"
                "  %b0 = constant f32[4] dense<[0.5, -1.0, 0.0, 2.0]>\n"
                "  %shape = constant i64[2] dense<[-1, 128]>\n"
                "  %h = matmul(%x, %w0) : f32[N,128] @gpu:0 loc(\"MatMul_0\")\n"
                "  %a, %b = split(%h, _) {axis = 1, num_outputs = 2} : f32[N,64], f32[N,64]\n"
                "  %d, _ = dropout(%a) : f32[N,64], _\n"
                "  return %d\n"
                "}\n");
  EXPECT_EQ(hash.size(), 16u);
  EXPECT_EQ(hash, fmt::format("{:016x}", w0->constant().hash()));
}

TEST(Printer, FloatsAreShortestAndAlwaysLookLikeFloats) {
  EXPECT_EQ(formatF32(1.0f), "1.0");
  EXPECT_EQ(formatF32(0.1f), "0.1");
  EXPECT_EQ(formatF32(-0.0f), "-0.0");
  EXPECT_EQ(formatF32(1e-05f), "1e-05");
  EXPECT_EQ(formatF32(1e10f), "1e+10");
  EXPECT_EQ(formatF32(123456.0f), "123456.0");
  EXPECT_EQ(formatF32(INFINITY), "inf");
  EXPECT_EQ(formatF32(-INFINITY), "-inf");
  EXPECT_EQ(formatF32(std::bit_cast<float>(0x7fc00000u)), "nan");
  EXPECT_EQ(formatF32(std::bit_cast<float>(0xffc00000u)), "nan(0xffc00000)");
  EXPECT_EQ(formatF64(0.1), "0.1");
  EXPECT_EQ(formatF64(std::bit_cast<double>(0xfff8000000000000ull)), "nan(0xfff8000000000000)");
  EXPECT_EQ(formatF16(0x3c00), "1.0");
  EXPECT_EQ(formatF16(0x7e00), "nan");
  EXPECT_EQ(formatF16(0xfe00), "nan(0xfe00)");
  EXPECT_EQ(formatBF16(0x3f80), "1.0");
  EXPECT_EQ(formatBF16(0x7fc1), "nan(0x7fc1)");
}

TEST(Printer, EveryF16AndBF16BitPatternReparsesExactly) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    uint16_t bits = static_cast<uint16_t>(b);
    auto h = parseF16(formatF16(bits));
    ASSERT_TRUE(h.has_value()) << formatF16(bits);
    ASSERT_EQ(*h, bits) << formatF16(bits);
    auto bf = parseBF16(formatBF16(bits));
    ASSERT_TRUE(bf.has_value()) << formatBF16(bits);
    ASSERT_EQ(*bf, bits) << formatBF16(bits);
  }
}

TEST(Printer, RandomF32AndF64BitPatternsReparseExactly) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 200000; ++i) {
    uint64_t r = rng();
    uint32_t b32 = static_cast<uint32_t>(r);
    auto f = parseF32(formatF32(std::bit_cast<float>(b32)));
    ASSERT_TRUE(f.has_value()) << formatF32(std::bit_cast<float>(b32));
    ASSERT_EQ(std::bit_cast<uint32_t>(*f), b32) << formatF32(std::bit_cast<float>(b32));
    auto d = parseF64(formatF64(std::bit_cast<double>(r)));
    ASSERT_TRUE(d.has_value()) << formatF64(std::bit_cast<double>(r));
    ASSERT_EQ(std::bit_cast<uint64_t>(*d), r) << formatF64(std::bit_cast<double>(r));
  }
}

TEST(Printer, NamesAreQuotedOnlyWhenNeeded) {
  EXPECT_EQ(formatName("x.1-a_b$"), "x.1-a_b$");
  EXPECT_EQ(formatName("123"), "123");
  EXPECT_EQ(formatName("/conv1/Conv_output_0"), "\"/conv1/Conv_output_0\"");
  EXPECT_EQ(formatName(""), "\"\"");
  EXPECT_EQ(formatName("a b"), "\"a b\"");
  EXPECT_EQ(quoteString("q\"b\\n\n\t\x01\xff"), "\"q\\\"b\\\\n\\n\\t\\x01\\xff\"");
  EXPECT_EQ(formatSymbol("batch"), "batch");
  EXPECT_EQ(formatSymbol("3d"), "\"3d\"");
  EXPECT_EQ(formatSymbol("nan"), "\"nan\"");
  EXPECT_EQ(formatSymbol("-n"), "\"-n\"");
}

TEST(Printer, Types) {
  EXPECT_EQ(formatType(TensorType()), "?");
  EXPECT_EQ(formatType(TensorType(DType::kF32, Shape::unranked())), "f32[*]");
  EXPECT_EQ(formatType(TensorType(DType::kI64, Shape())), "i64[]");
  EXPECT_EQ(formatType(TensorType(DType::kUnknown, Shape({Dim(2), Dim()}))), "?[2,?]");
  EXPECT_EQ(formatType(TensorType(DType::kBF16, Shape({Dim::symbol("N"), Dim::symbol("a b")}))),
            "bf16[N,\"a b\"]");
}

TEST(Printer, ConstantsInlineUpToTheLimitThenHashOrBytes) {
  Tensor small = Tensor::fromVector<int32_t>(DType::kI32, {2}, {1, -2});
  Tensor big = Tensor::fromVector<uint8_t>(DType::kU8, {17}, std::vector<uint8_t>(17, 0xab));
  PrintOptions dflt;
  EXPECT_EQ(formatDense(small, dflt), "dense<[1, -2]>");
  EXPECT_EQ(formatDense(big, dflt), "dense<hash:\"" + formatHash(big) + "\">");
  PrintOptions withData;
  withData.printConstants = true;
  EXPECT_EQ(formatDense(small, withData), "dense<[1, -2]>");
  std::string hex;
  for (int i = 0; i < 17; ++i)
    hex += "ab";
  EXPECT_EQ(formatDense(big, withData), "dense<0x" + hex + ">");
  PrintOptions tight;
  tight.inlineLimit = 1;
  tight.printConstants = true;
  EXPECT_EQ(formatDense(small, tight), "dense<0x01000000feffffff>");
  EXPECT_EQ(formatTensor(Tensor::zeros(DType::kBool, {0}), dflt), "bool[0] dense<[]>");
}

TEST(Printer, NodeWithEveryAttributeKind) {
  Graph g;
  Value *x = g.addInput("x", TensorType(DType::kF32, Shape({Dim(2)})));
  Node *n = g.createNode(Op::kCast, {x, nullptr}, 1, "n");
  n->setAttr("i", Attribute(int64_t{-3}));
  n->setAttr("f", Attribute(0.25f));
  n->setAttr("s", Attribute("a\"b"));
  n->setAttr("is", Attribute(std::vector<int64_t>{1, 2}));
  n->setAttr("fs", Attribute(std::vector<float>{1.0f, 1e-07f}));
  n->setAttr("ss", Attribute(std::vector<std::string>{"x", "y"}));
  n->setAttr("ei", Attribute(std::vector<int64_t>{}));
  n->setAttr("ef", Attribute(std::vector<float>{}));
  n->setAttr("es", Attribute(std::vector<std::string>{}));
  n->setAttr("to", Attribute(DType::kF16));
  n->setAttr("t", Attribute(Tensor::fromVector<uint16_t>(DType::kF16, {1}, {0x3c00})));
  EXPECT_EQ(printNode(*n), "%n = cast(%x, _) {ef = floats[], ei = ints[], es = strings[], "
                           "f = 0.25, fs = [1.0, 1e-07], i = -3, is = [1, 2], s = \"a\\\"b\", "
                           "ss = [\"x\", \"y\"], t = f16[1] dense<[1.0]>, to = f16} : ? "
                           "loc(\"n\")");
}

TEST(Printer, NodeWithoutOutputsAndEmptyGraph) {
  Graph g("");
  Value *x = g.addInput("x", TensorType());
  Node *n = g.createNode(Op::kIdentity, {x}, 0);
  n->setDevice(Device::cpu());
  EXPECT_EQ(printNode(*n), "= identity(%x) @cpu");
  Graph empty("e");
  EXPECT_EQ(printGraph(empty), "graph @e() -> () {\n  return\n}\n");
  EXPECT_EQ(printGraph(g), "graph @\"\"(%x: ?) -> () {\n  = identity(%x) @cpu\n  return\n}\n");
}

TEST(Printer, IsDeterministic) {
  auto a = testing::buildRichGraph();
  auto b = testing::buildRichGraph();
  PrintOptions opts;
  opts.printConstants = true;
  EXPECT_EQ(printGraph(*a, opts), printGraph(*b, opts));
  EXPECT_EQ(printGraph(*a), printGraph(*a));
}

} // namespace
} // namespace dlc
