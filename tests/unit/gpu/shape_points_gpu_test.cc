// Shape points on the GPU (runtime/jit/segments.h): dlc::Session runs models whose shapes
// depend on values they compute as a chain of programs, each replayed as a CUDA graph, against
// the reference backend. Skips without a GPU.
#include <gtest/gtest.h>

#include <random>

#include "gpu_test_util.h"
#include "ir/parser.h"
#include "runtime/jit/model.h"
#include "runtime/tensor_compare.h"

namespace dlc {
namespace {

Tensor uniform(std::vector<int64_t> shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-3, 1);
  Tensor t = Tensor::zeros(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.mutableData<float>()[i] = u(rng);
  return t;
}

Model detector() {
  auto m = Model::load(std::string(DLC_SOURCE_DIR) + "/models/tiny_detector.onnx");
  EXPECT_TRUE(m) << m.status().message();
  return std::move(*m);
}

void expectSame(const std::map<std::string, Tensor> &got,
                const std::map<std::string, Tensor> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (const auto &[name, w] : want) {
    const Tensor &g = got.at(name);
    const Comparison c = compareTensors(g, w, {1e-4, 1e-5});
    EXPECT_TRUE(c.match) << name << ": " << c.str(g, w);
  }
}

TEST(ShapePointsGpu, TheDetectorMatchesTheReferenceWithCudaGraphs) {
  DLC_REQUIRE_GPU(driver);
  Model model = detector();
  SessionOptions gpu;
  gpu.backend = Backend::kGpu;
  gpu.cpuFallback = false; // the GPU alone
  gpu.poison = true;
  auto session = model.createSession(gpu);
  ASSERT_TRUE(session) << session.status().message();
  SessionOptions cpu;
  cpu.backend = Backend::kCpu;
  auto reference = model.createSession(cpu);
  ASSERT_TRUE(reference) << reference.status().message();
  for (auto [shape, seed] : {std::pair{std::vector<int64_t>{1, 3, 32, 32}, 1u},
                             std::pair{std::vector<int64_t>{2, 3, 24, 40}, 2u},
                             std::pair{std::vector<int64_t>{1, 3, 32, 32}, 3u}}) {
    std::map<std::string, Tensor> feed{{"x", uniform(shape, seed)}};
    auto want = reference->run(feed);
    ASSERT_TRUE(want) << want.status().message();
    for (int run = 0; run < 3; ++run) { // the first compiles; later ones replay the graphs
      auto got = session->run(feed);
      ASSERT_TRUE(got) << got.status().message();
      expectSame(*got, *want);
    }
  }
}

/// If on a condition the GPU computes: its value is read back at a shape point and each branch
/// is compiled once, then both are replayed as inputs alternate between them.
TEST(ShapePointsGpu, AnIfOnDataSwitchesBranchesBetweenRuns) {
  DLC_REQUIRE_GPU(driver);
  auto g = parseGraph(R"(
graph @g(%x: f32[4096]) -> (y: f32[4096], s: f32[]) {
  %s = reduce_sum(%x) {keepdims = 0} : ?
  %zero = constant f32[] dense<[0.0]>
  %c = greater(%s, %zero) : ?
  %y = if(%c, %x) {then_branch = graph @then(%v: ?) -> (r: ?) {
    %two = constant f32[] dense<[2.0]>
    %r = mul(%v, %two) : ?
    return %r
  }, else_branch = graph @else(%v: ?) -> (r: ?) {
    %r = exp(%v) : ?
    return %r
  }} : ?
  return %y, %s
})");
  ASSERT_TRUE(g) << g.status().message();
  auto model = Model::fromGraph(std::move(*g), {});
  ASSERT_TRUE(model) << model.status().message();
  SessionOptions gpu;
  gpu.backend = Backend::kGpu;
  gpu.cpuFallback = false;
  gpu.poison = true;
  auto session = model->createSession(gpu);
  ASSERT_TRUE(session) << session.status().message();
  SessionOptions cpu;
  cpu.backend = Backend::kCpu;
  auto reference = model->createSession(cpu);
  ASSERT_TRUE(reference) << reference.status().message();
  Tensor negative = uniform({4096}, 5); // uniform in [-3, 1): the sum is negative
  Tensor positive = negative.clone();
  for (int64_t i = 0; i < positive.numElements(); ++i)
    positive.mutableData<float>()[i] = -positive.data<float>()[i];
  for (const Tensor &x : {positive, negative, positive, negative}) {
    std::map<std::string, Tensor> feed{{"x", x}};
    auto want = reference->run(feed);
    ASSERT_TRUE(want) << want.status().message();
    auto got = session->run(feed);
    ASSERT_TRUE(got) << got.status().message();
    expectSame(*got, *want);
  }
}

TEST(ShapePointsGpu, TheProfileShowsTheShapePoint) {
  DLC_REQUIRE_GPU(driver);
  Model model = detector();
  SessionOptions gpu;
  gpu.backend = Backend::kGpu;
  gpu.cpuFallback = false;
  auto session = model.createSession(gpu);
  ASSERT_TRUE(session) << session.status().message();
  auto steps = session->profileGpu({{"x", uniform({1, 3, 32, 32}, 4)}}, 5);
  ASSERT_TRUE(steps) << steps.status().message();
  int points = 0, kernels = 0;
  for (const Session::StepProfile &s : *steps) {
    points += s.kind == "shape point";
    kernels += s.kind == "kernel";
    EXPECT_NE(s.kind, "host") << s.origin;
  }
  EXPECT_EQ(points, 1);
  EXPECT_GT(kernels, 5);
  auto bench = session->benchmarkGpu({{"x", uniform({1, 3, 32, 32}, 4)}}, 5);
  ASSERT_TRUE(bench) << bench.status().message();
  EXPECT_EQ(bench->size(), 5u);
}

TEST(ShapePointsGpu, DeviceTensorRunsAreRefusedByName) {
  DLC_REQUIRE_GPU(driver);
  Model model = detector();
  SessionOptions gpu;
  gpu.backend = Backend::kGpu;
  auto session = model.createSession(gpu);
  ASSERT_TRUE(session) << session.status().message();
  Status st = session->runDevice({{"x", {0x1000, DType::kF32, {1, 3, 32, 32}}}}, {});
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("shape point"), std::string::npos) << st.message();
}

} // namespace
} // namespace dlc
