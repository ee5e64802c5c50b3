#include <gtest/gtest.h>

#include "ir/graph.h"

namespace dlc {
namespace {

TensorType f32(std::vector<int64_t> dims) { return {DType::kF32, Shape::fromSizes(dims)}; }

TEST(GraphTest, CreateNodeRecordsUsesAndProducers) {
  Graph g("g");
  Value *x = g.addInput("x", f32({2, 3}));
  Node *relu = g.createNode(Op::kRelu, {x}, 1, "relu0");
  Node *add = g.createNode(Op::kAdd, {relu->output(0), x}, 1, "add0");
  EXPECT_EQ(relu->output(0)->producer(), relu);
  EXPECT_EQ(relu->output(0)->name(), "relu0");
  ASSERT_EQ(x->uses().size(), 2u);
  EXPECT_EQ(x->uses()[0].node, relu);
  EXPECT_EQ(x->uses()[1].node, add);
  EXPECT_EQ(x->uses()[1].index, 1);
  EXPECT_EQ(g.findValue("add0"), add->output(0));
}

TEST(GraphTest, ReplaceAllUsesWithUpdatesNodesAndOutputsKeepingPublicName) {
  Graph g;
  Value *x = g.addInput("x", f32({4}));
  Node *id = g.createNode(Op::kIdentity, {x}, 1, "id");
  Node *neg = g.createNode(Op::kNeg, {id->output(0)}, 1, "neg");
  g.addOutput("y", id->output(0));
  g.replaceAllUsesWith(id->output(0), x);
  EXPECT_EQ(neg->input(0), x);
  EXPECT_FALSE(id->output(0)->hasUses());
  EXPECT_EQ(g.outputs()[0].value, x);
  EXPECT_EQ(g.outputs()[0].name, "y");
  g.eraseNode(id);
  EXPECT_EQ(g.numNodes(), 1u);
  EXPECT_EQ(g.findValue("id"), nullptr);
  ASSERT_EQ(x->uses().size(), 1u);
  EXPECT_EQ(x->uses()[0].node, neg);
}

TEST(GraphTest, NamesAreMadeUnique) {
  Graph g;
  Value *a = g.addInput("x", f32({1}));
  Value *b = g.addInput("x", f32({1}));
  EXPECT_EQ(a->name(), "x");
  EXPECT_EQ(b->name(), "x.1");
  Node *n = g.createNode(Op::kRelu, {a}, 1, "x");
  EXPECT_EQ(n->output(0)->name(), "x.2");
  EXPECT_EQ(g.renameValue(n->output(0), "r"), "r");
  EXPECT_EQ(g.findValue("x.2"), nullptr);
  EXPECT_EQ(g.findValue("r"), n->output(0));
}

TEST(GraphTest, CreateNodeBeforeKeepsOrder) {
  Graph g;
  Value *x = g.addInput("x", f32({1}));
  Node *last = g.createNode(Op::kRelu, {x}, 1, "last");
  Node *first = g.createNode(Op::kNeg, {x}, 1, "first", last);
  auto nodes = g.nodes();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0], first);
  EXPECT_EQ(nodes[1], last);
}

TEST(GraphTest, TopologicalSortIsStableAndFindsCycles) {
  Graph g;
  Value *x = g.addInput("x", f32({1}));
  Node *b = g.createNode(Op::kRelu, {nullptr}, 1, "b");
  Node *a = g.createNode(Op::kNeg, {x}, 1, "a");
  Node *c = g.createNode(Op::kAbs, {x}, 1, "c");
  b->setInput(0, a->output(0)); // b now reads a, which comes after it
  ASSERT_TRUE(g.topologicalSort().isOk());
  auto nodes = g.nodes();
  EXPECT_EQ(nodes[0], a);
  EXPECT_EQ(nodes[1], b);
  EXPECT_EQ(nodes[2], c);

  a->setInput(0, b->output(0)); // a <-> b
  Status st = g.topologicalSort();
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.message(), "graph has a cycle through node 'a' (Neg)");
}

TEST(GraphTest, ConstantsShareDataAndCanBeErased) {
  Graph g;
  Tensor t = Tensor::vectorI64({1, 2, 3});
  Value *c = g.addConstant("c", t);
  EXPECT_EQ(c->constant().buffer(), t.buffer()); // no copy
  EXPECT_EQ(c->type().str(), "i64[3]");
  ASSERT_EQ(g.constants().size(), 1u);
  g.eraseConstant(c);
  EXPECT_TRUE(g.constants().empty());
  EXPECT_EQ(g.findValue("c"), nullptr);
}

TEST(GraphTest, RemoveOutputAndTruncateInputs) {
  Graph g;
  Value *x = g.addInput("x", f32({4}));
  Node *d = g.createNode(Op::kDropout, {x, nullptr, nullptr}, 2, "drop");
  d->removeOutput(1);
  EXPECT_EQ(d->output(1), nullptr);
  EXPECT_EQ(d->numOutputs(), 2);
  d->truncateInputs(1);
  EXPECT_EQ(d->numInputs(), 1);
  EXPECT_EQ(x->uses().size(), 1u);
}

TEST(GraphTest, DeviceParseAndPrint) {
  EXPECT_EQ(Device::parse("gpu:1")->str(), "gpu:1");
  EXPECT_EQ(Device::parse("gpu")->str(), "gpu:0");
  EXPECT_EQ(Device::parse("cpu")->str(), "cpu");
  EXPECT_FALSE(Device::parse("gpu:").has_value());
  EXPECT_FALSE(Device::parse("tpu").has_value());
  EXPECT_FALSE(Device::parse("gpu:-1").has_value());
}

TEST(GraphTest, DescribeNamesNodeAndOp) {
  Graph g;
  Value *x = g.addInput("x", f32({1}));
  EXPECT_EQ(g.createNode(Op::kConvTranspose, {x}, 1, "up1")->describe(),
            "node 'up1' (ConvTranspose)");
  EXPECT_EQ(g.createNode(Op::kRelu, {x}, 1)->describe(), "node of op Relu");
}

TEST(OpTableTest, NamesRoundTrip) {
  for (int i = 0; i < kNumOps; ++i) {
    Op op = static_cast<Op>(i);
    EXPECT_EQ(parseOpName(opName(op)), op);
    EXPECT_EQ(opFromOnnx(opOnnxName(op)), op);
  }
  EXPECT_EQ(opName(Op::kMatMul), "matmul");
  EXPECT_EQ(opOnnxName(Op::kConvTranspose), "ConvTranspose");
  EXPECT_FALSE(parseOpName("Conv").has_value());
  EXPECT_FALSE(opFromOnnx("Constant").has_value());
}

} // namespace
} // namespace dlc
