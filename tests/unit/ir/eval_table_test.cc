// The reference-kernel table (ir/eval/eval.h): one row per op at most, each row in the family
// of its op's OpDef row, every kernel behind an op that has inference (kernels run it first),
// and the test override scoped.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "ir/eval/eval.h"
#include "ir/eval/families.h"
#include "ir/graph.h"
#include "ir/ops/families.h"

namespace dlc::eval {
namespace {

TEST(EvalTable, NoOpHasTwoRows) {
  std::map<Op, int> rows;
  for (const EvalRow &r : allEvalRows())
    ++rows[r.op];
  for (const auto &[op, n] : rows)
    EXPECT_EQ(n, 1) << opName(op) << " has " << n << " rows";
  EXPECT_GT(rows.size(), 150u);
}

TEST(EvalTable, EveryRowIsInItsOpsFamily) {
  const std::pair<std::vector<EvalRow> (*)(), std::vector<OpDef> (*)()> families[] = {
      {elementwiseEvals, ops::elementwiseOps},
      {reductionEvals, ops::reductionOps},
      {nnEvals, ops::nnOps},
      {linalgEvals, ops::linalgOps},
      {tensorEvals, ops::tensorOps},
      {quantEvals, ops::quantOps},
      {miscEvals, ops::miscOps},
      {controlFlowEvals, ops::controlFlowOps}};
  for (const auto &[evals, defs] : families) {
    std::set<Op> family;
    for (const OpDef &d : defs())
      family.insert(d.op);
    for (const EvalRow &r : evals())
      EXPECT_TRUE(family.count(r.op)) << opName(r.op) << " is listed in another family";
  }
}

TEST(EvalTable, EveryKernelHasInferenceAndTheTableAnswersIt) {
  for (const EvalRow &r : allEvalRows()) {
    EXPECT_NE(r.fn, nullptr) << opName(r.op);
    EXPECT_NE(opDef(r.op).infer, nullptr) << opName(r.op) << " has a kernel but no inference";
    EXPECT_EQ(findEval(r.op), r.fn) << opName(r.op);
  }
}

Expected<std::vector<Tensor>> fortyTwo(const Node &, const std::vector<Tensor> &) {
  return std::vector<Tensor>{Tensor::scalarF32(42)};
}

TEST(EvalTable, OverridesNestAndRestore) {
  const EvalFn real = findEval(Op::kRelu);
  ASSERT_NE(real, nullptr);
  {
    ScopedEvalOverride none(Op::kRelu, nullptr);
    EXPECT_FALSE(hasEval(Op::kRelu));
    {
      ScopedEvalOverride made(Op::kRelu, fortyTwo);
      EXPECT_EQ(findEval(Op::kRelu), fortyTwo);
      Graph g("g");
      Node *n = g.createNode(Op::kRelu, {g.addInput("x", TensorType(DType::kF32, Shape()))}, 1);
      auto r = evaluate(*n, {Tensor::scalarF32(-1)});
      ASSERT_TRUE(r) << r.status().message();
      EXPECT_EQ(r->at(0).data<float>()[0], 42.0f);
    }
    EXPECT_FALSE(hasEval(Op::kRelu));
  }
  EXPECT_EQ(findEval(Op::kRelu), real);
}

TEST(EvalTable, AnOpWithoutAKernelIsUnimplemented) {
  ScopedEvalOverride none(Op::kRelu, nullptr);
  Graph g("g");
  Node *n = g.createNode(Op::kRelu, {g.addInput("x", TensorType(DType::kF32, Shape()))}, 1, "r");
  auto r = evaluate(*n, {Tensor::scalarF32(-1)});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(r.status().message(), "node 'r' (Relu): no reference evaluation for op 'relu'");
}

} // namespace
} // namespace dlc::eval
