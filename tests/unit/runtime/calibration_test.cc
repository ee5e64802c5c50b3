// Calibration: the range methods against hand-computed values, the calibrator on a small
// graph, range tables (JSON round trip, the graph hash that keys them).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "runtime/jit/calibration.h"
#include "runtime/jit/range_methods.h"
#include "runtime_test_util.h"

namespace dlc {
namespace {

using testing::f32Tensor;
using testing::inferredGraph;

RangeMethod method(const std::string &text) {
  auto m = parseRangeMethod(text);
  EXPECT_TRUE(m) << m.status().message();
  return m ? *m : RangeMethod{};
}

std::vector<float> iota(int n, float start = 0) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = start + static_cast<float>(i);
  return v;
}

TEST(RangeMethods, ParsesTheThreeMethods) {
  EXPECT_EQ(method("minmax").kind, RangeMethodKind::kMinMax);
  EXPECT_EQ(method("entropy").kind, RangeMethodKind::kEntropy);
  RangeMethod p = method("percentile=99.9");
  EXPECT_EQ(p.kind, RangeMethodKind::kPercentile);
  EXPECT_DOUBLE_EQ(p.percentile, 99.9);
  EXPECT_EQ(p.str(), "percentile=99.9");
  EXPECT_EQ(parseRangeMethod("max").status().message(),
            "--method max: expected minmax, percentile=P (e.g. percentile=99.99) or entropy");
  EXPECT_EQ(parseRangeMethod("percentile=0").status().message(),
            "--method percentile=0: the percentile must be a number in (0, 100], e.g. "
            "percentile=99.99");
  EXPECT_FALSE(parseRangeMethod("percentile=101"));
  EXPECT_FALSE(parseRangeMethod("percentile=9x"));
}

TEST(RangeMethods, MinMaxOverSeveralTensors) {
  RangeCollector c(method("minmax"));
  c.add(f32Tensor({3}, {1, -2, 3}));
  c.add(f32Tensor({2}, {0.5f, 7}));
  c.add(f32Tensor({1, 1}, {-4}));
  ASSERT_TRUE(c.range());
  EXPECT_EQ(*c.range(), (ValueRange{-4, 7}));
  EXPECT_EQ(c.count(), 6);
  EXPECT_EQ(c.nonFinite(), 0);
}

TEST(RangeMethods, NaNAndInfAreSkippedAndCounted) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const char *m : {"minmax", "percentile=100", "entropy"}) {
    RangeCollector c(method(m));
    c.add(f32Tensor({5}, {nan, 2, -inf, -1, inf}));
    ASSERT_TRUE(c.range()) << m;
    EXPECT_EQ(c.count(), 2) << m;
    EXPECT_EQ(c.nonFinite(), 3) << m;
    EXPECT_LE(c.range()->hi, 2.0f) << m;
    EXPECT_GE(c.range()->lo, -2.0f) << m;
  }
  RangeCollector none(method("minmax"));
  none.add(f32Tensor({2}, {nan, inf}));
  EXPECT_FALSE(none.range());
  EXPECT_EQ(none.nonFinite(), 2);
}

TEST(RangeMethods, IntegerTensorsAreIgnored) {
  RangeCollector c(method("minmax"));
  c.add(Tensor::vectorI64({1, 2, 3}));
  EXPECT_FALSE(c.range());
  EXPECT_EQ(c.count(), 0);
}

TEST(RangeMethods, HistogramDoublesItsRangeWithoutLosingCounts) {
  AbsHistogram h(8);
  const std::vector<float> a = {0.5f, -1, 2}; // top 2: bins of width 0.25
  h.add(a.data(), a.size());
  EXPECT_DOUBLE_EQ(h.top(), 2);
  EXPECT_EQ(h.counts(), (std::vector<double>{0, 0, 1, 0, 1, 0, 0, 1}));
  // top 8: bins of width 1, old bins merged pairwise twice; 2 (the old top, in the old last
  // bin [1.75, 2]) lands in [1, 2).
  const std::vector<float> b = {-7};
  h.add(b.data(), b.size());
  EXPECT_DOUBLE_EQ(h.top(), 8);
  EXPECT_EQ(h.counts(), (std::vector<double>{1, 2, 0, 0, 0, 0, 0, 1}));
  EXPECT_DOUBLE_EQ(h.total(), 4);
}

