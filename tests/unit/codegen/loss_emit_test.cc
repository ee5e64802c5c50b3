// The loss family (codegen/loss.cc): NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss run
// on the host emulator against the reference backend: every reduction, weights,
// ignore_index, spatial dims, i32 and i64 labels, f16/f32/f64 scores, log_prob, more samples
// than the summing block has threads, and "mean" over samples that are all ignored (NaN).
#include <random>

#include "host_check.h"
#include "ir/eval/eval_util.h"

namespace dlc::codegen::testing {
namespace {

Tensor scores(DType t, const std::vector<int64_t> &shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  Tensor f = Tensor::zeros(DType::kF32, shape);
  for (int64_t i = 0; i < f.numElements(); ++i)
    f.mutableData<float>()[i] = u(rng);
  return eval::castTensor(f, t);
}

/// Labels in [0, classes), with every `every`-th one set to `ignore` (every = 0: none).
Tensor labels(DType t, const std::vector<int64_t> &shape, int64_t classes, int every = 0,
              int64_t ignore = 0) {
  Tensor l = Tensor::zeros(DType::kI64, shape);
  for (int64_t i = 0; i < l.numElements(); ++i)
    l.mutableData<int64_t>()[i] = every && i % every == 0 ? ignore : (i * 7 + 3) % classes;
  return eval::castTensor(l, t);
}

std::string graph(const std::string &sig, const std::string &node, const std::string &outs) {
  return fmt::format("graph @loss({}) -> ({}) {{\n  {}\n  return %{}\n}}", sig, outs, node,
                     outs.find("lp") != std::string::npos ? "y, %lp" : "y");
}

TEST(LossEmit, HostRunsMatchTheReference) {
  std::vector<HostCase> cases;
  cases.push_back(
      {graph("%x: f32[3,5], %t: i64[3]",
             "%y = negative_log_likelihood_loss(%x, %t) {reduction = \"none\"} : f32[3]", "y: ?"),
       {{"x", scores(DType::kF32, {3, 5}, 1)}, {"t", labels(DType::kI64, {3}, 5)}},
       1e-6});
  cases.push_back(
      {graph("%x: f32[2,4,3,2], %t: i32[2,3,2], %w: f32[4]",
             "%y = negative_log_likelihood_loss(%x, %t, %w) {ignore_index = 1} : f32[]", "y: ?"),
       {{"x", scores(DType::kF32, {2, 4, 3, 2}, 2)},
        {"t", labels(DType::kI32, {2, 3, 2}, 4, 3, 1)},
        {"w", scores(DType::kF32, {4}, 3)}},
       1e-6});
  cases.push_back(
      {graph("%x: f64[4,3,5], %t: i64[4,5]",
             "%y = negative_log_likelihood_loss(%x, %t) {reduction = \"sum\"} : f64[]", "y: ?"),
       {{"x", scores(DType::kF64, {4, 3, 5}, 4)}, {"t", labels(DType::kI64, {4, 5}, 3)}},
       1e-12});
  cases.push_back(
      {graph("%x: f32[4,6], %t: i64[4]",
             "%y, %lp = softmax_cross_entropy_loss(%x, %t) : f32[], f32[4,6]", "y: ?, lp: ?"),
       {{"x", scores(DType::kF32, {4, 6}, 5)}, {"t", labels(DType::kI64, {4}, 6)}},
       1e-6});
  cases.push_back(
      {graph("%x: f16[2,5,7], %t: i64[2,7], %w: f16[5]",
             "%y, %lp = softmax_cross_entropy_loss(%x, %t, %w) {ignore_index = -1, reduction = "
             "\"none\"} : f16[2,7], f16[2,5,7]",
             "y: ?, lp: ?"),
       {{"x", scores(DType::kF16, {2, 5, 7}, 6)},
        {"t", labels(DType::kI64, {2, 7}, 5, 4, -1)},
        {"w", scores(DType::kF16, {5}, 7)}},
       1e-2});
  // 600 samples: the summing block's threads take several each.
  cases.push_back(
      {graph("%x: f32[3,4,200], %t: i64[3,200]",
             "%y = softmax_cross_entropy_loss(%x, %t) {ignore_index = 2} : f32[]", "y: ?"),
       {{"x", scores(DType::kF32, {3, 4, 200}, 8)}, {"t", labels(DType::kI64, {3, 200}, 4, 5, 2)}},
       1e-6});
  // Every sample ignored: the mean is 0 / 0.
  cases.push_back(
      {graph("%x: f32[2,3], %t: i64[2]",
             "%y = softmax_cross_entropy_loss(%x, %t) {ignore_index = 0} : f32[]", "y: ?"),
       {{"x", scores(DType::kF32, {2, 3}, 9)}, {"t", labels(DType::kI64, {2}, 3, 1, 0)}},
       1e-6,
       {},
       false,
       /*nonFiniteExpected=*/true});
  expectHostRunsMatchReference(cases);
}

TEST(LossEmit, KernelsCompileForSm90) {
  auto g = parseInfer(graph("%x: f16[2,5,7], %t: i32[2,7], %w: f16[5]",
                            "%y, %lp = softmax_cross_entropy_loss(%x, %t, %w) : f16[], f16[2,5,7]",
                            "y: ?, lp: ?"));
  ASSERT_TRUE(g);
  KernelSet set;
  const std::string src = emitSource(wholeGraph(*g, "sce"), &set);
  ASSERT_EQ(set.kernels.size(), 2u); // the per-sample kernel and the sum
  ASSERT_EQ(set.scratchBytes.size(), 1u);
  EXPECT_EQ(set.scratchBytes[0], 2u * 14u * sizeof(double));
  expectCompiles(src, "loss");
}

} // namespace
} // namespace dlc::codegen::testing
