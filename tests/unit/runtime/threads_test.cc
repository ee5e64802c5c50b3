// Thread safety on the CPU: one JIT Model and one model library (the C API over a package)
// run from 8 threads at once with different inputs, every result compared bit for bit with a
// run made alone. The `tsan` preset runs these under ThreadSanitizer (tests/README.md).
#include <gtest/gtest.h>

#include <thread>

#include "dlc/dlc.h"
#include "ir/clone.h"
#include "runtime/package.h"
#include "tests/unit/runtime/concurrency_util.h"

namespace dlc {
namespace {

constexpr int kThreads = 8;
constexpr int kRunsPerThread = 3;

Expected<Model> tinyCnn() { return Model::load(DLC_SOURCE_DIR "/models/tiny_cnn.onnx"); }

TEST(Threads, OneJitModelFromEightThreads) {
  auto model = tinyCnn();
  ASSERT_TRUE(model) << model.status().message();
  SessionOptions options;
  options.backend = Backend::kCpu;
  EXPECT_EQ(testing::concurrentRunFailures(*model, options, kThreads, kRunsPerThread),
            std::vector<std::string>{});
}

/// A DLTensor viewing a host tensor.
DLTensor view(const Tensor &t, std::vector<int64_t> &shape) {
  shape = t.shape();
  DLTensor v{};
  v.data = const_cast<void *>(t.raw());
  v.device = {kDLCPU, 0};
  v.ndim = static_cast<int32_t>(shape.size());
  v.dtype = {kDLFloat, 32, 1};
  v.shape = shape.data();
  return v;
}

TEST(Threads, OneModelLibraryFromEightThreads) {
  auto model = tinyCnn();
  ASSERT_TRUE(model) << model.status().message();
  for (const TensorInfo &in : model->inputs())
    ASSERT_EQ(in.type.dtype, DType::kF32) << in.name; // view() binds float32 only
  rt::Package p;
  p.dlcVersion = "0.1.0";
  for (const TensorInfo &in : model->inputs())
    p.inputs.push_back({in.name, in.type});
  for (const TensorInfo &out : model->outputs())
    p.outputs.push_back({out.name, out.type});
  p.dimRanges = {{"N", 1, 8}};
  p.graph = cloneGraph(model->graph());
  auto bytes = rt::serializePackage(p);
  ASSERT_TRUE(bytes) << bytes.status().message();
  dlc_model *lib = nullptr;
  ASSERT_EQ(dlc_model_load_memory(bytes->data(), bytes->size(), "tiny_cnn", &lib), DLC_OK)
      << dlc_last_error();

  // The expected outputs: the JIT model's, one run at a time (the same reference kernels).
  SessionOptions cpu;
  cpu.backend = Backend::kCpu;
  auto alone = model->createSession(cpu);
  ASSERT_TRUE(alone) << alone.status().message();
  std::vector<std::map<std::string, Tensor>> inputs, want;
  ASSERT_EQ(testing::runAlone(*model, *alone, kThreads * kRunsPerThread, inputs, want), "");

  std::vector<std::vector<std::string>> failures(kThreads);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([&, t] {
      auto &mine = failures[static_cast<size_t>(t)];
      dlc_session *s = nullptr;
      if (dlc_session_create(lib, DLC_DEVICE_CPU, &s) != DLC_OK) {
        mine.push_back(dlc_last_error());
        return;
      }
      for (int r = 0; r < kRunsPerThread; ++r) {
        const int k = t * kRunsPerThread + r;
        std::vector<std::vector<int64_t>> shapes(inputs[static_cast<size_t>(k)].size());
        size_t i = 0;
        bool ok = true;
        for (const auto &[name, tensor] : inputs[static_cast<size_t>(k)]) {
          DLTensor v = view(tensor, shapes[i++]);
          ok = ok && dlc_session_set_input(s, name.c_str(), &v) == DLC_OK;
        }
        if (!ok || dlc_session_run(s) != DLC_OK) {
          mine.push_back(fmt::format("run {}: {}", k, dlc_last_error()));
          continue;
        }
        for (const auto &[name, expected] : want[static_cast<size_t>(k)]) {
          const DLTensor *y = nullptr;
          if (dlc_session_get_output(s, name.c_str(), &y) != DLC_OK) {
            mine.push_back(fmt::format("run {}: {}", k, dlc_last_error()));
            continue;
          }
          if (std::vector<int64_t>(y->shape, y->shape + y->ndim) != expected.shape() ||
              std::memcmp(y->data, expected.raw(), static_cast<size_t>(expected.byteSize())) != 0)
            mine.push_back(fmt::format("run {}: output '{}' differs from the run alone", k, name));
        }
      }
      dlc_session_free(s);
    });
  }
  for (std::thread &th : pool)
    th.join();
  dlc_model_free(lib);
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(failures[static_cast<size_t>(t)], std::vector<std::string>{}) << "thread " << t;
}

} // namespace
} // namespace dlc
