// Opset normalisation, part 1: attributes that later opsets made inputs.
#include "onnx_test_util.h"

namespace dlc::onnx {
namespace {

using testing::addAttr;
using testing::constInts;
using testing::ModelBuilder;
using TP = ::onnx::TensorProto;

// Imports `m` and returns the node that produces "y" (the graph is kept in `keep`).
Node *importY(const ModelBuilder &m, std::unique_ptr<Graph> &keep) {
  keep = m.importOk();
  return keep ? testing::producerOf(*keep, "y") : nullptr;
}

TEST(OnnxNormalize, ReshapeShapeAttribute) {
  ModelBuilder m(4);
  m.input("x", TP::FLOAT, {2, 3});
  addAttr(m.node("Reshape", {"x"}, {"y"}, "r"), "shape", std::vector<int64_t>{3, -1});
  m.output("y");
  std::unique_ptr<Graph> g;
  Node *n = importY(m, g);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->op(), Op::kReshape);
  ASSERT_EQ(n->numInputs(), 2);
  EXPECT_EQ(n->input(0)->name(), "x");
  EXPECT_EQ(n->input(1)->name(), "r_shape");
  EXPECT_EQ(n->input(1)->dtype(), DType::kI64);
  EXPECT_EQ(constInts(n->input(1)), (std::vector<int64_t>{3, -1}));
  EXPECT_TRUE(n->attrs().empty());
}

TEST(OnnxNormalize, SqueezeAndUnsqueezeAxes) {
  for (const char *type : {"Squeeze", "Unsqueeze"}) {
    ModelBuilder m(11);
    m.input("x");
    addAttr(m.node(type, {"x"}, {"y"}, "s"), "axes", std::vector<int64_t>{0, -1});
    m.output("y");
    std::unique_ptr<Graph> g;
    Node *n = importY(m, g);
    ASSERT_TRUE(n) << type;
    ASSERT_EQ(n->numInputs(), 2) << type;
    EXPECT_EQ(constInts(n->input(1)), (std::vector<int64_t>{0, -1})) << type;
    EXPECT_TRUE(n->attrs().empty()) << type;
  }
  ModelBuilder squeezeAll(11); // no axes: stays without the input
  squeezeAll.input("x");
  squeezeAll.node("Squeeze", {"x"}, {"y"});
  squeezeAll.output("y");
  std::unique_ptr<Graph> g;
  Node *n = importY(squeezeAll, g);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->numInputs(), 1);
}

TEST(OnnxNormalize, ReduceAxesBeforeTheirOpset) {
  struct Case {
    const char *type;
    int64_t opset;
    bool rewritten;
  };
  for (const Case &c :
       {Case{"ReduceSum", 12, true}, Case{"ReduceSum", 13, false}, Case{"ReduceMean", 17, true},
        Case{"ReduceMax", 11, true}, Case{"ReduceL2", 13, true}, Case{"ReduceMean", 18, false}}) {
    ModelBuilder m(c.opset);
    m.input("x");
    auto &node = m.node(c.type, {"x"}, {"y"}, "red");
    addAttr(node, "keepdims", int64_t{0});
    if (c.rewritten) {
      addAttr(node, "axes", std::vector<int64_t>{1});
    } else {
      m.initializer([] {
        TP t;
        t.set_name("ax");
        t.set_data_type(TP::INT64);
        t.add_dims(1);
        t.add_int64_data(1);
        return t;
      }());
      node.add_input("ax");
    }
    m.output("y");
    std::unique_ptr<Graph> g;
    Node *n = importY(m, g);
    ASSERT_TRUE(n) << c.type << " " << c.opset;
    ASSERT_EQ(n->numInputs(), 2);
    EXPECT_EQ(constInts(n->input(1)), (std::vector<int64_t>{1}));
    EXPECT_EQ(n->input(1)->name(), c.rewritten ? "red_axes" : "ax");
    EXPECT_EQ(n->attrs().size(), 1u);
    EXPECT_EQ(*n->findAttr("keepdims"), Attribute(int64_t{0}));
  }
}

TEST(OnnxNormalize, SplitAttribute) {
  ModelBuilder m(11);
  m.input("x");
  auto &node = m.node("Split", {"x"}, {"y", "z"}, "sp");
  addAttr(node, "split", std::vector<int64_t>{2, 3});
  addAttr(node, "axis", int64_t{1});
  m.output("y");
  m.output("z");
  std::unique_ptr<Graph> g;
  Node *n = importY(m, g);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->op(), Op::kSplit);
  EXPECT_EQ(constInts(n->input(1)), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(*n->findAttr("axis"), Attribute(int64_t{1}));
  EXPECT_FALSE(n->hasAttr("split"));
  EXPECT_EQ(n->output(1)->name(), "z");
}

