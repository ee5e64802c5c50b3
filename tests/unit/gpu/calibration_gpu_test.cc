// Calibration and the precision reports on the GPU against the reference backend: the same
// ranges within float rounding (every float input and node output, on the sample CNNs), the
// same layers with SQNR close, and the fp16 overflow named the same way. Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "gpu_test_util.h"
#include "ir/clone.h"
#include "ir/parser.h"
#include "passes/pass_manager.h"
#include "runtime/jit/calibration.h"
#include "runtime/jit/pipelines.h"
#include "runtime/jit/quant_report.h"
#include "runtime/jit/value_runner.h"
#include "runtime/random_tensor.h"

namespace dlc {
namespace {

Model loadModel(const std::string &file) {
  auto m = Model::load(std::string(DLC_SOURCE_DIR) + "/models/" + file);
  EXPECT_TRUE(m) << m.status().message();
  return std::move(*m);
}

/// Random inputs (symbolic dims 2), one set per seed; floats in [-1, 1) scaled by 3 so that
/// some activations are large.
std::vector<std::map<std::string, Tensor>> samplesFor(const Model &m, int count) {
  std::vector<std::map<std::string, Tensor>> out;
  for (int s = 0; s < count; ++s) {
    std::mt19937_64 rng(static_cast<uint64_t>(100 + s));
    std::map<std::string, Tensor> inputs;
    for (const TensorInfo &in : m.inputs()) {
      std::vector<int64_t> shape;
      for (const Dim &d : in.type.shape.dims())
        shape.push_back(d.isKnown() ? d.value() : 2);
      Tensor t = randomTensor(in.type.dtype, shape, rng).value();
      if (t.dtype() == DType::kF32)
        for (int64_t i = 0; i < t.numElements(); ++i)
          t.mutableData<float>()[i] *= 3;
      inputs[in.name] = t;
    }
    out.push_back(std::move(inputs));
  }
  return out;
}

RangeMap calibrate(const Graph &g, const std::string &method, Backend backend,
                   const std::vector<std::map<std::string, Tensor>> &samples) {
  auto m = parseRangeMethod(method);
  EXPECT_TRUE(m);
  auto cal = Calibrator::create(g, *m, backend);
  EXPECT_TRUE(cal) << cal.status().message();
  if (!cal)
    return {};
  EXPECT_EQ(cal->backend(), backend);
  for (const auto &s : samples) {
    Status st = cal->addSample(s);
    EXPECT_TRUE(st.isOk()) << st.message();
  }
  return cal->ranges();
}

class CalibrationGpu : public ::testing::TestWithParam<const char *> {};

TEST_P(CalibrationGpu, RangesMatchTheReferenceBackend) {
  DLC_REQUIRE_GPU(driver);
  Model model = loadModel(GetParam());
  const Graph &g = model.graph();
  auto samples = samplesFor(model, 3);
  for (const char *method : {"minmax", "percentile=99.9", "entropy"}) {
    SCOPED_TRACE(method);
    RangeMap cpu = calibrate(g, method, Backend::kCpu, samples);
    RangeMap gpu = calibrate(g, method, Backend::kGpu, samples);
    ASSERT_FALSE(cpu.empty());
    EXPECT_EQ(gpu.size(), cpu.size()) << "values the GPU run did not observe";
    // minmax within float rounding of the kernels; the histogram methods may move a bin.
    const double rel = std::string(method) == "minmax" ? 1e-4 : 2e-2;
    for (const auto &[v, r] : cpu) {
      auto it = gpu.find(v);
      if (it == gpu.end()) {
        ADD_FAILURE() << "no GPU range for %" << v->name();
        continue;
      }
      const double scale = std::max({std::abs(r.lo), std::abs(r.hi), 1e-6f});
      EXPECT_NEAR(it->second.lo, r.lo, rel * scale + 1e-6) << "%" << v->name();
      EXPECT_NEAR(it->second.hi, r.hi, rel * scale + 1e-6) << "%" << v->name();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, CalibrationGpu,
                         ::testing::Values("tiny_cnn.onnx", "digits_cnn.onnx", "mlp.onnx"));

TEST(ValueRunnerGpu, ObservesEveryNodeOutputAsTheReferenceDoes) {
  DLC_REQUIRE_GPU(driver);
  Model model = loadModel("tiny_cnn.onnx");
  const Graph &g = model.graph();
  std::vector<const Value *> watched(g.inputs().begin(), g.inputs().end());
  for (const Node *n : g.nodes())
    for (const Value *v : n->outputs())
      if (v)
        watched.push_back(v);
  jit::ValueRunnerOptions cpuOpts, gpuOpts;
  cpuOpts.backend = Backend::kCpu;
  gpuOpts.backend = Backend::kGpu;
  auto cpu = jit::ValueRunner::create(g, watched, cpuOpts);
  auto gpu = jit::ValueRunner::create(g, watched, gpuOpts);
  ASSERT_TRUE(cpu && gpu) << cpu.status().message() << gpu.status().message();
  EXPECT_EQ(gpu->backend(), Backend::kGpu);
  auto inputs = samplesFor(model, 1)[0];
  std::map<const Value *, Tensor> want, got;
  std::vector<const Value *> gotOrder;
  ASSERT_TRUE(cpu->run(inputs, [&](const Value *v, const Tensor &t) { want[v] = t; }).isOk());
  ASSERT_TRUE(gpu->run(inputs,
                       [&](const Value *v, const Tensor &t) {
                         got[v] = t;
                         gotOrder.push_back(v);
                       })
                  .isOk());
  EXPECT_EQ(got.size(), want.size());
  ASSERT_FALSE(gotOrder.empty());
  EXPECT_EQ(gotOrder.front(), g.inputs().front()); // inputs first, as the reference
  for (const auto &[v, t] : want) {
    auto it = got.find(v);
    if (it == got.end()) {
      ADD_FAILURE() << "%" << v->name() << " not observed on the GPU";
      continue;
    }
    ASSERT_EQ(it->second.shape(), t.shape()) << "%" << v->name();
    double peak = 0, diff = 0;
    for (int64_t i = 0; i < t.numElements(); ++i) {
      peak = std::max(peak, std::abs(t.elementAsDouble(i)));
      diff = std::max(diff, std::abs(t.elementAsDouble(i) - it->second.elementAsDouble(i)));
    }
    EXPECT_LE(diff, 1e-4 * peak + 1e-6) << "%" << v->name();
  }
}

TEST(QuantReportGpu, Int8LayersMatchTheReferenceBackend) {
  DLC_REQUIRE_GPU(driver);
  Model model = loadModel("tiny_cnn.onnx");
  auto samples = samplesFor(model, 2);
  std::unique_ptr<Graph> f = cloneGraph(model.graph());
  writeRanges(*f, calibrate(*f, "minmax", Backend::kCpu, samples));
  std::unique_ptr<Graph> q = cloneGraph(*f);
  auto p = parsePipeline(jit::quantizePipeline());
  ASSERT_TRUE(p);
  ASSERT_TRUE(runPipeline(*q, *p).isOk());
  auto cpu = jit::compareQuantized(*f, *q, samples, Backend::kCpu);
  auto gpu = jit::compareQuantized(*f, *q, samples, Backend::kGpu);
  ASSERT_TRUE(cpu) << cpu.status().message();
  ASSERT_TRUE(gpu) << gpu.status().message();
  ASSERT_EQ(gpu->size(), cpu->size());
  ASSERT_FALSE(cpu->empty());
  std::map<std::string, jit::LayerQuantReport> byNode;
  for (const auto &l : *gpu)
    byNode[l.node] = l;
  for (const auto &l : *cpu) {
    ASSERT_TRUE(byNode.count(l.node)) << l.node;
    const auto &g = byNode[l.node];
    EXPECT_NEAR(g.sqnrDb, l.sqnrDb, 1.0) << l.node;
    EXPECT_NEAR(g.cosine, l.cosine, 1e-3) << l.node;
    EXPECT_NEAR(g.saturated, l.saturated, 1e-3) << l.node;
  }
}

TEST(QuantReportGpu, Fp16OverflowIsNamedOnTheGpu) {
  DLC_REQUIRE_GPU(driver);
  auto g = parseGraph(R"(
graph @two(%x: f32[2,2]) -> (r: f32[2,2], s: f32[2,2]) {
  %w = constant f32[2,2] dense<[100000.0, 1.0, 100000.0, -1.0]>
  %v = constant f32[2,2] dense<[0.5, 0.25, -0.125, 1.0]>
  %h = matmul(%x, %w) : f32[2,2] loc("big")
  %r = relu(%h) : f32[2,2] loc("act")
  %s = matmul(%x, %v) : f32[2,2] loc("small")
  return %r, %s
}
)");
  ASSERT_TRUE(g) << g.status().message();
  auto m = Model::fromGraph(std::move(*g));
  ASSERT_TRUE(m) << m.status().message();
  std::map<std::string, Tensor> x = {
      {"x", Tensor::fromVector<float>(DType::kF32, {2, 2}, {1.0f, 0.9f, -0.3f, 0.7f})}};
  auto layers = jit::compareMixedPrecision(m->graph(), {x}, "fp16", "", Backend::kGpu);
  ASSERT_TRUE(layers) << layers.status().message();
  ASSERT_FALSE(layers->empty());
  EXPECT_EQ((*layers)[0].node, "big");
  EXPECT_EQ((*layers)[0].reason, "values beyond fp16 range: max |x| 190000 > 65504");
  bool small = false;
  for (const auto &l : *layers)
    if (l.node == "small") {
      small = true;
      EXPECT_GT(l.sqnrDb, 40);
      EXPECT_EQ(l.reason, "");
    }
  EXPECT_TRUE(small);
}

} // namespace
} // namespace dlc
