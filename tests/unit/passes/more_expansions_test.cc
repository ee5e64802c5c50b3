// expand-ops' rewrites of passes/util/more_expansions.h: MeanVarianceNormalization, the
// training optimizers (Adagrad, Adam, Momentum standard and nesterov, several tensors, the
// first step T = 0 and a later one), ReverseSequence over both axis orders, DFT (real and
// complex, padded, truncated, one-sided, inverse, any signal axis), STFT, GatherND, Det and
// MaxUnpool of MaxPool's own indices compute on the reference backend what the ops compute, and
// none of the ops stays.
#include <fmt/format.h>

#include "numerics_util.h"

namespace dlc {
namespace {

using testing::after;
using testing::countOps;
using testing::parsed;

/// Expands `text`, checks that `op` is gone and the results match on random inputs (with
/// `given` overriding some).
void expectExpandedMatches(const std::string &text, Op op,
                           const std::map<std::string, Tensor> &given = {}, double tol = 2e-5) {
  SCOPED_TRACE(text);
  std::unique_ptr<Graph> g = parsed(text);
  ASSERT_TRUE(g);
  std::unique_ptr<Graph> typed = after(*g, "infer-shapes");
  std::ostringstream log;
  std::unique_ptr<Graph> x = after(*typed, "expand-ops,infer-shapes", &log);
  ASSERT_TRUE(x);
  EXPECT_EQ(countOps(*x, op), 0) << log.str();
  testing::expectSameResults(*typed, *x, tol, 3, given);
}

TEST(MoreExpansions, MeanVarianceNormalization) {
  expectExpandedMatches(R"(graph @g(%x: f32[2,3,4,5]) -> (y: ?, z: ?) {
  %y = mean_variance_normalization(%x) : ?
  %z = mean_variance_normalization(%x) {axes = [1, -1]} : ?
  return %y, %z
})",
                        Op::kMeanVarianceNormalization);
}

TEST(MoreExpansions, OptimizersAtTheFirstStepAndLater) {
  const std::string ops[] = {
      "adagrad(%r, %t, %x1, %x2, %g1, %g2, %h1, %h2) {decay_factor = 0.1, epsilon = 1e-3, "
      "norm_coefficient = 0.01} : ?, ?, ?, ?",
      "adam(%r, %t, %x1, %x2, %g1, %g2, %h1, %h2, %v1, %v2) {alpha = 0.9, beta = 0.8, epsilon = "
      "1e-3, norm_coefficient = 0.01, norm_coefficient_post = 0.05} : ?, ?, ?, ?, ?, ?",
      "momentum(%r, %t, %x1, %x2, %g1, %g2, %h1, %h2) {alpha = 0.9, beta = 0.3, mode = "
      "\"standard\", norm_coefficient = 0.01} : ?, ?, ?, ?",
      "momentum(%r, %t, %x1, %x2, %g1, %g2, %h1, %h2) {alpha = 0.9, beta = 0.3, mode = "
      "\"nesterov\", norm_coefficient = 0.01} : ?, ?, ?, ?"};
  for (const std::string &call : ops) {
    const bool adam = call.rfind("adam", 0) == 0;
    const std::string outs = adam ? "%o1, %o2, %o3, %o4, %o5, %o6" : "%o1, %o2, %o3, %o4";
    const std::string text = fmt::format(
        R"(graph @g(%r: f32[], %t: i64[], %x1: f32[3,4], %x2: f32[5], %g1: f32[3,4], %g2: f32[5], %h1: f32[3,4], %h2: f32[5]{0}) -> ({1}) {{
  {2} = {3}
  return {2}
}})",
        adam ? ", %v1: f32[3,4], %v2: f32[5]" : "",
        adam ? "o1: ?, o2: ?, o3: ?, o4: ?, o5: ?, o6: ?" : "o1: ?, o2: ?, o3: ?, o4: ?", outs,
        call);
    // Second moments (H; Adam's V) must not be negative: Adam's H is its last pair.
    for (int64_t step : {0, 3}) {
      std::map<std::string, Tensor> given = {
          {"r", Tensor::fromVector<float>(DType::kF32, {}, {0.1f})},
          {"t", Tensor::fromVector<int64_t>(DType::kI64, {}, {step})},
          {adam ? "v1" : "h1",
           Tensor::fromVector<float>(DType::kF32, {3, 4}, std::vector<float>(12, 0.7f))},
          {adam ? "v2" : "h2",
           Tensor::fromVector<float>(DType::kF32, {5}, std::vector<float>(5, 0.2f))}};
      expectExpandedMatches(text,
                            adam             ? Op::kAdam
                            : call[0] == 'a' ? Op::kAdagrad
                                             : Op::kMomentum,
                            given);
    }
  }
}