TEST(RangeMethods, PercentileOfZeroTo999) {
  // The 99th percentile of 0..999 is 989 (numpy: 989.01); the histogram answers with the upper
  // edge of the bin that holds it, within one bin (999 / 2048) above.
  RangeCollector c(method("percentile=99"));
  c.add(f32Tensor({1000}, iota(1000)));
  ASSERT_TRUE(c.range());
  EXPECT_EQ(c.range()->lo, 0.0f); // no negative value: [0, a]
  EXPECT_GE(c.range()->hi, 989.0f);
  EXPECT_LE(c.range()->hi, 989.0f + 999.0f / 2048);

  RangeCollector all(method("percentile=100"));
  all.add(f32Tensor({1000}, iota(1000)));
  EXPECT_EQ(all.range()->hi, 999.0f); // never above the largest |x|
}

TEST(RangeMethods, PercentileIsSymmetricWithNegativesAndSurvivesRebinning) {
  // -999..0 in two tensors, the second with the larger magnitudes: the range doubles twice
  // (499 -> 998 -> 1996), so a bin is 1996 / 2048 wide.
  RangeCollector c(method("percentile=99"));
  c.add(f32Tensor({500}, iota(500, -499)));
  c.add(f32Tensor({500}, iota(500, -999)));
  ASSERT_TRUE(c.range());
  EXPECT_GE(c.range()->hi, 989.0f);
  EXPECT_LE(c.range()->hi, 989.0f + 1996.0f / 2048);
  EXPECT_EQ(c.range()->lo, -c.range()->hi);
}

TEST(RangeMethods, EntropyClipsAFewHugeOutliers) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(100000);
  for (float &x : v)
    x = normal(rng);
  for (int i = 0; i < 10; ++i)
    v[static_cast<size_t>(i) * 1000] = i % 2 ? 1000.0f : -1000.0f;
  RangeCollector c(method("entropy"));
  c.add(f32Tensor({static_cast<int64_t>(v.size())}, v));
  ASSERT_TRUE(c.range());
  // Thresholds start at bin 128 of 2048 over [0, 1000] (62.5): the bulk, within |x| < 5, is
  // kept in far fewer bins than the outliers would cost.
  EXPECT_LT(c.range()->hi, 100.0f);
  EXPECT_EQ(c.range()->lo, -c.range()->hi);

  RangeCollector mm(method("minmax"));
  mm.add(f32Tensor({static_cast<int64_t>(v.size())}, v));
  EXPECT_EQ(*mm.range(), (ValueRange{-1000, 1000}));
}

TEST(RangeMethods, EntropyKeepsNearlyTheWholeUniformRange) {
  std::vector<float> v(100000);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(i) / static_cast<float>(v.size() - 1);
  RangeCollector c(method("entropy"));
  c.add(f32Tensor({static_cast<int64_t>(v.size())}, v));
  ASSERT_TRUE(c.range());
  EXPECT_EQ(c.range()->lo, 0.0f);
  EXPECT_GE(c.range()->hi, 0.95f);
  EXPECT_LE(c.range()->hi, 1.0f);
}

constexpr const char *kSmall = R"(
graph @small(%x: f32[N,2]) -> (y: f32[N,2]) {
  %h = mul(%x, %x) : f32[N,2]
  %y = neg(%h) : f32[N,2]
  return %y
}
)";

TEST(Calibrator, AccumulatesEveryFloatValueOverSamples) {
  auto g = inferredGraph(kSmall);
  auto cal = Calibrator::create(*g, method("minmax"));
  ASSERT_TRUE(cal) << cal.status().message();
  ASSERT_TRUE(cal->addSample({{"x", f32Tensor({1, 2}, {1, -2})}}).isOk());
  ASSERT_TRUE(cal->addSample({{"x", f32Tensor({2, 2}, {0.5f, 3, -1, 0})}}).isOk());
  EXPECT_EQ(cal->samples(), 2);
  RangeMap r = cal->ranges();
  EXPECT_EQ(r.size(), 3u);
  EXPECT_EQ(r[g->findValue("x")], (ValueRange{-2, 3}));
  EXPECT_EQ(r[g->findValue("h")], (ValueRange{0, 9}));
  EXPECT_EQ(r[g->findValue("y")], (ValueRange{-9, 0}));
  EXPECT_TRUE(cal->nonFinite().empty());

  Status bad = cal->addSample({{"x", Tensor::vectorI64({1, 2})}});
  EXPECT_EQ(bad.message(), "input 'x': expected dtype f32, got i64");
  EXPECT_EQ(cal->samples(), 2);
}

