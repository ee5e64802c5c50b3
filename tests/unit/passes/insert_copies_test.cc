// insert-copies on placed graphs: one copy per (value, destination device), none for constants,
// graph inputs or graph outputs, and nothing more on a second run.
#include <gtest/gtest.h>

#include "ir/annotations/placement.h"
#include "numerics_util.h"
#include "pass_test_util.h"

namespace dlc {
namespace {

constexpr const char *kPlaced = R"(
graph @placed(%x: f32[4,8]) -> (h: ?, a: ?, b: ?, c: ?) {
  %h = relu(%x) : f32[4,8] @gpu:0 loc("h")
  %a = exp(%h) : f32[4,8] @cpu loc("a")
  %b = neg(%h) : f32[4,8] @cpu loc("b")
  %c = add(%a, %h) : f32[4,8] @gpu:1 loc("c")
  %d = add(%c, %x) : f32[4,8] @gpu:1 loc("d")
  return %h, %a, %b, %d
}
)";

Status insertCopies(Graph &g, std::ostream &err) {
  auto p = parsePipeline("insert-copies");
  EXPECT_TRUE(p);
  PipelineOptions opts;
  opts.err = &err;
  return runPipeline(g, *p, opts);
}

std::string producerOp(const Graph &g, std::string_view node, int input) {
  for (const Node *n : g.nodes())
    if (n->name() == node) {
      const Value *v = n->input(input);
      return v->producer() ? std::string(v->producer()->opName()) + " " + v->name() + " @" +
                                 v->producer()->device().str()
                           : v->name();
    }
  return "no node " + std::string(node);
}

TEST(InsertCopies, OneCopyPerValueAndDestination) {
  auto g = testing::parsed(kPlaced);
  ASSERT_TRUE(g);
  std::ostringstream err;
  ASSERT_TRUE(insertCopies(*g, err).isOk());
  // h (gpu:0) is read on cpu twice (one copy) and on gpu:1 once; a (cpu) on gpu:1.
  EXPECT_EQ(producerOp(*g, "a", 0), "copy h.to_cpu @cpu");
  EXPECT_EQ(producerOp(*g, "b", 0), "copy h.to_cpu @cpu");
  EXPECT_EQ(producerOp(*g, "c", 0), "copy a.to_gpu1 @gpu:1");
  EXPECT_EQ(producerOp(*g, "c", 1), "copy h.to_gpu1 @gpu:1");
  EXPECT_EQ(producerOp(*g, "d", 0), "add c @gpu:1");
  EXPECT_EQ(producerOp(*g, "d", 1), "x");        // graph inputs have no device
  EXPECT_EQ(g->outputs()[0].value->name(), "h"); // outputs are returned from where they are
  EXPECT_EQ(g->findValue("h.to_cpu")->producer()->findAttr(kPlaceReasonAttr)->s(),
            "copy of %h from gpu:0 to cpu");
  EXPECT_EQ(err.str(), "warning: [insert-copies] 3 Copy nodes were added to the graph: 1 to cpu, "
                       "2 to gpu:1; cross-device transfers may hurt performance "
                       "(--debug-only=insert-copies lists them)\n");

  Expected<bool> again = testing::runPass(*g, "insert-copies");
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again);
}

TEST(InsertCopies, NothingToDoOnOneDevice) {
  auto g = testing::parsed(R"(
graph @one(%x: f32[4]) -> (y: ?) {
  %c = constant f32[4] dense<[1.0, 2.0, 3.0, 4.0]>
  %h = relu(%x) : f32[4] @cpu
  %y = add(%h, %c) : f32[4] @cpu
  return %y
}
)");
  ASSERT_TRUE(g);
  std::ostringstream err;
  ASSERT_TRUE(insertCopies(*g, err).isOk());
  Expected<bool> changed = testing::runPass(*g, "insert-copies");
  ASSERT_TRUE(changed);
  EXPECT_FALSE(*changed);
  EXPECT_EQ(err.str(), "");
}

} // namespace
} // namespace dlc
