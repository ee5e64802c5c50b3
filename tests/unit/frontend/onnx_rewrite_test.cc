// Opset normalisation, part 2: ops that are renamed or rewritten into other ops.
#include "onnx_test_util.h"

namespace dlc::onnx {
namespace {

using testing::addAttr;
using testing::constInts;
using testing::ModelBuilder;
using TP = ::onnx::TensorProto;

Node *importY(const ModelBuilder &m, std::unique_ptr<Graph> &keep) {
  keep = m.importOk();
  return keep ? testing::producerOf(*keep, "y") : nullptr;
}

std::vector<float> constFloats(const Value *v) {
  std::vector<float> out;
  if (v && v->isConstant())
    for (int64_t i = 0; i < v->constant().numElements(); ++i)
      out.push_back(static_cast<float>(v->constant().elementAsDouble(i)));
  return out;
}

void expectLegacyResize(const Node *n, const std::string &mode) {
  EXPECT_EQ(n->op(), Op::kResize);
  EXPECT_EQ(*n->findAttr("mode"), Attribute(mode));
  EXPECT_EQ(*n->findAttr("coordinate_transformation_mode"), Attribute("asymmetric"));
  EXPECT_EQ(*n->findAttr("nearest_mode"), Attribute("floor"));
  EXPECT_EQ(n->attrs().size(), 3u);
  ASSERT_EQ(n->numInputs(), 3);
  EXPECT_EQ(n->input(1), nullptr); // roi
}

TEST(OnnxRewrite, Upsample7ScalesAttribute) {
  ModelBuilder m(7);
  m.input("x", TP::FLOAT, {1, 1, 2, 2});
  auto &node = m.node("Upsample", {"x"}, {"y"}, "up");
  addAttr(node, "scales", std::vector<float>{1, 1, 2, 3});
  m.output("y");
  std::unique_ptr<Graph> g;
  Node *n = importY(m, g);
  ASSERT_TRUE(n);
  expectLegacyResize(n, "nearest");
  EXPECT_EQ(n->name(), "up");
  EXPECT_EQ(n->input(2)->type(), TensorType(DType::kF32, Shape({4})));
  EXPECT_EQ(constFloats(n->input(2)), (std::vector<float>{1, 1, 2, 3}));
}

TEST(OnnxRewrite, Upsample1HeightWidthScales) {
  ModelBuilder m(1);
  m.input("x", TP::FLOAT, {1, 1, 2, 2});
  auto &node = m.node("Upsample", {"x"}, {"y"}, "up");
  addAttr(node, "height_scale", 2.0f);
  addAttr(node, "width_scale", 4.0f);
  addAttr(node, "mode", "bilinear");
  m.output("y");
  std::unique_ptr<Graph> g;
  Node *n = importY(m, g);
  ASSERT_TRUE(n);
  expectLegacyResize(n, "linear");
  EXPECT_EQ(constFloats(n->input(2)), (std::vector<float>{1, 1, 2, 4}));
}

TEST(OnnxRewrite, Upsample9AndResize10ScalesInput) {
  for (auto [type, opset] : {std::pair{"Upsample", 9}, {"Resize", 10}}) {
    ModelBuilder m(opset);
    m.input("x", TP::FLOAT, {1, 1, 2, 2});
    m.input("s", TP::FLOAT, {4});
    addAttr(m.node(type, {"x", "s"}, {"y"}, "up"), "mode", "linear");
    m.output("y");
    std::unique_ptr<Graph> g;
    Node *n = importY(m, g);
    ASSERT_TRUE(n) << type;
    expectLegacyResize(n, "linear");
    EXPECT_EQ(n->input(0)->name(), "x");
    EXPECT_EQ(n->input(2)->name(), "s");
  }
}

TEST(OnnxRewrite, Resize11IsLeftAlone) {
  ModelBuilder m(11);
  m.input("x", TP::FLOAT, {1, 1, 2, 2});
  m.input("roi", TP::FLOAT, {0});
  m.input("s", TP::FLOAT, {4});
  m.node("Resize", {"x", "roi", "s"}, {"y"});
  m.output("y");
  std::unique_ptr<Graph> g;
  Node *n = importY(m, g);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->input(1)->name(), "roi");
  EXPECT_TRUE(n->attrs().empty());
}

TEST(OnnxRewrite, ScatterBecomesScatterElements) {
  ModelBuilder m(9);
  m.input("x");
  m.input("i", TP::INT64, {1});
  m.input("u");
  addAttr(m.node("Scatter", {"x", "i", "u"}, {"y"}, "sc"), "axis", int64_t{1});
  m.output("y");
  std::unique_ptr<Graph> g;
  Node *n = importY(m, g);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->op(), Op::kScatterElements);
  EXPECT_EQ(n->numInputs(), 3);
  EXPECT_EQ(*n->findAttr("axis"), Attribute(int64_t{1}));
}

