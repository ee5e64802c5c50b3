// GpuProgram + GpuSession on a real GPU, with hand-written Programs whose kernels NVRTC
// compiles for the device present. Every test skips, visibly, where there is no GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <thread>

#include "gpu_test_util.h"
#include "runtime/gpu_session.h"

namespace dlc::rt {
namespace {

using testing::bitsOf;
using testing::ProgramBuilder;
using testing::randomFloats;

constexpr int kN = 32768;     // elements of the main test vectors
constexpr int kChunk = 16384; // floats per block of the shared-memory kernel: 64 KiB
constexpr int kW = 16;        // elements of the constant weight vector

const char *kVaddSource = R"(
extern "C" __global__ void vadd(const float *a, const float *b, float *c) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 32768) c[i] = a[i] + b[i];
}
extern "C" __global__ void scale2(const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 32768) y[i] = 2.0f * x[i];
}
extern "C" __global__ void half_write(const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 32768 / 2) y[i] = x[i];
}
extern "C" __global__ void dlc_fault(float *y) {
  *(volatile float *)0 = y[0]; // out-of-bounds write to address 0
}
)";

// Reverses each 16384-float chunk through 64 KiB of dynamic shared memory (more than the 48 KiB
// a kernel gets without opting in) and multiplies by a constant weight.
const char *kSharedSource = R"(
extern "C" __global__ void reverse_scale(const float *x, const float *w, float *y) {
  extern __shared__ float tile[];
  const int base = blockIdx.x * 16384;
  for (int j = threadIdx.x; j < 16384; j += blockDim.x) tile[j] = x[base + j];
  __syncthreads();
  for (int j = threadIdx.x; j < 16384; j += blockDim.x)
    y[base + j] = tile[16383 - j] * w[(base + j) % 16];
}
)";

/// The test kernels, compiled once per process for the device's arch.
const std::vector<codegen::CompiledModule> &modules(int sm) {
  static std::vector<codegen::CompiledModule> mods = [sm] {
    codegen::NvrtcOptions opts;
    opts.smVersion = sm;
    opts.cache = false;
    auto m =
        codegen::compileModules({kVaddSource, kSharedSource}, {"vadd_kernels", "shared"}, opts, 2);
    EXPECT_TRUE(m) << m.status().message();
    return m ? *m : std::vector<codegen::CompiledModule>{};
  }();
  return mods;
}

/// sum = a + b; y = reverse_scale(sum, w): two modules, a constant, two outputs.
std::shared_ptr<Program> mainProgram(int sm, std::vector<float> *weights = nullptr) {
  ProgramBuilder b;
  BufferRef a = b.input("a", {kN});
  BufferRef x = b.input("b", {kN});
  BufferRef sum = b.output("sum", {kN});
  BufferRef y = b.output("y", {kN});
  std::vector<float> w = randomFloats(kW, 99);
  if (weights)
    *weights = w;
  BufferRef wRef = b.constant(w);
  uint32_t m0 = b.module(modules(sm)[0], sm, {"vadd", "scale2", "half_write", "dlc_fault"});
  uint32_t m1 = b.module(modules(sm)[1], sm, {"reverse_scale"});
  b.launch(m0, "vadd", kN / 256, 256, {a, x, sum});
  b.launch(m1, "reverse_scale", kN / kChunk, 256, {sum, wRef, y}, kChunk * sizeof(float));
  return std::make_shared<Program>(std::move(b.p));
}

struct Expected2 {
  std::vector<float> sum, y;
};

Expected2 hostResults(const std::vector<float> &a, const std::vector<float> &b,
                      const std::vector<float> &w) {
  Expected2 e;
  e.sum.resize(kN);
  e.y.resize(kN);
  for (int i = 0; i < kN; ++i)
    e.sum[i] = a[i] + b[i];
  for (int i = 0; i < kN; ++i) {
    int base = i / kChunk * kChunk, j = i - base;
    e.y[i] = e.sum[base + kChunk - 1 - j] * w[i % kW];
  }
  return e;
}

