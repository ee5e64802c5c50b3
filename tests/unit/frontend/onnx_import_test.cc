// The ONNX importer: graph structure, names, types, constants and initializers.
#include "onnx_test_util.h"

namespace dlc::onnx {
namespace {

using testing::ModelBuilder;
using TP = ::onnx::TensorProto;

TEST(OnnxImport, SimpleGraphKeepsNamesAndTypes) {
  ModelBuilder m;
  m.input("x", TP::FLOAT, {"N", 3, ""});
  m.initializer(testing::floatTensor("b", {3}, {1, 2, 3}));
  m.node("Add", {"x", "b"}, {"s"}, "add0");
  m.node("Relu", {"s"}, {"y"}, "relu0");
  m.output("y", TP::FLOAT, {"N", 3, 7});
  auto g = m.importOk();
  ASSERT_TRUE(g);
  EXPECT_EQ(g->name(), "g");
  ASSERT_EQ(g->inputs().size(), 1u);
  Value *x = g->inputs()[0];
  EXPECT_EQ(x->name(), "x");
  EXPECT_EQ(x->type(), TensorType(DType::kF32, Shape({Dim::symbol("N"), Dim(3), Dim::unknown()})));
  ASSERT_EQ(g->constants().size(), 1u);
  EXPECT_EQ(g->constants()[0]->name(), "b");
  EXPECT_EQ(g->constants()[0]->constant().toInt64Vector(), (std::vector<int64_t>{1, 2, 3}));
  auto nodes = g->nodes();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0]->op(), Op::kAdd);
  EXPECT_EQ(nodes[0]->name(), "add0");
  EXPECT_EQ(nodes[0]->input(0), x);
  EXPECT_EQ(nodes[0]->input(1), g->constants()[0]);
  EXPECT_EQ(nodes[0]->output(0)->name(), "s");
  EXPECT_EQ(nodes[1]->op(), Op::kRelu);
  EXPECT_EQ(nodes[1]->input(0), nodes[0]->output(0));
  ASSERT_EQ(g->outputs().size(), 1u);
  EXPECT_EQ(g->outputs()[0].name, "y");
  EXPECT_EQ(g->outputs()[0].value, nodes[1]->output(0));
  EXPECT_EQ(g->outputs()[0].declared,
            TensorType(DType::kF32, Shape({Dim::symbol("N"), Dim(3), Dim(7)})));
  // The declared output type is not put on the value: shape inference computes that.
  EXPECT_FALSE(nodes[1]->output(0)->type().isKnown());
}

TEST(OnnxImport, UnsortedNodesAreSorted) {
  ModelBuilder m;
  m.input("x");
  m.node("Neg", {"a"}, {"y"}, "second");
  m.node("Relu", {"x"}, {"a"}, "first");
  m.output("y");
  auto g = m.importOk();
  ASSERT_TRUE(g);
  auto nodes = g->nodes();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0]->name(), "first");
  EXPECT_EQ(nodes[1]->name(), "second");
}

TEST(OnnxImport, ValueInfoSetsHintsOnNodeOutputs) {
  ModelBuilder m;
  m.input("x", TP::FLOAT, {2, 3});
  m.node("Relu", {"x"}, {"a"});
  m.node("Neg", {"a"}, {"y"});
  m.valueInfo("a", TP::FLOAT, {2, "M"});
  m.valueInfo("x", TP::INT64, {9}); // a graph input keeps its declared type
  m.output("y");
  auto g = m.importOk();
  ASSERT_TRUE(g);
  EXPECT_EQ(g->findValue("a")->type(), TensorType(DType::kF32, Shape({Dim(2), Dim::symbol("M")})));
  EXPECT_EQ(g->findValue("x")->type(), TensorType(DType::kF32, Shape({2, 3})));
}

