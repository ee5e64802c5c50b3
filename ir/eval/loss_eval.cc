// Reference evaluation of NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
//
// For each sample i = (n, d1, ..., dk) with class c = labels[i]: the sample's weight is
// w = weights[c] (1 without weights), or 0 when c equals ignore_index; its loss is
// -w * scores[n, c, d1, ..., dk], where SoftmaxCrossEntropyLoss first replaces the scores by
// their log-softmax over C. "sum" adds the losses; "mean" divides that sum by the sum of the
// applied weights (the count of samples not ignored, without weights), so it is NaN when every
// sample is ignored, as in ONNX's function body. A class outside [0, C) that is not
// ignore_index is an error. Everything is computed in double and rounded once to the output
// type.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "ir/eval/eval_util.h"
#include "ir/eval/nn_eval_util.h"

namespace dlc::eval {

namespace {

/// All elements of `t` as doubles.
std::vector<double> asDoubles(const Tensor &t) {
  std::vector<double> v(static_cast<size_t>(t.numElements()));
  for (int64_t i = 0; i < t.numElements(); ++i)
    v[static_cast<size_t>(i)] = t.elementAsDouble(i);
  return v;
}

/// Replaces x (viewed as [N, C, D]) by its log-softmax over C; the largest score is subtracted
/// before exp, so large scores do not overflow.
void logSoftmaxOverClasses(std::vector<double> &x, int64_t batch, int64_t classes,
                           int64_t spatial) {
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t d = 0; d < spatial; ++d) {
      auto at = [&](int64_t c) -> double & {
        return x[static_cast<size_t>((n * classes + c) * spatial + d)];
      };
      double peak = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < classes; ++c)
        peak = std::max(peak, at(c));
      double sum = 0;
      for (int64_t c = 0; c < classes; ++c)
        sum += std::exp(at(c) - peak);
      double logSum = std::log(sum);
      for (int64_t c = 0; c < classes; ++c)
        at(c) = at(c) - peak - logSum;
    }
}

EvalResult evalLoss(const Node &node, const std::vector<Tensor> &in, bool softmax) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const Tensor &x = in[0];
  const char *labelsName = softmax ? "labels" : "target";
  const std::vector<int64_t> &shape = x.shape();
  const int64_t batch = shape[0], classes = shape[1];
  const int64_t spatial = sizeProduct(shape, 2, shape.size());
  std::vector<double> scores = asDoubles(x);
  if (softmax)
    logSoftmaxOverClasses(scores, batch, classes, spatial);
  const std::vector<int64_t> labels = in[1].toInt64Vector();
  std::vector<double> weights;
  if (in.size() > 2 && !in[2].empty())
    weights = asDoubles(in[2]);
  std::optional<int64_t> ignore;
  if (node.hasAttr("ignore_index"))
    ignore = node.getInt("ignore_index");

  std::vector<double> loss(labels.size(), 0.0);
  double lossSum = 0, weightSum = 0;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t d = 0; d < spatial; ++d) {
      const size_t i = static_cast<size_t>(n * spatial + d);
      const int64_t c = labels[i];
      if (ignore && c == *ignore)
        continue;
      if (c < 0 || c >= classes)
        return invalidArgument("{} value {} at flat index {} is outside [0, {}) and is not "
                               "ignore_index",
                               labelsName, c, i, classes);
      const double w = weights.empty() ? 1.0 : weights[static_cast<size_t>(c)];
      loss[i] = -w * scores[static_cast<size_t>((n * classes + c) * spatial + d)];
      lossSum += loss[i];
      weightSum += w;
    }

  const std::string &reduction = node.getString("reduction");
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(types[0].dtype, types[0].shape.sizes()));
  if (reduction == "none") {
    for (size_t i = 0; i < loss.size(); ++i)
      storeFloat(out, static_cast<int64_t>(i), loss[i]);
  } else {
    storeFloat(out, 0, reduction == "sum" ? lossSum : lossSum / weightSum);
  }
  std::vector<Tensor> result{std::move(out)};
  if (node.numOutputs() > 1) { // log_prob, when asked for
    Tensor logProb;
    if (node.output(1)) {
      DLC_ASSIGN_OR_RETURN(logProb, newTensor(x.dtype(), shape));
      for (size_t i = 0; i < scores.size(); ++i)
        storeFloat(logProb, static_cast<int64_t>(i), scores[i]);
    }
    result.push_back(std::move(logProb));
  }
  return result;
}

} // namespace

EvalResult evalNegativeLogLikelihoodLoss(const Node &node, const std::vector<Tensor> &in) {
  return evalLoss(node, in, false);
}

EvalResult evalSoftmaxCrossEntropyLoss(const Node &node, const std::vector<Tensor> &in) {
  return evalLoss(node, in, true);
}

} // namespace dlc::eval
