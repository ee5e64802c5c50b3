// Shape points (runtime/jit/segments.h): models whose shapes depend on values they compute run
// on the GPU backend in segments. The programs are compiled as a GPU session compiles them
// (strict placement, the real codegen) and run on the host emulator, segment by segment, then
// compared with the reference backend.
#include <gtest/gtest.h>

#include <random>

#include "ir/parser.h"
#include "runtime/jit/gpu_jit.h"
#include "runtime/jit/model.h"
#include "runtime/jit/segments.h"
#include "runtime/tensor_compare.h"
#include "unit/codegen/host_emulator.h"
#include "unit/runtime/emulated_util.h"

namespace dlc {
namespace {

jit::JitOptions emulated() { return testing::emulatedJitOptions(); }

std::unique_ptr<Graph> parse(const std::string &text) {
  auto g = parseGraph(text);
  EXPECT_TRUE(g) << g.status().message();
  return g ? std::move(*g) : nullptr;
}

/// Runs `model` segment by segment on the emulator and on the reference backend; expects the
/// same outputs. Returns how many programs ran (segments).
int expectSegmentsMatch(Expected<Model> model, const std::map<std::string, Tensor> &feed) {
  EXPECT_TRUE(model) << model.status().message();
  if (!model)
    return 0;
  auto dims = bindInputDims(model->graph(), feed);
  EXPECT_TRUE(dims) << dims.status().message();
  if (!dims)
    return 0;
  int programs = 0;
  auto got = jit::runSegments(model->graph(), *dims, emulated(), feed,
                              [&](const rt::Program &p, const std::map<std::string, Tensor> &in) {
                                ++programs;
                                for (const rt::Step &s : p.steps)
                                  EXPECT_FALSE(std::holds_alternative<rt::HostStep>(s));
                                return codegen::testing::runProgramOnHost(p, in);
                              });
  EXPECT_TRUE(got) << got.status().message();
  if (got)
    testing::expectReferenceOutputs(*model, feed, *got, {1e-5, 1e-6});
  return programs;
}

int expectSegmentsMatch(const std::string &text, const std::map<std::string, Tensor> &feed) {
  return expectSegmentsMatch(Model::fromGraph(parse(text), {}), feed);
}

Tensor floats(std::vector<float> v) {
  Tensor t = Tensor::zeros(DType::kF32, {static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.mutableData<float>());
  return t;
}

/// Uniform in [lo, 1): lo near 1 makes most elements positive.
Tensor uniform(std::vector<int64_t> shape, unsigned seed, float lo = -1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, 1);
  Tensor t = Tensor::zeros(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.mutableData<float>()[i] = u(rng);
  return t;
}

/// y = 2 * x[:n] where n counts x's positive elements: the Slice's end is computed on the GPU.
/// (100 elements: a count over 64 or fewer would run on the host, as place-devices puts small
/// integer shape computations there.)
constexpr const char *kCountedSlice = R"(
graph @g(%x: f32[100]) -> (y: f32[?], n: i64[1], z: f32[100]) {
  %zero = constant f32[] dense<[0.0]>
  %pos = greater(%x, %zero) : ?
  %c = cast(%pos) {to = i64} : ?
  %ax = constant i64[1] dense<[0]>
  %n = reduce_sum(%c, %ax) : ?
  %st = constant i64[1] dense<[0]>
  %s = slice(%x, %st, %n, %ax) : ?
  %two = constant f32[] dense<[2.0]>
  %y = mul(%s, %two) : ?
  %z = add(%x, %two) : ?
  return %y, %n, %z
})";

TEST(ShapePoints, ACountedSliceRunsInTwoSegments) {
  EXPECT_EQ(expectSegmentsMatch(kCountedSlice, {{"x", uniform({100}, 1)}}), 2);
  // Another count compiles another rest.
  EXPECT_EQ(expectSegmentsMatch(kCountedSlice, {{"x", uniform({100}, 2, -0.2f)}}), 2);
}

TEST(ShapePoints, TheFirstSegmentSaysWhatTheRestNeeds) {
  auto model = Model::fromGraph(parse(kCountedSlice), {});
  ASSERT_TRUE(model) << model.status().message();
  auto seg = jit::compileSegment(model->graph(), {}, emulated());
  ASSERT_TRUE(seg) << seg.status().message();
  ASSERT_TRUE(seg->point);
  // z is computed before the point; y after it; the count is read back, x carried.
  EXPECT_EQ(seg->modelOutputs, (std::vector<std::string>{"n", "z"}));
  ASSERT_EQ(seg->point->values.size(), 1u);
  EXPECT_EQ(seg->point->values[0].first, "n"); // the model output itself, not a second copy
  ASSERT_EQ(seg->point->carried.size(), 1u);
  EXPECT_EQ(seg->point->carried[0].second, "x");
  EXPECT_NE(seg->point->waiting.find("Slice"), std::string::npos) << seg->point->waiting;
  ASSERT_EQ(seg->point->rest->outputs().size(), 1u);
  EXPECT_EQ(seg->point->rest->outputs()[0].name, "y");
}

TEST(ShapePoints, AheadOfTimeCompilesRefuseThemByName) {
  auto model = Model::fromGraph(parse(kCountedSlice), {});
  ASSERT_TRUE(model) << model.status().message();
  auto program = jit::compileForGpu(model->graph(), {}, emulated());
  ASSERT_FALSE(program);
  EXPECT_NE(program.status().message().find("shape point"), std::string::npos);
  EXPECT_NE(program.status().message().find("Slice"), std::string::npos)
      << program.status().message();
}

/// Two points in a row: a Reshape to a computed shape, then a Slice by a count of the result.
TEST(ShapePoints, PointsChain) {
  Tensor x = uniform({10, 12}, 3);
  const char *text = R"(
graph @g(%x: f32[10,12], %k: f32[2]) -> (y: f32[?]) {
  %ki = cast(%k) {to = i64} : ?
  %r = reshape(%x, %ki) : ?
  %zero = constant f32[] dense<[0.0]>
  %pos = greater(%r, %zero) : ?
  %c = cast(%pos) {to = i64} : ?
  %n = reduce_sum(%c) {keepdims = 0} : ?
  %one = constant i64[1] dense<[1]>
  %n1 = reshape(%n, %one) : ?
  %m1 = constant i64[1] dense<[-1]>
  %flat = reshape(%r, %m1) : ?
  %st = constant i64[1] dense<[0]>
  %y = slice(%flat, %st, %n1) : ?
  return %y
})";
  Tensor k = floats({8, 15});
  EXPECT_EQ(expectSegmentsMatch(text, {{"x", x}, {"k", k}}), 3);
}

/// If whose condition the GPU computes (the sign of x's sum): the condition is the point value,
/// and the rest is the branch taken, inlined once the condition is a constant.
TEST(ShapePoints, AnIfOnDataTakesItsBranchAfterThePoint) {
  const char *text = R"(
graph @g(%x: f32[100]) -> (y: f32[100], s: f32[]) {
  %s = reduce_sum(%x) {keepdims = 0} : ?
  %zero = constant f32[] dense<[0.0]>
  %c = greater(%s, %zero) : ?
  %y = if(%c, %x) {then_branch = graph @then(%v: ?) -> (r: ?) {
    %two = constant f32[] dense<[2.0]>
    %r = mul(%v, %two) : ?
    return %r
  }, else_branch = graph @else(%v: ?) -> (r: ?) {
    %r = neg(%v) : ?
    return %r
  }} : ?
  return %y, %s
})";
  EXPECT_EQ(expectSegmentsMatch(text, {{"x", uniform({100}, 6, -0.2f)}}), 2); // then
  EXPECT_EQ(expectSegmentsMatch(text, {{"x", uniform({100}, 7, -1.0f)}}), 2); // else
  // The condition a model input (ONNX's test_if): the first segment only hands it back.
  const char *given = R"(
graph @g(%c: bool[], %x: f32[5], %w: f32[5]) -> (y: f32[5]) {
  %y = if(%c, %x, %w) {then_branch = graph @then(%a: ?, %b: ?) -> (r: ?) {
    return %a
  }, else_branch = graph @else(%a: ?, %b: ?) -> (r: ?) {
    return %b
  }} : ?
  return %y
})";
  for (bool c : {true, false}) {
    Tensor cond = Tensor::zeros(DType::kBool, {});
    cond.mutableData<bool>()[0] = c;
    EXPECT_EQ(
        expectSegmentsMatch(given, {{"c", cond}, {"x", uniform({5}, 8)}, {"w", uniform({5}, 9)}}),
        2);
  }
}

