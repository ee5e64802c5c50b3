// A GELU with a 16-bit result runs dlc_gelu16 (codegen/cuda_prelude.cc: Phi from one exp2 of
// a fitted polynomial, in float) instead of erf's form; on every finite f16 input below 60 in
// magnitude it is within one unit of GELU computed in double and rounded to f16, and almost
// every result is that rounding exactly (the host's model of it: 102 of 42,752 differ).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "gpu_test_util.h"

namespace dlc {
namespace {

using rt::testing::gpuAloneRun;
using rt::testing::modelOf;

/// f16 bits in the order of the values they encode (-0 and +0 both 0).
int ordinal(uint16_t h) { return (h & 0x8000) ? -static_cast<int>(h & 0x7fff) : h; }

TEST(Gelu16, EveryF16InputWithinOneUnit) {
  DLC_REQUIRE_GPU(driver);
  std::vector<uint16_t> in;
  for (uint32_t b = 0; b < 65536; ++b) {
    const float x = halfToFloat(static_cast<uint16_t>(b));
    if (std::isfinite(x) && std::fabs(x) < 60.0f)
      in.push_back(static_cast<uint16_t>(b));
  }
  const auto n = static_cast<int64_t>(in.size());
  Tensor x = Tensor::zeros(DType::kF16, {n});
  std::memcpy(x.mutableRaw(), in.data(), in.size() * 2);
  auto model = modelOf(fmt::format(
      "graph @g(%x: f16[{0}]) -> (y: f16[{0}]) {{\n  %y = gelu(%x) : f16[{0}]\n  return %y\n}}",
      n));
  ASSERT_TRUE(model) << model.status().message();
  auto out = gpuAloneRun(*model, {{"x", x}});
  ASSERT_TRUE(out) << out.status().message();
  const auto *y = static_cast<const uint16_t *>(out->at("y").raw());
  int64_t same = 0;
  int worst = 0, reported = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = halfToFloat(in[static_cast<size_t>(i)]);
    const double gelu = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    const uint16_t want = floatToHalf(static_cast<float>(gelu));
    const int d = std::abs(ordinal(y[i]) - ordinal(want));
    same += d == 0;
    worst = std::max(worst, d);
    if (d > 1 && reported++ < 8)
      ADD_FAILURE() << "x = " << v << ": got f16 bits " << y[i] << ", want " << want << " (" << d
                    << " units)";
  }
  EXPECT_LE(worst, 1);
  EXPECT_GE(same, n - n / 100) << "of " << n;
}

TEST(Gelu16, Int8QuantizedGeluWithinOneLevel) {
  // A float32 GELU read only by an int8 quantization (BERT int8's FFN up-projection) runs
  // dlc_gelu16 in fast-requantize's form, a multiply by RN(1/s) and a scale of 1: against GELU
  // in double divided exactly, every level within one step, almost all equal.
  DLC_REQUIRE_GPU(driver);
  constexpr int64_t n = 1 << 16;
  constexpr double s = 0.0137;
  constexpr int zp = -20;
  Tensor x = Tensor::zeros(DType::kF32, {n});
  for (int64_t i = 0; i < n; ++i)
    x.mutableData<float>()[i] = -6.0f + 8.0f * static_cast<float>(i) / static_cast<float>(n);
  auto model = modelOf(fmt::format(R"(graph @g(%x: f32[{0}]) -> (y: i8[{0}]) {{
  %g = gelu(%x) : f32[{0}]
  %s = constant f32[] dense<[{1}]>
  %z = constant i8[] dense<[{2}]>
  %y = quantize_linear(%g, %s, %z) : i8[{0}]
  return %y
}})",
                                   n, s, zp));
  ASSERT_TRUE(model) << model.status().message();
  auto out = gpuAloneRun(*model, {{"x", x}});
  ASSERT_TRUE(out) << out.status().message();
  const auto *y = static_cast<const int8_t *>(out->at("y").raw());
  const float sf = static_cast<float>(s);
  int64_t same = 0, worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = x.data<float>()[i];
    const double gelu = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    const double level = std::clamp(std::nearbyint(gelu / sf) + zp, -128.0, 127.0);
    const auto d = static_cast<int64_t>(std::fabs(y[i] - level));
    same += d == 0;
    worst = std::max(worst, d);
  }
  EXPECT_LE(worst, 1);
  EXPECT_GE(same, n - n / 100) << "of " << n;
}

} // namespace
} // namespace dlc
