// mixed-precision: matmul/conv go low, sums and softmax stay float32, followers follow, the
// interface stays float32, and the results stay within float16's error of float32.
#include "numerics_util.h"

namespace dlc {
namespace {

using testing::after;
using testing::parsed;

constexpr const char *kGraph =
    R"(graph @mp(%x: f32[4,16], %w: f32[16,16]) -> (y: f32[4,16], s: f32[4,1]) {
  %b = constant f32[] dense<[0.5]>
  %ax = constant i64[1] dense<[-1]>
  %mm = matmul(%x, %w) : f32[4,16] loc("mm")
  %a = add(%mm, %b) : f32[4,16] loc("a")
  %r = relu(%a) : f32[4,16] loc("r")
  %y = softmax(%r) {axis = -1} : f32[4,16] loc("y")
  %s = reduce_sum(%r, %ax) {keepdims = 1} : f32[4,1] loc("s")
  return %y, %s
})";

DType typeOf(const Graph &g, const std::string &value) { return g.findValue(value)->dtype(); }

TEST(MixedPrecision, ClassesDecideWhatGoesLow) {
  std::unique_ptr<Graph> g = parsed(kGraph);
  ASSERT_TRUE(g);
  for (const char *p : {"fp16", "bf16"}) {
    std::unique_ptr<Graph> m = after(*g, fmt::format("mixed-precision{{precision={}}}", p));
    ASSERT_TRUE(m);
    const DType low = std::string(p) == "fp16" ? DType::kF16 : DType::kBF16;
    EXPECT_EQ(typeOf(*m, "mm"), low) << p; // always low
    EXPECT_EQ(typeOf(*m, "a"), low) << p;  // follows (the bias constant is converted)
    EXPECT_EQ(typeOf(*m, "r"), low) << p;
    EXPECT_EQ(typeOf(*m, "y"), DType::kF32) << p; // softmax: never low
    EXPECT_EQ(typeOf(*m, "s"), DType::kF32) << p; // a sum: never low
    for (const Value *in : m->inputs())
      EXPECT_EQ(in->dtype(), DType::kF32);
    for (const Graph::Output &o : m->outputs())
      EXPECT_EQ(o.value->dtype(), DType::kF32);
    // One cast per (value, dtype): x and w to low; r back to float32 once for both readers.
    EXPECT_EQ(testing::countOps(*m, Op::kCast), 3) << p;
  }
}

TEST(MixedPrecision, ResultsStayWithinHalfPrecision) {
  std::unique_ptr<Graph> g = parsed(kGraph);
  ASSERT_TRUE(g);
  std::unique_ptr<Graph> m = after(*g, "mixed-precision{precision=fp16}");
  ASSERT_TRUE(m);
  testing::expectSameResults(*g, *m, 1e-2);
}

TEST(MixedPrecision, KeepFp32NamesNodesAndOps) {
  std::unique_ptr<Graph> g = parsed(kGraph);
  ASSERT_TRUE(g);
  std::unique_ptr<Graph> m = after(*g, "mixed-precision{keep-fp32=a|matmul}");
  ASSERT_TRUE(m);
  EXPECT_EQ(typeOf(*m, "mm"), DType::kF32);
  EXPECT_EQ(typeOf(*m, "a"), DType::kF32);
  EXPECT_EQ(testing::countOps(*m, Op::kCast), 0); // nothing went low
  auto p = parsePipeline("mixed-precision{keep-fp32=nosuch}");
  ASSERT_TRUE(p);
  std::unique_ptr<Graph> c = cloneGraph(*g);
  Status st = runPipeline(*c, *p, PipelineOptions());
  EXPECT_NE(st.message().find("option 'keep-fp32': 'nosuch' is neither a node of the graph nor "
                              "an op text name"),
            std::string::npos)
      << st.message();
}

} // namespace
} // namespace dlc
