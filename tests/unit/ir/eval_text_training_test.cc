// Reference evaluation of TfIdfVectorizer (the spec's example worked by hand, the modes and
// the pool checks) and of the preview.training optimizers (their update rules written out).
#include "eval_tensor_test_util.h"

namespace dlc::evaltest {
namespace {

/// The spec's example pool: unigrams {2,3,5,4}, bigrams {(5,6),(7,8),(6,7)}, columns 0..6.
Node *tfidf(Graph &g, Value *x, int64_t minGram, int64_t maxGram, int64_t skip,
            const std::string &mode = "TF", std::vector<float> weights = {}) {
  Node *n = g.createNode(Op::kTfIdfVectorizer, {x}, 1, "tfidf");
  n->setAttr("min_gram_length", minGram);
  n->setAttr("max_gram_length", maxGram);
  n->setAttr("max_skip_count", skip);
  n->setAttr("mode", Attribute(mode));
  n->setAttr("ngram_counts", Attribute(std::vector<int64_t>{0, 4}));
  n->setAttr("ngram_indexes", Attribute(std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
  n->setAttr("pool_int64s", Attribute(std::vector<int64_t>{2, 3, 5, 4, 5, 6, 7, 8, 6, 7}));
  if (!weights.empty())
    n->setAttr("weights", Attribute(weights));
  return n;
}

const std::vector<int32_t> kRow = {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8};

TEST(EvalTfIdfVectorizer, CountsUnigramsOnceAndBigramsPerSkip) {
  // Unigrams: 3 three times, 5 once; 2 and 4 never. Bigrams without skips: (7,8) at 5,
  // (6,7) at 7, (5,6) at 9.
  Graph g;
  Tensor y = eval1(tfidf(g, i32(g, {12}, kRow), 1, 2, 0));
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{7}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{0, 3, 1, 0, 1, 1, 1}));
  // Skips up to 5 (distances 1..6) find (7,8) also at (5,11) and (8,11); the others stay
  // once each, and the unigrams are still counted once.
  Graph g2;
  Tensor skipped = eval1(tfidf(g2, i32(g2, {12}, kRow), 1, 2, 5));
  EXPECT_EQ(values<float>(skipped), (std::vector<float>{0, 3, 1, 0, 1, 3, 1}));
}

TEST(EvalTfIdfVectorizer, BatchRowsAndWeightModes) {
  Graph g;
  std::vector<int64_t> rows = {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8};
  const std::vector<float> w = {0.5f, 1, 2, 4, 8, 16, 32};
  Tensor tf = eval1(tfidf(g, i64(g, {2, 6}, rows), 1, 2, 0, "TF"));
  EXPECT_EQ(tf.shape(), (std::vector<int64_t>{2, 7}));
  // Row 0 = 1 1 3 3 3 7: unigram 3 three times; row 1 = 8 6 7 5 6 8: 5 once, (6,7) and (5,6).
  EXPECT_EQ(values<float>(tf), (std::vector<float>{0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 1}));
  Tensor idf = eval1(tfidf(g, i64(g, {2, 6}, rows), 1, 2, 0, "IDF", w));
  EXPECT_EQ(values<float>(idf), (std::vector<float>{0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 8, 0, 32}));
  Tensor tfidfY = eval1(tfidf(g, i64(g, {2, 6}, rows), 1, 2, 0, "TFIDF", w));
  EXPECT_EQ(values<float>(tfidfY), (std::vector<float>{0, 3, 0, 0, 0, 0, 0, 0, 0, 2, 0, 8, 0, 32}));
  // Bigrams only: min_gram_length 2 drops the unigrams.
  Tensor bigrams = eval1(tfidf(g, i64(g, {2, 6}, rows), 2, 2, 0));
  EXPECT_EQ(values<float>(bigrams), (std::vector<float>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1}));
}

TEST(EvalTfIdfVectorizer, ABadPoolIsNamed) {
  Graph g;
  Node *n = tfidf(g, i32(g, {12}, kRow), 1, 2, 0);
  n->setAttr("ngram_counts", Attribute(std::vector<int64_t>{0, 3}));
  EXPECT_EQ(evalError(n), "node 'tfidf' (TfIdfVectorizer): pool_int64s[3:10] holds 7 values, "
                          "not a whole number of 2-grams");
  Node *m = tfidf(g, i32(g, {12}, kRow), 1, 2, 0, "BM25");
  EXPECT_EQ(evalError(m), "node 'tfidf' (TfIdfVectorizer): mode must be TF, IDF or TFIDF, got "
                          "'BM25'");
  Node *k = tfidf(g, i32(g, {12}, kRow), 1, 2, 0);
  k->setAttr("ngram_indexes", Attribute(std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(evalError(k), "node 'tfidf' (TfIdfVectorizer): ngram_indexes has 3 entries, the pool "
                          "7 n-grams");
}

/// An optimizer node over two tensors of shape [3] (X1, X2, G1, G2, then the states).
Node *optimizer(Graph &g, Op op, int groups, float r, int64_t t) {
  std::vector<Value *> in = {f32(g, {}, {r}), i64(g, {}, {t})};
  for (int k = 0; k < groups * 2; ++k)
    in.push_back(f32(g, {3}, randomFloats(3, static_cast<uint32_t>(k + 1), 0.1f, 1.0f)));
  return g.createNode(op, in, (groups - 1) * 2, "opt");
}

std::vector<double> input(const Node *n, int i) { return asF64(n->input(i)->constant()); }

TEST(EvalOptimizers, AdagradFollowsTheSpec) {
  Graph g;
  Node *n = optimizer(g, Op::kAdagrad, 3, 0.1f, 3);
  n->setAttr("decay_factor", Attribute(0.1f));
  n->setAttr("epsilon", Attribute(1e-5f));
  n->setAttr("norm_coefficient", Attribute(1e-3f));
  std::vector<Tensor> out = evalAll(n);
  ASSERT_EQ(out.size(), 4u);
  const double r = 0.1 / (1 + 3 * double(0.1f));
  for (int i = 0; i < 2; ++i) {
    std::vector<double> x = input(n, 2 + i), gr = input(n, 4 + i), h = input(n, 6 + i);
    std::vector<double> xNew, hNew;
    for (size_t e = 0; e < 3; ++e) {
      double gReg = double(1e-3f) * x[e] + gr[e];
      hNew.push_back(h[e] + gReg * gReg);
      xNew.push_back(x[e] - r * gReg / (std::sqrt(hNew.back()) + double(1e-5f)));
    }
    expectClose(asF64(out[static_cast<size_t>(i)]), xNew, 1e-6, 1e-6);
    expectClose(asF64(out[static_cast<size_t>(2 + i)]), hNew, 1e-6, 1e-6);
  }
}

TEST(EvalOptimizers, AdamCorrectsTheBiasAfterStepZero) {
  for (int64_t t : {0, 5}) {
    Graph g;
    Node *n = optimizer(g, Op::kAdam, 4, 0.1f, t);
    n->setAttr("alpha", Attribute(0.9f));
    n->setAttr("beta", Attribute(0.5f));
    n->setAttr("epsilon", Attribute(1e-3f));
    n->setAttr("norm_coefficient_post", Attribute(0.25f));
    std::vector<Tensor> out = evalAll(n);
    ASSERT_EQ(out.size(), 6u);
    const double a = double(0.9f), b = 0.5;
    const double r = t > 0 ? 0.1 * std::sqrt(1 - std::pow(b, 5)) / (1 - std::pow(a, 5)) : 0.1;
    for (int i = 0; i < 2; ++i) {
      std::vector<double> x = input(n, 2 + i), gr = input(n, 4 + i), v = input(n, 6 + i),
                          h = input(n, 8 + i);
      std::vector<double> xNew, vNew, hNew;
      for (size_t e = 0; e < 3; ++e) {
        vNew.push_back(a * v[e] + (1 - a) * gr[e]);
        hNew.push_back(b * h[e] + (1 - b) * gr[e] * gr[e]);
        xNew.push_back(0.75 * (x[e] - r * vNew.back() / (std::sqrt(hNew.back()) + double(1e-3f))));
      }
      expectClose(asF64(out[static_cast<size_t>(i)]), xNew, 1e-6, 1e-6);
      expectClose(asF64(out[static_cast<size_t>(2 + i)]), vNew, 1e-6, 1e-6);
      expectClose(asF64(out[static_cast<size_t>(4 + i)]), hNew, 1e-6, 1e-6);
    }
  }
}

TEST(EvalOptimizers, MomentumStandardAndNesterov) {
  for (const char *mode : {"standard", "nesterov"}) {
    SCOPED_TRACE(mode);
    Graph g;
    Node *n = optimizer(g, Op::kMomentum, 3, 0.1f, 2);
    n->setAttr("alpha", Attribute(0.9f));
    n->setAttr("beta", Attribute(0.5f));
    n->setAttr("mode", Attribute(std::string(mode)));
    n->setAttr("norm_coefficient", Attribute(0.0f));
    std::vector<Tensor> out = evalAll(n);
    ASSERT_EQ(out.size(), 4u);
    for (int i = 0; i < 2; ++i) {
      std::vector<double> x = input(n, 2 + i), gr = input(n, 4 + i), v = input(n, 6 + i);
      std::vector<double> xNew, vNew;
      for (size_t e = 0; e < 3; ++e) {
        vNew.push_back(double(0.9f) * v[e] + 0.5 * gr[e]);
        xNew.push_back(std::string(mode) == "standard"
                           ? x[e] - double(0.1f) * vNew.back()
                           : x[e] - double(0.1f) * (gr[e] + double(0.9f) * vNew.back()));
      }
      expectClose(asF64(out[static_cast<size_t>(i)]), xNew, 1e-6, 1e-6);
      expectClose(asF64(out[static_cast<size_t>(2 + i)]), vNew, 1e-6, 1e-6);
    }
  }
  Graph g;
  Node *bad = optimizer(g, Op::kMomentum, 3, 0.1f, 2);
  bad->setAttr("alpha", Attribute(0.9f));
  bad->setAttr("beta", Attribute(0.5f));
  bad->setAttr("mode", Attribute(std::string("heavy-ball")));
  bad->setAttr("norm_coefficient", Attribute(0.0f));
  EXPECT_EQ(evalError(bad), "node 'opt' (Momentum): mode must be 'standard' or 'nesterov', got "
                            "'heavy-ball'");
}

} // namespace
} // namespace dlc::evaltest
