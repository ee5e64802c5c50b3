// fuse: the pattern rewrites compute what the pieces computed (reference executor, random
// inputs), and on random graphs every group keeps the contract codegen relies on
// (ir/annotations/fusion_roles.h) and the graph of groups stays acyclic.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "ir/annotations/fused_groups.h"
#include "ir/annotations/fusion_roles.h"
#include "numerics_util.h"
#include "pass_test_util.h"
#include "random_graph.h"

namespace dlc {
namespace {

using testing::countOps;
using testing::expectSameResults;
using testing::parsed;

TEST(FusePatterns, LayerNormGeluSoftmaxKeepTheirValues) {
  auto g = parsed(R"(
graph @p(%x: f32[3,16], %x3: f32[2,3,4]) -> (ln: ?, ln3: ?, g1: ?, g2: ?, sm: ?) {
  %last = constant i64[1] dense<[-1]>
  %last2 = constant i64[2] dense<[-2, -1]>
  %two = constant f32[] dense<[2.0]>
  %eps = constant f32[1] dense<[0.001]>
  %gamma = constant f32[16] dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, -1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0]>
  %beta = constant f32[16] dense<[0.5, 0.5, 0.5, 0.5, -0.5, -0.5, -0.5, -0.5, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0]>
  %sqrt2 = constant f32[] dense<[1.4142135]>
  %rsqrt2 = constant f32[] dense<[0.70710677]>
  %one = constant f32[] dense<[1.0]>
  %half = constant f32[] dense<[0.5]>
  %mean = reduce_mean(%x, %last) : f32[3,1]
  %d = sub(%x, %mean) : f32[3,16]
  %sq = pow(%d, %two) : f32[3,16]
  %var = reduce_mean(%sq, %last) : f32[3,1]
  %ve = add(%var, %eps) : f32[3,1]
  %std = sqrt(%ve) : f32[3,1]
  %n = div(%d, %std) : f32[3,16]
  %scaled = mul(%gamma, %n) : f32[3,16]
  %ln = add(%scaled, %beta) : f32[3,16]
  %mean3 = reduce_mean(%x3, %last2) : f32[2,1,1]
  %d3 = sub(%x3, %mean3) : f32[2,3,4]
  %sq3 = mul(%d3, %d3) : f32[2,3,4]
  %var3 = reduce_mean(%sq3, %last2) : f32[2,1,1]
  %ve3 = add(%var3, %eps) : f32[2,1,1]
  %std3 = sqrt(%ve3) : f32[2,1,1]
  %ln3 = div(%d3, %std3) : f32[2,3,4]
  %a1 = div(%x, %sqrt2) : f32[3,16]
  %e1 = erf(%a1) : f32[3,16]
  %b1 = add(%e1, %one) : f32[3,16]
  %h1 = mul(%b1, %half) : f32[3,16]
  %g1 = mul(%h1, %x) : f32[3,16]
  %a2 = mul(%x, %rsqrt2) : f32[3,16]
  %e2 = erf(%a2) : f32[3,16]
  %b2 = add(%one, %e2) : f32[3,16]
  %m2 = mul(%b2, %x) : f32[3,16]
  %g2 = mul(%half, %m2) : f32[3,16]
  %mx = reduce_max(%x, %last) : f32[3,1]
  %xs = sub(%x, %mx) : f32[3,16]
  %ex = exp(%xs) : f32[3,16]
  %sum = reduce_sum(%ex, %last) : f32[3,1]
  %sm = div(%ex, %sum) : f32[3,16]
  return %ln, %ln3, %g1, %g2, %sm
}
)");
  ASSERT_TRUE(g);
  auto fused = testing::after(*g, "fuse");
  EXPECT_EQ(countOps(*fused, Op::kLayerNormalization), 2);
  EXPECT_EQ(countOps(*fused, Op::kGelu), 2);
  EXPECT_EQ(countOps(*fused, Op::kSoftmax), 1);
  EXPECT_EQ(fused->numNodes(), 5u);
  for (uint64_t seed : {1, 2, 3})
    expectSameResults(*g, *fused, 2e-6, seed);
}

TEST(FusePatterns, RunningFuseTwiceChangesNothingTheSecondTime) {
  auto g = parsed(R"(
graph @twice(%x: f32[4,8], %w: f32[8,8]) -> (y: ?) {
  %b = constant f32[8] dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]>
  %m = matmul(%x, %w) : f32[4,8]
  %a = add(%m, %b) : f32[4,8]
  %y = relu(%a) : f32[4,8]
  return %y
}
)");
  ASSERT_TRUE(g);
  Expected<bool> first = testing::runPass(*g, "fuse");
  ASSERT_TRUE(first);
  EXPECT_TRUE(*first);
  Expected<bool> second = testing::runPass(*g, "fuse");
  ASSERT_TRUE(second);
  EXPECT_FALSE(*second);
  for (const Node *n : g->nodes())
    EXPECT_EQ(fuseGroupOf(*n), 0) << n->describe();
}

