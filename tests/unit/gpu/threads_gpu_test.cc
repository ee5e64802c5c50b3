// Thread safety on the GPU: one JIT Model's GPU sessions (one shared, the others each a
// thread's own) run from 8 threads at once with inputs of different values and batch sizes,
// every result compared bit for bit with the same run made alone on the shared session. The
// threads' own sessions compile their programs at their first runs, so compiles race with runs.
// tests/unit/runtime/threads_test.cc is the CPU half.
#include "tests/unit/gpu/gpu_test_util.h"
#include "tests/unit/runtime/concurrency_util.h"

namespace dlc {
namespace {

TEST(ThreadsGpu, OneJitModelFromEightThreads) {
  DLC_REQUIRE_GPU(driver);
  for (const char *file : {"tiny_cnn.onnx", "tiny_bert.onnx"}) {
    auto model = Model::load(std::string(DLC_SOURCE_DIR "/models/") + file);
    ASSERT_TRUE(model) << model.status().message();
    SessionOptions options;
    options.backend = Backend::kGpu;
    options.poison = true;
    EXPECT_EQ(testing::concurrentRunFailures(*model, options, 8, 4), std::vector<std::string>{})
        << file;
  }
}

} // namespace
} // namespace dlc
