#include "ir/parser.h"

#include <bit>
#include <cstdio>
#include <fstream>

#include <gtest/gtest.h>

#include "ir/printer.h"

namespace dlc {
namespace {

std::unique_ptr<Graph> parseOk(const std::string &text) {
  auto g = parseGraph(text, "t.dlc");
  EXPECT_TRUE(g.hasValue()) << g.status().message();
  return g.hasValue() ? std::move(g).value() : nullptr;
}

std::string parseError(const std::string &text) {
  auto g = parseGraph(text, "t.dlc");
  EXPECT_FALSE(g.hasValue());
  return g.hasValue() ? "" : g.status().message();
}

/// A graph with one f32[2] input %x around `body` (statements and the return).
std::string wrap(const std::string &body) {
  return "graph @g(%x: f32[2]) -> (y: ?) {\n" + body + "}\n";
}

TEST(Parser, BuildsTheGraphThroughTheGraphApi) {
  auto g = parseOk(R"(// Comments run to the end of the line.
graph @mlp(%x: f32[N,784]) -> (y: f32[N,10]) {  // trailing comment
  %b0 = constant f32[4] dense<[0.5, -1.0, 0.0, 2.0]>
  %shape = constant i64[2] dense<[-1, 128]>
  %h = matmul(%x, %b0) : f32[N,128] @gpu:0 loc("MatMul_0")
  %a, %b = split(%h, _) {axis = 1, num_outputs = 2} : f32[N,64], f32[N,64]
  %d, _ = dropout(%a) : f32[N,64], _
  return %d
}
)");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->name(), "mlp");
  ASSERT_EQ(g->inputs().size(), 1u);
  EXPECT_EQ(g->inputs()[0]->type().shape[0], Dim::symbol("N"));
  ASSERT_EQ(g->constants().size(), 2u);
  EXPECT_EQ(g->constants()[1]->constant().toInt64Vector(), (std::vector<int64_t>{-1, 128}));
  std::vector<Node *> nodes = g->nodes();
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0]->op(), Op::kMatMul);
  EXPECT_EQ(nodes[0]->name(), "MatMul_0");
  EXPECT_EQ(nodes[0]->device(), Device::gpu(0));
  EXPECT_EQ(nodes[0]->input(1), g->findValue("b0"));
  EXPECT_EQ(nodes[1]->getInt("axis"), 1);
  EXPECT_EQ(nodes[1]->findAttr("num_outputs")->kind(), AttrKind::kInt);
  EXPECT_FALSE(nodes[1]->hasInput(1));
  EXPECT_EQ(nodes[1]->numInputs(), 2);
  EXPECT_EQ(nodes[1]->output(1)->name(), "b");
  EXPECT_EQ(nodes[2]->output(1), nullptr);
  EXPECT_EQ(nodes[2]->name(), "");
  EXPECT_FALSE(nodes[2]->device().isSet());
  EXPECT_EQ(g->findValue("h")->uses().size(), 1u);
  ASSERT_EQ(g->outputs().size(), 1u);
  EXPECT_EQ(g->outputs()[0].name, "y");
  EXPECT_EQ(g->outputs()[0].value, g->findValue("d"));
  EXPECT_EQ(g->outputs()[0].declared.str(), "f32[N,10]");
}

