// If, Loop and Scan: ONNX graph attributes become closed dlc bodies, the values of enclosing
// graphs they use becoming explicit inputs (captures) of the node and of the body.
#include "ir/eval/eval.h"
#include "onnx_test_util.h"

namespace dlc::onnx {
namespace {

using testing::ModelBuilder;
using TP = ::onnx::TensorProto;

/// A body graph in the making.
struct Body {
  ::onnx::GraphProto g;
  explicit Body(const std::string &name) { g.set_name(name); }
  Body &input(const std::string &name, int elemType, const std::vector<testing::DimSpec> &dims) {
    ModelBuilder::addValueInfo(g.add_input(), name, elemType, &dims);
    return *this;
  }
  Body &output(const std::string &name) {
    ModelBuilder::addValueInfo(g.add_output(), name, 0, nullptr);
    return *this;
  }
  ::onnx::NodeProto &node(const std::string &type, const std::vector<std::string> &inputs,
                          const std::vector<std::string> &outputs, const std::string &name = "") {
    auto *n = g.add_node();
    n->set_op_type(type);
    n->set_name(name);
    for (const auto &i : inputs)
      n->add_input(i);
    for (const auto &o : outputs)
      n->add_output(o);
    return *n;
  }
};

void addGraph(::onnx::NodeProto &n, const std::string &name, const Body &b) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::GRAPH);
  *a->mutable_g() = b.g;
}

std::vector<std::string> inputNames(const Node &n) {
  std::vector<std::string> out;
  for (const Value *v : n.inputs())
    out.push_back(v ? v->name() : "_");
  return out;
}
std::vector<std::string> inputNames(const Graph &g) {
  std::vector<std::string> out;
  for (const Value *v : g.inputs())
    out.push_back(v->name());
  return out;
}

Node *onlyNode(const Graph &g) {
  EXPECT_EQ(g.numNodes(), 1u);
  return g.nodes().empty() ? nullptr : g.nodes()[0];
}

// Loop: acc += (i > 0 ? step * scale : 0) with `step` from the graph, used only inside an If
// nested in the loop body, and `scale` an initializer of the graph.
ModelBuilder nestedModel() {
  ModelBuilder m(13);
  m.input("n", TP::INT64, {});
  m.input("acc0", TP::FLOAT, {2});
  m.input("step", TP::FLOAT, {});
  m.initializer(testing::floatTensor("scale", {}, {2.0f}));
  Body then("then");
  then.node("Mul", {"step", "scale"}, {"inc"});
  then.node("Add", {"acc", "inc"}, {"r"});
  then.output("r");
  Body els("else");
  els.node("Identity", {"acc"}, {"r2"});
  els.output("r2");
  Body body("body");
  body.input("i", TP::INT64, {}).input("c", TP::BOOL, {}).input("acc", TP::FLOAT, {2});
  testing::addAttr(body.node("Constant", {}, {"zero"}), "value_int", int64_t{0});
  body.node("Greater", {"i", "zero"}, {"later"});
  auto &pick = body.node("If", {"later"}, {"acc_out"}, "pick");
  addGraph(pick, "then_branch", then);
  addGraph(pick, "else_branch", els);
  body.output("c").output("acc_out");
  auto &loop = m.node("Loop", {"n", "", "acc0"}, {"acc"}, "loop");
  addGraph(loop, "body", body);
  m.output("acc");
  return m;
}

TEST(OnnxControlFlow, CapturesBecomeExplicitInputs) {
  auto g = nestedModel().importOk();
  ASSERT_TRUE(g);
  Node *loop = onlyNode(*g);
  ASSERT_EQ(loop->op(), Op::kLoop);
  // The nested If's captures are the loop body's captures too, in order of first use.
  EXPECT_EQ(inputNames(*loop), (std::vector<std::string>{"n", "_", "acc0", "step", "scale"}));
  EXPECT_EQ(loop->getInt("num_captures"), 2);
  const Graph &body = loop->findAttr("body")->graph();
  EXPECT_EQ(inputNames(body), (std::vector<std::string>{"i", "c", "acc", "step", "scale"}));
  EXPECT_EQ(body.inputs()[3]->type(), TensorType(DType::kF32, Shape()));
  Node *pick = testing::producerOf(body, "acc_out");
  ASSERT_TRUE(pick && pick->op() == Op::kIf);
  EXPECT_EQ(inputNames(*pick), (std::vector<std::string>{"later", "step", "scale", "acc"}));
  // Both branches take every capture, whether they use it or not.
  EXPECT_EQ(inputNames(pick->findAttr("then_branch")->graph()),
            (std::vector<std::string>{"step", "scale", "acc"}));
  EXPECT_EQ(inputNames(pick->findAttr("else_branch")->graph()),
            (std::vector<std::string>{"step", "scale", "acc"}));

  Tensor acc0 = Tensor::fromVector<float>(DType::kF32, {2}, {1.0f, -1.0f});
  auto r = eval::evaluate(*loop, {Tensor::scalarI64(3), Tensor(), acc0, Tensor::scalarF32(0.25f),
                                  Tensor::scalarF32(2.0f)});
  ASSERT_TRUE(r) << r.status().message();
  const float *acc = (*r)[0].data<float>();
  EXPECT_EQ(acc[0], 2.0f); // two of the three iterations add 0.25 * 2
  EXPECT_EQ(acc[1], 0.0f);
}

