// What the runtime tests that run GPU programs on the host emulator share
// (tests/unit/codegen/host_emulator.h): the compile options of a GPU-only program the emulator
// can run, and the comparison of its outputs with the reference backend's.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "ir/parser.h"
#include "runtime/jit/compile.h"
#include "runtime/jit/gpu_jit.h"
#include "runtime/jit/model.h"
#include "runtime/tensor_compare.h"
#include "unit/codegen/host_emulator.h"

namespace dlc::testing {

/// `dense<[...]>` of n values uniform in [-range, range): weights for text-IR test graphs.
inline std::string dense(int64_t n, unsigned seed, float range) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-range, range);
  std::string s;
  for (int64_t i = 0; i < n; ++i)
    s += fmt::format("{}{:.4g}", i ? ", " : "", u(rng));
  return "dense<[" + s + "]>";
}

/// A float32 tensor of `shape` with values uniform in [-1, 1), drawn with `seed`.
inline Tensor uniform(std::vector<int64_t> shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Tensor t = Tensor::zeros(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.mutableData<float>()[i] = u(rng);
  return t;
}

/// The same in float16 (drawn in float32 with `seed`).
inline Tensor halfUniform(std::vector<int64_t> shape, unsigned seed) {
  return uniform(std::move(shape), seed).castTo(DType::kF16);
}

/// The GPU alone (no CPU fallback), kernels emitted but not compiled by NVRTC, and plain sm_90
/// code (the emulator has no wgmma).
inline jit::JitOptions emulatedJitOptions() {
  jit::JitOptions jo;
  jo.strictPlacement = true;
  jo.lower.compile = false;
  jo.lower.emit.sm90a = false;
  return jo;
}

/// Expects `got` (outputs in the model's order) to equal the reference backend's outputs for
/// `feed` within `tol`, by name and value.
inline void expectReferenceOutputs(const Model &model, const std::map<std::string, Tensor> &feed,
                                   const std::vector<NamedTensor> &got, Tolerance tol) {
  SessionOptions cpu;
  cpu.backend = Backend::kCpu;
  auto session = model.createSession(cpu);
  ASSERT_TRUE(session) << session.status().message();
  auto want = session->runOrdered(feed);
  ASSERT_TRUE(want) << want.status().message();
  ASSERT_EQ(got.size(), want->size());
  for (size_t i = 0; i < want->size(); ++i) {
    const Tensor &g = got[i].tensor, &w = (*want)[i].tensor;
    EXPECT_EQ(got[i].name, (*want)[i].name);
    const Comparison c = compareTensors(g, w, tol);
    EXPECT_TRUE(c.match) << (*want)[i].name << ": " << c.str(g, w);
  }
}

/// Runs `model`'s GPU program (no CPU fallback, no host step) on the host emulator and expects
/// the reference backend's outputs within `tol`; `launches` gets the program's kernel
/// launches, `compiled` the kernels its modules hold (identical ones compiled once);
/// `precision` as `--precision` gives it (fp16, bf16; empty: none).
/// expectEmulatedMatches with the compile options `jo` (emulatedJitOptions() and more).
inline void expectEmulatedMatchesWith(const Model &model, const std::map<std::string, Tensor> &feed,
                                      Tolerance tol, const jit::JitOptions &jo,
                                      int *launches = nullptr, int *compiled = nullptr) {
  auto dims = bindInputDims(model.graph(), feed);
  ASSERT_TRUE(dims) << dims.status().message();
  auto program = jit::compileForGpu(model.graph(), *dims, jo);
  ASSERT_TRUE(program) << program.status().message();
  if (launches)
    *launches = 0;
  if (compiled) {
    *compiled = 0;
    for (const rt::Module &mod : program->modules)
      *compiled += static_cast<int>(mod.kernels.size());
  }
  for (const rt::Step &s : program->steps) {
    EXPECT_FALSE(std::holds_alternative<rt::HostStep>(s)) << "a host step in a GPU-only program";
    if (launches && std::holds_alternative<rt::LaunchStep>(s))
      ++*launches;
  }
  auto got = codegen::testing::runProgramOnHost(*program, feed);
  ASSERT_TRUE(got) << got.status().message();
  expectReferenceOutputs(model, feed, *got, tol);
}

inline void expectEmulatedMatches(const Model &model, const std::map<std::string, Tensor> &feed,
                                  Tolerance tol, int *launches = nullptr, int *compiled = nullptr,
                                  const std::string &precision = "") {
  jit::JitOptions jo = emulatedJitOptions();
  jo.precision = precision;
  expectEmulatedMatchesWith(model, feed, tol, jo, launches, compiled);
}

/// expectEmulatedMatches on the model of graph `text` (the dlc text IR), compiled with `jo`.
inline void expectEmulatedMatches(const std::string &text,
                                  const std::map<std::string, Tensor> &feed, Tolerance tol,
                                  const jit::JitOptions &jo = emulatedJitOptions()) {
  auto g = parseGraph(text, "test.dlc");
  ASSERT_TRUE(g) << g.status().message() << "\n" << text;
  auto model = Model::fromGraph(std::move(*g));
  ASSERT_TRUE(model) << model.status().message();
  expectEmulatedMatchesWith(*model, feed, tol, jo);
}

} // namespace dlc::testing
