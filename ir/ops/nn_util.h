// Small shape-inference helpers shared by the nn and misc family files (conv, pooling,
// normalisation, resize, RNNs, random, signal).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/op.h"

namespace dlc::ops {

/// A strings attribute with a default.
inline AttrSpec stringsAttr(std::string name, std::vector<std::string> dflt) {
  return {std::move(name), AttrKind::kStrings, Attribute(std::move(dflt)), false};
}

/// `[1,2,3]`.
std::string formatInts(const std::vector<int64_t> &v);

/// Error unless input `i`, when present and ranked, has exactly `rank` dims. `what` names the
/// input in the message ("input X").
Status expectRank(const InferContext &ctx, int i, int64_t rank, std::string_view what);
/// Error unless input `i`, when present and ranked, has at least `rank` dims.
Status expectMinRank(const InferContext &ctx, int i, int64_t rank, std::string_view what);

/// For a per-channel input of shape [C] (BatchNormalization's scale, ...): error unless it is
/// 1-D with a size compatible with `channels`. Absent or unranked inputs pass.
Status expectPerChannel(const InferContext &ctx, int i, const Dim &channels, std::string_view what);

/// Two dims known to describe the same size: a known value beats a symbol beats unknown.
Dim unifyDims(const Dim &a, const Dim &b);

/// The value of a constant integer input holding one element (a scalar or [1]); nullopt when
/// absent or not constant.
std::optional<int64_t> constantScalarInt(const InferContext &ctx, int i);

/// The size held by a one-element integer input, as a dim (constant or symbolic shape value);
/// unknown when it cannot be known.
Dim scalarInputAsDim(const InferContext &ctx, int i);

/// A required int attribute; an error naming it when the node lacks it.
Expected<int64_t> requiredInt(const Node &node, std::string_view name);

/// TfIdfVectorizer's pool of n-grams, checked against the node's attributes.
struct NgramPool {
  int64_t minGram = 1, maxGram = 1, maxSkip = 0;
  /// grams[k]: the k-th n-gram of the pool, in pool order; outIndex[k] its output column.
  std::vector<std::vector<int64_t>> grams;
  std::vector<int64_t> outIndex;
  std::vector<float> weights; // one per n-gram, or empty (all 1)
  enum class Mode { kTF, kIDF, kTFIDF } mode = Mode::kTF;
  int64_t width = 0; // output columns: max(ngram_indexes) + 1
};
/// The pool a TfIdfVectorizer node describes; an error naming the attribute that is wrong.
Expected<NgramPool> ngramPool(const Node &node);

/// The float element type named by an ONNX `stash_type` (a TensorProto data type number).
Expected<DType> stashTypeToDType(int64_t stashType);

} // namespace dlc::ops
