// The ONNX exporter: the bundled models survive import -> export -> import unchanged, outputs
// known under another name than their value get an Identity, and what ONNX cannot hold is an
// error naming the node.
#include <gtest/gtest.h>

#include "frontend/onnx/exporter.h"
#include "frontend/onnx/importer.h"
#include "ir/parser.h"
#include "onnx/onnx.pb.h"

namespace dlc::onnx {
namespace {

TEST(OnnxExport, BundledModelsRoundTrip) {
  for (const char *name : {"mlp.onnx", "tiny_cnn.onnx", "tiny_bert.onnx", "digits_cnn.onnx"}) {
    auto g = importFile(std::string(DLC_SOURCE_DIR "/models/") + name);
    ASSERT_TRUE(g) << name << ": " << g.status().message();
    auto bytes = exportModel(**g);
    ASSERT_TRUE(bytes) << name << ": " << bytes.status().message();
    auto back = importBytes(*bytes, "", name);
    ASSERT_TRUE(back) << name << ": " << back.status().message();
    EXPECT_TRUE((*g)->structurallyEqual(**back)) << name;
    ASSERT_EQ((*g)->inputs().size(), (*back)->inputs().size());
    for (size_t i = 0; i < (*g)->inputs().size(); ++i)
      EXPECT_EQ((*g)->inputs()[i]->type(), (*back)->inputs()[i]->type()) << name;
  }
}

TEST(OnnxExport, RenamedOutputsAndQuantizedOpsSurvive) {
  auto g = parseGraph(R"(graph @q(%x: f32[N,4]) -> (y: ?, also_x: ?) {
  %s = constant f32[] dense<[0.5]>
  %z = constant u8[] dense<[128]>
  %q = quantize_linear(%x, %s, %z) {quant.ranges = [0.0, 1.0]} : u8[N,4] loc("q")
  %d = dequantize_linear(%q, %s, %z) : f32[N,4] loc("d")
  return %d, %x
})",
                      "q.dlc");
  ASSERT_TRUE(g) << g.status().message();
  auto bytes = exportModel(**g);
  ASSERT_TRUE(bytes) << bytes.status().message();
  auto back = importBytes(*bytes, "", "q.onnx");
  ASSERT_TRUE(back) << back.status().message();
  ASSERT_EQ((*back)->outputs().size(), 2u);
  EXPECT_EQ((*back)->outputs()[0].name, "y");
  EXPECT_EQ((*back)->outputs()[1].name, "also_x");
  EXPECT_EQ((*back)->inputs()[0]->type().str(), "f32[N,4]");
  int quantize = 0;
  for (const Node *n : (*back)->nodes()) {
    quantize += n->op() == Op::kQuantizeLinear;
    EXPECT_FALSE(n->findAttr("quant.ranges")) << "annotations are dlc's, not ONNX attributes";
  }
  EXPECT_EQ(quantize, 1);
}

TEST(OnnxExport, OptimizersKeepTheirTrainingDomain) {
  auto g = parseGraph(
      R"(graph @t(%r: f32[], %t: i64[], %x: f32[3], %g: f32[3], %v: f32[3]) -> (x2: ?, v2: ?) {
  %x2, %v2 = momentum(%r, %t, %x, %g, %v) {alpha = 0.9, beta = 0.1, mode = "nesterov", norm_coefficient = 0.0} : f32[3], f32[3] loc("m")
  return %x2, %v2
})",
      "t.dlc");
  ASSERT_TRUE(g) << g.status().message();
  auto bytes = exportModel(**g);
  ASSERT_TRUE(bytes) << bytes.status().message();
  ::onnx::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromString(*bytes));
  EXPECT_EQ(proto.graph().node(0).domain(), "ai.onnx.preview.training");
  bool imported = false;
  for (const auto &imp : proto.opset_import())
    imported |= imp.domain() == "ai.onnx.preview.training" && imp.version() == 1;
  EXPECT_TRUE(imported);
  auto back = importBytes(*bytes, "", "t.onnx");
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_TRUE((*g)->structurallyEqual(**back));
}

TEST(OnnxExport, FakeQuantNeedsCanonicalizingFirst) {
  auto g = parseGraph(R"(graph @f(%x: f32[4]) -> (y: ?) {
  %lo = constant f32[] dense<[-1.0]>
  %hi = constant f32[] dense<[1.0]>
  %y = fake_quant(%x, %lo, %hi) : f32[4] loc("fq")
  return %y
})",
                      "f.dlc");
  ASSERT_TRUE(g);
  auto bytes = exportModel(**g);
  ASSERT_FALSE(bytes);
  EXPECT_EQ(bytes.status().message(),
            "node 'fq' (FakeQuant): ONNX has no FakeQuant; run canonicalize-quant first (it "
            "makes it QuantizeLinear -> DequantizeLinear)");
}

} // namespace
} // namespace dlc::onnx
