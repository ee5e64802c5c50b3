// The C API on the GPU: a package with programs compiled (NVRTC) for this GPU, run with host
// tensors, with device tensors, and asynchronously on the caller's stream; each against a CPU
// session of the same model. Skips without a GPU.
#include <gtest/gtest.h>

#include <memory>
#include <optional>

#include "dlc/dlc.h"
#include "gpu_test_util.h"
#include "ir/parser.h"
#include "runtime/jit/compile.h"
#include "runtime/package.h"

namespace dlc {
namespace {

using rt::testing::randomFloats;

std::string modelText() {
  using rt::testing::denseText;
  return fmt::format(R"(graph @m(%x: f32[N,32]) -> (y: f32[N,16]) {{
  %w = constant f32[32,16] {}
  %b = constant f32[16] {}
  %m = matmul(%x, %w) : f32[N,16]
  %a = add(%m, %b) : f32[N,16]
  %y = tanh(%a) : f32[N,16]
  return %y
}})",
                     denseText(32 * 16, 5), denseText(16, 6));
}

/// A package with GPU programs for N=2 and N=4 on this GPU's arch; N may be 1..4.
std::vector<uint8_t> gpuPackage(int sm) {
  auto g = parseGraph(modelText());
  EXPECT_TRUE(g) << g.status().message();
  rt::Package p;
  p.dlcVersion = "test";
  p.inputs.push_back({"x", (*g)->inputs()[0]->type()});
  p.outputs.push_back({"y", (*g)->outputs()[0].value->type()});
  p.dimRanges = {{"N", 1, 4}};
  for (int64_t n : {2, 4}) {
    jit::JitOptions jo;
    jo.lower.nvrtc.smVersion = sm;
    jo.lower.emit.smVersion = sm;
    jo.strictPlacement = true;
    auto program = jit::compileForGpu(**g, {{"N", n}}, jo);
    EXPECT_TRUE(program) << program.status().message();
    p.programs.push_back({{{"N", n}}, std::make_shared<const rt::Program>(std::move(*program))});
  }
  p.graph = std::shared_ptr<const Graph>(std::move(*g));
  auto bytes = rt::serializePackage(p);
  EXPECT_TRUE(bytes) << bytes.status().message();
  return *bytes;
}

/// gpuPackage for this GPU, loaded through the C API (null on failure: dlc_last_error says).
dlc_model *loadGpuModel(const rt::CudaDriver &driver) {
  std::vector<uint8_t> bytes = gpuPackage(driver.device().smVersion());
  dlc_model *m = nullptr;
  return dlc_model_load_memory(bytes.data(), bytes.size(), "gpu-test", &m) == DLC_OK ? m : nullptr;
}

DLTensor view(void *data, std::vector<int64_t> &shape, DLDeviceType where) {
  DLTensor t{};
  t.data = data;
  t.device = {where, 0};
  t.ndim = static_cast<int32_t>(shape.size());
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape.data();
  return t;
}

/// y for `x` from a CPU session (the reference backend).
std::vector<float> cpuResult(dlc_model *m, std::vector<float> x, int64_t n) {
  dlc_session *s = nullptr;
  EXPECT_EQ(dlc_session_create(m, DLC_DEVICE_CPU, &s), DLC_OK) << dlc_last_error();
  std::vector<int64_t> shape = {n, 32};
  DLTensor xv = view(x.data(), shape, kDLCPU);
  EXPECT_EQ(dlc_session_set_input(s, "x", &xv), DLC_OK) << dlc_last_error();
  EXPECT_EQ(dlc_session_run(s), DLC_OK) << dlc_last_error();
  const DLTensor *y = nullptr;
  EXPECT_EQ(dlc_session_get_output(s, "y", &y), DLC_OK);
  std::vector<float> out(static_cast<const float *>(y->data),
                         static_cast<const float *>(y->data) + n * 16);
  dlc_session_free(s);
  return out;
}

void expectClose(const std::vector<float> &got, const std::vector<float> &want,
                 const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-5f + 1e-4f * std::abs(want[i])) << what << " element " << i;
}

/// x (batch n) copied to the GPU, room for y there, and a GPU session of the model bound to
/// both (freed with this).
struct DeviceBound {
  std::vector<int64_t> xs, ys;
  std::optional<rt::DeviceMemory> x, y;
  dlc_session *session = nullptr;
  ~DeviceBound() { dlc_session_free(session); }
};

