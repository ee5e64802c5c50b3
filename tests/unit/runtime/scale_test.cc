// Big graphs: importing an ONNX model and preparing it for the GPU (the load pipeline, then the
// GPU pipeline: placement, fusion, memory planning) take time linear in the number of nodes.
// Compared on chains of 10,000 and 100,000 nodes with a generous bound, so that a pass that
// went quadratic (100x for 10x the nodes) fails and a loaded machine does not.
#include <time.h>

#include <algorithm>

#include "runtime/jit/compile.h"
#include "runtime/jit/model.h"
#include "tests/unit/frontend/onnx_test_util.h"

namespace dlc {
namespace {

using onnx::testing::ModelBuilder;
using onnx::testing::TempDir;

/// x: f32[1,64], w: f32[64,64]; node i is MatMul(prev, w), Add(prev, x) or Relu(prev) in
/// turn, so that fusion, CSE and planning all have work on every node.
std::string chainModel(int nodes) {
  ModelBuilder b;
  b.input("x", 1, {int64_t{1}, int64_t{64}});
  b.initializer(onnx::testing::floatTensor("w", {64, 64}, std::vector<float>(64 * 64, 0.01f)));
  std::string prev = "x";
  for (int i = 0; i < nodes; ++i) {
    const std::string out = "t" + std::to_string(i);
    switch (i % 3) {
    case 0:
      b.node("MatMul", {prev, "w"}, {out}, "mm" + std::to_string(i));
      break;
    case 1:
      b.node("Add", {prev, "x"}, {out}, "add" + std::to_string(i));
      break;
    default:
      b.node("Relu", {prev}, {out}, "relu" + std::to_string(i));
      break;
    }
    prev = out;
  }
  b.output(prev, 1, {int64_t{1}, int64_t{64}});
  return b.bytes();
}

/// This process's CPU seconds so far: unlike wall time, not inflated by other tests that take the
/// CPU meanwhile (ctest -j2 on two cores).
double cpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

/// CPU seconds to load (import + the load pipeline) and prepare a chain of `nodes` for the GPU.
double secondsToCompile(int nodes, const TempDir &dir) {
  const std::string path = dir.write("chain" + std::to_string(nodes) + ".onnx", chainModel(nodes));
  const double start = cpuSeconds();
  auto model = Model::load(path);
  EXPECT_TRUE(model) << model.status().message();
  if (!model)
    return 0;
  auto graph = jit::prepareForGpu(model->graph(), {}, {});
  EXPECT_TRUE(graph) << graph.status().message();
  EXPECT_GE(model->graph().numNodes(), static_cast<size_t>(nodes));
  return cpuSeconds() - start;
}

TEST(Scale, ImportAndCompileTimeGrowLinearly) {
  TempDir dir;
  // The best of a few runs of each: ctest runs other tests beside this one, and a neighbour
  // that takes the CPU during one measurement should not decide the ratio.
  auto best = [&](int nodes, int runs) {
    double t = secondsToCompile(nodes, dir);
    for (int i = 1; i < runs; ++i)
      t = std::min(t, secondsToCompile(nodes, dir));
    return t;
  };
  const double small = best(10'000, 3);
  const double big = best(100'000, 2);
  // Linear is 10x; 30x leaves room for cache effects and a busy machine.
  EXPECT_LT(big, 30 * small) << "10,000 nodes: " << small << " s; 100,000 nodes: " << big << " s";
}

} // namespace
} // namespace dlc
