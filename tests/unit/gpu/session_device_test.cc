// dlc::Session on the GPU with tensors in device memory (Session::runDevice) and the
// per-kernel profile, against the same session's host-tensor runs. Skips without a GPU.
#include <gtest/gtest.h>

#include <cstring>

#include "gpu_test_util.h"
#include "ir/parser.h"
#include "runtime/jit/model.h"

namespace dlc {
namespace {

using rt::testing::randomFloats;

// y = relu(x @ w + b) with a symbolic batch, so the program is compiled per batch size.
std::string modelText() {
  using rt::testing::denseText;
  return fmt::format(R"(graph @mlp(%x: f32[N,64]) -> (y: f32[N,32]) {{
  %w = constant f32[64,32] {}
  %b = constant f32[32] {}
  %m = matmul(%x, %w) : f32[N,32]
  %a = add(%m, %b) : f32[N,32]
  %y = relu(%a) : f32[N,32]
  return %y
}})",
                     denseText(64 * 32, 1), denseText(32, 2));
}

Model loadModel() {
  auto g = parseGraph(modelText());
  EXPECT_TRUE(g) << g.status().message();
  auto m = Model::fromGraph(std::move(*g));
  EXPECT_TRUE(m) << m.status().message();
  return std::move(*m);
}

class DeviceBuffer {
public:
  DeviceBuffer(const rt::CudaDriver &d, size_t bytes) : driver_(d) {
    auto m = rt::allocateDevice(d, bytes, "test buffer");
    EXPECT_TRUE(m) << m.status().message();
    mem_ = std::move(*m);
  }
  uint64_t address() const { return mem_.get(); }
  void upload(const void *src, size_t bytes) {
    ASSERT_EQ(driver_.api().memcpyHtoD(mem_.get(), src, bytes), CUDA_SUCCESS);
  }
  void download(void *dst, size_t bytes) const {
    ASSERT_EQ(driver_.api().memcpyDtoH(dst, mem_.get(), bytes), CUDA_SUCCESS);
  }

private:
  const rt::CudaDriver &driver_;
  rt::DeviceMemory mem_;
};

TEST(SessionDevice, DeviceTensorsMatchHostTensors) {
  DLC_REQUIRE_GPU(driver);
  Model model = loadModel();
  auto session = model.createSession(rt::testing::gpuAlone(true));
  ASSERT_TRUE(session) << session.status().message();
  for (int64_t n : {4, 7}) { // two programs, one per batch size
    std::vector<float> x = randomFloats(static_cast<size_t>(n * 64), 7 + n);
    Tensor xt = Tensor::fromVector<float>(DType::kF32, {n, 64}, x);
    auto host = session->run({{"x", xt}});
    ASSERT_TRUE(host) << host.status().message();
    const Tensor &want = host->at("y");

    DeviceBuffer dx(*driver, x.size() * 4), dy(*driver, static_cast<size_t>(n * 32) * 4);
    dx.upload(x.data(), x.size() * 4);
    std::vector<float> sentinel(static_cast<size_t>(n * 32), -7.0f);
    dy.upload(sentinel.data(), sentinel.size() * 4);
    Status st = session->runDevice({{"x", {dx.address(), DType::kF32, {n, 64}}}},
                                   {{"y", {dy.address(), DType::kF32, {n, 32}}}});
    ASSERT_TRUE(st.isOk()) << st.message();
    std::vector<float> got(static_cast<size_t>(n * 32));
    dy.download(got.data(), got.size() * 4);
    ASSERT_EQ(want.numElements(), n * 32);
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(got[i], want.data<float>()[i]) << "n=" << n << " element " << i;
  }
}

// On sm_90 this product runs the Hopper kernel with the TMA producer, which reads x and w
// through tensor maps. runDevice binds them in place, encoding the maps again over each call's
// buffers: two sets of buffers in turn must each give the host run's result, bit for bit (a map
// left on the arena slot would read memory no copy filled).
TEST(SessionDevice, TensorMapOperandsFollowTheCallersBuffers) {
  DLC_REQUIRE_GPU(driver);
  auto model = rt::testing::modelOf(
      R"(graph @mm(%x: f16[2048,512], %w: f16[512,1024]) -> (y: f16[2048,1024]) {
  %y = matmul(%x, %w) : f16[2048,1024]
  return %y
})");
  ASSERT_TRUE(model) << model.status().message();
  auto session = model->createSession(rt::testing::gpuAlone(true));
  ASSERT_TRUE(session) << session.status().message();
  struct Set {
    Tensor x, w, want;
    std::unique_ptr<DeviceBuffer> dx, dw, dy;
  };
  Set sets[2];
  for (int k = 0; k < 2; ++k) {
    Set &set = sets[k];
    set.x = Tensor::fromVector<float>(DType::kF32, {2048, 512}, randomFloats(2048 * 512, 11 + k))
                .castTo(DType::kF16);
    set.w = Tensor::fromVector<float>(DType::kF32, {512, 1024}, randomFloats(512 * 1024, 21 + k))
                .castTo(DType::kF16);
    auto host = session->run({{"x", set.x}, {"w", set.w}});
    ASSERT_TRUE(host) << host.status().message();
    set.want = host->at("y");
    set.dx = std::make_unique<DeviceBuffer>(*driver, set.x.byteSize());
    set.dw = std::make_unique<DeviceBuffer>(*driver, set.w.byteSize());
    set.dy = std::make_unique<DeviceBuffer>(*driver, set.want.byteSize());
    set.dx->upload(set.x.raw(), set.x.byteSize());
    set.dw->upload(set.w.raw(), set.w.byteSize());
  }
  for (int rep = 0; rep < 3; ++rep) {
    Set &set = sets[rep % 2];
    Status st = session->runDevice({{"x", {set.dx->address(), DType::kF16, {2048, 512}}},
                                    {"w", {set.dw->address(), DType::kF16, {512, 1024}}}},
                                   {{"y", {set.dy->address(), DType::kF16, {2048, 1024}}}});
    ASSERT_TRUE(st.isOk()) << st.message();
    Tensor got = Tensor::zeros(DType::kF16, {2048, 1024});
    set.dy->download(got.mutableRaw(), got.byteSize());
    ASSERT_EQ(std::memcmp(got.raw(), set.want.raw(), got.byteSize()), 0) << "run " << rep;
  }
}

