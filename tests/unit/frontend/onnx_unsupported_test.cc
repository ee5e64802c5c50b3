// Unsupported ops: one error listing them all; summarizeFile lists them without failing.
#include "onnx_test_util.h"

namespace dlc::onnx {
namespace {

using testing::addAttr;
using testing::ModelBuilder;
using TP = ::onnx::TensorProto;

ModelBuilder modelWithUnsupportedOps() {
  ModelBuilder m(13);
  auto *ml = m.model.add_opset_import();
  ml->set_domain("com.example");
  ml->set_version(2);
  m.input("x");
  m.node("ImageDecoder", {"x"}, {"l0"}, "decode_0");
  m.node("Relu", {"l0"}, {"r"}, "relu");
  m.node("ImageDecoder", {"r"}, {"l1"}, "decode_1");
  for (int i = 0; i < 7; ++i)
    m.node("FancyOp", {"x"}, {"f" + std::to_string(i)}, i == 3 ? "" : "fancy" + std::to_string(i));
  m.node("SequenceConstruct", {"x"}, {"seq"}, "sc");
  m.node("StringNormalizer", {"x"}, {"sn"}, "norm");
  m.node("MyOp", {"x"}, {"m"}, "custom").set_domain("com.example");
  // The domain's gradient op is out of scope (its optimizers import); an optimizer's name in
  // the default domain is no ai.onnx op.
  m.node("Gradient", {"x"}, {"a"}, "grad").set_domain("ai.onnx.preview.training");
  m.node("Adam", {"x"}, {"b"}, "opt");
  m.output("l1");
  return m;
}

TEST(OnnxUnsupported, OneErrorListsEveryUnsupportedOp) {
  ModelBuilder m = modelWithUnsupportedOps();
  auto r = m.import();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(r.status().message(),
            "model.onnx: 7 unsupported op types:\n"
            "  ImageDecoder (ai.onnx opset 13): 2 nodes: decode_0, decode_1 -- not implemented\n"
            "  FancyOp (ai.onnx opset 13): 7 nodes: fancy0, fancy1, fancy2, #6, fancy4, ... -- "
            "not implemented\n"
            "  SequenceConstruct (ai.onnx opset 13): 1 node: sc -- out of scope: sequence/optional "
            "type\n"
            "  StringNormalizer (ai.onnx opset 13): 1 node: norm -- out of scope: string op\n"
            "  MyOp (com.example opset 2): 1 node: custom -- unknown domain\n"
            "  Gradient (ai.onnx.preview.training): 1 node: grad -- out of scope: training op\n"
            "  Adam (ai.onnx opset 13): 1 node: opt -- not an ai.onnx op: Adam is in "
            "ai.onnx.preview.training");
}

TEST(OnnxUnsupported, FoundBeforeAnyConversion) {
  // The initializer is broken too, but the unsupported op is reported first.
  ModelBuilder m(13);
  m.initializer(testing::floatTensor("w", {2}, {1}));
  m.node("ImageDecoder", {"w"}, {"y"}, "decode");
  m.output("y");
  EXPECT_EQ(m.importError(), "model.onnx: 1 unsupported op type:\n"
                             "  ImageDecoder (ai.onnx opset 13): 1 node: decode -- not "
                             "implemented");
}

TEST(OnnxSummary, ReportsModelContents) {
  ModelBuilder m = modelWithUnsupportedOps();
  m.model.set_ir_version(7);
  m.model.set_producer_name("pytorch");
  m.model.set_producer_version("2.1");
  m.graph()
      .mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->add_dim()
      ->set_dim_param("N");
  m.input("w", TP::FLOAT, {2});
  m.initializer(testing::floatTensor("w", {2}, {1, 2}));
  m.initializer(testing::floatTensor("w2", {3, 2}, {1, 2, 3, 4, 5, 6}));
  addAttr(m.node("Constant", {}, {"c"}), "value_ints", std::vector<int64_t>{1, 2, 3});
  testing::TempDir dir;
  std::string path = dir.write("model.onnx", m.bytes());
  auto s = summarizeFile(path);
  ASSERT_TRUE(s.hasValue()) << s.status().message();
  EXPECT_EQ(s->irVersion, 7);
  EXPECT_EQ(s->producer, "pytorch 2.1");
  EXPECT_EQ(s->opsets, (std::map<std::string, int64_t>{{"", 13}, {"com.example", 2}}));
  ASSERT_EQ(s->inputs.size(), 1u); // w is an initializer
  EXPECT_EQ(s->inputs[0].name, "x");
  EXPECT_EQ(s->inputs[0].type, TensorType(DType::kF32, Shape({Dim::symbol("N")})));
  ASSERT_EQ(s->outputs.size(), 1u);
  EXPECT_EQ(s->outputs[0].name, "l1");
  EXPECT_EQ(s->opHistogram.at("ImageDecoder"), 2);
  EXPECT_EQ(s->opHistogram.at("FancyOp"), 7);
  EXPECT_EQ(s->opHistogram.at("com.example::MyOp"), 1);
  EXPECT_EQ(s->opHistogram.at("ai.onnx.preview.training::Gradient"), 1);
  EXPECT_EQ(s->opHistogram.at("Adam"), 1);
  EXPECT_EQ(s->opHistogram.at("Constant"), 1);
  ASSERT_EQ(s->params.size(), 2u);
  EXPECT_EQ(s->params.at(DType::kF32).count, 8);
  EXPECT_EQ(s->params.at(DType::kF32).bytes, 32);
  EXPECT_EQ(s->params.at(DType::kI64).count, 3);
  EXPECT_EQ(s->params.at(DType::kI64).bytes, 24);
  ASSERT_EQ(s->unsupported.size(), 7u);
  const auto &fancy = s->unsupported[1];
  EXPECT_EQ(fancy.opType, "FancyOp");
  EXPECT_EQ(fancy.domain, "");
  EXPECT_EQ(fancy.opset, 13);
  EXPECT_EQ(fancy.count, 7);
  EXPECT_EQ(fancy.nodes, (std::vector<std::string>{"fancy0", "fancy1", "fancy2", "#6", "fancy4"}));
  EXPECT_EQ(fancy.reason, "not implemented");
  EXPECT_EQ(s->unsupported[4].domain, "com.example");
  EXPECT_EQ(s->unsupported[4].reason, "unknown domain");
}

TEST(OnnxSummary, SupportedModelHasNoUnsupportedList) {
  ModelBuilder m(17);
  m.input("x");
  m.node("Relu", {"x"}, {"y"});
  m.node("Upsample", {"y"}, {"z"}); // renamed to Resize by the importer: supported
  m.output("z");
  testing::TempDir dir;
  auto s = summarizeFile(dir.write("m.onnx", m.bytes()));
  ASSERT_TRUE(s.hasValue());
  EXPECT_TRUE(s->unsupported.empty());
  EXPECT_TRUE(s->params.empty());
}

} // namespace
} // namespace dlc::onnx