TEST(OnnxNormalize, SliceAttributes) {
  ModelBuilder m(9);
  m.input("x");
  auto &node = m.node("Slice", {"x"}, {"y"}, "sl");
  addAttr(node, "starts", std::vector<int64_t>{0, 1});
  addAttr(node, "ends", std::vector<int64_t>{2, -1});
  addAttr(node, "axes", std::vector<int64_t>{0, 2});
  m.output("y");
  std::unique_ptr<Graph> g;
  Node *n = importY(m, g);
  ASSERT_TRUE(n);
  ASSERT_EQ(n->numInputs(), 4);
  EXPECT_EQ(constInts(n->input(1)), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(constInts(n->input(2)), (std::vector<int64_t>{2, -1}));
  EXPECT_EQ(constInts(n->input(3)), (std::vector<int64_t>{0, 2}));
  EXPECT_TRUE(n->attrs().empty());

  ModelBuilder missing(9);
  missing.input("x");
  addAttr(missing.node("Slice", {"x"}, {"y"}, "sl"), "starts", std::vector<int64_t>{0});
  missing.output("y");
  EXPECT_EQ(missing.importError(),
            "model.onnx: node 'sl' (Slice): missing required attribute 'ends'");
}

TEST(OnnxNormalize, ClipMinMaxTakeTheInputType) {
  ModelBuilder m(10);
  m.input("x", TP::FLOAT16, {4});
  auto &node = m.node("Clip", {"x"}, {"y"}, "c");
  addAttr(node, "min", -1.5f);
  addAttr(node, "max", 6.0f);
  m.output("y");
  std::unique_ptr<Graph> g;
  Node *n = importY(m, g);
  ASSERT_TRUE(n);
  ASSERT_EQ(n->numInputs(), 3);
  ASSERT_TRUE(n->input(1)->isConstant());
  EXPECT_EQ(n->input(1)->type(), TensorType(DType::kF16, Shape()));
  EXPECT_EQ(n->input(1)->constant().elementAsDouble(0), -1.5);
  EXPECT_EQ(n->input(2)->constant().elementAsDouble(0), 6.0);
  EXPECT_TRUE(n->attrs().empty());

  // Only max, on a value of unknown type: f32 constant cast like the input.
  ModelBuilder u(6);
  u.input("x");
  u.node("Relu", {"x"}, {"r"});
  addAttr(u.node("Clip", {"r"}, {"y"}, "c"), "max", 6.0f);
  u.output("y");
  n = importY(u, g);
  ASSERT_TRUE(n);
  ASSERT_EQ(n->numInputs(), 3);
  EXPECT_EQ(n->input(1), nullptr);
  Node *cast = n->input(2)->producer();
  ASSERT_TRUE(cast);
  EXPECT_EQ(cast->op(), Op::kCastLike);
  EXPECT_EQ(cast->input(0)->type(), TensorType(DType::kF32, Shape()));
  EXPECT_EQ(cast->input(0)->constant().elementAsDouble(0), 6.0);
  EXPECT_EQ(cast->input(1)->name(), "r");
}

TEST(OnnxNormalize, PadAttributes) {
  for (const char *padsName : {"paddings", "pads"}) {
    ModelBuilder m(std::string(padsName) == "paddings" ? 1 : 2);
    m.input("x", TP::FLOAT, {2, 2});
    auto &node = m.node("Pad", {"x"}, {"y"}, "p");
    addAttr(node, padsName, std::vector<int64_t>{0, 1, 0, 1});
    addAttr(node, "value", 2.0f);
    addAttr(node, "mode", "constant");
    m.output("y");
    std::unique_ptr<Graph> g;
    Node *n = importY(m, g);
    ASSERT_TRUE(n) << padsName;
    ASSERT_EQ(n->numInputs(), 3);
    EXPECT_EQ(constInts(n->input(1)), (std::vector<int64_t>{0, 1, 0, 1}));
    EXPECT_EQ(n->input(2)->type(), TensorType(DType::kF32, Shape()));
    EXPECT_EQ(n->input(2)->constant().elementAsDouble(0), 2.0);
    EXPECT_EQ(n->attrs().size(), 1u);
    EXPECT_EQ(*n->findAttr("mode"), Attribute("constant"));
  }
}

TEST(OnnxNormalize, TopKAttribute) {
  ModelBuilder m(9);
  m.input("x");
  auto &node = m.node("TopK", {"x"}, {"y", "i"}, "t");
  addAttr(node, "k", int64_t{3});
  addAttr(node, "axis", int64_t{0});
  m.output("y");
  m.output("i");
  std::unique_ptr<Graph> g;
  Node *n = importY(m, g);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->input(1)->type(), TensorType(DType::kI64, Shape({1})));
  EXPECT_EQ(constInts(n->input(1)), (std::vector<int64_t>{3}));
  EXPECT_EQ(n->attrs().size(), 1u);
}

