// Bundled models compiled for the GPU with no CPU fallback and run on the host emulator
// (tests/unit/codegen/host_emulator.h) against the reference backend, so that the GPU path of
// a whole model is checked on a machine without a GPU: tiny_unet (issue 14's segmentation-style
// model: ConvTranspose, and Resize to sizes computed from Shape at run time) at sizes that are
// not multiples of its strides, and tiny_cnn.
#include <gtest/gtest.h>

#include <random>

#include "runtime/jit/compile.h"
#include "runtime/jit/gpu_jit.h"
#include "runtime/jit/model.h"
#include "runtime/tensor_compare.h"
#include "unit/codegen/host_emulator.h"

namespace dlc {
namespace {

Tensor uniform(std::vector<int64_t> shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Tensor t = Tensor::zeros(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.mutableData<float>()[i] = u(rng);
  return t;
}

void expectEmulatedMatchesReference(const std::string &model, const Tensor &x) {
  SCOPED_TRACE(model);
  auto m = Model::load(std::string(DLC_SOURCE_DIR) + "/models/" + model);
  ASSERT_TRUE(m) << m.status().message();
  const std::map<std::string, Tensor> feed = {{"x", x}};
  auto dims = bindInputDims(m->graph(), feed);
  ASSERT_TRUE(dims) << dims.status().message();
  jit::JitOptions jo;
  jo.strictPlacement = true; // the GPU alone
  jo.lower.compile = false;
  jo.lower.emit.sm90a = false;
  auto program = jit::compileForGpu(m->graph(), *dims, jo);
  ASSERT_TRUE(program) << program.status().message();
  for (const rt::Step &s : program->steps)
    EXPECT_FALSE(std::holds_alternative<rt::HostStep>(s)) << "a host step in a GPU-only program";
  auto got = codegen::testing::runProgramOnHost(*program, feed);
  ASSERT_TRUE(got) << got.status().message();
  SessionOptions cpu;
  cpu.backend = Backend::kCpu;
  auto session = m->createSession(cpu);
  ASSERT_TRUE(session) << session.status().message();
  auto want = session->runOrdered(feed);
  ASSERT_TRUE(want) << want.status().message();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < want->size(); ++i) {
    const Tensor &g = (*got)[i].tensor, &w = (*want)[i].tensor;
    const Comparison c = compareTensors(g, w, {1e-4, 1e-5});
    EXPECT_TRUE(c.match) << (*want)[i].name << ": " << c.str(g, w);
  }
}

TEST(ModelsEmulated, TinyUnetMatchesTheReference) {
  expectEmulatedMatchesReference("tiny_unet.onnx", uniform({2, 3, 13, 11}, 1));
  expectEmulatedMatchesReference("tiny_unet.onnx", uniform({1, 3, 16, 8}, 2));
}

TEST(ModelsEmulated, TinyCnnMatchesTheReference) {
  expectEmulatedMatchesReference("tiny_cnn.onnx", uniform({2, 3, 32, 32}, 3));
}

} // namespace
} // namespace dlc
