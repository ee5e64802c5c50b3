// The C++ Model/Session API: loading, the pipeline, backends, runs, concurrency.
#include <gtest/gtest.h>

#include <thread>

#include "runtime/jit/model.h"
#include "runtime_test_util.h"

namespace dlc {
namespace {

using testing::f32Tensor;
using testing::f32Values;
using testing::TempDir;

constexpr const char *kScaleShift = R"(graph @scale_shift(%x: f32[N,2]) -> (y: f32[N,2]) {
  %two = constant f32[] dense<[2.0]>
  %three = constant f32[] dense<[3.0]>
  %six = mul(%two, %three) : f32[]
  %s = mul(%x, %six) : f32[N,2]
  %y = add(%s, %two) : f32[N,2]
  return %y
}
)";

TEST(Model, LoadsTextIrRunsThePipelineAndDescribesItsInterface) {
  TempDir dir;
  auto model = Model::load(dir.write("m.dlc", kScaleShift));
  ASSERT_TRUE(model) << model.status().message();
  ASSERT_EQ(model->inputs().size(), 1u);
  EXPECT_EQ(model->inputs()[0].name, "x");
  EXPECT_EQ(model->inputs()[0].type.str(), "f32[N,2]");
  ASSERT_EQ(model->outputs().size(), 1u);
  EXPECT_EQ(model->outputs()[0].name, "y");
  EXPECT_EQ(model->outputs()[0].type.str(), "f32[N,2]");
  // fold-constants computed 2 * 3 at load time.
  EXPECT_EQ(model->graph().numNodes(), 2u);

  auto session = model->createSession();
  ASSERT_TRUE(session) << session.status().message();
  EXPECT_EQ(session->backend(), Backend::kCpu);
  auto out = session->run({{"x", f32Tensor({2, 2}, {0, 1, -1, 0.5f})}});
  ASSERT_TRUE(out) << out.status().message();
  ASSERT_EQ(out->count("y"), 1u);
  EXPECT_EQ(f32Values(out->at("y")), (std::vector<float>{2, 8, -4, 5}));
}

TEST(Model, OptLevelZeroOnlyInfersShapes) {
  TempDir dir;
  ModelOptions opts;
  opts.optLevel = 0;
  auto model = Model::load(dir.write("m.dlc", kScaleShift), opts);
  ASSERT_TRUE(model) << model.status().message();
  EXPECT_EQ(model->graph().numNodes(), 3u);
  opts.optLevel = 7;
  EXPECT_EQ(Model::load(dir.file("m.dlc"), opts).status().message(),
            "optimization level 7 does not exist: dlc has -O0 (types only) and -O1 (the default "
            "cleanup)");
}

TEST(Model, LoadsOnnxModels) {
  auto model = Model::load(DLC_SOURCE_DIR "/models/mlp.onnx");
  ASSERT_TRUE(model) << model.status().message();
  ASSERT_EQ(model->inputs().size(), 1u);
  EXPECT_EQ(model->inputs()[0].name, "x");
  EXPECT_EQ(model->inputs()[0].type.str(), "f32[N,64]");
  ASSERT_EQ(model->outputs().size(), 1u);
  EXPECT_EQ(model->outputs()[0].name, "probs");
  EXPECT_EQ(model->outputs()[0].type.str(), "f32[N,10]");
}

TEST(Model, LoadErrorsNameTheFile) {
  TempDir dir;
  auto missing = Model::load(dir.file("none.onnx"));
  EXPECT_EQ(missing.status().message(),
            dir.file("none.onnx") + ": cannot open file: No such file or directory");
  auto bad =
      Model::load(dir.write("bad.dlc", "graph @g(%x: f32[2]) -> (y: ?) {\n  return %z\n}\n"));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("bad.dlc:2:"), std::string::npos) << bad.status().message();
  // Shape inference fails inside the pipeline: the message names the file and the pass.
  auto mismatch = Model::load(dir.write("mm.dlc", R"(graph @g(%x: f32[2], %y: f32[3]) -> (y: ?) {
  %z = add(%x, %y) : ?
  return %z
}
)"));
  ASSERT_FALSE(mismatch);
  EXPECT_EQ(mismatch.status().message().rfind(dir.file("mm.dlc") + ": pass 'infer-shapes': ", 0),
            0u)
      << mismatch.status().message();
}

TEST(Model, GpuSessionWithoutADriverSaysWhy) {
  TempDir dir;
  auto model = Model::load(dir.write("m.dlc", kScaleShift));
  ASSERT_TRUE(model);
  SessionOptions so;
  so.backend = Backend::kGpu;
  auto s = model->createSession(so);
  if (s) // a machine with a GPU: the session runs there
    GTEST_SKIP() << "a CUDA device is present; this test checks the message without one";
  EXPECT_EQ(s.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.status().message(), gpuUnavailableReason());
  EXPECT_NE(s.status().message().find("no CUDA"), std::string::npos) << s.status().message();
  // auto falls back to the CPU.
  so.backend = Backend::kAuto;
  auto a = model->createSession(so);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->backend(), Backend::kCpu);
  so.backend = Backend::kCpu;
  EXPECT_TRUE(model->createSession(so));
}

TEST(Model, RunErrorsComeFromTheExecutor) {
  TempDir dir;
  auto model = Model::load(dir.write("m.dlc", kScaleShift));
  auto session = model->createSession();
  ASSERT_TRUE(session);
  EXPECT_EQ(session->run({}).status().message(), "missing input 'x' (f32[N,2])");
  EXPECT_EQ(session->run({{"x", f32Tensor({1, 3}, {1, 2, 3})}}).status().message(),
            "input 'x': dim 1 expected 2, got 3 (expected f32[N,2], got [1,3])");
}

TEST(Model, SessionsRunConcurrently) {
  TempDir dir;
  auto model = Model::load(dir.write("m.dlc", kScaleShift));
  ASSERT_TRUE(model);
  auto shared = model->createSession();
  ASSERT_TRUE(shared);
  std::vector<std::thread> threads;
  std::vector<int> failures(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      auto own = model->createSession();
      const Session &s = (t % 2 == 0 || !own) ? *shared : *own;
      for (int i = 0; i < 50; ++i) {
        float v = static_cast<float>(t * 100 + i);
        auto out = s.run({{"x", f32Tensor({1, 2}, {v, -v})}});
        if (!out || f32Values(out->at("y")) != std::vector<float>{6 * v + 2, -6 * v + 2})
          ++failures[static_cast<size_t>(t)];
      }
    });
  }
  for (auto &th : threads)
    th.join();
  EXPECT_EQ(failures, std::vector<int>(8, 0));
}

TEST(Model, OrderedRunKeepsTheModelsOutputOrder) {
  auto g = testing::inferredGraph(R"(graph @g(%x: f32[1]) -> (zeta: ?, alpha: ?) {
  %a = neg(%x) : f32[1]
  return %a, %x
}
)");
  auto model = Model::fromGraph(std::move(g));
  ASSERT_TRUE(model) << model.status().message();
  auto s = model->createSession();
  ASSERT_TRUE(s);
  auto out = s->runOrdered({{"x", f32Tensor({1}, {3})}});
  ASSERT_TRUE(out) << out.status().message();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].name, "zeta");
  EXPECT_EQ((*out)[1].name, "alpha");
  EXPECT_EQ(f32Values((*out)[0].tensor), std::vector<float>{-3});
}

} // namespace
} // namespace dlc
