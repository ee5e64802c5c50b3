// infer-shapes on graphs built with the Graph API and made-up op rows.
#include <gtest/gtest.h>

#include "ir/ops/util.h"
#include "pass_test_util.h"

namespace dlc {
namespace {

using testing::f32;
using testing::FakeOp;
using testing::runPass;

/// shape(x): i64[rank], whose value is x's dims.
Status inferShape(InferContext &ctx) {
  const Shape &s = ctx.inputType(0).shape;
  ctx.setOutputType(0, TensorType(DType::kI64, Shape({Dim(s.rank())})));
  ctx.setOutputShapeValue(0, s.dims());
  return Status::ok();
}

/// reshape(x, shape): dims from the shape input as far as they are known.
Status inferReshape(InferContext &ctx) {
  std::optional<std::vector<Dim>> dims = ctx.inputAsDims(1);
  if (dims)
    for (Dim &d : *dims)
      if (auto v = shapeValueInt(d); v && *v < 0)
        d = Dim::unknown(); // a -1 element: not resolved by this fake
  ctx.setOutputType(0, TensorType(ctx.inputType(0).dtype, dims ? Shape(*dims) : Shape::unranked()));
  return Status::ok();
}

Status inferFails(InferContext &ctx) { return ctx.error("input rank {} is too small", 1); }

class InferShapesTest : public ::testing::Test {
protected:
  FakeOp relu_{Op::kRelu, ops::inferSameAsInput};
  FakeOp shape_{Op::kShape, inferShape};
  FakeOp reshape_{Op::kReshape, inferReshape};
  FakeOp gru_{Op::kGRU, nullptr};
  FakeOp floor_{Op::kFloor, inferFails};
  Graph g{"g"};
};

TEST_F(InferShapesTest, PropagatesAlongAChainAndIsIdempotent) {
  Value *x = g.addInput("x", f32({Dim::symbol("N"), 3}));
  Node *a = g.createNode(Op::kRelu, {x}, 1, "a");
  Node *b = g.createNode(Op::kRelu, {a->output(0)}, 1, "b");
  g.addOutput("y", b->output(0));
  Expected<bool> changed = runPass(g, "infer-shapes");
  ASSERT_TRUE(changed) << changed.status().message();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(b->output(0)->type().str(), "f32[N,3]");
  Expected<bool> again = runPass(g, "infer-shapes");
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again);
}

TEST_F(InferShapesTest, SymbolicShapeValuesFlowIntoConsumers) {
  Value *x = g.addInput("x", f32({Dim::symbol("N"), 3}));
  Node *s = g.createNode(Op::kShape, {x}, 1, "s");
  Node *r = g.createNode(Op::kReshape, {x, s->output(0)}, 1, "r");
  g.addOutput("y", r->output(0));
  ASSERT_TRUE(runPass(g, "infer-shapes"));
  EXPECT_EQ(s->output(0)->type().str(), "i64[2]");
  EXPECT_EQ(r->output(0)->type().str(), "f32[N,3]");
}

TEST_F(InferShapesTest, ConstantInputsAreVisible) {
  Value *x = g.addInput("x", f32({2, 6}));
  Value *shape = g.addConstant("shape", Tensor::vectorI64({3, 4}));
  Node *r = g.createNode(Op::kReshape, {x, shape}, 1, "r");
  g.addOutput("y", r->output(0));
  ASSERT_TRUE(runPass(g, "infer-shapes"));
  EXPECT_EQ(r->output(0)->type().str(), "f32[3,4]");
}

TEST_F(InferShapesTest, HintsFillUnknownDimsAndInferredDimsWin) {
  Value *x = g.addInput("x", f32({2, 6}));
  Value *shape = g.addConstant("shape", Tensor::vectorI64({-1, 4, 1}));
  Node *r = g.createNode(Op::kReshape, {x, shape}, 1, "r");
  r->output(0)->setType(TensorType(DType::kUnknown, Shape({3, Dim::symbol("M"), 1})));
  g.addOutput("y", r->output(0));
  Expected<bool> changed = runPass(g, "infer-shapes");
  ASSERT_TRUE(changed) << changed.status().message();
  EXPECT_TRUE(*changed);
  // dim 0: unknown from inference, 3 from the hint; dim 1: inferred 4 beats symbol M.
  EXPECT_EQ(r->output(0)->type().str(), "f32[3,4,1]");
}

TEST_F(InferShapesTest, HintWithOnlyMatchingInfoIsUnchanged) {
  Value *x = g.addInput("x", f32({2, 3}));
  Node *a = g.createNode(Op::kRelu, {x}, 1, "a");
  a->output(0)->setType(f32({2, 3}));
  Expected<bool> changed = runPass(g, "infer-shapes");
  ASSERT_TRUE(changed);
  EXPECT_FALSE(*changed);
}

TEST_F(InferShapesTest, DeclaredOutputTypeContradictingInferenceIsAnError) {
  Value *x = g.addInput("x", f32({Dim::symbol("N"), 3}));
  Node *a = g.createNode(Op::kRelu, {x}, 1, "a");
  // A symbolic or unknown declared dim agrees with anything; a known one must match.
  g.addOutput("ok", a->output(0), f32({Dim::symbol("B"), Dim::unknown()}));
  EXPECT_TRUE(runPass(g, "infer-shapes"));
  g.addOutput("bad", a->output(0), f32({Dim::symbol("N"), 4}));
  Expected<bool> r = runPass(g, "infer-shapes");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().message(),
            "output 'bad' is declared f32[N,4] but node 'a' (Relu) gives f32[N,3]");
}

