// dce on graphs built with the Graph API.
#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace dlc {
namespace {

using testing::f32;
using testing::f32Constant;
using testing::runPass;

TEST(Dce, RemovesDeadChainsAndUnusedConstants) {
  Graph g("g");
  Value *x = g.addInput("x", f32({2}));
  Value *unused = g.addInput("unused", f32({2}));
  Value *w = f32Constant(g, "w", {2}, {1, 2});
  Value *keep = f32Constant(g, "keep", {2}, {3, 4});
  Node *d1 = g.createNode(Op::kAdd, {x, w}, 1, "d1");
  g.createNode(Op::kRelu, {d1->output(0)}, 1, "d2");
  Node *live = g.createNode(Op::kAdd, {x, keep}, 1, "live");
  g.addOutput("y", live->output(0));
  std::ostringstream log;
  Expected<bool> changed = runPass(g, "dce", {}, &log);
  ASSERT_TRUE(changed);
  EXPECT_TRUE(*changed);
  ASSERT_EQ(g.numNodes(), 1u);
  EXPECT_EQ(g.nodes()[0], live);
  EXPECT_EQ(g.findValue("w"), nullptr);
  EXPECT_EQ(g.findValue("keep"), keep);
  EXPECT_EQ(g.inputs().size(), 2u); // graph inputs stay, used or not
  EXPECT_EQ(g.findValue("unused"), unused);
  EXPECT_EQ(log.str(), "[dce] node 'd2' (Relu): removed: no output is used\n"
                       "[dce] node 'd1' (Add): removed: no output is used\n"
                       "[dce] constant 'w': removed: not used\n");
}

TEST(Dce, KeepsNodesWithAnyUsedOutputOrGraphOutput) {
  Graph g("g");
  Value *x = g.addInput("x", f32({2}));
  Node *split = g.createNode(Op::kSplit, {x}, 2, "split");
  Node *user = g.createNode(Op::kRelu, {split->output(1)}, 1, "user");
  Node *returned = g.createNode(Op::kRelu, {x}, 1, "returned");
  g.addOutput("a", user->output(0));
  g.addOutput("b", returned->output(0));
  Value *c = f32Constant(g, "c", {1}, {1});
  g.addOutput("c", c);
  Expected<bool> changed = runPass(g, "dce");
  ASSERT_TRUE(changed);
  EXPECT_FALSE(*changed);
  EXPECT_EQ(g.numNodes(), 3u);
  EXPECT_EQ(g.constants().size(), 1u);
}

TEST(Dce, RemovesUnusedRandomOps) {
  Graph g("g");
  Value *x = g.addInput("x", f32({2}));
  g.createNode(Op::kRandomNormalLike, {x}, 1, "noise");
  g.createNode(Op::kRandomUniform, {}, 1, "source");
  g.addOutput("y", x);
  Expected<bool> changed = runPass(g, "dce");
  ASSERT_TRUE(changed);
  EXPECT_TRUE(*changed);
  EXPECT_EQ(g.numNodes(), 0u);
}

} // namespace
} // namespace dlc
