// Reference evaluation of NonMaxSuppression, after the ONNX reference (itself a port of
// onnxruntime's kernel).
//
// For each batch and class: boxes whose score is above score_threshold (all boxes when the
// input is absent) are visited by descending score (ties: lower box index first); a box is
// selected unless its IoU with a box already selected for this class exceeds iou_threshold;
// at most max_output_boxes_per_class are selected (0 when the input is absent). Output rows
// are [batch, class, box] in that order. Boxes are [y1, x1, y2, x2] with either corner first
// (center_point_box 0) or [x_center, y_center, width, height] (1). Computed in f32. dlc's
// fixed-size form (attribute slots > 0, see ir/ops/misc.cc) returns each batch and class's
// selection in `slots` slots (-1 past its count) and the counts instead.
#include <algorithm>
#include <cmath>
#include <optional>

#include "ir/eval/eval_util.h"
#include "ir/eval/misc_eval.h"

namespace dlc::eval {

namespace {

struct Box {
  float xmin, ymin, xmax, ymax;
};

Box readBox(const float *b, bool centerPoint) {
  if (centerPoint)
    return {b[0] - b[2] / 2, b[1] - b[3] / 2, b[0] + b[2] / 2, b[1] + b[3] / 2};
  return {std::min(b[1], b[3]), std::min(b[0], b[2]), std::max(b[1], b[3]), std::max(b[0], b[2])};
}

bool suppresses(const Box &a, const Box &b, float iouThreshold) {
  const float ixmin = std::max(a.xmin, b.xmin), ixmax = std::min(a.xmax, b.xmax);
  if (ixmax <= ixmin)
    return false;
  const float iymin = std::max(a.ymin, b.ymin), iymax = std::min(a.ymax, b.ymax);
  if (iymax <= iymin)
    return false;
  const float inter = (ixmax - ixmin) * (iymax - iymin);
  const float areaA = (a.xmax - a.xmin) * (a.ymax - a.ymin);
  const float areaB = (b.xmax - b.xmin) * (b.ymax - b.ymin);
  const float uni = areaA + areaB - inter;
  if (inter <= 0 || areaA <= 0 || areaB <= 0 || uni <= 0)
    return false;
  return inter / uni > iouThreshold;
}

/// A one-element optional input, or nullopt when absent.
Expected<std::optional<double>> scalarInput(const std::vector<Tensor> &in, size_t i,
                                            const char *what) {
  if (in.size() <= i || in[i].empty())
    return std::optional<double>();
  if (in[i].numElements() != 1)
    return invalidArgument("input {} must hold one element, got {}", what, in[i].type().str());
  return std::optional<double>(in[i].elementAsDouble(0));
}

} // namespace

MiscEvalResult evalNonMaxSuppression(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(auto types, constantOutputTypes(node, in));
  const Tensor &boxesT = in[0], &scoresT = in[1];
  const int64_t batches = boxesT.shape()[0], numBoxes = boxesT.shape()[1];
  const int64_t classes = scoresT.shape()[1];
  if (scoresT.shape()[0] != batches || scoresT.shape()[2] != numBoxes)
    return invalidArgument("boxes {} and scores {} disagree on batches or boxes",
                           boxesT.type().str(), scoresT.type().str());
  const int64_t centerPointBox = node.getInt("center_point_box");
  if (centerPointBox != 0 && centerPointBox != 1)
    return invalidArgument("attribute 'center_point_box' must be 0 or 1, got {}", centerPointBox);
  DLC_ASSIGN_OR_RETURN(auto maxOut, scalarInput(in, 2, "max_output_boxes_per_class"));
  DLC_ASSIGN_OR_RETURN(auto iou, scalarInput(in, 3, "iou_threshold"));
  DLC_ASSIGN_OR_RETURN(auto scoreThreshold, scalarInput(in, 4, "score_threshold"));
  const int64_t limit = maxOut ? std::max<int64_t>(in[2].elementAsInt64(0), 0) : 0;
  const float iouThreshold = iou ? static_cast<float>(*iou) : 0.0f;
  const Tensor boxesF = boxesT.castTo(DType::kF32), scoresF = scoresT.castTo(DType::kF32);
  const float *boxes = boxesF.data<float>(), *scores = scoresF.data<float>();

  const int64_t slots = node.getInt("slots");
  std::vector<int64_t> rows;
  // The fixed-size form (slots > 0): each batch and class's selection, then its count.
  std::vector<int64_t> picked(static_cast<size_t>(batches * classes * slots), -1);
  std::vector<int64_t> counts(static_cast<size_t>(batches * classes), 0);
  std::vector<int64_t> candidates;
  std::vector<Box> selected;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes && limit > 0; ++c) {
      const float *s = scores + (b * classes + c) * numBoxes;
      candidates.clear();
      for (int64_t i = 0; i < numBoxes; ++i)
        if (!scoreThreshold || s[i] > static_cast<float>(*scoreThreshold))
          candidates.push_back(i);
      auto key = [&](int64_t i) { return std::isnan(s[i]) ? -INFINITY : s[i]; };
      std::stable_sort(candidates.begin(), candidates.end(),
                       [&](int64_t x, int64_t y) { return key(x) > key(y); });
      selected.clear();
      for (int64_t i : candidates) {
        if (static_cast<int64_t>(selected.size()) >= limit)
          break;
        const Box box = readBox(boxes + (b * numBoxes + i) * 4, centerPointBox == 1);
        if (std::any_of(selected.begin(), selected.end(),
                        [&](const Box &o) { return suppresses(box, o, iouThreshold); }))
          continue;
        if (slots > 0 && static_cast<int64_t>(selected.size()) < slots) {
          const int64_t line = b * classes + c;
          picked[static_cast<size_t>(line * slots) + selected.size()] = i;
          ++counts[static_cast<size_t>(line)];
        }
        selected.push_back(box);
        rows.insert(rows.end(), {b, c, i});
      }
    }
  if (slots > 0) {
    std::vector<Tensor> out{
        Tensor::fromVector<int64_t>(DType::kI64, {batches, classes, slots}, picked)};
    if (node.numOutputs() > 1)
      out.push_back(Tensor::fromVector<int64_t>(DType::kI64, {batches, classes}, counts));
    return out;
  }
  const int64_t n = static_cast<int64_t>(rows.size()) / 3;
  return std::vector<Tensor>{Tensor::fromVector<int64_t>(DType::kI64, {n, 3}, rows)};
}

} // namespace dlc::eval
