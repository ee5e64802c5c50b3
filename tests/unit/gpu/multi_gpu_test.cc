// Sessions on any GPU, not only GPU 0: one model's sessions on GPU 0 and GPU 1, from two threads
// at once, give results identical (bit for bit) to one session's on GPU 0, through the C++ API
// (jit sessions; the C API's are in capi_gpu_test.cc). Skips on a machine with fewer than two
// GPUs; a GPU that does not exist is refused by number.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <thread>

#include "gpu_test_util.h"
#include "runtime/jit/model.h"

namespace dlc {
namespace {

Tensor image(unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  Tensor t = Tensor::zeros(DType::kF32, {2, 3, 32, 32});
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.mutableData<float>()[i] = u(rng);
  return t;
}

bool sameBits(const Tensor &a, const Tensor &b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw(), b.raw(), static_cast<size_t>(a.byteSize())) == 0;
}

TEST(MultiGpu, AGpuThatDoesNotExistIsRefusedByNumber) {
  auto model = Model::load(std::string(DLC_SOURCE_DIR) + "/models/tiny_cnn.onnx");
  ASSERT_TRUE(model) << model.status().message();
  SessionOptions so;
  so.device = 64;
  auto s = model->createSession(so); // kAuto: naming a GPU still insists on it
  ASSERT_FALSE(s);
  EXPECT_TRUE(s.status().message().find("gpu:64") != std::string::npos ||
              s.status().message().find("no CUDA") != std::string::npos)
      << s.status().message();
}

TEST(MultiGpu, TwoSessionsOnTwoGpusMatchOneSession) {
  DLC_REQUIRE_GPU(driver);
  if (rt::CudaDriver::deviceCount() < 2)
    GTEST_SKIP() << "one GPU: the two-GPU test needs two";
  for (const char *file : {"tiny_cnn.onnx", "tiny_detector.onnx"}) {
    SCOPED_TRACE(file);
    auto model = Model::load(std::string(DLC_SOURCE_DIR "/models/") + file);
    ASSERT_TRUE(model) << model.status().message();
    std::vector<Session> sessions;
    for (int gpu : {0, 1}) {
      SessionOptions so;
      so.backend = Backend::kGpu;
      so.cpuFallback = false;
      so.poison = true;
      so.device = gpu;
      auto s = model->createSession(so);
      ASSERT_TRUE(s) << s.status().message();
      sessions.push_back(std::move(*s));
    }
    std::vector<std::vector<NamedTensor>> want;
    for (unsigned i = 0; i < 4; ++i) {
      auto out = sessions[0].runOrdered({{"x", image(i)}});
      ASSERT_TRUE(out) << out.status().message();
      want.push_back(std::move(*out));
    }
    std::vector<std::string> failures[2];
    std::vector<std::thread> threads;
    for (int gpu : {0, 1})
      threads.emplace_back([&, gpu] {
        for (int round = 0; round < 5; ++round)
          for (unsigned i = 0; i < 4; ++i) {
            auto out = sessions[static_cast<size_t>(gpu)].runOrdered({{"x", image(i)}});
            if (!out) {
              failures[gpu].push_back(out.status().message());
              continue;
            }
            for (size_t k = 0; k < out->size(); ++k)
              if (!sameBits((*out)[k].tensor, want[i][k].tensor))
                failures[gpu].push_back(
                    fmt::format("gpu:{} input {} output '{}' differs", gpu, i, (*out)[k].name));
          }
      });
    for (std::thread &t : threads)
      t.join();
    EXPECT_EQ(failures[0], std::vector<std::string>{});
    EXPECT_EQ(failures[1], std::vector<std::string>{});
  }
}

} // namespace
} // namespace dlc