/// A Loop whose trip count the GPU computes (ONNX's Range written as a Loop): the count is read
/// back, then the loop is unrolled for it and its scan output has a known length.
TEST(ShapePoints, ALoopRunsTheTripCountReadBack) {
  const char *text = R"(
graph @g(%x: f32[100]) -> (trace: f32[?], last: f32[]) {
  %zero = constant f32[] dense<[0.0]>
  %pos = greater(%x, %zero) : ?
  %c = cast(%pos) {to = i64} : ?
  %n = reduce_sum(%c) {keepdims = 0} : ?
  %ten = constant i64[] dense<[10]>
  %m = div(%n, %ten) : ?
  %start = constant f32[] dense<[0.5]>
  %last, %trace = loop(%m, _, %start) {body = graph @body(%i: ?, %go: ?, %v: ?) -> (go_out: ?, v_out: ?, t: ?) {
    %d = constant f32[] dense<[1.5]>
    %v_out = add(%v, %d) : ?
    %go_out = identity(%go) : ?
    return %go_out, %v_out, %v
  }} : ?, ?
  return %trace, %last
})";
  EXPECT_EQ(expectSegmentsMatch(text, {{"x", uniform({100}, 10, -0.5f)}}), 2);
  EXPECT_EQ(expectSegmentsMatch(text, {{"x", uniform({100}, 11, 0.5f)}}), 2);
}

/// models/tiny_detector.onnx: convolutions, NonMaxSuppression's kernel and the compaction of
/// its slots before the point; the kept rows, Gather and GatherND after it.
TEST(ShapePoints, TheDetectorRunsOnTheGpuAlone) {
  const std::string path = std::string(DLC_SOURCE_DIR) + "/models/tiny_detector.onnx";
  EXPECT_EQ(expectSegmentsMatch(Model::load(path), {{"x", uniform({1, 3, 32, 32}, 4, -3)}}), 2);
  EXPECT_EQ(expectSegmentsMatch(Model::load(path), {{"x", uniform({2, 3, 24, 40}, 5, -3)}}), 2);
}

} // namespace
} // namespace dlc