TEST(MoreExpansions, ReverseSequenceOverBothAxisOrders) {
  const Tensor lens = Tensor::fromVector<int64_t>(DType::kI64, {3}, {4, 0, 2});
  expectExpandedMatches(R"(graph @g(%x: f32[4,3,2], %l: i64[3]) -> (y: ?) {
  %y = reverse_sequence(%x, %l) {batch_axis = 1, time_axis = 0} : ?
  return %y
})",
                        Op::kReverseSequence, {{"l", lens}});
  expectExpandedMatches(R"(graph @g(%x: f32[3,4], %l: i64[3]) -> (y: ?) {
  %y = reverse_sequence(%x, %l) {batch_axis = 0, time_axis = 1} : ?
  return %y
})",
                        Op::kReverseSequence, {{"l", lens}});
}

TEST(MoreExpansions, DftRealAndComplexPaddedTruncatedOnesidedInverse) {
  struct Case {
    const char *x;
    int64_t axis, length; // length 0: none
    const char *attrs;
  };
  const Case cases[] = {
      {"f32[2,10,3,1]", 1, 0, ""},              // real, a middle axis
      {"f32[2,10,3,2]", 2, 0, "{inverse = 1}"}, // complex, the last signal axis
      {"f32[4,7,2]", -2, 12, "{onesided = 1}"}, // zero-padded to 12, bins 0..6
      {"f32[3,9,1]", 1, 6, "{inverse = 1}"},    // truncated to 6
      {"f32[5,8,2]", 0, 0, "{onesided = 1}"},   // the first axis
  };
  for (const Case &c : cases) {
    const std::string len =
        c.length ? fmt::format("  %len = constant i64[] dense<[{}]>\n", c.length) : "";
    expectExpandedMatches(fmt::format(R"(graph @g(%x: {0}) -> (y: ?) {{
  %axis = constant i64[] dense<[{1}]>
{2}  %y = dft(%x, {3}, %axis) {4} : ?
  return %y
}})",
                                      c.x, c.axis, len, c.length ? "%len" : "_", c.attrs),
                          Op::kDFT, {}, 1e-4);
  }
}

TEST(MoreExpansions, StftWithAndWithoutWindow) {
  // A real signal with a window (its length the frame length), one-sided.
  expectExpandedMatches(R"(graph @g(%x: f32[2,40,1], %w: f32[8]) -> (y: ?) {
  %step = constant i64[] dense<[5]>
  %y = stft(%x, %step, %w) : ?
  return %y
})",
                        Op::kSTFT, {}, 1e-4);
  // A complex signal, no window, the frame length given, both sides.
  expectExpandedMatches(R"(graph @g(%x: f32[1,30,2]) -> (y: ?) {
  %step = constant i64[] dense<[4]>
  %len = constant i64[] dense<[10]>
  %y = stft(%x, %step, _, %len) {onesided = 0} : ?
  return %y
})",
                        Op::kSTFT, {}, 1e-4);
}