std::map<std::string, Tensor> inputsFor(const std::vector<float> &a, const std::vector<float> &b) {
  return {{"a", Tensor::fromVector<float>(DType::kF32, {kN}, a)},
          {"b", Tensor::fromVector<float>(DType::kF32, {kN}, b)}};
}

/// "" when `t` holds exactly `want`, else the first difference.
std::string compare(const Tensor &t, const std::vector<float> &want, const std::string &what) {
  if (t.dtype() != DType::kF32 || t.numElements() != static_cast<int64_t>(want.size()))
    return what + ": wrong type " + t.type().str();
  for (size_t i = 0; i < want.size(); ++i)
    if (bitsOf(t.data<float>()[i]) != bitsOf(want[i]))
      return fmt::format("{}[{}] = {} (bits {:#x}), want {}", what, i, t.data<float>()[i],
                         bitsOf(t.data<float>()[i]), want[i]);
  return "";
}

std::string checkRun(GpuSession &s, const std::vector<float> &w, uint32_t seed) {
  auto a = randomFloats(kN, seed), b = randomFloats(kN, seed + 1000);
  auto out = s.run(inputsFor(a, b));
  if (!out)
    return out.status().message();
  if (out->size() != 2 || (*out)[0].name != "sum" || (*out)[1].name != "y")
    return "outputs are not (sum, y)";
  Expected2 e = hostResults(a, b, w);
  std::string d = compare((*out)[0].tensor, e.sum, "sum");
  return d.empty() ? compare((*out)[1].tensor, e.y, "y") : d;
}

std::shared_ptr<const GpuProgram> load(std::shared_ptr<Program> p,
                                       const GpuProgramOptions &opts = {}) {
  auto gp = GpuProgram::create(std::move(p), opts);
  EXPECT_TRUE(gp) << gp.status().message();
  return gp ? *gp : nullptr;
}

std::unique_ptr<GpuSession> session(std::shared_ptr<const GpuProgram> gp,
                                    const GpuSessionOptions &opts = {}) {
  auto s = GpuSession::create(std::move(gp), opts);
  EXPECT_TRUE(s) << s.status().message();
  return s ? std::move(*s) : nullptr;
}

TEST(GpuSession, SharedMemoryKernelAndConstantsMatchTheHost) {
  DLC_REQUIRE_GPU(driver);
  const int sm = driver->device().smVersion();
  std::vector<float> w;
  auto gp = load(mainProgram(sm, &w));
  ASSERT_TRUE(gp);
  ASSERT_EQ(gp->moduleLoads().size(), 2u);
  EXPECT_EQ(gp->moduleLoads()[0], "cubin sm_" + std::to_string(sm));
  GpuSessionOptions opts;
  opts.poison = true;
  auto s = session(gp, opts);
  ASSERT_TRUE(s);
  EXPECT_EQ(checkRun(*s, w, 1), "");
}

TEST(GpuSession, PoisonShowsUnwrittenElements) {
  DLC_REQUIRE_GPU(driver);
  const int sm = driver->device().smVersion();
  ProgramBuilder b;
  BufferRef x = b.input("x", {kN});
  BufferRef y = b.output("y", {kN});
  b.module(modules(sm)[0], sm, {"half_write"});
  b.launch(0, "half_write", kN / 256, 256, {x, y});
  auto gp = load(std::make_shared<Program>(std::move(b.p)));
  ASSERT_TRUE(gp);
  GpuSessionOptions opts;
  opts.poison = true;
  auto s = session(gp, opts);
  ASSERT_TRUE(s);
  for (uint32_t seed : {5u, 6u}) {
    auto xs = randomFloats(kN, seed);
    auto out = s->run({{"x", Tensor::fromVector<float>(DType::kF32, {kN}, xs)}});
    ASSERT_TRUE(out) << out.status().message();
    const float *got = out->front().tensor.data<float>();
    for (int i = 0; i < kN / 2; ++i)
      ASSERT_EQ(bitsOf(got[i]), bitsOf(xs[i])) << i;
    for (int i = kN / 2; i < kN; ++i) {
      ASSERT_TRUE(std::isnan(got[i])) << i;
      ASSERT_EQ(bitsOf(got[i]), 0xffffffffu) << i;
    }
  }
}

