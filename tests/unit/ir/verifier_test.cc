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

} // namespace
} // namespace dlc
