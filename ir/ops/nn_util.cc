#include "ir/ops/nn_util.h"

namespace dlc::ops {

std::string formatInts(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

Status expectRank(const InferContext &ctx, int i, int64_t rank, std::string_view what) {
  if (!ctx.hasInput(i) || !ctx.inputType(i).shape.isRanked())
    return Status::ok();
  int64_t r = ctx.inputType(i).shape.rank();
  if (r != rank)
    return ctx.error("{} must have rank {}, got rank {}", what, rank, r);
  return Status::ok();
}

Status expectMinRank(const InferContext &ctx, int i, int64_t rank, std::string_view what) {
  if (!ctx.hasInput(i) || !ctx.inputType(i).shape.isRanked())
    return Status::ok();
  int64_t r = ctx.inputType(i).shape.rank();
  if (r < rank)
    return ctx.error("{} must have rank >= {}, got rank {}", what, rank, r);
  return Status::ok();
}

Status expectPerChannel(const InferContext &ctx, int i, const Dim &channels,
                        std::string_view what) {
  DLC_RETURN_IF_ERROR(expectRank(ctx, i, 1, what));
  if (!ctx.hasInput(i) || !ctx.inputType(i).shape.isRanked())
    return Status::ok();
  const Dim &d = ctx.inputType(i).shape[0];
  if (!dimsCompatible(d, channels))
    return ctx.error("{} has {} elements but the input has {} channels", what, d.str(),
                     channels.str());
  return Status::ok();
}

Dim unifyDims(const Dim &a, const Dim &b) {
  if (a.isKnown())
    return a;
  if (b.isKnown())
    return b;
  return a.isSymbol() ? a : b;
}

std::optional<int64_t> constantScalarInt(const InferContext &ctx, int i) {
  if (!ctx.hasInput(i))
    return std::nullopt;
  const Tensor *t = ctx.inputConstant(i);
  if (!t || !isInteger(t->dtype()) || t->numElements() != 1)
    return std::nullopt;
  return t->elementAsInt64(0);
}

Dim scalarInputAsDim(const InferContext &ctx, int i) {
  if (!ctx.hasInput(i))
    return Dim::unknown();
  std::optional<std::vector<Dim>> dims = ctx.inputAsDims(i);
  if (!dims || dims->size() != 1)
    return Dim::unknown();
  return (*dims)[0];
}

Expected<int64_t> requiredInt(const Node &node, std::string_view name) {
  if (!node.hasAttr(name))
    return invalidArgument("attribute '{}' is required", name);
  return node.getInt(name);
}

Expected<DType> stashTypeToDType(int64_t stashType) {
  switch (stashType) {
  case 1:
    return DType::kF32;
  case 10:
    return DType::kF16;
  case 11:
    return DType::kF64;
  case 16:
    return DType::kBF16;
  default:
    break;
  }
  return invalidArgument("attribute 'stash_type' {} is not a floating-point type", stashType);
}

Expected<NgramPool> ngramPool(const Node &node) {
  NgramPool p;
  DLC_ASSIGN_OR_RETURN(p.minGram, requiredInt(node, "min_gram_length"));
  DLC_ASSIGN_OR_RETURN(p.maxGram, requiredInt(node, "max_gram_length"));
  DLC_ASSIGN_OR_RETURN(p.maxSkip, requiredInt(node, "max_skip_count"));
  if (p.minGram < 1 || p.maxGram < p.minGram)
    return invalidArgument("min_gram_length ({}) and max_gram_length ({}) must satisfy 1 <= min "
                           "<= max",
                           p.minGram, p.maxGram);
  if (p.maxSkip < 0)
    return invalidArgument("max_skip_count must not be negative, got {}", p.maxSkip);
  const std::string &mode = node.getString("mode");
  if (mode == "TF")
    p.mode = NgramPool::Mode::kTF;
  else if (mode == "IDF")
    p.mode = NgramPool::Mode::kIDF;
  else if (mode == "TFIDF")
    p.mode = NgramPool::Mode::kTFIDF;
  else
    return invalidArgument("mode must be TF, IDF or TFIDF, got '{}'", mode);
  if (node.hasAttr("pool_strings"))
    return unimplemented("pool_strings is not supported: string n-grams are out of scope "
                         "(pool_int64s is)");
  const std::vector<int64_t> pool = node.getInts("pool_int64s");
  const std::vector<int64_t> counts = node.getInts("ngram_counts");
  const std::vector<int64_t> indexes = node.getInts("ngram_indexes");
  // ngram_counts[n-1] is where the n-grams start in the pool; they run to the next start.
  for (size_t i = 0; i < counts.size(); ++i) {
    const int64_t begin = counts[i];
    const int64_t end = i + 1 < counts.size() ? counts[i + 1] : static_cast<int64_t>(pool.size());
    const int64_t n = static_cast<int64_t>(i) + 1;
    if (begin < 0 || end < begin || end > static_cast<int64_t>(pool.size()))
      return invalidArgument("ngram_counts {} does not split pool_int64s ({} values)",
                             formatInts(counts), pool.size());
    if ((end - begin) % n != 0)
      return invalidArgument("pool_int64s[{}:{}] holds {} values, not a whole number of {}-grams",
                             begin, end, end - begin, n);
    for (int64_t at = begin; at < end; at += n)
      p.grams.emplace_back(pool.begin() + at, pool.begin() + at + n);
  }
  if (indexes.size() != p.grams.size())
    return invalidArgument("ngram_indexes has {} entries, the pool {} n-grams", indexes.size(),
                           p.grams.size());
  for (int64_t i : indexes) {
    if (i < 0)
      return invalidArgument("ngram_indexes must not be negative, got {}", i);
    p.width = std::max(p.width, i + 1);
  }
  p.outIndex = indexes;
  p.weights = node.getFloats("weights");
  if (!p.weights.empty() && p.weights.size() != p.grams.size())
    return invalidArgument("weights has {} entries, the pool {} n-grams", p.weights.size(),
                           p.grams.size());
  return p;
}

} // namespace dlc::ops