/// A node codegen spells as a CUDA expression (fused into a group), not a group's anchor: an
/// elementwise or broadcast op, or a per-tensor/per-axis Q/DQ.
bool isElementwise(const Node *n) {
  return n->def().fusion == FusionKind::kElementwise || n->def().fusion == FusionKind::kBroadcast ||
         isElementwiseNode(*n);
}

/// Checks one group against the contract; `ids` maps nodes to their group.
void checkGroup(const Graph &g, const NodeGroup &group) {
  std::set<const Node *> in(group.nodes.begin(), group.nodes.end());
  auto inside = [&](const Use &u) { return in.count(u.node) > 0; };
  const Node *anchor = nullptr;
  for (const Node *n : group.nodes) {
    EXPECT_NE(n->device(), Device::cpu()) << n->describe();
    EXPECT_EQ(n->device(), group.nodes.front()->device()) << n->describe();
    if (!isElementwise(n)) {
      EXPECT_EQ(anchor, nullptr) << "two anchors: " << n->describe();
      anchor = n;
    }
  }
  // Values leaving the group.
  std::vector<const Value *> exits;
  for (const Node *n : group.nodes)
    for (const Value *v : n->outputs()) {
      bool leaves = g.isOutput(v);
      for (const Use &u : v->uses())
        leaves |= !inside(u);
      if (leaves)
        exits.push_back(v);
    }
  ASSERT_FALSE(exits.empty());
  if (!anchor) {
    for (const Node *n : group.nodes)
      EXPECT_EQ(n->output(0)->shape(), group.nodes.front()->output(0)->shape()) << n->describe();
    return;
  }
  // Prologue: before the anchor, the anchor input's shape, used only inside.
  const Shape &inShape = anchor->input(0)->shape();
  bool afterAnchor = false;
  for (const Node *n : group.nodes) {
    if (n == anchor) {
      afterAnchor = true;
      continue;
    }
    const Value *v = n->output(0);
    if (!afterAnchor) {
      EXPECT_EQ(v->shape(), inShape) << n->describe();
      EXPECT_TRUE(anchor->def().fusion == FusionKind::kReduction ||
                  anchor->op() == Op::kLayerNormalization)
          << anchor->describe();
      for (const Use &u : v->uses())
        EXPECT_TRUE(inside(u) && (u.node != anchor || u.index == 0)) << n->describe();
      EXPECT_FALSE(g.isOutput(v));
    } else {
      EXPECT_EQ(v->shape(), anchor->output(0)->shape()) << n->describe();
    }
  }
  ASSERT_EQ(exits.size(), 1u) << anchor->describe();
  for (const Use &u : exits[0]->uses())
    EXPECT_FALSE(inside(u)) << "the group's output is also used inside it";
}

TEST(FuseRandomGraphs, GroupsKeepTheContractAndStayAcyclic) {
  int fusedGroups = 0, anchored = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    SCOPED_TRACE(seed);
    auto g = testing::randomGraph(seed);
    auto fused = testing::after(*g, "dce,fuse"); // dead nodes would make groups with no exit
    auto groups = orderedGroups(*fused);
    ASSERT_TRUE(groups) << groups.status().message();
    // Contiguous and numbered 0, 1, ... in order.
    int64_t next = 0;
    std::vector<Node *> order = fused->nodes();
    size_t at = 0;
    for (const NodeGroup &group : *groups) {
      for (Node *n : group.nodes)
        ASSERT_EQ(order[at++], n) << "group nodes are not contiguous";
      if (!group.id)
        continue;
      EXPECT_EQ(*group.id, next++);
      EXPECT_GE(group.nodes.size(), 2u);
      checkGroup(*fused, group);
      ++fusedGroups;
      anchored += std::any_of(group.nodes.begin(), group.nodes.end(),
                              [](const Node *n) { return !isElementwise(n); });
    }
    // Reordering and annotating does not change any result.
    expectSameResults(*g, *fused, 0.0, seed);
  }
  // The generator must exercise both kinds of group.
  EXPECT_GT(fusedGroups, 100);
  EXPECT_GT(anchored, 40);
}

TEST(FuseRandomGraphs, OrderedGroupsReportsACycle) {
  Graph h("cycle");
  Value *x = h.addInput("x", testing::f32({4}));
  Value *zero = h.addConstant("zero", Tensor::scalarI64(0));
  Node *a = h.createNode(Op::kRelu, {x}, 1, "a");
  Node *b = h.createNode(Op::kCumSum, {a->output(0), zero}, 1, "b");
  Node *c = h.createNode(Op::kAdd, {b->output(0), x}, 1, "c");
  a->setAttr("fuse.group", Attribute(int64_t{0}));
  c->setAttr("fuse.group", Attribute(int64_t{0}));
  h.addOutput("y", c->output(0));
  auto groups = orderedGroups(h);
  ASSERT_FALSE(groups);
  EXPECT_EQ(groups.status().message(),
            "fused groups depend on each other in a cycle: group 0 (node 'a' (Relu)) -> node "
            "'b' (CumSum) -> group 0 (node 'a' (Relu))");
}

} // namespace
} // namespace dlc