TEST(Calibrator, CountsNonFiniteValues) {
  auto g = inferredGraph(kSmall);
  auto cal = Calibrator::create(*g, method("minmax"));
  ASSERT_TRUE(cal);
  const float inf = std::numeric_limits<float>::infinity();
  ASSERT_TRUE(cal->addSample({{"x", f32Tensor({1, 2}, {inf, 2})}}).isOk());
  auto nf = cal->nonFinite();
  ASSERT_EQ(nf.size(), 3u);
  EXPECT_EQ(nf[0].first->name(), "x");
  EXPECT_EQ(nf[0].second, 1);
  EXPECT_EQ(cal->ranges()[g->findValue("y")], (ValueRange{-4, -4}));
}

TEST(RangeTable, RoundTripsThroughJson) {
  auto g = inferredGraph(kSmall);
  RangeMap ranges = {{g->findValue("x"), {-2, 3}}, {g->findValue("y"), {-9.5f, 0.1f}}};
  RangeTable t = makeRangeTable(*g, ranges, "minmax", 2);
  EXPECT_EQ(t.graphHash, graphHash(*g));
  const std::string json = rangeTableJson(t);
  EXPECT_NE(json.find("\"x\": [-2, 3]"), std::string::npos) << json;
  EXPECT_NE(json.find("\"y\": [-9.5, 0.1]"), std::string::npos) << json;
  auto back = parseRangeTable(json, "r.json");
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_EQ(back->method, "minmax");
  EXPECT_EQ(back->samples, 2);
  auto map = rangesForGraph(*back, *g, "r.json");
  ASSERT_TRUE(map) << map.status().message();
  EXPECT_EQ(*map, ranges);
}

TEST(RangeTable, RefusesATableOfAnotherGraph) {
  auto g = inferredGraph(kSmall);
  auto other = inferredGraph(R"(
graph @small(%x: f32[N,2]) -> (y: f32[N,2]) {
  %h = mul(%x, %x) : f32[N,2]
  %y = relu(%h) : f32[N,2]
  return %y
}
)");
  EXPECT_EQ(graphHash(*g), graphHash(*inferredGraph(kSmall))); // stable
  EXPECT_NE(graphHash(*g), graphHash(*other));
  RangeTable t = makeRangeTable(*g, {{g->findValue("x"), {-1, 1}}}, "minmax", 1);
  auto r = rangesForGraph(t, *other, "--ranges 'r.json'");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().message(),
            fmt::format("--ranges 'r.json': the ranges were calibrated for another graph "
                        "(graph_hash {}, this graph's is {}); calibrate again with "
                        "--calibration DIR",
                        graphHash(*g), graphHash(*other)));

  t.ranges.emplace_back("nope", ValueRange{0, 1});
  EXPECT_EQ(rangesForGraph(t, *g, "r.json").status().message(),
            "r.json: the graph has no input or node output named 'nope'");
}

TEST(RangeTable, ParseErrorsNameTheField) {
  EXPECT_EQ(parseRangeTable("[1]", "r.json").status().message(),
            "r.json: not a range table (expected a JSON object with graph_hash, method, "
            "samples and ranges)");
  EXPECT_EQ(parseRangeTable(R"({"ranges": {}})", "r.json").status().message(),
            "r.json: 'graph_hash' is missing or not a string");
  EXPECT_EQ(parseRangeTable(R"({"graph_hash": "0", "ranges": {"x": [2, 1]}})", "r.json")
                .status()
                .message(),
            "r.json: range of 'x': [2, 1] is not a finite range with lo <= hi");
  EXPECT_EQ(
      parseRangeTable(R"({"graph_hash": "0", "ranges": {"x": 1}})", "r.json").status().message(),
      "r.json: range of 'x': expected [lo, hi], got 1");
}

} // namespace
} // namespace dlc
