// infer-shapes on nodes that own bodies (If, Loop): the bodies are typed too, and errors inside
// a body name the node and the body.
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/printer.h"
#include "pass_test_util.h"

namespace dlc {
namespace {

using testing::runPass;

std::unique_ptr<Graph> parse(const std::string &text) {
  auto g = parseGraph(text, "p.dlc");
  EXPECT_TRUE(g.hasValue()) << g.status().message();
  return g.hasValue() ? std::move(g).value() : std::make_unique<Graph>();
}

const Graph &body(const Graph &g, const std::string &value, const char *attr) {
  return g.findValue(value)->producer()->findAttr(attr)->graph();
}

TEST(ControlFlowPasses, InferShapesTypesBodiesAndWidensCarriedValues) {
  // %a doubles every iteration: inside the body it is f32[?], on entry and after the loop too.
  auto g = parse("graph @g(%x: f32[1]) -> (y: ?) {\n"
                 "  %y = loop(_, _, %x) {body = graph @b(%i: ?, %c: ?, %a: ?) -> (c: ?, a: ?) {\n"
                 "    %a2 = concat(%a, %a) {axis = 0} : ?\n"
                 "    return %c, %a2\n"
                 "  }} : ?\n"
                 "  return %y\n"
                 "}\n");
  Expected<bool> changed = runPass(*g, "infer-shapes");
  ASSERT_TRUE(changed) << changed.status().message();
  EXPECT_TRUE(*changed);
  const Graph &b = body(*g, "y", "body");
  EXPECT_EQ(b.inputs()[0]->type().str(), "i64[]");
  EXPECT_EQ(b.inputs()[1]->type().str(), "bool[]");
  EXPECT_EQ(b.inputs()[2]->type().str(), "f32[?]");
  EXPECT_EQ(b.findValue("a2")->type().str(), "f32[?]");
  EXPECT_EQ(g->findValue("y")->type().str(), "f32[?]");
  std::string once = printGraph(*g);
  Expected<bool> again = runPass(*g, "infer-shapes");
  ASSERT_TRUE(again) << again.status().message();
  EXPECT_FALSE(*again);
  EXPECT_EQ(printGraph(*g), once);
}

TEST(ControlFlowPasses, ContradictionsInsideABodyNameIt) {
  auto g = parse("graph @g(%c: bool[], %x: f32[2]) -> (y: ?) {\n"
                 "  %y = if(%c, %x) {else_branch = graph @e(%x: ?) -> (r: ?) {\n"
                 "    return %x\n"
                 "  }, then_branch = graph @t(%x: ?) -> (r: ?) {\n"
                 "    %r = neg(%x) : f32[3] loc(\"n\")\n"
                 "    return %r\n"
                 "  }} : ? loc(\"b\")\n"
                 "  return %y\n"
                 "}\n");
  Expected<bool> changed = runPass(*g, "infer-shapes");
  ASSERT_FALSE(changed);
  EXPECT_EQ(changed.status().message(),
            "node 'b' (If): body 'then_branch': node 'n' (Neg): output 'r' is inferred as f32[2] "
            "but its type was given as f32[3]");
}

} // namespace
} // namespace dlc
