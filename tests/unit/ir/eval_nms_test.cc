// Reference evaluation of NonMaxSuppression: the ONNX spec's examples, ordering rules and
// defaults of the optional inputs.
#include "eval_tensor_test_util.h"

namespace dlc::evaltest {
namespace {

const std::vector<float> kBoxes = {0, 0,  1, 1,  0, 0.1f,  1, 1.1f,  0, -0.1f, 1, 0.9f,
                                   0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100,   1, 101};
const std::vector<float> kScores = {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f};

struct Nms {
  std::vector<float> boxes = kBoxes, scores = kScores;
  int64_t batches = 1, classes = 1;
  std::optional<int64_t> maxOut = 3;
  std::optional<float> iou = 0.5f, scoreThreshold = 0.0f;
  int64_t centerPointBox = 0;
};

Node *build(Graph &g, const Nms &c) {
  const int64_t n = static_cast<int64_t>(c.boxes.size()) / 4 / c.batches;
  Node *node = g.createNode(
      Op::kNonMaxSuppression,
      {f32(g, {c.batches, n, 4}, c.boxes), f32(g, {c.batches, c.classes, n}, c.scores),
       c.maxOut ? i64(g, {1}, {*c.maxOut}) : nullptr, c.iou ? f32(g, {1}, {*c.iou}) : nullptr,
       c.scoreThreshold ? f32(g, {1}, {*c.scoreThreshold}) : nullptr},
      1, "nms");
  node->setAttr("center_point_box", c.centerPointBox);
  return node;
}

std::vector<int64_t> run(const Nms &c) {
  Graph g;
  Tensor out = eval1(build(g, c));
  EXPECT_EQ(out.rank(), 2);
  EXPECT_EQ(out.shape().back(), 3);
  return values<int64_t>(out);
}

TEST(EvalNonMaxSuppression, SuppressByIouInScoreOrder) {
  EXPECT_EQ(run(Nms{}), (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
}

TEST(EvalNonMaxSuppression, CenterPointAndFlippedCorners) {
  Nms center;
  center.boxes = {0.5f, 0.5f,  1, 1, 0.5f, 0.6f,  1, 1, 0.5f, 0.4f,   1, 1,
                  0.5f, 10.5f, 1, 1, 0.5f, 10.6f, 1, 1, 0.5f, 100.5f, 1, 1};
  center.centerPointBox = 1;
  EXPECT_EQ(run(center), (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
  Nms flipped;
  flipped.boxes = {1, 1,  0, 0,  0, 0.1f,  1, 1.1f,  0, 0.9f, 1, -0.1f,
                   0, 10, 1, 11, 1, 10.1f, 0, 11.1f, 1, 101,  0, 100};
  EXPECT_EQ(run(flipped), (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
}

TEST(EvalNonMaxSuppression, LimitsAndThresholds) {
  Nms limit;
  limit.maxOut = 2;
  EXPECT_EQ(run(limit), (std::vector<int64_t>{0, 0, 3, 0, 0, 0}));
  Nms scores;
  scores.scoreThreshold = 0.4f;
  EXPECT_EQ(run(scores), (std::vector<int64_t>{0, 0, 3, 0, 0, 0}));
  // Score exactly at the threshold is not above it.
  Nms atThreshold;
  atThreshold.scoreThreshold = 0.3f;
  atThreshold.maxOut = 10;
  EXPECT_EQ(run(atThreshold), (std::vector<int64_t>{0, 0, 3, 0, 0, 0}));
  // No threshold input: every box is a candidate; a high IoU threshold suppresses nothing.
  Nms all;
  all.scoreThreshold.reset();
  all.iou = 0.99f;
  all.maxOut = 10;
  EXPECT_EQ(run(all), (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 4, 0, 0, 5}));
  // No max_output_boxes_per_class input: nothing is selected.
  Nms none;
  none.maxOut.reset();
  Graph g;
  EXPECT_EQ(eval1(build(g, none)).type().str(), "i64[0,3]");
}

TEST(EvalNonMaxSuppression, IdenticalBoxesAndTies) {
  Nms same;
  same.boxes.clear();
  for (int i = 0; i < 10; ++i)
    same.boxes.insert(same.boxes.end(), {0, 0, 1, 1});
  same.scores.assign(10, 0.9f);
  EXPECT_EQ(run(same), (std::vector<int64_t>{0, 0, 0}));
  // Equal scores, disjoint boxes: lower index first.
  Nms ties;
  ties.boxes = {0, 0, 1, 1, 5, 5, 6, 6, 9, 9, 10, 10};
  ties.scores = {0.5f, 0.7f, 0.5f};
  EXPECT_EQ(run(ties), (std::vector<int64_t>{0, 0, 1, 0, 0, 0, 0, 0, 2}));
}

TEST(EvalNonMaxSuppression, BatchesThenClasses) {
  Nms batches;
  batches.batches = 2;
  batches.boxes.insert(batches.boxes.end(), kBoxes.begin(), kBoxes.end());
  batches.scores.insert(batches.scores.end(), kScores.begin(), kScores.end());
  batches.maxOut = 2;
  EXPECT_EQ(run(batches), (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 1, 0, 3, 1, 0, 0}));
  Nms classes;
  classes.classes = 2;
  classes.scores.insert(classes.scores.end(), kScores.begin(), kScores.end());
  classes.maxOut = 2;
  EXPECT_EQ(run(classes), (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 1, 3, 0, 1, 0}));
}

TEST(EvalNonMaxSuppression, BadCenterPointBox) {
  Graph g;
  Nms c;
  c.centerPointBox = 2;
  EXPECT_EQ(evalError(build(g, c)),
            "node 'nms' (NonMaxSuppression): attribute 'center_point_box' must be 0 or 1, got 2");
}

} // namespace
} // namespace dlc::evaltest