TEST(Parser, AttributeKinds) {
  auto g = parseOk(wrap("  %y = cast(%x) {a = 3, b = -2.5, c = \"s\\x41\", d = [1, -2], "
                        "e = [0.5, 1e-05, nan(0x7fc00001)], f = [\"p\", \"q\"], g = ints[], "
                        "h = floats[], i = strings[], j = bf16, k = f32[2] dense<[1, 2.5]>, "
                        "\"l m\" = inf} : ?\n  return %y\n"));
  ASSERT_TRUE(g);
  const Node &n = *g->nodes()[0];
  EXPECT_EQ(n.findAttr("a")->i(), 3);
  EXPECT_EQ(n.findAttr("b")->f(), -2.5f);
  EXPECT_EQ(n.findAttr("c")->s(), "sA");
  EXPECT_EQ(n.findAttr("d")->ints(), (std::vector<int64_t>{1, -2}));
  ASSERT_EQ(n.findAttr("e")->floats().size(), 3u);
  EXPECT_EQ(std::bit_cast<uint32_t>(n.findAttr("e")->floats()[2]), 0x7fc00001u);
  EXPECT_EQ(n.findAttr("f")->strings(), (std::vector<std::string>{"p", "q"}));
  EXPECT_EQ(n.findAttr("g")->kind(), AttrKind::kInts);
  EXPECT_EQ(n.findAttr("h")->kind(), AttrKind::kFloats);
  EXPECT_EQ(n.findAttr("i")->kind(), AttrKind::kStrings);
  EXPECT_TRUE(n.findAttr("g")->ints().empty());
  EXPECT_EQ(n.findAttr("j")->dtype(), DType::kBF16);
  EXPECT_EQ(n.findAttr("k")->tensor().elementAsDouble(1), 2.5);
  EXPECT_EQ(n.findAttr("l m")->f(), INFINITY);
}

TEST(Parser, TypesAndDims) {
  auto g = parseOk("graph @g(%a: ?, %b: f32[*], %c: ?[2,?], %d: i8[N,\"3d\",0], %e: bool[]) "
                   "-> () {\n  return\n}");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->inputs()[0]->type(), TensorType());
  EXPECT_EQ(g->inputs()[1]->type(), TensorType(DType::kF32, Shape::unranked()));
  EXPECT_EQ(g->inputs()[2]->type(), TensorType(DType::kUnknown, Shape({Dim(2), Dim()})));
  EXPECT_EQ(g->inputs()[3]->type(),
            TensorType(DType::kI8, Shape({Dim::symbol("N"), Dim::symbol("3d"), Dim(0)})));
  EXPECT_EQ(g->inputs()[4]->type(), TensorType(DType::kBool, Shape()));
}

