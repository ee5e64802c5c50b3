// The reference executor on small text graphs: results, input checks with their exact
// messages, ops without evaluation, eval errors, lifetimes of intermediates.
#include <gtest/gtest.h>

#include <memory>

#include "ir/eval/eval.h"
#include "runtime/reference_executor.h"
#include "runtime_test_util.h"

namespace dlc {
namespace {

using testing::f32Tensor;
using testing::f32Values;
using testing::inferredGraph;

constexpr const char *kAddMul = R"(
graph @addmul(%x: f32[N,3], %y: f32[N,3]) -> (sum: f32[N,3], prod: ?) {
  %s = add(%x, %y) : f32[N,3]
  %p = mul(%s, %y) : f32[N,3]
  return %s, %p
}
)";

Expected<std::vector<NamedTensor>> runText(const Graph &g,
                                           const std::map<std::string, Tensor> &inputs) {
  DLC_ASSIGN_OR_RETURN(ReferenceExecutor ex, ReferenceExecutor::create(g));
  return ex.run(inputs);
}

std::string errorOf(const Graph &g, const std::map<std::string, Tensor> &inputs) {
  auto r = runText(g, inputs);
  return r ? "(no error)" : r.status().message();
}

TEST(ReferenceExecutor, RunsNodesAndReturnsOutputsByPublicName) {
  auto g = inferredGraph(kAddMul);
  auto out = runText(*g, {{"x", f32Tensor({2, 3}, {1, 2, 3, 4, 5, 6})},
                          {"y", f32Tensor({2, 3}, {1, 1, 2, 2, -1, 0.5f})}});
  ASSERT_TRUE(out) << out.status().message();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].name, "sum");
  EXPECT_EQ((*out)[1].name, "prod");
  EXPECT_EQ(f32Values((*out)[0].tensor), (std::vector<float>{2, 3, 5, 6, 4, 6.5f}));
  EXPECT_EQ(f32Values((*out)[1].tensor), (std::vector<float>{2, 3, 10, 12, -4, 3.25f}));
  EXPECT_EQ((*out)[1].tensor.shape(), (std::vector<int64_t>{2, 3}));
}

