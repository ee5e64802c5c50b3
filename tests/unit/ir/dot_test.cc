// The DOT writer (ir/dot.h): names that would break the DOT syntax are escaped, a group is one
// cluster holding exactly its members, and a scope draws its border as stubs.
#include <gtest/gtest.h>

#include <sstream>

#include "ir/dot.h"
#include "ir/parser.h"

namespace dlc {
namespace {

std::string dot(const std::string &text, DotOptions opts = {}) {
  auto g = parseGraph(text);
  EXPECT_TRUE(g) << g.status().message();
  if (!g)
    return "";
  std::ostringstream os;
  writeDot(**g, os, opts);
  return os.str();
}

const char *kGraph = R"(graph @g(%x: f32[2,3]) -> (y: ?) {
  %a = relu(%x) {fuse.group = 7} : f32[2,3] @gpu:0 loc("blk/a \"quoted\" \\ back")
  %b = neg(%a) {fuse.group = 7} : f32[2,3] @gpu:0 loc("blk/b")
  %c = exp(%b) : f32[2,3] @cpu loc("tail/c")
  return %c
})";

TEST(Dot, NamesAreEscaped) {
  const std::string d = dot(kGraph);
  EXPECT_NE(d.find(R"(label="relu\nblk/a \"quoted\" \\ back\n@gpu:0")"), std::string::npos) << d;
}

TEST(Dot, AGroupIsOneClusterOfItsMembers) {
  const std::string d = dot(kGraph);
  const size_t cluster = d.find("subgraph cluster_g7 {");
  ASSERT_NE(cluster, std::string::npos) << d;
  const size_t end = d.find("  }\n", cluster);
  const std::string body = d.substr(cluster, end - cluster);
  EXPECT_NE(body.find("label=\"group 7: relu + neg\""), std::string::npos) << body;
  EXPECT_NE(body.find("blk/b"), std::string::npos) << body;
  EXPECT_EQ(body.find("tail/c"), std::string::npos) << body;   // not a member
  EXPECT_EQ(d.find("cluster_g", end), std::string::npos) << d; // one group, one cluster
}

TEST(Dot, AScopeDrawsItsBorderAsStubs) {
  const std::string d = dot(kGraph, {.scope = "tail/", .title = ""});
  EXPECT_EQ(d.find("blk/b"), std::string::npos) << d;
  EXPECT_NE(d.find("stub_0 [label=\"... b\""), std::string::npos) << d;
  EXPECT_NE(d.find("-> out0 [label=\"f32[2,3]\"]"), std::string::npos) << d;
  EXPECT_EQ(dotNodeCount(*parseGraph(kGraph).value(), {.scope = "blk/", .title = ""}), 2);
}

} // namespace
} // namespace dlc