TEST(SessionDevice, BadDeviceTensorsAreRefusedByName) {
  DLC_REQUIRE_GPU(driver);
  Model model = loadModel();
  SessionOptions so;
  so.backend = Backend::kGpu;
  auto session = model.createSession(so);
  ASSERT_TRUE(session) << session.status().message();
  DeviceBuffer dx(*driver, 4 * 64 * 4), dy(*driver, 4 * 32 * 4);
  const DeviceTensor x{dx.address(), DType::kF32, {4, 64}};
  const DeviceTensor y{dy.address(), DType::kF32, {4, 32}};
  auto message = [&](const std::map<std::string, DeviceTensor> &in,
                     const std::map<std::string, DeviceTensor> &out) {
    Status st = session->runDevice(in, out);
    return st.isOk() ? std::string("ok") : st.message();
  };
  EXPECT_EQ(message({{"x", x}}, {{"y", y}}), "ok");
  EXPECT_NE(message({}, {{"y", y}}).find("missing input 'x'"), std::string::npos);
  EXPECT_NE(message({{"x", x}}, {}).find("missing output 'y'"), std::string::npos);
  EXPECT_NE(message({{"x", x}, {"z", x}}, {{"y", y}}).find("unknown input 'z'"), std::string::npos);
  EXPECT_NE(message({{"x", x}}, {{"y", y}, {"q", y}}).find("unknown output 'q'"),
            std::string::npos);
  EXPECT_NE(message({{"x", {0, DType::kF32, {4, 64}}}}, {{"y", y}}).find("null device address"),
            std::string::npos);
  EXPECT_NE(message({{"x", {dx.address(), DType::kF16, {4, 64}}}}, {{"y", y}}).find("input 'x'"),
            std::string::npos);
  // The output's shape follows the batch the input binds: N=4 gives [4,32], not [5,32].
  std::string wrong = message({{"x", x}}, {{"y", {dy.address(), DType::kF32, {5, 32}}}});
  EXPECT_NE(wrong.find("output 'y' must be f32[4,32]"), std::string::npos) << wrong;
  EXPECT_NE(message({{"x", {dx.address(), DType::kF32, {4, 63}}}}, {{"y", y}}).find("dim 1"),
            std::string::npos);
}

TEST(SessionDevice, ProfileListsEveryKernel) {
  DLC_REQUIRE_GPU(driver);
  Model model = loadModel();
  SessionOptions so;
  so.backend = Backend::kGpu;
  auto session = model.createSession(so);
  ASSERT_TRUE(session) << session.status().message();
  Tensor x = Tensor::fromVector<float>(DType::kF32, {8, 64}, randomFloats(8 * 64, 3));
  auto steps = session->profileGpu({{"x", x}}, 2);
  ASSERT_TRUE(steps) << steps.status().message();
  ASSERT_FALSE(steps->empty());
  bool sawMatmul = false;
  for (const Session::StepProfile &s : *steps) {
    EXPECT_GE(s.ms, 0.0);
    if (s.kind == "kernel") {
      EXPECT_FALSE(s.name.empty());
      sawMatmul |= s.origin.find("matmul") != std::string::npos ||
                   s.name.find("matmul") != std::string::npos;
    }
  }
  EXPECT_TRUE(sawMatmul) << "the matmul group is one of the profiled kernels";
}

TEST(SessionDevice, CpuSessionRefusesDeviceTensors) {
  Model model = loadModel();
  SessionOptions so;
  so.backend = Backend::kCpu;
  auto session = model.createSession(so);
  ASSERT_TRUE(session) << session.status().message();
  Status st = session->runDevice({}, {});
  EXPECT_NE(st.message().find("runs on the CPU"), std::string::npos) << st.message();
}

} // namespace
} // namespace dlc
