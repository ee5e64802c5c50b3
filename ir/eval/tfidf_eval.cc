// Reference evaluation of TfIdfVectorizer (integer pools; string pools are out of scope).
//
// Each row of X (a 1-D X is one row) is scanned for every n-gram length n in
// [min_gram_length, max_gram_length] and every skip s in [0, max_skip_count]: the n-gram
// starting at i is (X[i], X[i + (s+1)], ..., X[i + (n-1)(s+1)]). Unigrams do not depend on the
// skip and are counted once. Pool n-gram k found c times gives output column ngram_indexes[k]
// the value c (TF), weights[k] when c > 0 (IDF) or c * weights[k] (TFIDF); weights default
// to 1.
#include <map>

#include "ir/eval/eval_util.h"
#include "ir/eval/misc_eval.h"
#include "ir/ops/nn_util.h"

namespace dlc::eval {

MiscEvalResult evalTfIdfVectorizer(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  DLC_ASSIGN_OR_RETURN(ops::NgramPool pool, ops::ngramPool(node));
  const Tensor &x = in[0];
  const int64_t rows = x.rank() == 1 ? 1 : x.shape()[0];
  const int64_t cols = x.rank() == 1 ? x.shape()[0] : x.shape()[1];
  // (n-gram) -> its first index in the pool.
  std::map<std::vector<int64_t>, size_t> index;
  for (size_t k = 0; k < pool.grams.size(); ++k)
    index.emplace(pool.grams[k], k);
  DLC_ASSIGN_OR_RETURN(Tensor y, newTensor(DType::kF32, types[0].shape.sizes()));
  float *out = y.mutableData<float>();
  std::vector<int64_t> count(pool.grams.size());
  std::vector<int64_t> gram;
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(count.begin(), count.end(), 0);
    for (int64_t n = pool.minGram; n <= pool.maxGram; ++n)
      for (int64_t skip = 0; skip <= (n == 1 ? 0 : pool.maxSkip); ++skip) {
        const int64_t step = skip + 1;
        for (int64_t i = 0; i + (n - 1) * step < cols; ++i) {
          gram.clear();
          for (int64_t j = 0; j < n; ++j)
            gram.push_back(x.elementAsInt64(r * cols + i + j * step));
          if (auto it = index.find(gram); it != index.end())
            ++count[it->second];
        }
      }
    float *row = out + r * pool.width;
    std::fill(row, row + pool.width, 0.0f);
    for (size_t k = 0; k < count.size(); ++k) {
      const double w = pool.weights.empty() ? 1.0 : pool.weights[k];
      const double c = static_cast<double>(count[k]);
      double v = pool.mode == ops::NgramPool::Mode::kTF    ? c
                 : pool.mode == ops::NgramPool::Mode::kIDF ? (c > 0 ? w : 0.0)
                                                           : c * w;
      row[pool.outIndex[k]] += static_cast<float>(v);
    }
  }
  return std::vector<Tensor>{std::move(y)};
}

} // namespace dlc::eval