TEST_F(InferShapesTest, ContradictingDimIsAnError) {
  Value *x = g.addInput("x", f32({2, 6}));
  Value *shape = g.addConstant("shape", Tensor::vectorI64({-1, 4}));
  Node *r = g.createNode(Op::kReshape, {x, shape}, 1, "r");
  r->output(0)->setType(f32({3, 5}));
  Expected<bool> changed = runPass(g, "infer-shapes");
  ASSERT_FALSE(changed);
  EXPECT_EQ(changed.status().message(),
            "node 'r' (Reshape): output 'r' is inferred as f32[?,4] but its type was given as "
            "f32[3,5]");
}

TEST_F(InferShapesTest, ContradictingDTypeOrRankIsAnError) {
  Value *x = g.addInput("x", f32({2}));
  Node *a = g.createNode(Op::kRelu, {x}, 1, "a");
  a->output(0)->setType(TensorType(DType::kI64, Shape({2})));
  EXPECT_EQ(runPass(g, "infer-shapes").status().message(),
            "node 'a' (Relu): output 'a' is inferred as f32[2] but its type was given as i64[2]");
  a->output(0)->setType(f32({2, 1}));
  EXPECT_EQ(runPass(g, "infer-shapes").status().message(),
            "node 'a' (Relu): output 'a' is inferred as f32[2] but its type was given as "
            "f32[2,1]");
}

TEST_F(InferShapesTest, OpWithoutInferenceKeepsHintsAndSaysSo) {
  Value *x = g.addInput("x", f32({5, 2, 4}));
  Node *rnn = g.createNode(Op::kGRU, {x}, 2, "rnn");
  rnn->output(0)->setType(f32({5, 1, 2, 8}));
  Node *after = g.createNode(Op::kRelu, {rnn->output(0)}, 1, "after");
  Node *blind = g.createNode(Op::kRelu, {rnn->output(1)}, 1, "blind");
  std::ostringstream log;
  Expected<bool> changed = runPass(g, "infer-shapes", {}, &log);
  ASSERT_TRUE(changed) << changed.status().message();
  EXPECT_EQ(rnn->output(0)->type().str(), "f32[5,1,2,8]");
  EXPECT_EQ(after->output(0)->type().str(), "f32[5,1,2,8]");
  EXPECT_FALSE(blind->output(0)->type().isKnown());
  EXPECT_EQ(log.str(),
            "[infer-shapes] node 'rnn' (GRU): not inferred: op 'gru' has no shape inference; "
            "kept existing types\n"
            "[infer-shapes] node 'blind' (Relu): not inferred: input 'rnn_1' has an unknown "
            "dtype\n");
}

TEST_F(InferShapesTest, InferenceErrorNamesTheNode) {
  Value *x = g.addInput("x", f32({2}));
  g.createNode(Op::kFloor, {x}, 1, "fl");
  EXPECT_EQ(runPass(g, "infer-shapes").status().message(),
            "node 'fl' (Floor): input rank 1 is too small");
}

TEST_F(InferShapesTest, AbsentOptionalInputsAndOutputs) {
  Value *x = g.addInput("x", f32({4}));
  Node *a = g.createNode(Op::kRelu, {x, nullptr}, 2, "a");
  a->removeOutput(1);
  ASSERT_TRUE(runPass(g, "infer-shapes"));
  EXPECT_EQ(a->output(0)->type().str(), "f32[4]");
  EXPECT_EQ(a->output(1), nullptr);
}

} // namespace
} // namespace dlc
