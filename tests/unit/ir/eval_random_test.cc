// Reference evaluation of the random generators: the documented stream (SplitMix64 from the
// seed's f32 bits), reproducibility, distribution statistics and dtypes.
#include <bit>
#include <cmath>
#include <numeric>

#include "eval_tensor_test_util.h"

namespace dlc::evaltest {
namespace {

/// The stream documented in ir/eval/random_eval.cc, written out independently.
double documentedUniform(float seed, uint64_t n) {
  uint64_t z =
      static_cast<uint64_t>(std::bit_cast<uint32_t>(seed)) + (n + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049EB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) / 9007199254740992.0;
}

Node *generator(Graph &g, Op op, std::vector<int64_t> shape, std::optional<float> seed) {
  Node *n = g.createNode(op, {}, 1, "r");
  n->setAttr("shape", std::move(shape));
  if (seed)
    n->setAttr("seed", *seed);
  return n;
}

double mean(const std::vector<double> &v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

TEST(EvalRandom, UniformFollowsTheDocumentedStream) {
  Graph g;
  Node *n = generator(g, Op::kRandomUniform, {2, 3}, 3.0f);
  n->setAttr("low", -2.0f);
  n->setAttr("high", 4.0f);
  n->setAttr("dtype", DType::kF64);
  Tensor out = eval1(n);
  EXPECT_EQ(out.type().str(), "f64[2,3]");
  std::vector<double> want;
  for (uint64_t i = 0; i < 6; ++i)
    want.push_back(-2.0 + 6.0 * documentedUniform(3.0f, i));
  expectClose(values<double>(out), want, 1e-15);
}

TEST(EvalRandom, NormalFollowsBoxMullerOnTheStream) {
  Graph g;
  Node *n = generator(g, Op::kRandomNormal, {3}, 7.5f);
  n->setAttr("mean", 1.0f);
  n->setAttr("scale", 2.0f);
  n->setAttr("dtype", DType::kF64);
  const double r = std::sqrt(-2 * std::log(1 - documentedUniform(7.5f, 0)));
  const double t = 2 * M_PI * documentedUniform(7.5f, 1);
  const double r2 = std::sqrt(-2 * std::log(1 - documentedUniform(7.5f, 2)));
  const double t2 = 2 * M_PI * documentedUniform(7.5f, 3);
  expectClose(values<double>(eval1(n)),
              std::vector<double>{1 + 2 * r * std::cos(t), 1 + 2 * r * std::sin(t),
                                  1 + 2 * r2 * std::cos(t2)},
              1e-12);
}

TEST(EvalRandom, ReproducibleAndSeedDependent) {
  Graph g;
  auto sample = [&](std::optional<float> seed) {
    return values<float>(eval1(generator(g, Op::kRandomNormal, {64}, seed)));
  };
  EXPECT_EQ(sample(1.0f), sample(1.0f));
  EXPECT_NE(sample(1.0f), sample(2.0f));
  // Without a seed the stream is fixed: the one of seed 0.
  EXPECT_EQ(sample(std::nullopt), sample(std::nullopt));
  EXPECT_EQ(sample(std::nullopt), sample(0.0f));
}

TEST(EvalRandom, DistributionStatistics) {
  Graph g;
  Node *normal = generator(g, Op::kRandomNormal, {20000}, 5.0f);
  normal->setAttr("mean", 3.0f);
  normal->setAttr("scale", 0.5f);
  std::vector<double> v = asF64(eval1(normal));
  const double m = mean(v);
  double var = 0;
  for (double x : v)
    var += (x - m) * (x - m);
  var /= static_cast<double>(v.size());
  EXPECT_NEAR(m, 3.0, 0.02);
  EXPECT_NEAR(std::sqrt(var), 0.5, 0.02);
  Node *uniform = generator(g, Op::kRandomUniform, {20000}, 6.0f);
  uniform->setAttr("low", 1.0f);
  uniform->setAttr("high", 2.0f);
  std::vector<double> u = asF64(eval1(uniform));
  EXPECT_NEAR(mean(u), 1.5, 0.01);
  EXPECT_GE(*std::min_element(u.begin(), u.end()), 1.0);
  EXPECT_LT(*std::max_element(u.begin(), u.end()), 2.0);
}

TEST(EvalRandom, LikeFormsTakeShapeAndTypeFromTheInput) {
  Graph g;
  Node *like =
      g.createNode(Op::kRandomNormalLike, {f64(g, {2, 5}, std::vector<double>(10, 1))}, 1, "r");
  EXPECT_EQ(eval1(like).type().str(), "f64[2,5]");
  Node *half = g.createNode(Op::kRandomUniformLike, {i32(g, {3}, {1, 2, 3})}, 1, "r");
  half->setAttr("dtype", DType::kF16);
  Tensor h = eval1(half);
  EXPECT_EQ(h.type().str(), "f16[3]");
  for (float x : asF32(h))
    EXPECT_TRUE(x >= 0 && x <= 1) << x;
  Node *ints = g.createNode(Op::kRandomUniformLike, {i32(g, {3}, {1, 2, 3})}, 1, "r");
  EXPECT_EQ(evalError(ints),
            "node 'r' (RandomUniformLike): the output must be a float type, got i32");
}

TEST(EvalBernoulli, ProbabilitiesAndDtypes) {
  Graph g;
  Node *exact = g.createNode(Op::kBernoulli, {f32(g, {6}, {0, 1, 1, 0, 0, 1})}, 1, "b");
  exact->setAttr("seed", 2.0f);
  EXPECT_EQ(values<float>(eval1(exact)), (std::vector<float>{0, 1, 1, 0, 0, 1}));
  Node *flags =
      g.createNode(Op::kBernoulli, {f64(g, {10000}, std::vector<double>(10000, 0.3))}, 1, "b");
  flags->setAttr("dtype", DType::kBool);
  Tensor f = eval1(flags);
  EXPECT_EQ(f.type().str(), "bool[10000]");
  EXPECT_NEAR(mean(asF64(f)), 0.3, 0.02);
}

TEST(EvalMultinomial, FrequenciesFollowTheSoftmax) {
  Graph g;
  Node *n = g.createNode(
      Op::kMultinomial,
      {f32(g, {2, 3}, {std::log(0.2f), std::log(0.5f), std::log(0.3f), 0.0f, -INFINITY, 1.0f})}, 1,
      "m");
  n->setAttr("sample_size", 20000);
  n->setAttr("dtype", DType::kI64);
  n->setAttr("seed", 9.0f);
  Tensor out = eval1(n);
  ASSERT_EQ(out.type().str(), "i64[2,20000]");
  std::vector<int64_t> s = values<int64_t>(out);
  std::vector<double> freq(6, 0.0);
  for (size_t i = 0; i < s.size(); ++i)
    freq[(i / 20000) * 3 + static_cast<size_t>(s[i])] += 1.0 / 20000;
  EXPECT_NEAR(freq[0], 0.2, 0.015);
  EXPECT_NEAR(freq[1], 0.5, 0.015);
  EXPECT_NEAR(freq[2], 0.3, 0.015);
  EXPECT_EQ(freq[4], 0.0); // log-probability -inf is never drawn
  EXPECT_NEAR(freq[5], std::exp(1.0) / (1 + std::exp(1.0)), 0.015);
  Node *dflt = g.createNode(Op::kMultinomial, {f32(g, {1, 2}, {0, 0})}, 1, "m");
  EXPECT_EQ(eval1(dflt).type().str(), "i32[1,1]");
  Node *bad = g.createNode(Op::kMultinomial, {f32(g, {1, 2}, {-INFINITY, -INFINITY})}, 1, "m");
  EXPECT_EQ(evalError(bad),
            "node 'm' (Multinomial): batch row 0 has no finite maximum log-probability");
}

} // namespace
} // namespace dlc::evaltest