TEST(GpuSession, GraphReplayGivesTheSameResultsAsStepByStep) {
  DLC_REQUIRE_GPU(driver);
  std::vector<float> w;
  auto gp = load(mainProgram(driver->device().smVersion(), &w));
  ASSERT_TRUE(gp);
  auto graphed = session(gp);
  GpuSessionOptions plain;
  plain.cudaGraph = false;
  auto stepwise = session(gp, plain);
  ASSERT_TRUE(graphed && stepwise);
  EXPECT_FALSE(graphed->usesCudaGraph()) << "captured on the first run, not before";
  for (uint32_t seed : {11u, 12u, 13u}) {
    EXPECT_EQ(checkRun(*graphed, w, seed), "") << "graph run, seed " << seed;
    EXPECT_TRUE(graphed->usesCudaGraph());
    EXPECT_EQ(checkRun(*stepwise, w, seed), "") << "step-by-step run, seed " << seed;
    EXPECT_FALSE(stepwise->usesCudaGraph());
  }
}

TEST(GpuSession, PtxThroughTheDriverJit) {
  DLC_REQUIRE_GPU(driver);
  std::vector<float> w;
  GpuProgramOptions opts;
  opts.forcePtx = true;
  auto gp = load(mainProgram(driver->device().smVersion(), &w), opts);
  ASSERT_TRUE(gp);
  EXPECT_EQ(gp->moduleLoads()[1].rfind("PTX sm_", 0), 0u) << gp->moduleLoads()[1];
  auto s = session(gp);
  ASSERT_TRUE(s);
  EXPECT_EQ(checkRun(*s, w, 21), "");
}

TEST(GpuSession, FourThreadsTwoSessionsEach) {
  DLC_REQUIRE_GPU(driver);
  std::vector<float> w;
  auto gp = load(mainProgram(driver->device().smVersion(), &w));
  ASSERT_TRUE(gp);
  std::vector<std::string> failures(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      GpuSessionOptions opts[2];
      opts[1].cudaGraph = (t % 2 == 0); // a mix of graphed and step-by-step sessions
      opts[1].poison = true;
      std::unique_ptr<GpuSession> s[2];
      for (int k = 0; k < 2; ++k) {
        auto made = GpuSession::create(gp, opts[k]);
        if (!made) {
          failures[t] = made.status().message();
          return;
        }
        s[k] = std::move(*made);
      }
      for (uint32_t it = 0; it < 6 && failures[t].empty(); ++it)
        failures[t] = checkRun(*s[it % 2], w, 100 * t + it);
    });
  for (auto &th : threads)
    th.join();
  for (int t = 0; t < 4; ++t)
    EXPECT_EQ(failures[t], "") << "thread " << t;
}

