// expand-ops on control flow (passes/util/control_flow_expand.h): If with a constant condition,
// Scan with a static sequence length and Loop with a constant trip count are inlined, compute
// on the reference backend what the ops compute (random inputs; every scan direction and axis,
// states, captures, scan outputs, the iteration number, nested bodies), and leave no control
// flow; what cannot be inlined stays, with the reason in the decision log.
#include <fmt/format.h>

#include "numerics_util.h"

namespace dlc {
namespace {

using testing::after;
using testing::countOps;
using testing::parsed;

int controlFlow(const Graph &g) {
  return countOps(g, Op::kIf) + countOps(g, Op::kLoop) + countOps(g, Op::kScan);
}

/// Inlines `text`'s control flow; none may stay, and the results match the original's.
std::unique_ptr<Graph> expectInlinedMatches(const std::string &text, int maxSteps = 128) {
  SCOPED_TRACE(text);
  std::unique_ptr<Graph> g = parsed(text);
  EXPECT_TRUE(g);
  if (!g)
    return nullptr;
  std::ostringstream log;
  std::unique_ptr<Graph> x =
      after(*g, fmt::format("expand-ops{{max-steps={}}},infer-shapes", maxSteps), &log);
  EXPECT_TRUE(x);
  if (!x)
    return nullptr;
  EXPECT_EQ(controlFlow(*x), 0) << log.str();
  for (uint64_t seed : {1, 2})
    testing::expectSameResults(*g, *x, 1e-6, seed);
  return x;
}

TEST(ControlFlowExpand, IfWithAConstantConditionIsTheBranchTaken) {
  std::unique_ptr<Graph> x = expectInlinedMatches(R"(graph @g(%x: f32[2,3]) -> (y: ?, z: ?) {
  %t = constant bool[] dense<[true]>
  %f = constant bool[] dense<[false]>
  %two = constant f32[] dense<[2.0]>
  %y = if(%t, %x, %two) {then_branch = graph @then(%a: ?, %k: ?) -> (r: ?) {
    %r = mul(%a, %k) : ?
    return %r
  }, else_branch = graph @else(%a: ?, %k: ?) -> (r: ?) {
    %r = add(%a, %k) : ?
    return %r
  }} : ?
  %z = if(%f, %x, %two) {then_branch = graph @then(%a: ?, %k: ?) -> (r: ?) {
    %r = mul(%a, %k) : ?
    return %r
  }, else_branch = graph @else(%a: ?, %k: ?) -> (r: ?) {
    return %a
  }} : ?
  return %y, %z
})");
  ASSERT_TRUE(x);
  EXPECT_EQ(countOps(*x, Op::kMul), 1);
  EXPECT_EQ(countOps(*x, Op::kAdd), 0);
  // The else branch returns its capture: the model's input keeps its name, the output its own.
  EXPECT_EQ(x->inputs()[0]->name(), "x");
  EXPECT_EQ(x->outputs()[1].value->name(), "z");
}

TEST(ControlFlowExpand, ScanInEveryDirectionAndAxis) {
  // Two scan inputs (one along axis 1, reversed), a state, a capture; one scan output stacked
  // on the last axis in reverse, one on axis 0.
  expectInlinedMatches(
      R"(graph @g(%s0: f32[3], %a: f32[4,3], %b: f32[3,4], %w: f32[3]) -> (s: ?, o1: ?, o2: ?) {
  %s, %o1, %o2 = scan(%s0, %a, %b, %w) {body = graph @body(%st: ?, %ra: ?, %rb: ?, %k: ?) -> (st_out: ?, e1: ?, e2: ?) {
    %p = mul(%ra, %k) : ?
    %q = add(%st, %p) : ?
    %st_out = sub(%q, %rb) : ?
    %e1 = mul(%st_out, %rb) : ?
    %e2 = add(%ra, %rb) : ?
    return %st_out, %e1, %e2
  }, num_scan_inputs = 2, num_captures = 1, scan_input_axes = [0, 1], scan_input_directions = [0, 1], scan_output_axes = [-1, 0], scan_output_directions = [1, 0]} : ?, ?, ?
  return %s, %o1, %o2
})");
}