TEST(OnnxRewrite, OldSoftmaxOverTheLastAxisKeepsOneNode) {
  ModelBuilder m(11);
  m.input("x", TP::FLOAT, {"N", 10});
  m.node("Softmax", {"x"}, {"y"}, "sm"); // default axis 1 = last of rank 2
  m.output("y");
  std::unique_ptr<Graph> g;
  Node *n = importY(m, g);
  ASSERT_TRUE(n);
  EXPECT_EQ(g->numNodes(), 1u);
  EXPECT_EQ(n->op(), Op::kSoftmax);
  EXPECT_EQ(n->input(0)->name(), "x");
  EXPECT_EQ(*n->findAttr("axis"), Attribute(int64_t{1}));

  ModelBuilder neg(12);
  neg.input("x", TP::FLOAT, {2, 3, 4});
  addAttr(neg.node("LogSoftmax", {"x"}, {"y"}), "axis", int64_t{-1});
  neg.output("y");
  n = importY(neg, g);
  ASSERT_TRUE(n);
  EXPECT_EQ(g->numNodes(), 1u);
  EXPECT_EQ(*n->findAttr("axis"), Attribute(int64_t{2}));
}

TEST(OnnxRewrite, OldSoftmaxOverAnInnerAxisIsFlattened) {
  ModelBuilder m(11);
  m.input("x", TP::FLOAT, {"N", 3, 4, 5});
  m.node("Softmax", {"x"}, {"y"}, "sm"); // axis 1 of rank 4: softmax over 3*4*5 values
  m.node("Neg", {"y"}, {"z"}, "after");
  m.valueInfo("y", TP::FLOAT, {"N", 3, 4, 5});
  m.output("z");
  auto g = m.importOk();
  ASSERT_TRUE(g);
  Node *reshape = testing::producerOf(*g, "y");
  ASSERT_TRUE(reshape);
  EXPECT_EQ(reshape->op(), Op::kReshape);
  EXPECT_EQ(reshape->name(), "sm/reshape");
  EXPECT_EQ(*reshape->findAttr("allowzero"), Attribute(int64_t{1}));
  // The ONNX name and its type hint move to the reshape's output.
  EXPECT_EQ(reshape->output(0)->type(),
            TensorType(DType::kF32, Shape({Dim::symbol("N"), Dim(3), Dim(4), Dim(5)})));
  Node *sm = reshape->input(0)->producer();
  ASSERT_TRUE(sm);
  EXPECT_EQ(sm->op(), Op::kSoftmax);
  EXPECT_EQ(sm->name(), "sm");
  EXPECT_EQ(*sm->findAttr("axis"), Attribute(int64_t{1}));
  EXPECT_FALSE(sm->output(0)->type().isKnown());
  Node *flat = sm->input(0)->producer();
  ASSERT_TRUE(flat);
  EXPECT_EQ(flat->op(), Op::kFlatten);
  EXPECT_EQ(*flat->findAttr("axis"), Attribute(int64_t{1}));
  EXPECT_EQ(flat->input(0)->name(), "x");
  Node *shape = reshape->input(1)->producer();
  ASSERT_TRUE(shape);
  EXPECT_EQ(shape->op(), Op::kShape);
  EXPECT_EQ(shape->input(0)->name(), "x");
  // Users of y now read the reshape; the order is topological.
  EXPECT_EQ(testing::producerOf(*g, "z")->input(0), reshape->output(0));
  auto nodes = g->nodes();
  ASSERT_EQ(nodes.size(), 5u);
  EXPECT_EQ(nodes.back()->name(), "after");
}