TEST(OnnxImport, EmptyNamesMeanAbsentInputsAndOutputs) {
  ModelBuilder m(17);
  m.input("x");
  m.input("r");
  m.node("Dropout", {"x", "", "r"}, {"y", ""}, "drop");
  m.output("y");
  auto g = m.importOk();
  ASSERT_TRUE(g);
  Node *n = testing::producerOf(*g, "y");
  ASSERT_TRUE(n);
  ASSERT_EQ(n->numInputs(), 3);
  EXPECT_EQ(n->input(1), nullptr);
  EXPECT_EQ(n->input(2)->name(), "r");
  ASSERT_EQ(n->numOutputs(), 2);
  EXPECT_NE(n->output(0), nullptr);
  EXPECT_EQ(n->output(1), nullptr);
}

TEST(OnnxImport, TrailingAbsentInputsAreDropped) {
  ModelBuilder m(17);
  m.input("x");
  m.node("Clip", {"x", "", ""}, {"y"});
  m.output("y");
  auto g = m.importOk();
  ASSERT_TRUE(g);
  EXPECT_EQ(testing::producerOf(*g, "y")->numInputs(), 1);
}

TEST(OnnxImport, UnnamedNodesStayUnnamed) {
  ModelBuilder m;
  m.input("x");
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  auto g = m.importOk();
  ASSERT_TRUE(g);
  EXPECT_EQ(testing::producerOf(*g, "y")->name(), "");
  EXPECT_EQ(g->findValue("y")->name(), "y");
}

TEST(OnnxImport, InitializerInputsBecomeConstantsUnlessKept) {
  ModelBuilder m(9, 3); // IR 3: initializers are also listed as inputs
  m.input("x", TP::FLOAT, {2});
  m.input("w", TP::FLOAT, {2});
  m.initializer(testing::floatTensor("w", {2}, {5, 6}));
  m.node("Mul", {"x", "w"}, {"y"});
  m.output("y");
  auto g = m.importOk();
  ASSERT_TRUE(g);
  ASSERT_EQ(g->inputs().size(), 1u);
  EXPECT_EQ(g->inputs()[0]->name(), "x");
  Value *w = g->findValue("w");
  ASSERT_TRUE(w && w->isConstant());
  EXPECT_EQ(w->constant().toInt64Vector(), (std::vector<int64_t>{5, 6}));

  ImportOptions keep;
  keep.keepInitializersAsInputs = true;
  auto g2 = m.importOk(keep);
  ASSERT_TRUE(g2);
  ASSERT_EQ(g2->inputs().size(), 2u);
  EXPECT_TRUE(g2->findValue("w")->isInput());
  EXPECT_TRUE(g2->constants().empty());
}

TEST(OnnxImport, ConstantNodesBecomeConstants) {
  ModelBuilder m;
  testing::addAttr(m.node("Constant", {}, {"t"}, "c0"), "value",
                   testing::floatTensor("", {2}, {1.5f, 2.5f}));
  testing::addAttr(m.node("Constant", {}, {"f"}, "c1"), "value_float", 0.25f);
  testing::addAttr(m.node("Constant", {}, {"fs"}, "c2"), "value_floats", std::vector<float>{1, 2});
  testing::addAttr(m.node("Constant", {}, {"i"}, "c3"), "value_int", int64_t{7});
  testing::addAttr(m.node("Constant", {}, {"is"}, "c4"), "value_ints", std::vector<int64_t>{3, 4});
  m.node("Sum", {"t", "f", "fs"}, {"y"});
  m.output("y");
  m.output("i", TP::INT64);
  m.output("is", TP::INT64);
  auto g = m.importOk();
  ASSERT_TRUE(g);
  EXPECT_EQ(g->numNodes(), 1u);
  EXPECT_EQ(g->constants().size(), 5u);
  const Tensor &t = g->findValue("t")->constant();
  EXPECT_EQ(t.type(), TensorType(DType::kF32, Shape({2})));
  EXPECT_EQ(t.data<float>()[1], 2.5f);
  const Tensor &f = g->findValue("f")->constant();
  EXPECT_EQ(f.type(), TensorType(DType::kF32, Shape()));
  EXPECT_EQ(f.data<float>()[0], 0.25f);
  EXPECT_EQ(g->findValue("fs")->type(), TensorType(DType::kF32, Shape({2})));
  EXPECT_EQ(g->findValue("i")->type(), TensorType(DType::kI64, Shape()));
  EXPECT_EQ(testing::constInts(g->findValue("i")), (std::vector<int64_t>{7}));
  EXPECT_EQ(testing::constInts(g->findValue("is")), (std::vector<int64_t>{3, 4}));
  // A graph output can be a constant directly.
  EXPECT_EQ(g->outputs()[1].value, g->findValue("i"));
}

