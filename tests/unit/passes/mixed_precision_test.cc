// mixed-precision: matmul/conv go low, sums stay float32, followers (softmax too) follow, the
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
    EXPECT_EQ(typeOf(*m, "y"), low) << p;         // softmax follows (float32 statistics inside)
    EXPECT_EQ(typeOf(*m, "s"), DType::kF32) << p; // a sum: never low
    for (const Value *in : m->inputs())
      EXPECT_EQ(in->dtype(), DType::kF32);
    for (const Graph::Output &o : m->outputs())
      EXPECT_EQ(o.value->dtype(), DType::kF32);
    // One cast per (value, dtype): x and w to low; r back to float32 for the sum, y for the
    // graph output.
    EXPECT_EQ(testing::countOps(*m, Op::kCast), 4) << p;
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

namespace dlc {
namespace {

TEST(MixedPrecision, CastsMoveAboveViewsToTheirProducer) {
  // "a" stays float32 (named); its value reaches the product through a reshape and a
  // transpose: the cast to float16 moves above both, to right after "a" (whose kernel can take
  // it), and the views move float16. %k, a reshape whose value is also a graph output, keeps
  // its cast after it.
  std::unique_ptr<Graph> g = testing::parsed(
      R"(graph @views(%x: f32[4,16], %w: f32[4,8], %w2: f32[8,4]) -> (y: f32[2,8,8], k: f32[2,4,8], z: f32[2,4,4]) {
  %shape = constant i64[3] dense<[2, 8, 4]>
  %shape2 = constant i64[3] dense<[2, 4, 8]>
  %a = relu(%x) : f32[4,16] loc("a")
  %r = reshape(%a, %shape) : f32[2,8,4] loc("r")
  %t = transpose(%r) {perm = [0, 1, 2]} : f32[2,8,4] loc("t")
  %y = matmul(%t, %w) : f32[2,8,8] loc("y")
  %k = reshape(%a, %shape2) : f32[2,4,8] loc("keep")
  %z = matmul(%k, %w2) : f32[2,4,4] loc("z")
  return %y, %k, %z
})");
  ASSERT_TRUE(g);
  std::unique_ptr<Graph> m = testing::after(*g, "mixed-precision{keep-fp32=a}");
  ASSERT_TRUE(m);
  EXPECT_EQ(typeOf(*m, "a"), DType::kF32);
  EXPECT_EQ(typeOf(*m, "r"), DType::kF16);
  EXPECT_EQ(typeOf(*m, "t"), DType::kF16);
  EXPECT_EQ(typeOf(*m, "k"), DType::kF32); // a graph output: stays float32
  const Node *r = m->findValue("r")->producer();
  ASSERT_TRUE(r->input(0)->isNodeOutput());
  const Node *cast = r->input(0)->producer();
  EXPECT_EQ(cast->op(), Op::kCast);
  EXPECT_EQ(cast->input(0)->name(), "a");
  const Node *z = m->findValue("z")->producer();
  ASSERT_TRUE(z->input(0)->isNodeOutput());
  EXPECT_EQ(z->input(0)->producer()->op(), Op::kCast);
  EXPECT_EQ(z->input(0)->producer()->input(0)->name(), "k");
  testing::expectSameResults(*g, *m, 1e-2);
}

} // namespace
} // namespace dlc

namespace dlc {
namespace {

// An int8 layer's dequantized output read by a LayerNorm alone (an int8 BERT's residual sum):
// the DequantizeLinear stays float32, the LayerNorm reads it in the low type through a Cast
// (which the producing kernel writes in its epilogue), and its result goes low; read also by
// an add, the value keeps float32 and so does the LayerNorm.
TEST(MixedPrecision, DequantizedInputsOfNormalisationsAreReadLow) {
  constexpr const char *kText =
      R"(graph @ln(%q: i8[4,16]) -> (y: f32[4,16], z: f32[4,16], w: f32[4,16]) {
  %s = constant f32[] dense<[0.05]>
  %zp = constant i8[] dense<[0]>
  %g = constant f32[16] dense<[1.0, 0.5, 1.0, 2.0, 1.0, 0.5, 1.0, 2.0, 1.0, 0.5, 1.0, 2.0, 1.0, 0.5, 1.0, 2.0]>
  %b = constant f32[16] dense<[0.0, 0.1, 0.0, 0.1, 0.0, 0.1, 0.0, 0.1, 0.0, 0.1, 0.0, 0.1, 0.0, 0.1, 0.0, 0.1]>
  %d = dequantize_linear(%q, %s, %zp) : f32[4,16] loc("d")
  %y = layer_normalization(%d, %g, %b) {axis = -1} : f32[4,16] loc("y")
  %s2 = constant f32[] dense<[0.04]>
  %d2 = dequantize_linear(%q, %s2, %zp) : f32[4,16] loc("d2")
  %z = layer_normalization(%d2, %g, %b) {axis = -1} : f32[4,16] loc("z")
  %w = add(%d2, %d2) : f32[4,16] loc("w")
  return %y, %z, %w
})";
  std::unique_ptr<Graph> g = parsed(kText);
  ASSERT_TRUE(g);
  std::unique_ptr<Graph> m = after(*g, "mixed-precision{precision=fp16}");
  ASSERT_TRUE(m);
  EXPECT_EQ(typeOf(*m, "d"), DType::kF32);
  EXPECT_EQ(typeOf(*m, "y"), DType::kF16);
  EXPECT_EQ(typeOf(*m, "d2"), DType::kF32);
  EXPECT_EQ(typeOf(*m, "z"), DType::kF32) << "its input has another reader";
  testing::expectSameResults(*g, *m, 1e-2);
}

} // namespace
} // namespace dlc