TEST(OnnxRewrite, OldSoftmaxOfUnknownRankIsFlattened) {
  for (const char *type : {"Hardmax", "LogSoftmax"}) {
    ModelBuilder m(9);
    m.input("x");
    m.node("Relu", {"x"}, {"r"});
    addAttr(m.node(type, {"r"}, {"y"}), "axis", int64_t{2});
    m.output("y");
    std::unique_ptr<Graph> g;
    Node *reshape = importY(m, g);
    ASSERT_TRUE(reshape) << type;
    EXPECT_EQ(reshape->op(), Op::kReshape);
    EXPECT_EQ(reshape->name(), "");
    Node *op = reshape->input(0)->producer();
    EXPECT_EQ(opOnnxName(op->op()), type);
    EXPECT_EQ(op->input(0)->producer()->op(), Op::kFlatten);
    EXPECT_EQ(*op->input(0)->producer()->findAttr("axis"), Attribute(int64_t{2}));
    EXPECT_EQ(g->outputs()[0].value, reshape->output(0));
  }
}

TEST(OnnxRewrite, Softmax13IsLeftAlone) {
  ModelBuilder m(13);
  m.input("x", TP::FLOAT, {2, 3, 4});
  addAttr(m.node("Softmax", {"x"}, {"y"}), "axis", int64_t{1});
  m.output("y");
  std::unique_ptr<Graph> g;
  Node *n = importY(m, g);
  ASSERT_TRUE(n);
  EXPECT_EQ(g->numNodes(), 1u);
  EXPECT_EQ(*n->findAttr("axis"), Attribute(int64_t{1}));
}

TEST(OnnxRewrite, BatchNormalizationDropsDeprecatedAttributes) {
  ModelBuilder m(6);
  for (const char *in : {"x", "s", "b", "mean", "var"})
    m.input(in);
  auto &node = m.node("BatchNormalization", {"x", "s", "b", "mean", "var"}, {"y"}, "bn");
  addAttr(node, "spatial", int64_t{1});
  addAttr(node, "is_test", int64_t{1});
  addAttr(node, "consumed_inputs", std::vector<int64_t>{0, 0, 0, 1, 1});
  addAttr(node, "epsilon", 1e-3f);
  m.output("y");
  std::unique_ptr<Graph> g;
  Node *n = importY(m, g);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->attrs().size(), 1u);
  EXPECT_EQ(*n->findAttr("epsilon"), Attribute(1e-3f));

  ModelBuilder bad(7);
  for (const char *in : {"x", "s", "b", "mean", "var"})
    bad.input(in);
  addAttr(bad.node("BatchNormalization", {"x", "s", "b", "mean", "var"}, {"y"}, "bn"), "spatial",
          int64_t{0});
  bad.output("y");
  EXPECT_EQ(bad.importError(), "model.onnx: node 'bn' (BatchNormalization): spatial=0 "
                               "(per-activation statistics) is not supported");
}

TEST(OnnxRewrite, ElementTypesBecomeDTypeAttributes) {
  ModelBuilder m(13);
  m.input("x");
  addAttr(m.node("Cast", {"x"}, {"y"}), "to", int64_t{TP::FLOAT16});
  addAttr(m.node("EyeLike", {"x"}, {"e"}), "dtype", int64_t{TP::INT32});
  auto &rn = m.node("RandomNormal", {}, {"r"});
  addAttr(rn, "dtype", int64_t{TP::DOUBLE});
  addAttr(rn, "shape", std::vector<int64_t>{2});
  m.output("y");
  m.output("e");
  m.output("r");
  std::unique_ptr<Graph> g;
  Node *n = importY(m, g);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n->findAttr("to"), Attribute(DType::kF16));
  EXPECT_EQ(*testing::producerOf(*g, "e")->findAttr("dtype"), Attribute(DType::kI32));
  EXPECT_EQ(*testing::producerOf(*g, "r")->findAttr("dtype"), Attribute(DType::kF64));

  ModelBuilder cast1(1); // Cast-1 names the type
  cast1.input("x");
  addAttr(cast1.node("Cast", {"x"}, {"y"}), "to", "BFLOAT16");
  cast1.output("y");
  n = importY(cast1, g);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n->findAttr("to"), Attribute(DType::kBF16));

  ModelBuilder str(13);
  str.input("x");
  addAttr(str.node("Cast", {"x"}, {"y"}, "c"), "to", int64_t{TP::STRING});
  str.output("y");
  EXPECT_EQ(str.importError(),
            "model.onnx: node 'c' (Cast): attribute 'to': unsupported data type string");
  ModelBuilder name(1);
  name.input("x");
  addAttr(name.node("Cast", {"x"}, {"y"}, "c"), "to", "FLOAT7");
  name.output("y");
  EXPECT_EQ(name.importError(),
            "model.onnx: node 'c' (Cast): attribute 'to': unknown data type 'FLOAT7'");
}