TEST(OnnxNormalize, DropoutRatioAndDeprecatedAttributes) {
  ModelBuilder m(6);
  m.input("x");
  auto &node = m.node("Dropout", {"x"}, {"y"}, "d");
  addAttr(node, "ratio", 0.25f);
  addAttr(node, "is_test", int64_t{1});
  m.output("y");
  std::unique_ptr<Graph> g;
  Node *n = importY(m, g);
  ASSERT_TRUE(n);
  ASSERT_EQ(n->numInputs(), 2);
  EXPECT_EQ(n->input(1)->type(), TensorType(DType::kF32, Shape()));
  EXPECT_EQ(n->input(1)->constant().elementAsDouble(0), 0.25);
  EXPECT_TRUE(n->attrs().empty());
}

TEST(OnnxNormalize, DftAxisBecomesInput) {
  for (bool given : {true, false}) {
    ModelBuilder m(17);
    m.input("x", TP::FLOAT, {1, 8, 1});
    auto &node = m.node("DFT", {"x"}, {"y"}, "dft");
    if (given)
      addAttr(node, "axis", int64_t{0});
    addAttr(node, "onesided", int64_t{1});
    m.output("y");
    std::unique_ptr<Graph> g;
    Node *n = importY(m, g);
    ASSERT_TRUE(n);
    ASSERT_EQ(n->numInputs(), 3);
    EXPECT_EQ(n->input(1), nullptr);
    EXPECT_EQ(n->input(2)->type(), TensorType(DType::kI64, Shape()));
    // DFT-17's default axis is 1; the canonical input's default is -2, so it is always explicit.
    EXPECT_EQ(constInts(n->input(2)), (std::vector<int64_t>{given ? 0 : 1}));
    EXPECT_EQ(n->attrs().size(), 1u);
    EXPECT_EQ(*n->findAttr("onesided"), Attribute(int64_t{1}));
  }
}

TEST(OnnxNormalize, OldPoolingAndRecurrentAttributes) {
  ModelBuilder lp(1);
  lp.input("x", TP::FLOAT, {1, 1, 4, 4});
  auto &pool = lp.node("LpPool", {"x"}, {"y"});
  addAttr(pool, "p", 3.0f);
  addAttr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  lp.output("y");
  std::unique_ptr<Graph> g;
  Node *n = importY(lp, g);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n->findAttr("p"), Attribute(int64_t{3}));

  ModelBuilder lstm(1);
  for (const char *in : {"x", "w", "r"})
    lstm.input(in);
  auto &node = lstm.node("LSTM", {"x", "w", "r"}, {"y"});
  addAttr(node, "output_sequence", int64_t{1});
  addAttr(node, "hidden_size", int64_t{2});
  lstm.output("y");
  n = importY(lstm, g);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->attrs().size(), 1u);
  EXPECT_EQ(*n->findAttr("hidden_size"), Attribute(int64_t{2}));
}

TEST(OnnxNormalize, AttributeAndInputTogetherIsAnError) {
  ModelBuilder m(11);
  m.input("x");
  m.input("s", TP::INT64, {2});
  addAttr(m.node("Split", {"x", "s"}, {"y", "z"}, "sp"), "split", std::vector<int64_t>{1, 1});
  m.output("y");
  EXPECT_EQ(m.importError(), "model.onnx: node 'sp' (Split): 'split' is given both as an "
                             "attribute and as input 1");
}

TEST(OnnxNormalize, NewOpsetsAreLeftAlone) {
  ModelBuilder m(13);
  m.input("x");
  m.input("axes", TP::INT64, {1});
  m.node("Unsqueeze", {"x", "axes"}, {"y"});
  m.output("y");
  std::unique_ptr<Graph> g;
  Node *n = importY(m, g);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->input(1), g->findValue("axes"));
  EXPECT_TRUE(g->constants().empty());
}

} // namespace
} // namespace dlc::onnx

namespace dlc::onnx {
namespace {

TEST(OnnxNormalize, GridSampleModesRenamedAtOpset20) {
  for (auto [opset, legacy, canonical] :
       {std::tuple{16, "bilinear", "linear"}, {16, "bicubic", "cubic"}, {16, "nearest", "nearest"},
        {20, "linear", "linear"}}) {
    testing::ModelBuilder m(opset);
    m.input("x", ::onnx::TensorProto::FLOAT, {1, 1, 4, 4});
    m.input("grid", ::onnx::TensorProto::FLOAT, {1, 2, 2, 2});
    testing::addAttr(m.node("GridSample", {"x", "grid"}, {"y"}, "gs"), "mode", legacy);
    m.output("y");
    std::unique_ptr<Graph> g = m.importOk();
    ASSERT_TRUE(g);
    Node *n = testing::producerOf(*g, "y");
    ASSERT_TRUE(n);
    EXPECT_EQ(n->getString("mode"), canonical) << "opset " << opset << " mode " << legacy;
  }
}

} // namespace
} // namespace dlc::onnx
