// cse on graphs built with the Graph API.
#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace dlc {
namespace {

using testing::f32;
using testing::f32Constant;
using testing::runPass;

TEST(Cse, MergesIdenticalNodesAndKeepsOutputNames) {
  Graph g("g");
  Value *x = g.addInput("x", f32({2}));
  Node *a = g.createNode(Op::kRelu, {x}, 1, "a");
  Node *b = g.createNode(Op::kRelu, {x}, 1, "b");
  Node *sum = g.createNode(Op::kAdd, {a->output(0), b->output(0)}, 1, "sum");
  g.addOutput("y", sum->output(0));
  g.addOutput("z", b->output(0));
  std::ostringstream log;
  Expected<bool> changed = runPass(g, "cse", {}, &log);
  ASSERT_TRUE(changed);
  EXPECT_TRUE(*changed);
  EXPECT_EQ(g.numNodes(), 2u);
  EXPECT_EQ(sum->input(0), a->output(0));
  EXPECT_EQ(sum->input(1), a->output(0));
  EXPECT_EQ(g.outputs()[1].name, "z");
  EXPECT_EQ(g.outputs()[1].value, a->output(0));
  EXPECT_EQ(log.str(), "[cse] node 'b' (Relu): merged into node 'a' (Relu)\n");
  Expected<bool> again = runPass(g, "cse");
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again);
}

TEST(Cse, DifferencesPreventMerging) {
  Graph g("g");
  Value *x = g.addInput("x", f32({2}));
  Value *w = g.addInput("w", f32({2}));
  std::vector<Node *> nodes = {
      g.createNode(Op::kAdd, {x, w}, 1, "base"),
      g.createNode(Op::kAdd, {w, x}, 1, "swapped"),        // operand order differs
      g.createNode(Op::kSub, {x, w}, 1, "other_op"),       // op differs
      g.createNode(Op::kAdd, {x, w}, 1, "on_cpu"),         // device differs
      g.createNode(Op::kAdd, {x, w}, 1, "with_attr"),      // attributes differ
      g.createNode(Op::kAdd, {x, w, nullptr}, 1, "arity"), // an extra absent input
  };
  nodes[3]->setDevice(Device::cpu());
  nodes[4]->setAttr("note", Attribute(1));
  for (Node *n : nodes)
    g.addOutput(n->name(), n->output(0));
  Expected<bool> changed = runPass(g, "cse");
  ASSERT_TRUE(changed);
  EXPECT_FALSE(*changed);
  EXPECT_EQ(g.numNodes(), nodes.size());
}

TEST(Cse, AttributesAreComparedByValue) {
  Graph g("g");
  Value *x = g.addInput("x", f32({2, 3}));
  Node *t1 = g.createNode(Op::kTranspose, {x}, 1, "t1");
  Node *t2 = g.createNode(Op::kTranspose, {x}, 1, "t2");
  Node *t3 = g.createNode(Op::kTranspose, {x}, 1, "t3");
  t1->setAttr("perm", Attribute(std::vector<int64_t>{1, 0}));
  t2->setAttr("perm", Attribute(std::vector<int64_t>{1, 0}));
  t3->setAttr("perm", Attribute(std::vector<int64_t>{0, 1}));
  for (Node *n : {t1, t2, t3})
    g.addOutput(n->name(), n->output(0));
  ASSERT_TRUE(runPass(g, "cse"));
  EXPECT_EQ(g.numNodes(), 2u);
  EXPECT_EQ(g.outputs()[1].value, t1->output(0));
  EXPECT_EQ(g.outputs()[2].value, t3->output(0));
}

TEST(Cse, MergesIdenticalConstantsThenTheirUsers) {
  Graph g("g");
  Value *x = g.addInput("x", f32({2}));
  Value *c1 = f32Constant(g, "c1", {2}, {1, 2});
  Value *c2 = f32Constant(g, "c2", {2}, {1, 2});
  Value *other = f32Constant(g, "other", {1, 2}, {1, 2}); // same bytes, other shape
  Node *a = g.createNode(Op::kAdd, {x, c1}, 1, "a");
  Node *b = g.createNode(Op::kAdd, {x, c2}, 1, "b");
  Node *c = g.createNode(Op::kAdd, {x, other}, 1, "c");
  for (Node *n : {a, b, c})
    g.addOutput(n->name(), n->output(0));
  std::ostringstream log;
  Expected<bool> changed = runPass(g, "cse", {}, &log);
  ASSERT_TRUE(changed);
  EXPECT_TRUE(*changed);
  EXPECT_EQ(g.findValue("c2"), nullptr);
  EXPECT_EQ(g.constants().size(), 2u);
  EXPECT_EQ(g.numNodes(), 2u);
  EXPECT_EQ(g.outputs()[1].value, a->output(0));
  EXPECT_EQ(g.outputs()[2].value, c->output(0));
  EXPECT_EQ(log.str(), "[cse] constant 'c2': merged into 'c1'\n"
                       "[cse] node 'b' (Add): merged into node 'a' (Add)\n");
}

TEST(Cse, NeverMergesRandomOps) {
  Graph g("g");
  Value *x = g.addInput("x", f32({2}));
  Node *r1 = g.createNode(Op::kRandomNormalLike, {x}, 1, "r1");
  Node *r2 = g.createNode(Op::kRandomNormalLike, {x}, 1, "r2");
  Node *u1 = g.createNode(Op::kRandomUniform, {}, 1, "u1");
  Node *u2 = g.createNode(Op::kRandomUniform, {}, 1, "u2");
  for (Node *n : {r1, r2, u1, u2})
    g.addOutput(n->name(), n->output(0));
  Expected<bool> changed = runPass(g, "cse");
  ASSERT_TRUE(changed);
  EXPECT_FALSE(*changed);
  EXPECT_EQ(g.numNodes(), 4u);
}

TEST(Cse, AbsentOutputThatTheTwinNeedsPreventsMerging) {
  Graph g("g");
  Value *x = g.addInput("x", f32({2}));
  Node *first = g.createNode(Op::kDropout, {x}, 2, "first");
  Node *second = g.createNode(Op::kDropout, {x}, 2, "second");
  first->removeOutput(1);
  g.addOutput("a", first->output(0));
  g.addOutput("mask", second->output(1));
  Expected<bool> changed = runPass(g, "cse");
  ASSERT_TRUE(changed);
  EXPECT_FALSE(*changed);
  EXPECT_EQ(g.numNodes(), 2u);
}

} // namespace
} // namespace dlc
