#include "ir/verifier.h"

#include <gtest/gtest.h>

#include "ir/parser.h"

namespace dlc {
namespace {

std::unique_ptr<Graph> parse(const std::string &text) {
  auto g = parseGraph(text, "v.dlc");
  EXPECT_TRUE(g.hasValue()) << g.status().message();
  return g.hasValue() ? std::move(g).value() : std::make_unique<Graph>();
}

std::string verifyError(const Graph &g, VerifyOptions opts = {}) {
  Status s = verifyGraph(g, opts);
  EXPECT_FALSE(s.isOk());
  return s.message();
}

// A chain x -> a = relu(x) -> b = relu(a), returned as y.
const char *kChain = "graph @g(%x: f32[2]) -> (y: f32[2]) {\n"
                     "  %a = relu(%x) : f32[2] loc(\"a\")\n"
                     "  %b = relu(%a) : f32[2] loc(\"b\")\n"
                     "  return %b\n"
                     "}\n";

TEST(Verifier, AcceptsAWellFormedGraph) {
  auto g = parse(kChain);
  EXPECT_TRUE(verifyGraph(*g).isOk()) << verifyGraph(*g).message();
}

TEST(Verifier, AcceptsTheDocumentedExampleWithInference) {
  const std::string text = "graph @mlp(%x: f32[N,784], %w0: f32[784,128]) -> (y: f32[N,64]) {\n"
                           "  %shape = constant i64[2] dense<[-1, 128]>\n"
                           "  %h = matmul(%x, %w0) : f32[N,128] @gpu:0 loc(\"MatMul_0\")\n"
                           "  %a, %b = split(%h, _) {axis = 1, num_outputs = 2} : f32[N,64], "
                           "f32[N,64]\n"
                           "  %d, _ = dropout(%a) : f32[N,64], _\n"
                           "  %r = reshape(%h, %shape) : f32[?,WIDTH] loc(\"R\")\n"
                           "  return %d\n"
                           "}\n";
  auto replace = [&](const std::string &width) {
    std::string t = text;
    return t.replace(t.find("WIDTH"), 5, width);
  };
  auto good = parse(replace("128"));
  EXPECT_TRUE(verifyGraph(*good).isOk()) << verifyGraph(*good).message();
  auto bad = parse(replace("127"));
  EXPECT_EQ(verifyError(*bad), "verifier: node 'R' (Reshape): output 0 %r has type f32[?,127] but "
                               "inference gives f32[N,128]");
}

TEST(Verifier, SingleDefinition) {
  auto g = parse(kChain);
  // Corrupt the name behind the graph's back: the registry no longer finds the value.
  Value *a = g->findValue("a");
  const_cast<std::string &>(a->name()) = "x";
  EXPECT_EQ(verifyError(*g), "verifier: value %x: defined more than once");
  const_cast<std::string &>(a->name()) = "zz";
  EXPECT_EQ(verifyError(*g), "verifier: value %zz: not registered in the graph under its name");
}

TEST(Verifier, UseListsMatchInputs) {
  auto g = parse(kChain);
  Value *a = g->findValue("a");
  auto &uses = const_cast<std::vector<Use> &>(a->uses());
  Use saved = uses[0];
  uses.clear();
  EXPECT_EQ(verifyError(*g),
            "verifier: node 'b' (Relu): input 0 %a is missing from the value's use list");
  uses = {saved, saved};
  EXPECT_EQ(verifyError(*g), "verifier: value %a: use list names input 0 of node 'b' (Relu) twice");
  uses = {saved, Use{saved.node, 3}};
  EXPECT_EQ(verifyError(*g), "verifier: value %a: use list names input 3 of node 'b' (Relu), "
                             "which is not this value");
  Graph other;
  Node *stranger = other.createNode(Op::kRelu, {other.addInput("o", TensorType())}, 1, "o");
  uses = {saved, Use{stranger, 0}};
  EXPECT_EQ(verifyError(*g), "verifier: value %a: use list names a node that is not in the graph");
  Value *x = g->findValue("x");
  auto &xuses = const_cast<std::vector<Use> &>(x->uses());
  uses = {saved};
  xuses.push_back(Use{saved.node, 0});
  EXPECT_EQ(verifyError(*g),
            "verifier: value %x: use list names input 0 of node 'b' (Relu), which is not this "
            "value");
  xuses.pop_back();
  EXPECT_TRUE(verifyGraph(*g).isOk());
}

TEST(Verifier, InputsAreDefinedBeforeUse) {
  auto g = parse(kChain);
  std::vector<Node *> nodes = g->nodes();
  g->moveNode(nodes[1], nodes[0]); // b before a
  EXPECT_EQ(verifyError(*g), "verifier: node 'b' (Relu): input 0 %a is used before its definition");
}

TEST(Verifier, CyclesAreReported) {
  auto g = parse(kChain);
  std::vector<Node *> nodes = g->nodes();
  nodes[0]->setInput(0, nodes[1]->output(0)); // a = relu(b), b = relu(a)
  EXPECT_EQ(verifyError(*g), "verifier: node 'a' (Relu): input 0 %b is used before its definition");
}

TEST(Verifier, InputsFromAnotherGraph) {
  auto g = parse(kChain);
  Graph other;
  Value *stranger = other.addInput("x", TensorType());
  g->nodes()[0]->setInput(0, stranger);
  EXPECT_EQ(verifyError(*g), "verifier: node 'a' (Relu): input 0 is not a value of this graph");
  g->nodes()[0]->setInput(0, g->findValue("x"));
}

TEST(Verifier, GraphOutputs) {
  auto g = parse(kChain);
  Graph other;
  g->setOutputValue(0, other.addInput("q", TensorType()));
  EXPECT_EQ(verifyError(*g), "verifier: output 0 'y': not a live value of this graph");
  auto h = parse("graph @g(%x: f32[2]) -> (y: f32[3]) {\n  return %x\n}\n");
  EXPECT_EQ(verifyError(*h), "verifier: output 0 'y': declared type f32[3] but %x has type f32[2]");
  auto ok = parse("graph @g(%x: f32[N]) -> (y: f32[3], z: ?) {\n  return %x, %x\n}\n");
  EXPECT_TRUE(verifyGraph(*ok).isOk());
}

/// A graph with inputs %x: f32[2] and %b: f32[3,1] around `body`, returning nothing.
std::unique_ptr<Graph> withBody(const std::string &body) {
  return parse("graph @g(%x: f32[2], %b: f32[3,1]) -> () {\n" + body + "  return\n}\n");
}

TEST(Verifier, Arity) {
  EXPECT_EQ(verifyError(*withBody("  %y = relu(%x, %x) : f32[2] loc(\"r\")\n")),
            "verifier: node 'r' (Relu): has 2 inputs, expected 1");
  EXPECT_EQ(verifyError(*withBody("  %y, %z = relu(%x) : f32[2], f32[2] loc(\"r\")\n")),
            "verifier: node 'r' (Relu): has 2 outputs, expected 1");
  EXPECT_EQ(verifyError(*withBody("  %y = clip(%x, _, _, _) : f32[2] loc(\"c\")\n")),
            "verifier: node 'c' (Clip): has 4 inputs, expected 1 to 3");
  EXPECT_EQ(verifyError(*withBody("  %y = sum() : f32[2] loc(\"s\")\n")),
            "verifier: node 's' (Sum): has 0 inputs, expected at least 1");
  EXPECT_EQ(verifyError(*withBody("  %y = add(%x, _) : f32[2] loc(\"a\")\n")),
            "verifier: node 'a' (Add): required input 1 is absent");
  EXPECT_EQ(verifyError(*withBody("  %y = add(_, %x) : f32[2]\n")),
            "verifier: node of op Add: required input 0 is absent");
  // Optional inputs may be absent, variadic ops take any number.
  EXPECT_TRUE(verifyGraph(*withBody("  %y = clip(%x, _, _) : f32[2]\n"
                                    "  %z = sum(%x, %x, %x, %y) : f32[2]\n"))
                  .isOk());
}

TEST(Verifier, Attributes) {
  EXPECT_EQ(verifyError(*withBody("  %y = relu(%x) {foo = 1} : f32[2] loc(\"r\")\n")),
            "verifier: node 'r' (Relu): unknown attribute 'foo'");
  EXPECT_EQ(verifyError(*withBody("  %y = leaky_relu(%x) {alpha = 1} : f32[2] loc(\"l\")\n")),
            "verifier: node 'l' (LeakyRelu): attribute 'alpha' must be float, got int");
  EXPECT_EQ(verifyError(*withBody("  %y = cast(%x) : f32[2] loc(\"c\")\n")),
            "verifier: node 'c' (Cast): missing required attribute 'to'");
  EXPECT_TRUE(verifyGraph(*withBody("  %y = leaky_relu(%x) {alpha = 0.5} : f32[2]\n"
                                    "  %z = cast(%y) {to = i32} : i32[2]\n"))
                  .isOk());
}

TEST(Verifier, TypesAgreeWithInference) {
  // add(f32[2], f32[3,1]) broadcasts to f32[3,2].
  EXPECT_EQ(verifyError(*withBody("  %y = add(%x, %b) : f32[2,3] loc(\"a\")\n")),
            "verifier: node 'a' (Add): output 0 %y has type f32[2,3] but inference gives f32[3,2]");
  EXPECT_EQ(verifyError(*withBody("  %y = relu(%x) : i32[2] loc(\"r\")\n")),
            "verifier: node 'r' (Relu): output 0 %y has type i32[2] but inference gives f32[2]");
  // Constants take part in inference: cast's dtype comes from its attribute.
  EXPECT_EQ(verifyError(*withBody("  %c = constant i64[2] dense<[1, 2]>\n"
                                  "  %y = cast(%c) {to = f16} : f32[2] loc(\"c\")\n")),
            "verifier: node 'c' (Cast): output 0 %y has type f32[2] but inference gives f16[2]");
  // Compatible (less precise) types and unknown types pass; so does anything without checkTypes.
  EXPECT_TRUE(verifyGraph(*withBody("  %y = add(%x, %b) : f32[N,?]\n"
                                    "  %z = relu(%y) : ?\n"
                                    "  %w = relu(%z) : f32[*]\n"))
                  .isOk());
  VerifyOptions noTypes;
  noTypes.checkTypes = false;
  EXPECT_TRUE(verifyGraph(*withBody("  %y = relu(%x) : i32[7]\n"), noTypes).isOk());
}

TEST(Verifier, InferenceErrorsAreReported) {
  auto g = parse("graph @g(%x: f32[2], %y: f32[3]) -> () {\n"
                 "  %z = add(%x, %y) : ? loc(\"a\")\n"
                 "  return\n}\n");
  std::string msg = verifyError(*g);
  EXPECT_EQ(msg.rfind("verifier: node 'a' (Add): ", 0), 0u) << msg;
  EXPECT_NE(msg.find("cannot be broadcast"), std::string::npos) << msg;
  // Before the inputs are typed there is nothing to check against.
  auto untyped = parse("graph @g(%x: ?, %y: f32[3]) -> () {\n"
                       "  %z = add(%x, %y) : f32[9]\n"
                       "  return\n}\n");
  EXPECT_TRUE(verifyGraph(*untyped).isOk());
}

} // namespace
} // namespace dlc