TEST(GpuSession, DevicePointersInAndOut) {
  DLC_REQUIRE_GPU(driver);
  std::vector<float> w;
  auto gp = load(mainProgram(driver->device().smVersion(), &w));
  ASSERT_TRUE(gp);
  auto s = session(gp);
  ASSERT_TRUE(s);
  const size_t bytes = kN * sizeof(float);
  auto a = randomFloats(kN, 31), b = randomFloats(kN, 32);
  std::vector<DeviceMemory> bufs;
  for (int i = 0; i < 4; ++i) {
    auto m = allocateDevice(*driver, bytes, "test");
    ASSERT_TRUE(m) << m.status().message();
    bufs.push_back(std::move(*m));
  }
  const DriverApi &api = driver->api();
  ASSERT_TRUE(driver->check(api.memcpyHtoD(bufs[0].get(), a.data(), bytes), "up a").isOk());
  ASSERT_TRUE(driver->check(api.memcpyHtoD(bufs[1].get(), b.data(), bytes), "up b").isOk());
  for (int rep = 0; rep < 2; ++rep) { // capture, then replay
    Status st = s->runDevice({bufs[0].get(), bufs[1].get()}, {bufs[2].get(), bufs[3].get()});
    ASSERT_TRUE(st.isOk()) << st.message();
  }
  Tensor sum = Tensor::zeros(DType::kF32, {kN}), y = Tensor::zeros(DType::kF32, {kN});
  ASSERT_TRUE(driver->check(api.memcpyDtoH(sum.mutableRaw(), bufs[2].get(), bytes), "").isOk());
  ASSERT_TRUE(driver->check(api.memcpyDtoH(y.mutableRaw(), bufs[3].get(), bytes), "").isOk());
  Expected2 e = hostResults(a, b, w);
  EXPECT_EQ(compare(sum, e.sum, "sum"), "");
  EXPECT_EQ(compare(y, e.y, "y"), "");

  Status bad = s->runDevice({bufs[0].get()}, {bufs[2].get(), bufs[3].get()});
  EXPECT_EQ(bad.message(), "runDevice: got 1 input and 2 output pointers; the program has 2 "
                           "inputs and 2 outputs");
  bad = s->runDevice({bufs[0].get(), 0}, {bufs[2].get(), bufs[3].get()});
  EXPECT_EQ(bad.message(), "runDevice: input 'b' has a null device pointer");

  // execute(): the launch list alone, on what the arena holds.
  ASSERT_TRUE(driver->check(api.memcpyHtoD(s->inputSlot(0), b.data(), bytes), "").isOk());
  ASSERT_TRUE(driver->check(api.memcpyHtoD(s->inputSlot(1), b.data(), bytes), "").isOk());
  ASSERT_TRUE(s->execute().isOk());
  ASSERT_TRUE(driver->check(api.memcpyDtoH(sum.mutableRaw(), s->outputSlot(0), bytes), "").isOk());
  EXPECT_EQ(compare(sum, hostResults(b, b, w).sum, "sum"), "");
}

/// Device memory holding `v`.
DeviceMemory deviceCopy(CudaDriver &driver, const std::vector<float> &v, size_t extraBytes = 0) {
  auto m = allocateDevice(driver, v.size() * sizeof(float) + extraBytes, "test");
  EXPECT_TRUE(m) << m.status().message();
  if (!m)
    return {};
  Status st =
      driver.check(driver.api().memcpyHtoD(m->get(), v.data(), v.size() * sizeof(float)), "upload");
  EXPECT_TRUE(st.isOk()) << st.message();
  return std::move(*m);
}

std::vector<float> download(CudaDriver &driver, CUdeviceptr at, size_t n) {
  std::vector<float> v(n);
  Status st = driver.check(driver.api().memcpyDtoH(v.data(), at, n * sizeof(float)), "download");
  EXPECT_TRUE(st.isOk()) << st.message();
  return v;
}

/// "" when `got` equals `want` bit for bit.
std::string sameBits(const std::vector<float> &got, const std::vector<float> &want,
                     const std::string &what) {
  return compare(Tensor::fromVector<float>(DType::kF32, {static_cast<int64_t>(got.size())}, got),
                 want, what);
}