TEST(OnnxControlFlow, SequenceValuesAreOutOfScope) {
  ModelBuilder m(13);
  m.input("x", TP::FLOAT, {2});
  Body body("body");
  body.input("i", TP::INT64, {}).input("c", TP::BOOL, {});
  auto *seq = body.g.add_input();
  seq->set_name("seq");
  seq->mutable_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(TP::FLOAT);
  body.node("Identity", {"c"}, {"c2"});
  body.output("c2").output("seq");
  auto &loop = m.node("Loop", {"", "", "x"}, {"y"}, "l");
  addGraph(loop, "body", body);
  m.output("y");
  auto err = m.import();
  ASSERT_FALSE(err);
  EXPECT_EQ(err.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(err.status().message(), "model.onnx: node 'l' (Loop): body 'body': input 'seq' has a "
                                    "sequence type: sequence and optional values are out of scope");
}

TEST(OnnxControlFlow, UndefinedNamesInABody) {
  ModelBuilder m(13);
  m.input("c", TP::BOOL, {});
  Body then("then");
  then.node("Identity", {"nowhere"}, {"r"});
  then.output("r");
  Body els("else");
  els.node("Identity", {"c"}, {"r2"});
  els.output("r2");
  auto &n = m.node("If", {"c"}, {"y"}, "branch");
  addGraph(n, "then_branch", then);
  addGraph(n, "else_branch", els);
  m.output("y");
  EXPECT_EQ(m.importError(),
            "model.onnx: node 'branch' (If): body 'then_branch' uses undefined value 'nowhere'");
}

TEST(OnnxControlFlow, BodySignatureIsChecked) {
  ModelBuilder m(13);
  m.input("c", TP::BOOL, {});
  m.input("x", TP::FLOAT, {2});
  Body then("then");
  then.node("Identity", {"x"}, {"r"});
  then.output("r");
  Body els("else");
  els.node("Identity", {"x"}, {"r2"});
  els.node("Neg", {"x"}, {"r3"});
  els.output("r2").output("r3");
  auto &n = m.node("If", {"c"}, {"y"}, "branch");
  addGraph(n, "then_branch", then);
  addGraph(n, "else_branch", els);
  m.output("y");
  EXPECT_EQ(m.importError(), "model.onnx: node 'branch' (If): body 'else_branch' has 2 outputs, "
                             "expected 1 (one per node output)");
}

TEST(OnnxControlFlow, Scan8BecomesAScanOverTheBatch) {
  ModelBuilder m(8);
  m.input("init", TP::FLOAT, {2, 3});
  m.input("xs", TP::FLOAT, {2, 4, 3});
  Body body("body");
  body.input("s", TP::FLOAT, {3}).input("x", TP::FLOAT, {3});
  body.node("Add", {"s", "x"}, {"s2"});
  body.node("Identity", {"s2"}, {"o"});
  body.output("s2").output("o");
  auto &n = m.node("Scan", {"", "init", "xs"}, {"last", "all"}, "scan");
  addGraph(n, "body", body);
  testing::addAttr(n, "num_scan_inputs", int64_t{1});
  testing::addAttr(n, "directions", std::vector<int64_t>{1});
  m.output("last");
  m.output("all");
  auto g = m.importOk();
  ASSERT_TRUE(g);
  Node *outer = onlyNode(*g);
  EXPECT_EQ(inputNames(*outer), (std::vector<std::string>{"init", "xs"}));
  EXPECT_EQ(outer->getInt("num_scan_inputs"), 2);
  const Graph &batch = outer->findAttr("body")->graph();
  Node *inner = onlyNode(batch);
  ASSERT_EQ(inner->op(), Op::kScan);
  EXPECT_EQ(inner->getInt("num_scan_inputs"), 1);
  EXPECT_EQ(inner->getInts("scan_input_directions"), (std::vector<int64_t>{1}));

  // Batch 0 sums its rows backwards from 0, batch 1 from 10.
  std::vector<float> xs(24);
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = static_cast<float>(i + 1);
  auto r =
      eval::evaluate(*outer, {Tensor::fromVector<float>(DType::kF32, {2, 3}, {0, 0, 0, 10, 10, 10}),
                              Tensor::fromVector<float>(DType::kF32, {2, 4, 3}, xs)});
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ((*r)[0].toInt64Vector(), (std::vector<int64_t>{22, 26, 30, 80, 84, 88}));
  EXPECT_EQ((*r)[1].shape(), (std::vector<int64_t>{2, 4, 3}));
  // Row 0 of batch 0's scan output is the first step: its last row (10, 11, 12).
  EXPECT_EQ((*r)[1].toInt64Vector()[0], 10);
  EXPECT_EQ((*r)[1].toInt64Vector()[9], 22); // and its row 3 the total

  n.set_input(0, "init");
  EXPECT_EQ(m.importError(),
            "model.onnx: node 'scan' (Scan): Scan-8's sequence_lens input is not supported");
}

TEST(OnnxControlFlow, UnsupportedOpsInsideBodiesAreListedWithTheirPath) {
  ModelBuilder m(13);
  m.input("c", TP::BOOL, {});
  Body then("then");
  then.node("ImageDecoder", {"c"}, {"r"}, "decode");
  then.output("r");
  Body els("else");
  els.node("SequenceEmpty", {}, {"r2"});
  els.output("r2");
  auto &n = m.node("If", {"c"}, {"y"}, "branch");
  addGraph(n, "then_branch", then);
  addGraph(n, "else_branch", els);
  m.output("y");
  EXPECT_EQ(m.importError(), "model.onnx: 2 unsupported op types:\n"
                             "  ImageDecoder (ai.onnx opset 13): 1 node: branch/then_branch/decode "
                             "-- not implemented\n"
                             "  SequenceEmpty (ai.onnx opset 13): 1 node: branch/else_branch/#0 -- "
                             "out of scope: sequence/optional type");
}

} // namespace
} // namespace dlc::onnx
