// Helpers for the GPU runtime tests: hand-written Programs, NVRTC-compiled kernels, and the
// skip for machines without a GPU.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "codegen/nvrtc.h"
#include "ir/parser.h"
#include "runtime/cuda_driver.h"
#include "runtime/jit/model.h"
#include "runtime/jit/verify.h"
#include "runtime/program.h"
#include "runtime/tensor_compare.h"

namespace dlc::rt::testing {

/// The process's driver, or a skip: `GTEST_SKIP() << "no CUDA device: " << why`.
#define DLC_REQUIRE_GPU(driverVar)                                                                 \
  auto driverVar##_expected = ::dlc::rt::CudaDriver::get();                                        \
  if (!driverVar##_expected)                                                                       \
    GTEST_SKIP() << "no CUDA device: " << driverVar##_expected.status().message();                 \
  ::dlc::rt::CudaDriver *driverVar = *driverVar##_expected;                                        \
  (void)driverVar

/// Builds a Program by hand: buffers are laid out in order, 256-byte aligned.
class ProgramBuilder {
public:
  static uint64_t align(uint64_t v) { return (v + 255) / 256 * 256; }

  BufferRef arena(uint64_t bytes) {
    BufferRef r{Space::kArena, p.arenaBytes, bytes};
    p.arenaBytes += align(bytes);
    return r;
  }
  BufferRef constant(const std::vector<float> &values) {
    BufferRef r{Space::kConstants, p.constants.size(), values.size() * sizeof(float)};
    p.constants.resize(align(p.constants.size() + r.bytes));
    std::memcpy(p.constants.data() + r.offset, values.data(), r.bytes);
    return r;
  }
  BufferRef input(const std::string &name, std::vector<int64_t> shape, DType dtype = DType::kF32) {
    return tensor(p.inputs, name, std::move(shape), dtype);
  }
  BufferRef output(const std::string &name, std::vector<int64_t> shape, DType dtype = DType::kF32) {
    return tensor(p.outputs, name, std::move(shape), dtype);
  }
  /// Adds a module; returns its index.
  uint32_t module(const codegen::CompiledModule &m, int sm, std::vector<std::string> kernels) {
    Module mod;
    mod.arch = "sm_" + std::to_string(sm);
    mod.cubin = m.cubin;
    mod.ptx = m.ptx;
    mod.kernels = std::move(kernels);
    p.modules.push_back(std::move(mod));
    return static_cast<uint32_t>(p.modules.size() - 1);
  }
  void launch(uint32_t module, const std::string &kernel, uint32_t grid, uint32_t block,
              std::vector<BufferRef> args, uint32_t shared = 0) {
    LaunchStep s;
    s.module = module;
    s.kernel = kernel;
    s.grid[0] = grid;
    s.block[0] = block;
    s.sharedBytes = shared;
    s.args = std::move(args);
    s.origin = kernel + "_node";
    p.steps.push_back(std::move(s));
  }

  Program p;

private:
  BufferRef tensor(std::vector<ProgramTensor> &list, const std::string &name,
                   std::vector<int64_t> shape, DType dtype) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    BufferRef r = arena(static_cast<uint64_t>(n * dtypeSize(dtype)));
    list.push_back({name, dtype, std::move(shape), r});
    return r;
  }
};

/// A tensor of type `t` with uniform values in [-1, 1] (drawn in float, then cast).
inline Tensor randomTensor(DType t, std::vector<int64_t> shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor f = Tensor::zeros(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < f.numElements(); ++i)
    f.mutableData<float>()[i] = dist(rng);
  return f.castTo(t);
}

inline std::vector<float> randomFloats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

/// The text IR literal `dense<[...]>` of randomFloats(n, seed): weights for test graphs.
inline std::string denseText(size_t n, uint32_t seed) {
  std::string s;
  for (float v : randomFloats(n, seed))
    s += fmt::format("{}{}", s.empty() ? "" : ", ", v);
  return "dense<[" + s + "]>";
}

inline uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

/// The model of graph `text`.
inline Expected<Model> modelOf(const std::string &text) {
  auto g = parseGraph(text);
  if (!g)
    return g.status();
  return Model::fromGraph(std::move(*g));
}

/// Options for a session on the GPU alone (no CPU fallback), its arena poisoned before each
/// run when asked.
inline SessionOptions gpuAlone(bool poison = false) {
  SessionOptions so;
  so.backend = Backend::kGpu;
  so.cpuFallback = false;
  so.poison = poison;
  return so;
}

/// `model`'s outputs for `feed` on the reference backend.
inline Expected<std::map<std::string, Tensor>>
referenceRun(const Model &model, const std::map<std::string, Tensor> &feed) {
  SessionOptions cpu;
  cpu.backend = Backend::kCpu;
  DLC_ASSIGN_OR_RETURN(Session session, model.createSession(cpu));
  return session.run(feed);
}

/// `model`'s outputs for `feed` on the GPU alone, its arena poisoned before the run.
inline Expected<std::map<std::string, Tensor>>
gpuAloneRun(const Model &model, const std::map<std::string, Tensor> &feed) {
  DLC_ASSIGN_OR_RETURN(Session session, model.createSession(gpuAlone(/*poison=*/true)));
  return session.run(feed);
}

/// Expects `got` to match the reference result `want` at their dtype's tolerance (scaled by
/// want's largest magnitude, as verifyGpuAgainstReference compares).
inline void expectMatches(const Tensor &got, const Tensor &want) {
  double maxAbs = 0;
  for (int64_t i = 0; i < want.numElements(); ++i)
    maxAbs = std::max(maxAbs, std::abs(want.elementAsDouble(i)));
  const Comparison cmp = compareTensors(got, want, verifyTolerance(want.dtype(), maxAbs));
  EXPECT_TRUE(cmp.match) << cmp.str(got, want);
}

/// Compiles graph `text` (one input, %x), runs it on the GPU alone (no CPU fallback) and on
/// the reference backend; expects every value to match at its dtype's tolerance (integers
/// exactly) and at least `values` of them compared (a fused graph has fewer).
inline void expectGpuMatchesReference(const std::string &text, const Tensor &x, int values = 2,
                                      SessionOptions so = {}) {
  auto model = modelOf(text);
  ASSERT_TRUE(model) << model.status().message() << "\n" << text;
  so.backend = Backend::kGpu;
  so.cpuFallback = false;
  auto report = verifyGpuAgainstReference(*model, {{"x", x}}, so);
  ASSERT_TRUE(report) << report.status().message();
  EXPECT_TRUE(report->divergence.empty()) << report->divergence;
  EXPECT_GE(report->compared, values);
}

/// A 2-D convolution case of the channels-last tests: N x H x W x C in, M out, a K x K window.
struct ConvCase {
  int64_t n, h, w, c, m, k, stride, pad, dilation;
  /// The output's NHWC type text: "[N,OH,OW,M]".
  std::string outShape() const {
    const int64_t eff = (k - 1) * dilation + 1;
    return fmt::format("[{},{},{},{}]", n, (h + 2 * pad - eff) / stride + 1,
                       (w + 2 * pad - eff) / stride + 1, m);
  }
};

} // namespace dlc::rt::testing