// runDevice lets the kernels read the caller's inputs and write its outputs in place: the
// arena's output slots stay poisoned, the CUDA graph follows new pointers, and what cannot be
// bound in place (a misaligned pointer, an output over an input) still goes through the arena.
TEST(GpuSession, DevicePointersAreUsedInPlace) {
  DLC_REQUIRE_GPU(driver);
  std::vector<float> w;
  auto prog = mainProgram(driver->device().smVersion(), &w);
  prog->outputs[0].firstStep = 0; // sum: written by vadd, read by reverse_scale
  prog->outputs[1].firstStep = 1; // y
  auto gp = load(prog);
  ASSERT_TRUE(gp);
  for (bool graphed : {true, false}) {
    SCOPED_TRACE(graphed ? "CUDA graph" : "step by step");
    GpuSessionOptions opts;
    opts.poison = true;
    opts.cudaGraph = graphed;
    auto s = session(gp, opts);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->directCandidates(), 4u);
    struct Set {
      std::vector<float> a, b;
      DeviceMemory da, db, dsum, dy;
    };
    Set sets[2];
    for (int k = 0; k < 2; ++k) {
      sets[k].a = randomFloats(kN, 61 + k);
      sets[k].b = randomFloats(kN, 71 + k);
      sets[k].da = deviceCopy(*driver, sets[k].a);
      sets[k].db = deviceCopy(*driver, sets[k].b);
      sets[k].dsum = deviceCopy(*driver, std::vector<float>(kN, 0.f));
      sets[k].dy = deviceCopy(*driver, std::vector<float>(kN, 0.f), 256);
    }
    // Two sets of pointers in turn: the first run captures, the others update the graph.
    for (int rep = 0; rep < 4; ++rep) {
      Set &set = sets[rep % 2];
      Status st =
          s->runDevice({set.da.get(), set.db.get()}, {set.dsum.get(), set.dy.get()}, s->stream());
      ASSERT_TRUE(st.isOk()) << st.message();
      ASSERT_TRUE(driver->check(driver->api().streamSynchronize(s->stream()), "sync").isOk());
      EXPECT_EQ(s->directTensors(), 4u);
      Expected2 e = hostResults(set.a, set.b, w);
      EXPECT_EQ(sameBits(download(*driver, set.dsum.get(), kN), e.sum, "sum"), "") << rep;
      EXPECT_EQ(sameBits(download(*driver, set.dy.get(), kN), e.y, "y"), "") << rep;
      // Nothing went through the arena: its output slots hold the poison (NaN bits).
      std::vector<float> slot = download(*driver, s->outputSlot(0), kN);
      EXPECT_EQ(bitsOf(slot[0]), 0xFFFFFFFFu) << rep;
      EXPECT_EQ(bitsOf(slot[kN - 1]), 0xFFFFFFFFu) << rep;
    }
    // y 4 bytes into its allocation: not 256-byte aligned, so copied out of the arena.
    Set &set = sets[0];
    ASSERT_TRUE(
        s->runDevice({set.da.get(), set.db.get()}, {set.dsum.get(), set.dy.get() + 4}).isOk());
    EXPECT_EQ(s->directTensors(), 3u);
    Expected2 e = hostResults(set.a, set.b, w);
    EXPECT_EQ(sameBits(download(*driver, set.dy.get() + 4, kN), e.y, "misaligned y"), "");
    // sum written over input a, which vadd reads: sum goes through the arena and lands last.
    DeviceMemory a2 = deviceCopy(*driver, set.a);
    ASSERT_TRUE(s->runDevice({a2.get(), set.db.get()}, {a2.get(), set.dy.get()}).isOk());
    EXPECT_EQ(s->directTensors(), 3u);
    EXPECT_EQ(sameBits(download(*driver, a2.get(), kN), e.sum, "sum over a"), "");
    EXPECT_EQ(sameBits(download(*driver, set.dy.get(), kN), e.y, "y beside it"), "");
    // Host tensors go through the arena slots again.
    EXPECT_EQ(checkRun(*s, w, 81), "");
    Status st = s->runDevice({set.da.get(), set.db.get()}, {set.dsum.get(), set.dy.get()});
    ASSERT_TRUE(st.isOk()) << st.message();
    EXPECT_EQ(sameBits(download(*driver, set.dy.get(), kN), e.y, "y after a host run"), "");
  }
}