void bindDevice(dlc_model *m, const rt::CudaDriver &driver, const std::vector<float> &x, int64_t n,
                DeviceBound &out) {
  out.xs = {n, 32};
  out.ys = {n, 16};
  auto dx = rt::allocateDevice(driver, x.size() * 4, "x");
  auto dy = rt::allocateDevice(driver, static_cast<size_t>(n * 16) * 4, "y");
  ASSERT_TRUE(dx && dy);
  out.x.emplace(std::move(*dx));
  out.y.emplace(std::move(*dy));
  ASSERT_EQ(driver.api().memcpyHtoD(out.x->get(), x.data(), x.size() * 4), CUDA_SUCCESS);
  DLTensor xv = view(reinterpret_cast<void *>(out.x->get()), out.xs, kDLCUDA);
  DLTensor yv = view(reinterpret_cast<void *>(out.y->get()), out.ys, kDLCUDA);
  ASSERT_EQ(dlc_session_create(m, DLC_DEVICE_GPU, &out.session), DLC_OK) << dlc_last_error();
  ASSERT_EQ(dlc_session_set_input(out.session, "x", &xv), DLC_OK) << dlc_last_error();
  ASSERT_EQ(dlc_session_set_output(out.session, "y", &yv), DLC_OK) << dlc_last_error();
}

TEST(CApiGpu, HostDeviceAndStreamRunsMatchTheCpu) {
  DLC_REQUIRE_GPU(driver);
  dlc_model *m = loadGpuModel(*driver);
  ASSERT_TRUE(m) << dlc_last_error();
  int32_t arches = 0;
  ASSERT_EQ(dlc_model_num_arches(m, &arches), DLC_OK);
  EXPECT_EQ(arches, 1);
  dlc_session *s = nullptr;
  ASSERT_EQ(dlc_session_create(m, DLC_DEVICE_GPU, &s), DLC_OK) << dlc_last_error();
  dlc_device where;
  ASSERT_EQ(dlc_session_device(s, &where), DLC_OK);
  EXPECT_EQ(where, DLC_DEVICE_GPU);
  const rt::DriverApi &api = driver->api();

  for (int64_t n : {2, 4}) {
    std::vector<float> x = randomFloats(static_cast<size_t>(n * 32), 20 + n);
    const std::vector<float> want = cpuResult(m, x, n);
    std::vector<int64_t> xs = {n, 32}, ys = {n, 16};
    // Host tensors.
    DLTensor xv = view(x.data(), xs, kDLCPU);
    ASSERT_EQ(dlc_session_set_input(s, "x", &xv), DLC_OK) << dlc_last_error();
    ASSERT_EQ(dlc_session_run(s), DLC_OK) << dlc_last_error();
    const DLTensor *y = nullptr;
    ASSERT_EQ(dlc_session_get_output(s, "y", &y), DLC_OK);
    expectClose(std::vector<float>(static_cast<const float *>(y->data),
                                   static_cast<const float *>(y->data) + n * 16),
                want, "host tensors");

    // Device tensors, synchronously and on a stream.
    DeviceBound bound;
    ASSERT_NO_FATAL_FAILURE(bindDevice(m, *driver, x, n, bound));
    dlc_session *d = bound.session;
    const auto &dy = bound.y;
    // Synchronously, on a stream of the caller's, and on the legacy default stream (NULL).
    for (const char *mode : {"sync", "stream", "default stream"}) {
      ASSERT_EQ(api.memsetD8Async(dy->get(), 0xFF, static_cast<size_t>(n * 16) * 4, nullptr),
                CUDA_SUCCESS);
      auto stream = rt::createStream(*driver);
      ASSERT_TRUE(stream);
      ASSERT_EQ(api.streamSynchronize(nullptr), CUDA_SUCCESS);
      if (std::string(mode) == "stream") {
        ASSERT_EQ(dlc_session_run_async(d, stream->get()), DLC_OK) << dlc_last_error();
        ASSERT_EQ(api.streamSynchronize(stream->get()), CUDA_SUCCESS);
      } else if (std::string(mode) == "default stream") {
        ASSERT_EQ(dlc_session_run_async(d, nullptr), DLC_OK) << dlc_last_error();
        ASSERT_EQ(api.streamSynchronize(nullptr), CUDA_SUCCESS);
      } else {
        ASSERT_EQ(dlc_session_run(d), DLC_OK) << dlc_last_error();
      }
      std::vector<float> got(static_cast<size_t>(n * 16));
      ASSERT_EQ(api.memcpyDtoH(got.data(), dy->get(), got.size() * 4), CUDA_SUCCESS);
      expectClose(got, want, std::string("device tensors, ") + mode);
    }
    // Mixing host and device tensors is refused.
    std::vector<float> hostY(static_cast<size_t>(n * 16));
    DLTensor hyv = view(hostY.data(), ys, kDLCPU);
    ASSERT_EQ(dlc_session_set_output(d, "y", &hyv), DLC_OK);
    EXPECT_EQ(dlc_session_run(d), DLC_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(dlc_last_error()).find("mix host and GPU memory"), std::string::npos)
        << dlc_last_error();
  }
  // N=3 has no program of its own: the GPU session runs it on the CPU (with a warning).
  std::vector<float> x3 = randomFloats(3 * 32, 9);
  std::vector<int64_t> s3 = {3, 32};
  DLTensor x3v = view(x3.data(), s3, kDLCPU);
  ASSERT_EQ(dlc_session_set_input(s, "x", &x3v), DLC_OK);
  ASSERT_EQ(dlc_session_run(s), DLC_OK) << dlc_last_error();
  dlc_session_free(s);
  dlc_model_free(m);
}