TEST(ControlFlowExpand, LoopWithAConstantTripCountUsesItsIterationNumber) {
  // loop11's form: each iteration slices x at the iteration number (folded to a constant in
  // each copy, so the Slice is typed), the condition passed on through Identity.
  std::unique_ptr<Graph> x =
      expectInlinedMatches(R"(graph @g(%x: f32[5], %y0: f32[1]) -> (y: ?, trace: ?) {
  %m = constant i64[] dense<[5]>
  %go = constant bool[] dense<[true]>
  %y, %trace = loop(%m, %go, %y0, %x) {body = graph @body(%i: ?, %c: ?, %acc: ?, %xs: ?) -> (c_out: ?, acc_out: ?, t: ?) {
    %one = constant i64[] dense<[1]>
    %end = add(%i, %one) : ?
    %zero = constant i64[1] dense<[0]>
    %start1 = unsqueeze(%i, %zero) : ?
    %end1 = unsqueeze(%end, %zero) : ?
    %piece = slice(%xs, %start1, %end1) : ?
    %acc_out = add(%acc, %piece) : ?
    %c_out = identity(%c) : ?
    return %c_out, %acc_out, %acc_out
  }, num_captures = 1} : ?, ?
  return %y, %trace
})");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->outputs()[1].value->shape().str(), "[5,1]");
  EXPECT_EQ(countOps(*x, Op::kSlice), 5);
}

TEST(ControlFlowExpand, NestedBodiesAreInlinedInTurn) {
  // An If inside a Loop, its condition computed from the iteration number: every copy's
  // condition folds, so every copy is inlined; a Scan over a Scan (Scan-8's form).
  expectInlinedMatches(R"(graph @g(%x: f32[2,3], %a0: f32[3]) -> (a: ?, rows: ?) {
  %m = constant i64[] dense<[4]>
  %a = loop(%m, _, %a0) {body = graph @body(%i: ?, %c: ?, %acc: ?) -> (c_out: ?, acc_out: ?) {
    %two = constant i64[] dense<[2]>
    %early = less(%i, %two) : ?
    %acc_out = if(%early, %acc) {then_branch = graph @then(%v: ?) -> (r: ?) {
      %r = exp(%v) : ?
      return %r
    }, else_branch = graph @else(%v: ?) -> (r: ?) {
      %r = neg(%v) : ?
      return %r
    }} : ?
    return %c, %acc_out
  }} : ?
  %rows = scan(%x) {body = graph @outer(%row: ?) -> (r: ?) {
    %z = constant f32[] dense<[0.0]>
    _, %r = scan(%z, %row) {body = graph @inner(%s: ?, %e: ?) -> (s_out: ?, e_out: ?) {
      %s_out = add(%s, %e) : ?
      return %s_out, %s_out
    }, num_scan_inputs = 1} : _, ?
    return %r
  }, num_scan_inputs = 1} : ?
  return %a, %rows
})");
}

TEST(ControlFlowExpand, WhatCannotBeInlinedStaysWithItsReason) {
  std::unique_ptr<Graph> g = parsed(
      R"(graph @keep(%c: bool[], %n: i64[], %x: f32[3], %long: f32[9,3]) -> (a: ?, b: ?, d: ?, e: ?) {
  %m = constant i64[] dense<[3]>
  %a = if(%c, %x) {then_branch = graph @then(%v: ?) -> (r: ?) {
    return %v
  }, else_branch = graph @else(%v: ?) -> (r: ?) {
    %r = neg(%v) : ?
    return %r
  }} : ? loc("on_data")
  %b = loop(%n, _, %x) {body = graph @body(%i: ?, %go: ?, %v: ?) -> (go_out: ?, v_out: ?) {
    %v_out = neg(%v) : ?
    return %go, %v_out
  }} : ? loc("trips_from_data")
  %d = loop(%m, _, %x) {body = graph @body(%i: ?, %go: ?, %v: ?) -> (go_out: ?, v_out: ?) {
    %v_out = neg(%v) : ?
    %zero = constant f32[] dense<[0.0]>
    %s = reduce_sum(%v_out) {keepdims = 0} : ?
    %go_out = greater(%s, %zero) : ?
    return %go_out, %v_out
  }} : ? loc("computed_condition")
  %z = constant f32[3] dense<[0.0, 0.0, 0.0]>
  %e, _ = scan(%z, %long) {body = graph @body(%s: ?, %r: ?) -> (s_out: ?, t: ?) {
    %s_out = add(%s, %r) : ?
    return %s_out, %s_out
  }, num_scan_inputs = 1} : ?, _ loc("long_scan")
  return %a, %b, %d, %e
})");
  ASSERT_TRUE(g);
  std::ostringstream log;
  std::unique_ptr<Graph> x = after(*g, "expand-ops{max-steps=8}", &log);
  ASSERT_TRUE(x);
  EXPECT_EQ(controlFlow(*x), 4);
  const std::string text = log.str();
  EXPECT_NE(text.find("kept: its condition 'c' is computed from the data"), std::string::npos)
      << text;
  EXPECT_NE(text.find("kept: its trip count is computed from the data"), std::string::npos) << text;
  EXPECT_NE(text.find("kept: its body computes the condition"), std::string::npos) << text;
  EXPECT_NE(text.find("kept: its sequence length is 9; expand-ops inlines 1 to 8 (max-steps)"),
            std::string::npos)
      << text;
}

} // namespace
} // namespace dlc