TEST(OnnxImport, ConstantNodeErrors) {
  ModelBuilder sparse;
  auto &n = sparse.node("Constant", {}, {"t"}, "c");
  auto *a = n.add_attribute();
  a->set_name("sparse_value");
  a->set_type(::onnx::AttributeProto::SPARSE_TENSOR);
  sparse.output("t");
  EXPECT_EQ(sparse.importError(),
            "model.onnx: node 'c' (Constant): sparse constants are not supported");

  ModelBuilder str;
  testing::addAttr(str.node("Constant", {}, {"t"}, "c"), "value_string", "hi");
  str.output("t");
  EXPECT_EQ(str.importError(),
            "model.onnx: node 'c' (Constant): string constants are not supported");

  ModelBuilder wrong;
  testing::addAttr(wrong.node("Constant", {}, {"t"}, "c"), "value_int", 1.0f);
  wrong.output("t");
  EXPECT_EQ(wrong.importError(),
            "model.onnx: node 'c' (Constant): attribute 'value_int' must be int, got float");
}

TEST(OnnxImport, AttributesAreTyped) {
  ModelBuilder m;
  m.input("x");
  auto &n = m.node("MaxPool", {"x"}, {"y"}, "pool");
  testing::addAttr(n, "kernel_shape", std::vector<int64_t>{3, 3});
  testing::addAttr(n, "auto_pad", "SAME_UPPER");
  testing::addAttr(n, "ceil_mode", int64_t{1});
  m.output("y");
  auto g = m.importOk();
  ASSERT_TRUE(g);
  Node *pool = testing::producerOf(*g, "y");
  ASSERT_TRUE(pool);
  EXPECT_EQ(*pool->findAttr("kernel_shape"), Attribute(std::vector<int64_t>{3, 3}));
  EXPECT_EQ(*pool->findAttr("auto_pad"), Attribute("SAME_UPPER"));
  EXPECT_EQ(*pool->findAttr("ceil_mode"), Attribute(int64_t{1}));
}

TEST(OnnxImport, AcceptsIrVersions3To10) {
  for (int64_t ir = 3; ir <= 10; ++ir) {
    ModelBuilder m(13, ir);
    m.input("x");
    m.node("Relu", {"x"}, {"y"});
    m.output("y");
    EXPECT_EQ(m.importError(), "") << "IR version " << ir;
  }
  ModelBuilder old(13, 2);
  old.input("x");
  old.output("x");
  EXPECT_EQ(old.importError(), "model.onnx: IR version 2 is not supported (3 to 10 are)");
}

TEST(OnnxImport, AcceptsOpsets1To23InBothDomainSpellings) {
  for (int64_t opset = 1; opset <= 23; ++opset) {
    ModelBuilder m(opset);
    m.model.mutable_opset_import(0)->set_domain(opset % 2 ? "" : "ai.onnx");
    m.input("x");
    m.node("Relu", {"x"}, {"r"}).set_domain(opset % 3 ? "" : "ai.onnx");
    m.node("Neg", {"r"}, {"y"});
    m.output("y");
    EXPECT_EQ(m.importError(), "") << "opset " << opset;
  }
}

TEST(OnnxImport, GraphOutputCanBeAnInput) {
  ModelBuilder m;
  m.input("x", TP::INT32, {4});
  m.output("x", TP::INT32, {4});
  auto g = m.importOk();
  ASSERT_TRUE(g);
  EXPECT_EQ(g->outputs()[0].value, g->inputs()[0]);
}

} // namespace
} // namespace dlc::onnx