TEST(GpuSession, WrongInputsAreRefusedByName) {
  DLC_REQUIRE_GPU(driver);
  auto gp = load(mainProgram(driver->device().smVersion()));
  ASSERT_TRUE(gp);
  auto s = session(gp);
  ASSERT_TRUE(s);
  auto in = inputsFor(randomFloats(kN, 1), randomFloats(kN, 2));
  in["b"] = Tensor::zeros(DType::kF16, {kN});
  auto out = s->run(in);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.status().message(), "input 'b': expected f32[32768], got f16[32768]");
  in.erase("b");
  EXPECT_EQ(s->run(in).status().message(), "missing input 'b' (f32[32768])");
}

TEST(GpuSession, HostStepBetweenKernels) {
  DLC_REQUIRE_GPU(driver);
  const int sm = driver->device().smVersion();
  // t = a + b (GPU); u = cumsum(t) (host, reference backend); y = 2u (GPU).
  ProgramBuilder b;
  BufferRef a = b.input("a", {kN});
  BufferRef x = b.input("b", {kN});
  BufferRef y = b.output("y", {kN});
  BufferRef t = b.arena(kN * 4), u = b.arena(kN * 4);
  b.module(modules(sm)[0], sm, {"vadd", "scale2"});
  b.launch(0, "vadd", kN / 256, 256, {a, x, t});
  HostStep h;
  h.graphText = R"(graph @host(%t: f32[32768]) -> (u: f32[32768]) {
  %axis = constant i64[] dense<[0]>
  %u = cumsum(%t, %axis) : f32[32768]
  return %u
})";
  h.inputs = {t};
  h.outputs = {u};
  h.origin = "cumsum_7";
  b.p.steps.push_back(h);
  b.launch(0, "scale2", kN / 256, 256, {u, y});
  auto gp = load(std::make_shared<Program>(std::move(b.p)));
  ASSERT_TRUE(gp);
  EXPECT_TRUE(gp->hasHostSteps());
  GpuSessionOptions opts;
  opts.poison = true;
  auto s = session(gp, opts);
  ASSERT_TRUE(s);
  for (uint32_t seed : {41u, 42u}) {
    auto av = randomFloats(kN, seed), bv = randomFloats(kN, seed + 1);
    auto out = s->run(inputsFor(av, bv));
    ASSERT_TRUE(out) << out.status().message();
    EXPECT_FALSE(s->usesCudaGraph()) << "programs with host steps are never captured";
    // The reference cumsum adds in double and rounds each output once.
    std::vector<float> want(kN);
    double acc = 0;
    for (int i = 0; i < kN; ++i) {
      acc += static_cast<double>(av[i] + bv[i]);
      want[i] = 2.0f * static_cast<float>(acc);
    }
    EXPECT_EQ(compare(out->front().tensor, want, "y"), "") << "seed " << seed;
  }
}

TEST(GpuSession, ProfileTimesEveryStepAndKeepsResults) {
  DLC_REQUIRE_GPU(driver);
  std::vector<float> w;
  auto gp = load(mainProgram(driver->device().smVersion(), &w));
  ASSERT_TRUE(gp);
  auto s = session(gp);
  ASSERT_TRUE(s);
  ASSERT_EQ(checkRun(*s, w, 51), ""); // stages inputs; the profile reruns on them
  auto ms = s->profileSteps(3);
  ASSERT_TRUE(ms) << ms.status().message();
  ASSERT_EQ(ms->size(), gp->program().steps.size());
  for (size_t i = 0; i < ms->size(); ++i) {
    EXPECT_GT((*ms)[i], 0.0) << "step " << i;
    EXPECT_LT((*ms)[i], 1000.0) << "step " << i;
  }
  // Profiling runs step by step on the same arena: the session still gives right answers,
  // and through the graph it captures afterwards.
  EXPECT_EQ(checkRun(*s, w, 52), "");
  EXPECT_TRUE(s->usesCudaGraph());
}