TEST(OnnxRewrite, GroupNormalization18ExpandsPerGroupScaleAndBias) {
  ModelBuilder m(18);
  m.input("x", TP::FLOAT, {"N", 4, 8});
  m.initializer(testing::floatTensor("scale", {2}, {1, 2}));
  m.initializer(testing::floatTensor("bias", {2}, {10, 20}));
  addAttr(m.node("GroupNormalization", {"x", "scale", "bias"}, {"y"}, "gn"), "num_groups",
          int64_t{2});
  m.output("y");
  std::unique_ptr<Graph> g;
  Node *n = importY(m, g);
  ASSERT_TRUE(n);
  EXPECT_EQ(constFloats(n->input(1)), (std::vector<float>{1, 1, 2, 2}));
  EXPECT_EQ(constFloats(n->input(2)), (std::vector<float>{10, 10, 20, 20}));
  EXPECT_EQ(n->input(1)->name(), "gn_scale");
  EXPECT_EQ(*n->findAttr("num_groups"), Attribute(int64_t{2}));

  ModelBuilder dyn(18);
  dyn.input("x", TP::FLOAT, {"N", "C", 8});
  dyn.input("scale", TP::FLOAT, {2});
  dyn.input("bias", TP::FLOAT, {2});
  addAttr(dyn.node("GroupNormalization", {"x", "scale", "bias"}, {"y"}, "gn"), "num_groups",
          int64_t{2});
  dyn.output("y");
  EXPECT_EQ(dyn.importError(), "model.onnx: node 'gn' (GroupNormalization): opset-18 "
                               "GroupNormalization needs a constant per-group scale and bias and "
                               "a known channel count");
}

TEST(OnnxRewrite, LegacyBroadcastAxisBecomesUnsqueeze) {
  ModelBuilder m(6);
  m.input("a", TP::FLOAT, {2, 3, 4, 5});
  m.input("b", TP::FLOAT, {3});
  auto &node = m.node("Add", {"a", "b"}, {"y"}, "add");
  addAttr(node, "broadcast", int64_t{1});
  addAttr(node, "axis", int64_t{1});
  m.output("y");
  std::unique_ptr<Graph> g;
  Node *n = importY(m, g);
  ASSERT_TRUE(n);
  EXPECT_TRUE(n->attrs().empty());
  Node *u = n->input(1)->producer();
  ASSERT_TRUE(u);
  EXPECT_EQ(u->op(), Op::kUnsqueeze);
  EXPECT_EQ(u->input(0)->name(), "b");
  EXPECT_EQ(constInts(u->input(1)), (std::vector<int64_t>{1, 2})); // b: [3] -> [3,1,1]

  ModelBuilder suffix(6); // broadcast without axis is numpy's suffix rule: nothing to do
  suffix.input("a", TP::FLOAT, {2, 3});
  suffix.input("b", TP::FLOAT, {3});
  addAttr(suffix.node("Mul", {"a", "b"}, {"y"}), "broadcast", int64_t{1});
  suffix.output("y");
  n = importY(suffix, g);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->input(1)->name(), "b");
  EXPECT_TRUE(n->attrs().empty());

  ModelBuilder unknown(6);
  unknown.input("a");
  unknown.input("b");
  auto &un = unknown.node("Sub", {"a", "b"}, {"y"}, "sub");
  addAttr(un, "broadcast", int64_t{1});
  addAttr(un, "axis", int64_t{0});
  unknown.output("y");
  EXPECT_EQ(unknown.importError(), "model.onnx: node 'sub' (Sub): legacy broadcasting with "
                                   "'axis' needs the ranks of both inputs");
}

TEST(OnnxRewrite, Concat1DefaultAxis) {
  ModelBuilder m(3);
  m.input("a");
  m.input("b");
  m.node("Concat", {"a", "b"}, {"y"});
  m.output("y");
  std::unique_ptr<Graph> g;
  Node *n = importY(m, g);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n->findAttr("axis"), Attribute(int64_t{1}));
}

} // namespace
} // namespace dlc::onnx