/// Device inputs with an unbound output: the session allocates GPU memory for it, and
/// dlc_session_take_output hands it over without a copy (DLPack out).
TEST(CApiGpu, UnboundOutputsOfADeviceRunAreTakenWithoutACopy) {
  DLC_REQUIRE_GPU(driver);
  dlc_model *m = loadGpuModel(*driver);
  ASSERT_TRUE(m) << dlc_last_error();
  const rt::DriverApi &api = driver->api();
  std::vector<float> x = randomFloats(4 * 32, 41);
  const std::vector<float> want = cpuResult(m, x, 4);
  auto dx = rt::allocateDevice(*driver, x.size() * 4, "x");
  ASSERT_TRUE(dx);
  ASSERT_EQ(api.memcpyHtoD(dx->get(), x.data(), x.size() * 4), CUDA_SUCCESS);
  std::vector<int64_t> xs = {4, 32};
  DLTensor dxv = view(reinterpret_cast<void *>(dx->get()), xs, kDLCUDA);
  dlc_session *s = nullptr;
  ASSERT_EQ(dlc_session_create(m, DLC_DEVICE_GPU, &s), DLC_OK) << dlc_last_error();
  ASSERT_EQ(dlc_session_set_input(s, "x", &dxv), DLC_OK) << dlc_last_error();
  std::vector<DLManagedTensor *> taken;
  for (int run = 0; run < 2; ++run) { // each run allocates its outputs anew
    ASSERT_EQ(dlc_session_run(s), DLC_OK) << dlc_last_error();
    const DLTensor *y = nullptr;
    ASSERT_EQ(dlc_session_get_output(s, "y", &y), DLC_OK) << dlc_last_error();
    EXPECT_EQ(y->device.device_type, kDLCUDA);
    DLManagedTensor *t = nullptr;
    ASSERT_EQ(dlc_session_take_output(s, "y", &t), DLC_OK) << dlc_last_error();
    EXPECT_EQ(t->dl_tensor.data, y->data) << "taken without a copy";
    taken.push_back(t);
  }
  EXPECT_NE(taken[0]->dl_tensor.data, taken[1]->dl_tensor.data);
  dlc_session_free(s);
  dlc_model_free(m);
  for (DLManagedTensor *t : taken) { // they outlive the session
    std::vector<float> got(4 * 16);
    ASSERT_EQ(api.memcpyDtoH(got.data(), reinterpret_cast<CUdeviceptr>(t->dl_tensor.data),
                             got.size() * 4),
              CUDA_SUCCESS);
    expectClose(got, want, "taken output");
    t->deleter(t);
  }
}