TEST(MoreExpansions, GatherNdWithBatchesAndNegativeIndices) {
  // Whole tuples into [3, 4, 5] and partial ones (slices of the last axis), negative entries.
  expectExpandedMatches(
      R"(graph @g(%x: f32[3,4,5], %i: i64[2,2,2]) -> (y: ?) {
  %y = gather_nd(%x, %i) : ?
  return %y
})",
      Op::kGatherND,
      {{"i", Tensor::fromVector<int64_t>(DType::kI64, {2, 2, 2}, {0, 1, 2, -1, -3, 3, 1, 0})}});
  // batch_dims = 1: each batch's tuples index its own [4, 5].
  expectExpandedMatches(
      R"(graph @g(%x: f32[3,4,5], %i: i64[3,2,2]) -> (y: ?) {
  %y = gather_nd(%x, %i) {batch_dims = 1} : ?
  return %y
})",
      Op::kGatherND,
      {{"i", Tensor::fromVector<int64_t>(DType::kI64, {3, 2, 2},
                                         {0, 1, 3, 4, 2, -1, 1, 1, 0, 0, 3, 2})}});
}

TEST(MoreExpansions, DetUpToThreeByThree) {
  for (const char *x : {"f32[1,1]", "f32[4,2,2]", "f32[2,3,3,3]"})
    expectExpandedMatches(fmt::format(R"(graph @g(%x: {}) -> (y: ?) {{
  %y = det(%x) : ?
  return %y
}})",
                                      x),
                          Op::kDet, {}, 1e-5);
  // 4 x 4 needs a factorization: kept, with the reason.
  std::unique_ptr<Graph> g = parsed(R"(graph @g(%x: f32[4,4]) -> (y: ?) {
  %y = det(%x) : ?
  return %y
})");
  ASSERT_TRUE(g);
  std::ostringstream log;
  EXPECT_EQ(countOps(*after(*g, "infer-shapes,expand-ops", &log), Op::kDet), 1);
  EXPECT_NE(log.str().find("its matrices are 4 x 4"), std::string::npos) << log.str();
}

TEST(MoreExpansions, RoiAlignAveragesBilinearSamples) {
  // Boxes inside, across the border and past it (samples outside [-1, size] count 0), on
  // both images; both coordinate modes; grids of 2 and 3.
  const Tensor rois = Tensor::fromVector<float>(DType::kF32, {4, 4},
                                                {0.5f, 1.0f, 6.0f, 7.5f, -3.0f, -2.0f, 4.0f, 3.0f,
                                                 8.0f, 9.0f, 14.0f, 12.0f, 2.2f, 3.3f, 2.9f, 3.6f});
  const Tensor batch = Tensor::fromVector<int64_t>(DType::kI64, {4}, {0, 1, 1, 0});
  for (const char *attrs :
       {"{output_height = 3, output_width = 2, sampling_ratio = 2}",
        "{output_height = 2, output_width = 4, sampling_ratio = 3, spatial_scale = 0.5, "
        "coordinate_transformation_mode = \"output_half_pixel\"}"})
    expectExpandedMatches(
        fmt::format(R"(graph @g(%x: f32[2,3,10,9], %r: f32[4,4], %b: i64[4]) -> (y: ?) {{
  %y = roi_align(%x, %r, %b) {} : ?
  return %y
}})",
                    attrs),
        Op::kRoiAlign, {{"r", rois}, {"b", batch}}, 1e-5);
}

TEST(MoreExpansions, MaxUnpoolOfMaxPoolsIndices) {
  expectExpandedMatches(R"(graph @g(%x: f32[2,3,6,4]) -> (y: ?) {
  %p, %i = max_pool(%x) {kernel_shape = [2, 2], strides = [2, 2]} : ?, ?
  %y = max_unpool(%p, %i) {kernel_shape = [2, 2], strides = [2, 2]} : ?
  return %y
})",
                        Op::kMaxUnpool);
}

} // namespace
} // namespace dlc