TEST(ReferenceExecutor, ObserverSeesInputsThenNodeOutputsInOrder) {
  auto g = inferredGraph(kAddMul);
  auto ex = ReferenceExecutor::create(*g);
  ASSERT_TRUE(ex);
  std::vector<std::string> seen;
  std::vector<std::vector<float>> values;
  auto out = ex->run({{"x", f32Tensor({1, 3}, {1, 2, 3})}, {"y", f32Tensor({1, 3}, {2, 2, 2})}},
                     [&](const Value *v, const Tensor &t) {
                       seen.push_back(v->name());
                       values.push_back(f32Values(t));
                     });
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_EQ(seen, (std::vector<std::string>{"x", "y", "s", "p"}));
  EXPECT_EQ(values[2], (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(values[3], (std::vector<float>{6, 8, 10}));
}

TEST(ReferenceExecutor, ObserverSeesIntermediatesThatAreFreedEarly) {
  auto g = inferredGraph(R"(
graph @chain(%x: f32[2]) -> (y: f32[2]) {
  %a = relu(%x) : f32[2]
  %b = neg(%a) : f32[2]
  %y = relu(%b) : f32[2]
  return %y
}
)");
  auto ex = ReferenceExecutor::create(*g);
  ASSERT_TRUE(ex);
  std::map<std::string, std::vector<float>> byName;
  auto out = ex->run({{"x", f32Tensor({2}, {-1, 4})}},
                     [&](const Value *v, const Tensor &t) { byName[v->name()] = f32Values(t); });
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_EQ(byName["a"], (std::vector<float>{0, 4}));
  EXPECT_EQ(byName["b"], (std::vector<float>{-0.0f, -4}));
  EXPECT_EQ(byName["y"], (std::vector<float>{0, 0}));
}

TEST(ReferenceExecutor, SymbolicDimsTakeEachRunsSizes) {
  auto g = inferredGraph(kAddMul);
  auto ex = ReferenceExecutor::create(*g);
  ASSERT_TRUE(ex);
  for (int64_t n : {0, 1, 5}) {
    std::vector<float> ones(static_cast<size_t>(n * 3), 1.0f);
    auto out = ex->run({{"x", f32Tensor({n, 3}, ones)}, {"y", f32Tensor({n, 3}, ones)}});
    ASSERT_TRUE(out) << out.status().message();
    EXPECT_EQ((*out)[1].tensor.shape(), (std::vector<int64_t>{n, 3}));
  }
}

TEST(ReferenceExecutor, OutputsMayBeInputsOrConstants) {
  auto g = inferredGraph(R"(
graph @g(%x: i64[2]) -> (same: i64[2], c: i64[2], w: i64[2]) {
  %c = constant i64[2] dense<[7, -7]>
  %b = constant bool[2] dense<[true, false]>
  %w = where(%b, %x, %c) : i64[2]
  return %x, %c, %w
}
)");
  ASSERT_TRUE(g);
  auto out = runText(*g, {{"x", Tensor::vectorI64({1, 2})}});
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_EQ((*out)[0].tensor.toInt64Vector(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ((*out)[1].tensor.toInt64Vector(), (std::vector<int64_t>{7, -7}));
  EXPECT_EQ((*out)[2].tensor.toInt64Vector(), (std::vector<int64_t>{1, -7}));
}

TEST(ReferenceExecutor, CastAndSubRun) {
  auto g = inferredGraph(R"(
graph @g(%x: i32[3]) -> (y: f32[3]) {
  %f = cast(%x) {to = f32} : f32[3]
  %one = constant f32[] dense<[1.0]>
  %y = sub(%f, %one) : f32[3]
  return %y
}
)");
  auto out = runText(*g, {{"x", Tensor::fromVector<int32_t>(DType::kI32, {3}, {0, 5, -2})}});
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_EQ(f32Values((*out)[0].tensor), (std::vector<float>{-1, 4, -3}));
}

TEST(ReferenceExecutor, MissingInput) {
  auto g = inferredGraph(kAddMul);
  EXPECT_EQ(errorOf(*g, {{"x", f32Tensor({1, 3}, {1, 2, 3})}}), "missing input 'y' (f32[N,3])");
  EXPECT_EQ(errorOf(*g, {}), "missing inputs 'x' (f32[N,3]), 'y' (f32[N,3])");
}

TEST(ReferenceExecutor, UnknownInputListsTheKnownOnes) {
  auto g = inferredGraph(kAddMul);
  auto x = f32Tensor({1, 3}, {1, 2, 3});
  EXPECT_EQ(errorOf(*g, {{"x", x}, {"y", x}, {"z", x}}),
            "unknown input 'z'; the model's inputs are 'x', 'y'");
  auto r = runText(*g, {{"x", x}, {"y", x}, {"z", x}});
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

TEST(ReferenceExecutor, WrongDtype) {
  auto g = inferredGraph(kAddMul);
  EXPECT_EQ(errorOf(*g, {{"x", f32Tensor({1, 3}, {1, 2, 3})},
                         {"y", Tensor::fromVector<double>(DType::kF64, {1, 3}, {1, 2, 3})}}),
            "input 'y': expected dtype f32, got f64");
}

TEST(ReferenceExecutor, WrongRank) {
  auto g = inferredGraph(kAddMul);
  EXPECT_EQ(errorOf(*g, {{"x", f32Tensor({3}, {1, 2, 3})}, {"y", f32Tensor({1, 3}, {1, 2, 3})}}),
            "input 'x': expected rank 2 (f32[N,3]), got rank 1 ([3])");
}

TEST(ReferenceExecutor, WrongDim) {
  auto g = inferredGraph(kAddMul);
  EXPECT_EQ(errorOf(*g, {{"x", f32Tensor({1, 3}, {1, 2, 3})}, {"y", f32Tensor({1, 1}, {1})}}),
            "input 'y': dim 1 expected 3, got 1 (expected f32[N,3], got [1,1])");
}

TEST(ReferenceExecutor, SymbolicDimMustAgreeAcrossInputs) {
  auto g = inferredGraph(kAddMul);
  EXPECT_EQ(errorOf(*g, {{"x", f32Tensor({1, 3}, {1, 2, 3})},
                         {"y", f32Tensor({2, 3}, {1, 2, 3, 4, 5, 6})}}),
            "input 'y': dim 0 is N = 1 (from input 'x'), got 2");
}

TEST(ReferenceExecutor, EmptyTensorIsRejected) {
  auto g = inferredGraph(kAddMul);
  EXPECT_EQ(errorOf(*g, {{"x", Tensor()}, {"y", f32Tensor({1, 3}, {1, 2, 3})}}),
            "input 'x': the tensor is empty (no dtype, no data)");
}

TEST(ReferenceExecutor, UnknownAndUnrankedInputTypesAcceptAnything) {
  auto g = inferredGraph(R"(
graph @g(%x: f32[*], %y: f32[?]) -> (y: ?) {
  %z = neg(%x) : f32[*]
  return %z
}
)");
  ASSERT_TRUE(g);
  auto out = runText(*g, {{"x", f32Tensor({1, 2}, {1, -2})}, {"y", f32Tensor({4}, {0, 0, 0, 0})}});
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_EQ(f32Values((*out)[0].tensor), (std::vector<float>{-1, 2}));
}

TEST(ReferenceExecutor, OpWithoutEvaluationIsNamed) {
  eval::ScopedEvalOverride noEval(Op::kMul, nullptr);
  auto g = inferredGraph(R"(
graph @g(%x: f32[2]) -> (y: f32[2]) {
  %y = mul(%x, %x) : f32[2] loc("scale")
  return %y
}
)");
  auto ex = ReferenceExecutor::create(*g);
  ASSERT_FALSE(ex);
  EXPECT_EQ(ex.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(ex.status().message(), "node 'scale' (Mul): no reference implementation yet");
}

TEST(ReferenceExecutor, EveryOpWithoutEvaluationIsListedAtOnce) {
  eval::ScopedEvalOverride o1(Op::kMul, nullptr), o2(Op::kSub, nullptr);
  auto g = inferredGraph(R"(
graph @g(%x: f32[2]) -> (y: f32[2]) {
  %a = mul(%x, %x) : f32[2] loc("m1")
  %b = sub(%a, %x) : f32[2] loc("s1")
  %c = add(%b, %x) : f32[2]
  %y = mul(%c, %x) : f32[2]
  return %y
}
)");
  auto ex = ReferenceExecutor::create(*g);
  ASSERT_FALSE(ex);
  EXPECT_EQ(ex.status().message(), "3 nodes of 2 ops have no reference implementation yet:\n"
                                   "  Mul (2 nodes: 'm1', (unnamed))\n"
                                   "  Sub (1 node: 's1')");
}

Expected<std::vector<Tensor>> failingEval(const Node &, const std::vector<Tensor> &) {
  return invalidArgument("index 9 is out of range");
}

TEST(ReferenceExecutor, EvalErrorsCarryTheNode) {
  eval::ScopedEvalOverride failing(Op::kNeg, failingEval);
  auto g = inferredGraph(R"(
graph @g(%x: f32[2]) -> (y: f32[2]) {
  %y = neg(%x) : f32[2] loc("negate")
  return %y
}
)");
  EXPECT_EQ(errorOf(*g, {{"x", f32Tensor({2}, {1, 2})}}),
            "node 'negate' (Neg): index 9 is out of range");
}

Expected<std::vector<Tensor>> wrongShapeEval(const Node &, const std::vector<Tensor> &in) {
  return std::vector<Tensor>{in[0].reshaped({in[0].numElements(), 1})};
}

TEST(ReferenceExecutor, ResultsAreCheckedAgainstShapeInference) {
  eval::ScopedEvalOverride wrong(Op::kNeg, wrongShapeEval);
  auto g = inferredGraph(R"(
graph @g(%x: f32[N]) -> (y: f32[N]) {
  %y = neg(%x) : f32[N] loc("negate")
  return %y
}
)");
  auto r = runText(*g, {{"x", f32Tensor({2}, {1, 2})}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
  EXPECT_EQ(r.status().message(),
            "reference evaluation disagrees with shape inference: node 'negate' (Neg): output 0 "
            "('y'): expected rank 1 (f32[N]), got rank 2 ([2,1])");
}

// Neg's evaluation, recording each result's buffer so a later call can see which are freed.
std::vector<std::weak_ptr<Buffer>> gProduced;
std::vector<long> gAliveAtCall;

Expected<std::vector<Tensor>> recordingNeg(const Node &node, const std::vector<Tensor> &in) {
  long alive = 0;
  for (const auto &w : gProduced)
    alive += !w.expired();
  gAliveAtCall.push_back(alive);
  Tensor out = in[0].castTo(DType::kF32).clone();
  for (int64_t i = 0; i < out.numElements(); ++i)
    out.mutableData<float>()[i] = -out.data<float>()[i];
  gProduced.push_back(out.buffer());
  return std::vector<Tensor>{out};
}

TEST(ReferenceExecutor, IntermediatesAreFreedAfterTheirLastUse) {
  eval::ScopedEvalOverride rec(Op::kNeg, recordingNeg);
  gProduced.clear();
  gAliveAtCall.clear();
  // a is used by b and c (freed after c); b only by c; c and d are outputs.
  auto g = inferredGraph(R"(
graph @g(%x: f32[2]) -> (c: f32[2], e: f32[2]) {
  %a = neg(%x) : f32[2]
  %b = neg(%a) : f32[2]
  %c = add(%a, %b) : f32[2]
  %d = neg(%c) : f32[2]
  %e = neg(%d) : f32[2]
  return %c, %e
}
)");
  auto out = runText(*g, {{"x", f32Tensor({2}, {1, 2})}});
  ASSERT_TRUE(out) << out.status().message();
  // Calls: a (nothing produced yet), b (a alive), d (a and b freed after add), e (d alive).
  EXPECT_EQ(gAliveAtCall, (std::vector<long>{0, 1, 0, 1}));
  EXPECT_EQ(f32Values((*out)[0].tensor), (std::vector<float>{0, 0}));
  // After the run only the returned outputs hold their buffers.
  EXPECT_TRUE(gProduced[0].expired());
  EXPECT_TRUE(gProduced[1].expired());
  EXPECT_TRUE(gProduced[2].expired());
  EXPECT_FALSE(gProduced[3].expired());
}

TEST(ReferenceExecutor, BindInputsReportsSymbolSizes) {
  auto g = inferredGraph(kAddMul);
  auto ex = ReferenceExecutor::create(*g);
  ASSERT_TRUE(ex);
  auto x = f32Tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  auto b = ex->bindInputs({{"x", x}, {"y", x}});
  ASSERT_TRUE(b) << b.status().message();
  EXPECT_EQ(*b, (DimBindings{{"N", 2}}));
}

} // namespace
} // namespace dlc
