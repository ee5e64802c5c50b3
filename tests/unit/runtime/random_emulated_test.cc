// The GPU's random kernels (codegen/random.cc) and Dropout in training (expand-ops) draw what the
// reference backend draws: programs compiled with no CPU fallback, run on the host emulator, and
// compared with the reference element by element (draws and masks exactly, Dropout's scaled
// values within a rounding; normal draws within the last bits of the math library).
#include <gtest/gtest.h>

#include <random>

#include "ir/parser.h"
#include "unit/runtime/emulated_util.h"

namespace dlc {
namespace {

void expectSameDraws(const std::string &text, const std::map<std::string, Tensor> &feed,
                     Tolerance tol) {
  auto g = parseGraph(text);
  ASSERT_TRUE(g) << g.status().message();
  auto model = Model::fromGraph(std::move(*g), {});
  ASSERT_TRUE(model) << model.status().message();
  testing::expectEmulatedMatches(*model, feed, tol);
}

Tensor probabilities(int64_t n) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0, 1);
  Tensor t = Tensor::zeros(DType::kF32, {n});
  for (int64_t i = 0; i < n; ++i)
    t.mutableData<float>()[i] = u(rng);
  return t;
}

TEST(RandomEmulated, UniformBernoulliAndDropoutDrawTheReferencesNumbers) {
  const char *text = R"(
graph @g(%p: f32[300]) -> (u: f32[300], ud: f64[300], b: f32[300], y: f32[300], m: bool[300]) {
  %u = random_uniform_like(%p) {high = 3.0, low = -1.0, seed = 7.0} : ?
  %ud = random_uniform_like(%p) {dtype = f64, seed = 1.5} : ?
  %b = bernoulli(%p) {seed = 2.0} : ?
  %r = constant f32[] dense<[0.25]>
  %t = constant bool[] dense<[true]>
  %y, %m = dropout(%p, %r, %t) {seed = 11} : ?, ?
  return %u, %ud, %b, %y, %m
})";
  // The mask and the draws exactly; Dropout's kept values within an f32 rounding (the
  // reference scales in double, the GPU in float).
  expectSameDraws(text, {{"p", probabilities(300)}}, {2.5e-7, 0});
}

TEST(RandomEmulated, NormalDrawsMatchWithinRounding) {
  const char *text = R"(
graph @g() -> (n: f32[5,41]) {
  %n = random_normal() {mean = 1.0, scale = 2.0, seed = 3.0, shape = [5, 41]} : ?
  return %n
})";
  expectSameDraws(text, {}, {1e-5, 1e-5});
}

} // namespace
} // namespace dlc