TEST(GpuProgram, ArchMismatchNamesBothArches) {
  DLC_REQUIRE_GPU(driver);
  const DeviceInfo &dev = driver->device();
  auto p = mainProgram(dev.smVersion());
  p->modules[1].arch = "sm_200";
  auto gp = GpuProgram::create(p);
  ASSERT_FALSE(gp);
  EXPECT_EQ(gp.status().message(),
            fmt::format("module 1 (kernels reverse_scale) holds a cubin for sm_200 and PTX for "
                        "sm_200, but the GPU is {} ({}): PTX runs only on its own arch or newer; "
                        "recompile for {} (--gpu-arch {})",
                        dev.name, dev.arch(), dev.arch(), dev.arch()));
  p->modules[1].ptx.clear();
  EXPECT_NE(GpuProgram::create(p).status().message().find("no PTX to JIT-compile"),
            std::string::npos);
}

TEST(GpuProgram, TooMuchSharedMemoryNamesTheKernel) {
  DLC_REQUIRE_GPU(driver);
  auto p = mainProgram(driver->device().smVersion());
  std::get<LaunchStep>(p->steps[1]).sharedBytes = 1u << 20;
  auto gp = GpuProgram::create(p);
  ASSERT_FALSE(gp);
  EXPECT_NE(gp.status().message().find("step 1 (kernel 'reverse_scale', from "
                                       "reverse_scale_node): needs 1048576 bytes of shared memory"),
            std::string::npos)
      << gp.status().message();
}

/// Runs a program whose second kernel writes to address 0, in a child process (a fault leaves
/// the context unusable for the rest of the process), and prints the error to stderr.
void runFaultingProgram(bool syncEachStep) {
  auto driver = CudaDriver::get();
  if (!driver)
    std::_Exit(3);
  const int sm = (*driver)->device().smVersion();
  ProgramBuilder b;
  BufferRef a = b.input("a", {kN});
  BufferRef y = b.output("y", {kN});
  b.module(modules(sm)[0], sm, {"vadd", "dlc_fault"});
  b.launch(0, "vadd", kN / 256, 256, {a, a, y});
  b.launch(0, "dlc_fault", 1, 1, {y});
  auto gp = GpuProgram::create(std::make_shared<Program>(std::move(b.p)));
  if (!gp)
    std::_Exit(4);
  GpuSessionOptions opts;
  opts.syncEachStep = syncEachStep;
  auto s = GpuSession::create(*gp, opts);
  if (!s)
    std::_Exit(5);
  auto out = (*s)->run({{"a", Tensor::zeros(DType::kF32, {kN})}});
  if (out)
    std::_Exit(6); // the fault went unnoticed
  std::fprintf(stderr, "error: %s\n", out.status().message().c_str());
  std::fflush(stderr);
  std::_Exit(0);
}

TEST(GpuSessionDeathTest, FaultingKernelIsNamed) {
  DLC_REQUIRE_GPU(driver);
  GTEST_FLAG_SET(death_test_style, "threadsafe"); // a fresh process, not a fork of this one
  EXPECT_EXIT(runFaultingProgram(true), ::testing::ExitedWithCode(0),
              "error: step 1 \\(kernel 'dlc_fault', from dlc_fault_node\\) failed: "
              "CUDA_ERROR_ILLEGAL_ADDRESS");
  // Without per-step synchronisation the error lists the kernels in flight.
  EXPECT_EXIT(runFaultingProgram(false), ::testing::ExitedWithCode(0),
              "a kernel failed: CUDA_ERROR_ILLEGAL_ADDRESS.*it is one of the 2 kernels in "
              "flight.*step 1 \\(kernel 'dlc_fault'");
}

} // namespace
} // namespace dlc::rt
