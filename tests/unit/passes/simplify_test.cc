// simplify on graphs built with the Graph API.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "numerics_util.h"
#include "pass_test_util.h"

namespace dlc {
namespace {

using testing::f32;
using testing::runPass;

class SimplifyTest : public ::testing::Test {
protected:
  Graph g{"g"};

  bool simplify(std::ostream *log = nullptr) {
    Expected<bool> changed = runPass(g, "simplify", {}, log);
    EXPECT_TRUE(changed) << changed.status().message();
    return changed && *changed;
  }
  Node *transpose(Value *in, std::vector<int64_t> perm, std::string name) {
    Node *t = g.createNode(Op::kTranspose, {in}, 1, std::move(name));
    t->setAttr("perm", Attribute(std::move(perm)));
    return t;
  }
  Value *ints(std::string name, std::vector<int64_t> v) {
    return g.addConstant(std::move(name), Tensor::vectorI64(v));
  }
};

TEST_F(SimplifyTest, IdentityIsRemovedAndOutputKeepsItsName) {
  Value *x = g.addInput("x", f32({2}));
  Node *id = g.createNode(Op::kIdentity, {x}, 1, "id");
  Node *relu = g.createNode(Op::kRelu, {id->output(0)}, 1, "relu");
  Node *id2 = g.createNode(Op::kIdentity, {relu->output(0)}, 1, "id2");
  g.addOutput("y", id2->output(0));
  EXPECT_TRUE(simplify());
  EXPECT_EQ(g.numNodes(), 1u);
  EXPECT_EQ(relu->input(0), x);
  EXPECT_EQ(g.outputs()[0].name, "y");
  EXPECT_EQ(g.outputs()[0].value, relu->output(0));
  EXPECT_FALSE(simplify());
}

TEST_F(SimplifyTest, DropoutInInferenceIsRemoved) {
  Value *x = g.addInput("x", f32({2}));
  Node *plain = g.createNode(Op::kDropout, {x}, 2, "plain");
  Value *off = g.addConstant("off", Tensor::fromVector<uint8_t>(DType::kBool, {}, {0}));
  Node *explicitOff =
      g.createNode(Op::kDropout, {plain->output(0), nullptr, off}, 1, "explicit_off");
  g.addOutput("y", explicitOff->output(0));
  std::ostringstream log;
  EXPECT_TRUE(simplify(&log));
  EXPECT_EQ(g.numNodes(), 0u);
  EXPECT_EQ(g.outputs()[0].value, x);
  EXPECT_EQ(log.str(), "[simplify] node 'plain' (Dropout): removed: dropout in inference\n"
                       "[simplify] node 'explicit_off' (Dropout): removed: dropout in inference\n");
}

TEST_F(SimplifyTest, DropoutInTrainingOrWithUsedMaskStays) {
  Value *x = g.addInput("x", f32({2}));
  Value *mode = g.addInput("mode", TensorType(DType::kBool, Shape()));
  Value *on = g.addConstant("on", Tensor::fromVector<uint8_t>(DType::kBool, {}, {1}));
  Node *training = g.createNode(Op::kDropout, {x, nullptr, on}, 1, "training");
  Node *dynamic = g.createNode(Op::kDropout, {x, nullptr, mode}, 1, "dynamic");
  Node *masked = g.createNode(Op::kDropout, {x}, 2, "masked");
  g.addOutput("a", training->output(0));
  g.addOutput("b", dynamic->output(0));
  g.addOutput("c", masked->output(0));
  g.addOutput("mask", masked->output(1));
  std::ostringstream log;
  EXPECT_FALSE(simplify(&log));
  EXPECT_EQ(g.numNodes(), 3u);
  EXPECT_EQ(log.str(),
            "[simplify] node 'training' (Dropout): not removed: training_mode is not a constant "
            "false\n"
            "[simplify] node 'dynamic' (Dropout): not removed: training_mode is not a constant "
            "false\n"
            "[simplify] node 'masked' (Dropout): not removed: its mask output is used\n");
}

TEST_F(SimplifyTest, RefusalsAreLoggedOnceAcrossRounds) {
  Value *x = g.addInput("x", f32({2}));
  Value *on = g.addConstant("on", Tensor::fromVector<uint8_t>(DType::kBool, {}, {1}));
  Node *id = g.createNode(Op::kIdentity, {x}, 1, "id");
  Node *training = g.createNode(Op::kDropout, {id->output(0), nullptr, on}, 1, "training");
  g.addOutput("y", training->output(0));
  std::ostringstream log;
  EXPECT_TRUE(simplify(&log));
  EXPECT_EQ(log.str(),
            "[simplify] node 'id' (Identity): removed: identity\n"
            "[simplify] node 'training' (Dropout): not removed: training_mode is not a constant "
            "false\n");
}

TEST_F(SimplifyTest, NoOpReshapeExpandAndCast) {
  Value *x = g.addInput("x", f32({2, 3}));
  Node *r = g.createNode(Op::kReshape, {x, ints("s", {2, 3})}, 1, "r");
  r->output(0)->setType(f32({2, 3}));
  Node *e = g.createNode(Op::kExpand, {r->output(0), ints("e_shape", {1, 3})}, 1, "e");
  e->output(0)->setType(f32({2, 3}));
  Node *c = g.createNode(Op::kCast, {e->output(0)}, 1, "c");
  c->setAttr("to", Attribute(DType::kF32));
  g.addOutput("y", c->output(0));
  EXPECT_TRUE(simplify());
  EXPECT_EQ(g.numNodes(), 0u);
  EXPECT_EQ(g.outputs()[0].value, x);
}

TEST_F(SimplifyTest, ReshapeExpandAndCastThatChangeSomethingStay) {
  Value *x = g.addInput("x", f32({Dim::symbol("N"), 3}));
  Node *r = g.createNode(Op::kReshape, {x, ints("s", {-1, 3})}, 1, "r");
  r->output(0)->setType(f32({Dim::symbol("N"), 3})); // equal, but not provably static
  Node *e = g.createNode(Op::kExpand, {r->output(0), ints("e_shape", {2, 1, 3})}, 1, "e");
  e->output(0)->setType(f32({2, Dim::symbol("N"), 3}));
  Node *c = g.createNode(Op::kCast, {e->output(0)}, 1, "c");
  c->setAttr("to", Attribute(DType::kF16));
  Node *untyped = g.createNode(Op::kReshape, {c->output(0), ints("s2", {-1})}, 1, "untyped");
  g.addOutput("y", untyped->output(0));
  EXPECT_FALSE(simplify());
  EXPECT_EQ(g.numNodes(), 4u);
}

TEST_F(SimplifyTest, TransposeWithIdentityPermIsRemoved) {
  Value *x = g.addInput("x", f32({2, 3}));
  Node *t = transpose(x, {0, 1}, "t");
  Node *v = g.createNode(Op::kTranspose, {g.addInput("v", f32({5}))}, 1, "v"); // default perm
  g.addOutput("y", t->output(0));
  g.addOutput("z", v->output(0));
  EXPECT_TRUE(simplify());
  EXPECT_EQ(g.numNodes(), 0u);
}

TEST_F(SimplifyTest, TransposeChainsCompose) {
  Value *x = g.addInput("x", f32({2, 3, 4}));
  Node *t1 = transpose(x, {1, 2, 0}, "t1");
  Node *t2 = transpose(t1->output(0), {1, 2, 0}, "t2");
  g.addOutput("y", t2->output(0));
  EXPECT_TRUE(simplify());
  EXPECT_EQ(t2->input(0), x);
  EXPECT_EQ(t2->getInts("perm"), (std::vector<int64_t>{2, 0, 1}));
  EXPECT_FALSE(t1->output(0)->hasUses()); // left for dce
}

TEST_F(SimplifyTest, TransposesThatCancelAreRemoved) {
  Value *x = g.addInput("x", f32({2, 3, 4}));
  Node *t1 = transpose(x, {1, 2, 0}, "t1");
  Node *t2 = transpose(t1->output(0), {2, 0, 1}, "t2");
  Value *m = g.addInput("m", f32({2, 3}));
  Node *d1 = g.createNode(Op::kTranspose, {m}, 1, "d1"); // default perm: reverse
  d1->output(0)->setType(f32({3, 2}));
  Node *d2 = g.createNode(Op::kTranspose, {d1->output(0)}, 1, "d2");
  g.addOutput("y", t2->output(0));
  g.addOutput("z", d2->output(0));
  EXPECT_TRUE(simplify());
  EXPECT_EQ(g.outputs()[0].value, x);
  EXPECT_EQ(g.outputs()[1].value, m);
  EXPECT_EQ(g.numNodes(), 2u); // t1 and d1, now unused
}

TEST_F(SimplifyTest, MalformedPermIsLeftAlone) {
  Value *x = g.addInput("x", f32({2, 3}));
  Node *t1 = transpose(x, {1, 1}, "t1");
  Node *t2 = transpose(t1->output(0), {1, 0}, "t2");
  g.addOutput("y", t2->output(0));
  EXPECT_FALSE(simplify());
  EXPECT_EQ(t2->input(0), t1->output(0));
}

TEST_F(SimplifyTest, ReshapeChainReadsTheInnerInput) {
  Value *x = g.addInput("x", f32({2, 3}));
  Node *r1 = g.createNode(Op::kReshape, {x, ints("s1", {3, 2})}, 1, "r1");
  Node *r2 = g.createNode(Op::kReshape, {r1->output(0), ints("s2", {-1})}, 1, "r2");
  Node *r3 = g.createNode(Op::kReshape, {r1->output(0), ints("s3", {0, 2})}, 1, "r3");
  r3->setAttr("allowzero", Attribute(1));
  g.addOutput("y", r2->output(0));
  g.addOutput("z", r3->output(0));
  EXPECT_TRUE(simplify());
  EXPECT_EQ(r2->input(0), x);
  EXPECT_EQ(r3->input(0), x);
}

TEST_F(SimplifyTest, ReshapeChainWithCopiedDimStays) {
  Value *x = g.addInput("x", f32({2, 3}));
  Value *dyn = g.addInput("dyn", TensorType(DType::kI64, Shape({2})));
  Node *r1 = g.createNode(Op::kReshape, {x, ints("s1", {3, 2})}, 1, "r1");
  Node *r2 = g.createNode(Op::kReshape, {r1->output(0), ints("s2", {0, 2})}, 1, "r2");
  Node *r3 = g.createNode(Op::kReshape, {r1->output(0), dyn}, 1, "r3");
  g.addOutput("y", r2->output(0));
  g.addOutput("z", r3->output(0));
  std::ostringstream log;
  EXPECT_FALSE(simplify(&log));
  EXPECT_EQ(r2->input(0), r1->output(0));
  EXPECT_EQ(r3->input(0), r1->output(0));
  EXPECT_EQ(log.str(), "[simplify] node 'r2' (Reshape): reshape chain kept: the outer shape may "
                       "copy a dim (0) from the inner result\n"
                       "[simplify] node 'r3' (Reshape): reshape chain kept: the outer shape may "
                       "copy a dim (0) from the inner result\n");
}

TEST_F(SimplifyTest, SqueezeOfUnsqueezeOnSameAxes) {
  Value *x = g.addInput("x", f32({2, 3}));
  Node *u = g.createNode(Op::kUnsqueeze, {x, ints("ua", {-1, 0})}, 1, "u");
  Node *s = g.createNode(Op::kSqueeze, {u->output(0), ints("sa", {3, 0})}, 1, "s");
  g.addOutput("y", s->output(0));
  EXPECT_TRUE(simplify());
  EXPECT_EQ(g.outputs()[0].value, x);
}

TEST_F(SimplifyTest, SqueezeOfUnsqueezeOnOtherAxesStays) {
  Value *x = g.addInput("x", f32({2, 1}));
  Node *u = g.createNode(Op::kUnsqueeze, {x, ints("ua", {0})}, 1, "u");
  Node *s1 = g.createNode(Op::kSqueeze, {u->output(0), ints("sa", {2})}, 1, "s1");
  Node *s2 = g.createNode(Op::kSqueeze, {u->output(0)}, 1, "s2"); // no axes: all 1-dims
  g.addOutput("y", s1->output(0));
  g.addOutput("z", s2->output(0));
  std::ostringstream log;
  EXPECT_FALSE(simplify(&log));
  EXPECT_EQ(g.numNodes(), 3u);
  EXPECT_EQ(log.str(), "[simplify] node 's1' (Squeeze): squeeze(unsqueeze) kept: different axes\n"
                       "[simplify] node 's2' (Squeeze): squeeze(unsqueeze) kept: axes are not both "
                       "constant\n");
}

// A gather of rows that a layer norm normalises one by one moves above it: the results are
// the reference's, to float rounding, for a scalar index (the axis removed) and for an index
// vector, with the layer norm's axis given either way.
TEST(SimplifyNumerics, GatherAboveLayerNormKeepsTheResults) {
  for (const char *axes : {"2", "-1"}) {
    for (const char *index : {"i64[] dense<[3]>", "i64[2] dense<[4, 0]>"}) {
      const std::string text =
          fmt::format(R"(graph @g(%x: f32[3,5,16], %s: f32[16], %b: f32[16]) -> (y: ?) {{
  %i = constant {}
  %ln = layer_normalization(%x, %s, %b) {{axis = {}, epsilon = 1e-05}} : f32[3,5,16]
  %y = gather(%ln, %i) {{axis = 1}} : ?
  return %y
}})",
                      index, axes);
      SCOPED_TRACE(text);
      std::unique_ptr<Graph> g = testing::parsed(text);
      ASSERT_TRUE(g);
      std::unique_ptr<Graph> x = testing::after(*g, "simplify,dce,infer-shapes");
      ASSERT_TRUE(x);
      ASSERT_EQ(x->numNodes(), 2u);
      EXPECT_EQ(x->nodes().front()->op(), Op::kGather);
      for (uint64_t seed : {1, 2})
        testing::expectSameResults(*g, *x, 1e-6, seed);
    }
  }
}

} // namespace
} // namespace dlc