/// A caller's stream is the caller's again once dlc_session_run_async returns: it may be
/// destroyed then, and the session's next run (on another stream, on the legacy default
/// stream, on its own) and its destruction must not touch it. (The session used to order the
/// next run after the last caller stream by recording an event on it at that point: a
/// destroyed stream's handle, which crashed the GPU suite now and then.)
TEST(CApiGpu, CallerStreamsMayBeDestroyedAfterTheirRuns) {
  DLC_REQUIRE_GPU(driver);
  dlc_model *m = loadGpuModel(*driver);
  ASSERT_TRUE(m) << dlc_last_error();
  const rt::DriverApi &api = driver->api();
  std::vector<float> x = randomFloats(4 * 32, 77);
  const std::vector<float> want = cpuResult(m, x, 4);
  auto bound = std::make_unique<DeviceBound>();
  ASSERT_NO_FATAL_FAILURE(bindDevice(m, *driver, x, 4, *bound));
  dlc_session *d = bound->session;
  const auto &dy = bound->y;
  for (int round = 0; round < 24; ++round) {
    SCOPED_TRACE(round);
    ASSERT_EQ(api.memsetD8Async(dy->get(), 0xFF, 4 * 16 * 4, nullptr), CUDA_SUCCESS);
    ASSERT_EQ(api.streamSynchronize(nullptr), CUDA_SUCCESS);
    if (round % 3 == 2) { // synchronously, on the session's stream
      ASSERT_EQ(dlc_session_run(d), DLC_OK) << dlc_last_error();
    } else if (round % 4 == 1) { // the legacy default stream
      ASSERT_EQ(dlc_session_run_async(d, nullptr), DLC_OK) << dlc_last_error();
      ASSERT_EQ(api.streamSynchronize(nullptr), CUDA_SUCCESS);
    } else { // a stream of the caller's, destroyed as soon as the run is done
      auto stream = rt::createStream(*driver);
      ASSERT_TRUE(stream);
      ASSERT_EQ(dlc_session_run_async(d, stream->get()), DLC_OK) << dlc_last_error();
      ASSERT_EQ(api.streamSynchronize(stream->get()), CUDA_SUCCESS);
    }
    std::vector<float> got(4 * 16);
    ASSERT_EQ(api.memcpyDtoH(got.data(), dy->get(), got.size() * 4), CUDA_SUCCESS);
    expectClose(got, want, "device tensors");
  }
  // The last run went to a stream that is gone by now: the session's end waits for its event.
  {
    auto stream = rt::createStream(*driver);
    ASSERT_TRUE(stream);
    ASSERT_EQ(dlc_session_run_async(d, stream->get()), DLC_OK) << dlc_last_error();
  }
  bound.reset();
  dlc_model_free(m);
}

/// One session per GPU (dlc_session_create_on_gpu): each loads the package's programs on its
/// own GPU and gives the CPU's results; device tensors must be on the session's GPU; a GPU that
/// does not exist is refused by number. The second GPU's half skips on a one-GPU machine.
TEST(CApiGpu, SessionsOnAGpuByNumber) {
  DLC_REQUIRE_GPU(driver);
  dlc_model *m = loadGpuModel(*driver);
  ASSERT_TRUE(m) << dlc_last_error();
  const int32_t count = rt::CudaDriver::deviceCount();
  dlc_session *s = nullptr;
  EXPECT_EQ(dlc_session_create_on_gpu(m, DLC_DEVICE_AUTO, count, &s), DLC_ERROR_UNAVAILABLE);
  EXPECT_NE(std::string(dlc_last_error()).find(fmt::format("gpu:{}", count)), std::string::npos)
      << dlc_last_error();
  std::vector<float> x = randomFloats(2 * 32, 31);
  const std::vector<float> want = cpuResult(m, x, 2);
  std::vector<int64_t> xs = {2, 32};
  for (int32_t gpu = 0; gpu < std::min(count, 2); ++gpu) {
    ASSERT_EQ(dlc_session_create_on_gpu(m, DLC_DEVICE_GPU, gpu, &s), DLC_OK) << dlc_last_error();
    DLTensor xv = view(x.data(), xs, kDLCPU);
    ASSERT_EQ(dlc_session_set_input(s, "x", &xv), DLC_OK) << dlc_last_error();
    ASSERT_EQ(dlc_session_run(s), DLC_OK) << dlc_last_error();
    const DLTensor *y = nullptr;
    ASSERT_EQ(dlc_session_get_output(s, "y", &y), DLC_OK);
    expectClose(std::vector<float>(static_cast<const float *>(y->data),
                                   static_cast<const float *>(y->data) + 2 * 16),
                want, fmt::format("gpu:{}", gpu));
    // A device tensor on another GPU than the session's is refused by number.
    DLTensor elsewhere = view(reinterpret_cast<void *>(uintptr_t{0x1000}), xs, kDLCUDA);
    elsewhere.device.device_id = gpu + 1;
    EXPECT_EQ(dlc_session_set_input(s, "x", &elsewhere), DLC_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(dlc_last_error()).find(fmt::format("runs on GPU {}", gpu)),
              std::string::npos)
        << dlc_last_error();
    dlc_session_free(s);
  }
  dlc_model_free(m);
}

} // namespace
} // namespace dlc