TEST(Parser, HexConstantsAndQuotedNames) {
  auto g = parseOk(wrap("  %\"w 0\" = constant i16[2] dense<0x0100ffff>\n"
                        "  %b = constant bool[2] dense<0x0001>\n"
                        "  %\"y/1\" = add(%x, %\"w 0\") : f32[2] loc(\"a\\\"b\")\n"
                        "  return %\"y/1\"\n"));
  ASSERT_TRUE(g);
  EXPECT_EQ(g->findValue("w 0")->constant().toInt64Vector(), (std::vector<int64_t>{1, -1}));
  EXPECT_EQ(g->findValue("b")->constant().toInt64Vector(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(g->nodes()[0]->name(), "a\"b");
  EXPECT_EQ(g->outputs()[0].value->name(), "y/1");
}

TEST(Parser, OutputNamesThatLookLikeCreateNodeNamesDoNotClash) {
  // createNode gives fresh outputs provisional names; the parsed names must win exactly.
  auto g = parseOk(wrap("  %split_1, %split_0 = split(%x) : ?, ?\n"
                        "  %relu = relu(%split_0) : ?\n"
                        "  return %relu\n"));
  ASSERT_TRUE(g);
  EXPECT_EQ(g->nodes()[0]->output(0)->name(), "split_1");
  EXPECT_EQ(g->nodes()[0]->output(1)->name(), "split_0");
  EXPECT_EQ(g->nodes()[1]->input(0)->name(), "split_0");
  EXPECT_EQ(g->nodes()[1]->output(0)->name(), "relu");
}

TEST(Parser, NodeWithoutResults) {
  auto g = parseOk(wrap("  = identity(%x) @cpu\n  return %x\n"));
  ASSERT_TRUE(g);
  EXPECT_EQ(g->nodes()[0]->numOutputs(), 0);
  EXPECT_EQ(g->nodes()[0]->device(), Device::cpu());
}

TEST(Parser, ErrorsNameFileLineAndColumn) {
  EXPECT_EQ(parseError("graph @g(%x f32[2]) -> () {\n  return\n}"),
            "t.dlc:1:13: error: expected ':', got 'f32'");
  EXPECT_EQ(parseError("graph @g(%x: f32[2]) -> () {\n  return"),
            "t.dlc:2:9: error: expected a value '%name' or '}', got end of input");
  EXPECT_EQ(parseError("grph @g() -> () {}"), "t.dlc:1:1: error: expected 'graph', got 'grph'");
  EXPECT_EQ(parseError(""), "t.dlc:1:1: error: expected 'graph', got end of input");
  EXPECT_EQ(parseError(wrap("  %y = foo(%x) : ?\n  return %y\n")),
            "t.dlc:2:8: error: unknown op 'foo'");
  EXPECT_EQ(parseError(wrap("  %y = relu(%z) : ?\n  return %y\n")),
            "t.dlc:2:13: error: use of undefined value %z");
  EXPECT_EQ(parseError(wrap("  %y = relu(%y) : ?\n  return %y\n")),
            "t.dlc:2:13: error: use of undefined value %y");
  EXPECT_EQ(parseError(wrap("  return %\"a b\"\n")),
            "t.dlc:2:10: error: use of undefined value %\"a b\"");
  EXPECT_EQ(parseError(wrap("  %x = relu(%x) : ?\n  return %x\n")),
            "t.dlc:2:3: error: redefinition of %x");
  EXPECT_EQ(parseError(wrap("  %a, %a = split(%x) : ?, ?\n  return %a\n")),
            "t.dlc:2:7: error: redefinition of %a");
  EXPECT_EQ(parseError("graph @g(%x: f32[2], %x: f32[2]) -> () {\n  return\n}"),
            "t.dlc:1:22: error: redefinition of %x");
  EXPECT_EQ(parseError(wrap("  %w = constant f32[2,2] dense<hash:\"9f0c2e1d8a7b6c5d\">\n"
                            "  return %w\n")),
            "t.dlc:2:32: error: constant %w was printed without its data (hash "
            "9f0c2e1d8a7b6c5d): print it with --print-constants");
  EXPECT_EQ(parseError(wrap("  %y = cast(%x) {value = f32[40] dense<hash:\"0123456789abcdef\">} : "
                            "?\n  return %y\n")),
            "t.dlc:2:40: error: attribute 'value' was printed without its data (hash "
            "0123456789abcdef): print it with --print-constants");
  EXPECT_EQ(parseError(wrap("  %w = constant f32[2,2] dense<[1.0, 2.0, 3.0]>\n  return %w\n")),
            "t.dlc:2:32: error: tensor literal has 3 values but type f32[2,2] needs 4");
  EXPECT_EQ(parseError(wrap("  %w = constant f32[2,2] dense<[1, 2, 3, 4, 5]>\n  return %w\n")),
            "t.dlc:2:32: error: tensor literal has 5 values but type f32[2,2] needs 4");
  EXPECT_EQ(parseError(wrap("  %w = constant f32[2] dense<0x0000803f>\n  return %w\n")),
            "t.dlc:2:30: error: tensor literal has 4 bytes but type f32[2] needs 8");
  EXPECT_EQ(parseError(wrap("  %w = constant bool[1] dense<0x02>\n  return %w\n")),
            "t.dlc:2:31: error: bool tensor byte 0x02 is not 0 or 1");
  EXPECT_EQ(parseError(wrap("  %w = constant f32[N] dense<[1.0]>\n  return %w\n")),
            "t.dlc:2:17: error: a tensor literal needs a static shape, got f32[N]");
  EXPECT_EQ(parseError(wrap("  %w = constant u8[2] dense<[1, 300]>\n  return %w\n")),
            "t.dlc:2:33: error: integer 300 is out of range for u8");
  EXPECT_EQ(parseError(wrap("  %w = constant i32[1] dense<[1.5]>\n  return %w\n")),
            "t.dlc:2:31: error: expected i32 value, got '1.5'");
  EXPECT_EQ(parseError(wrap("  %w = constant bool[1] dense<[1]>\n  return %w\n")),
            "t.dlc:2:32: error: expected true or false, got '1'");
  EXPECT_EQ(parseError("graph @g(%x: f31[2]) -> () {\n  return\n}"),
            "t.dlc:1:14: error: unknown dtype 'f31'");
  EXPECT_EQ(parseError(wrap("  %y = relu(%x) : f32[2] @tpu:0\n  return %y\n")),
            "t.dlc:2:26: error: bad device 'tpu': expected @cpu or @gpu:N");
  EXPECT_EQ(parseError(wrap("  %y = relu(%x) : f32[2] @gpu:x\n  return %y\n")),
            "t.dlc:2:31: error: expected a GPU index, got 'x'");
  EXPECT_EQ(parseError(wrap("  %y = relu(%x) : f32[2]\n  return %y, %y\n")),
            "t.dlc:3:3: error: return has 2 values but the graph declares 1 outputs");
  EXPECT_EQ(parseError(wrap("  %y = relu(%x) {a = []} : ?\n  return %y\n")),
            "t.dlc:2:23: error: an empty list needs its kind: write ints[], floats[] or strings[]");
  EXPECT_EQ(parseError(wrap("  %y = relu(%x) {a = [1, 2.0]} : ?\n  return %y\n")),
            "t.dlc:2:26: error: expected an integer, got '2.0'");
  EXPECT_EQ(parseError(wrap("  %y = relu(%x) {a = 1, a = 2} : ?\n  return %y\n")),
            "t.dlc:2:25: error: duplicate attribute 'a'");
  EXPECT_EQ(parseError(wrap("  %y = relu(%x) {a = 99999999999999999999} : ?\n  return %y\n")),
            "t.dlc:2:22: error: integer 99999999999999999999 is out of range for i64");
  EXPECT_EQ(parseError(wrap("  %y = relu(%x) {a = 1e50} : ?\n  return %y\n")),
            "t.dlc:2:22: error: float 1e50 is out of range for f32");
  EXPECT_EQ(parseError(wrap("  %y = relu(%x) {a = 1abc} : ?\n  return %y\n")),
            "t.dlc:2:22: error: expected an attribute value, got '1abc'");
  EXPECT_EQ(parseError(wrap("  %y = relu(%x) {a = [\"s\", 1]} : ?\n  return %y\n")),
            "t.dlc:2:28: error: expected a string, got '1'");
  EXPECT_EQ(parseError(wrap("  %w = constant u64[1] dense<[-1]>\n  return %w\n")),
            "t.dlc:2:31: error: integer -1 is out of range for u64");
  EXPECT_EQ(parseError(wrap("  %y, _ = dropout(%x) : ?, f32[2]\n  return %y\n")),
            "t.dlc:2:28: error: expected '_' as the type of absent result 1, got 'f32'");
  EXPECT_EQ(parseError(wrap("  %y, %z = dropout(%x) : ?, _\n  return %y\n")),
            "t.dlc:2:29: error: expected the type of result 1 %z, got '_'");
  EXPECT_EQ(parseError(wrap("  %y = relu(%x) : ?, ?\n  return %y\n")),
            "t.dlc:2:20: error: more result types than the node's 1 results");
  EXPECT_EQ(parseError(wrap("  %y = relu(%x)\n  return %y\n")),
            "t.dlc:3:3: error: expected ':' and the result types, got 'return'");
  EXPECT_EQ(parseError(wrap("  _ = constant f32[] dense<[1.0]>\n  return %x\n")),
            "t.dlc:2:7: error: a constant defines exactly one value");
  EXPECT_EQ(parseError(wrap("  return %x\n") + "extra"),
            "t.dlc:4:1: error: expected end of input, got 'extra'");
  EXPECT_EQ(parseError(wrap("  %y = relu(%x) : f32[-1]\n  return %y\n")),
            "t.dlc:2:23: error: expected a dimension (a size >= 0, a symbol or '?'), got '-1'");
  EXPECT_EQ(parseError(wrap("  %\"\" = relu(%x) : ?\n  return %x\n")),
            "t.dlc:2:3: error: value name must not be empty");
}

TEST(Parser, LexicalErrors) {
  EXPECT_EQ(parseError(wrap("  %y = relu(%x) : ? loc(\"abc\n  return %y\n")),
            "t.dlc:2:25: error: unterminated string");
  EXPECT_EQ(parseError(wrap("  %y = relu(%x) : ? loc(\"a\\qb\")\n  return %y\n")),
            "t.dlc:2:27: error: bad escape '\\q' in string");
  EXPECT_EQ(parseError(wrap("  %y = relu(%x) : ? loc(\"a\\x4\")\n  return %y\n")),
            "t.dlc:2:27: error: bad escape in string: \\x needs two hex digits");
  EXPECT_EQ(parseError(wrap("  %y = relu(%x) # ?\n  return %y\n")),
            "t.dlc:2:17: error: unexpected character '#'");
  EXPECT_EQ(parseError(wrap("  %y = relu(%x) \x01\n")),
            "t.dlc:2:17: error: unexpected character '\\x01'");
  EXPECT_EQ(parseError(wrap("  % = relu(%x)\n")), "t.dlc:2:3: error: expected a name after '%'");
}

TEST(Parser, LongTokensAreShortenedInErrors) {
  std::string longName(60, 'a');
  EXPECT_EQ(parseError("graph @g(" + longName + ") -> () {}"),
            "t.dlc:1:10: error: expected an input '%name' or ')', got '" + std::string(37, 'a') +
                "...'");
}

TEST(Parser, ReadsFiles) {
  std::string path = ::testing::TempDir() + "/parser_test_graph.dlc";
  {
    std::ofstream out(path);
    out << "graph @f() -> () {\n  return\n}\n";
  }
  auto g = parseGraphFile(path);
  ASSERT_TRUE(g.hasValue()) << g.status().message();
  EXPECT_EQ((*g)->name(), "f");
  std::remove(path.c_str());
  auto missing = parseGraphFile(path);
  ASSERT_FALSE(missing.hasValue());
  EXPECT_EQ(missing.status().message(), path + ": cannot open file: No such file or directory");
}

/// If bodies nested `depth` deep along their else branches.
std::string nestedIfs(int depth) {
  std::string body = "graph @leaf(%c: ?, %x: ?) -> (r: ?) {\n  return %x\n}";
  for (int d = 0; d < depth; ++d)
    body = "graph @b(%c: ?, %x: ?) -> (r: ?) {\n  %r = if(%c, %c, %x) {else_branch = " + body +
           ", then_branch = graph @t(%c: ?, %x: ?) -> (r: ?) {\n  return %x\n}} : ?\n  "
           "return %r\n}";
  return "graph @g(%c: bool[], %x: f32[2]) -> (y: ?) {\n  %y = if(%c, %c, %x) {else_branch = " +
         body + ", then_branch = graph @t(%c: ?, %x: ?) -> (r: ?) {\n  return %x\n}} : ?\n  " +
         "return %y\n}\n";
}

TEST(Parser, NestingIsLimitedInsteadOfOverflowingTheStack) {
  // 64 levels of bodies parse; one more is an error (5,000 used to overflow the stack).
  EXPECT_TRUE(parseOk(nestedIfs(kMaxGraphNesting - 1)));
  EXPECT_NE(parseError(nestedIfs(kMaxGraphNesting))
                .find("graph attributes nested more than 64 "
                      "deep"),
            std::string::npos);
  EXPECT_NE(parseError(nestedIfs(1000)).find("nested more than 64 deep"), std::string::npos);
}

} // namespace
} // namespace dlc
