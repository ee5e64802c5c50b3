// Attribute and arity checks against an op schema (a hand-made OpDef, so the test does not
// depend on the real table's rows).
#include "frontend/onnx/attributes.h"
#include "onnx_test_util.h"

namespace dlc::onnx {
namespace {

using detail::applyAttributes;
using detail::checkArity;

OpDef schema() {
  OpDef def;
  def.op = Op::kTranspose;
  def.minInputs = 1;
  def.maxInputs = 2;
  def.attrs = {{"perm", AttrKind::kInts, std::nullopt, false},
               {"to", AttrKind::kDType, std::nullopt, true},
               {"alpha", AttrKind::kFloat, Attribute(1.0f), false}};
  def.infer = [](InferContext &) { return Status::ok(); };
  return def;
}

struct Fixture {
  Graph g;
  Node *n = g.createNode(Op::kTranspose, {g.addInput("x", {})}, 1, "t");
};

TEST(OnnxAttributes, MatchingAttributesAreSetAndIntsBecomeDTypes) {
  Fixture f;
  AttrMap attrs;
  attrs["perm"] = Attribute(std::vector<int64_t>{1, 0});
  attrs["to"] = Attribute(int64_t{7}); // ONNX INT64
  ASSERT_TRUE(applyAttributes(*f.n, schema(), attrs, "node 't' (Transpose)").isOk());
  EXPECT_EQ(*f.n->findAttr("perm"), Attribute(std::vector<int64_t>{1, 0}));
  EXPECT_EQ(*f.n->findAttr("to"), Attribute(DType::kI64));
  EXPECT_FALSE(f.n->hasAttr("alpha")); // defaults are not materialised
}

TEST(OnnxAttributes, WrongKindUnknownNameAndMissingRequired) {
  Fixture f;
  AttrMap wrong{{"perm", Attribute(std::vector<float>{1, 0})}, {"to", Attribute(int64_t{1})}};
  EXPECT_EQ(applyAttributes(*f.n, schema(), wrong, "node 'n0' (Transpose)").message(),
            "node 'n0' (Transpose): attribute 'perm' must be ints, got floats");
  AttrMap unknown{{"bogus", Attribute(int64_t{1})}, {"to", Attribute(int64_t{1})}};
  EXPECT_EQ(applyAttributes(*f.n, schema(), unknown, "node 'n0' (Transpose)").message(),
            "node 'n0' (Transpose): unknown attribute 'bogus'");
  AttrMap missing{{"alpha", Attribute(0.5f)}};
  EXPECT_EQ(applyAttributes(*f.n, schema(), missing, "node 'n0' (Transpose)").message(),
            "node 'n0' (Transpose): missing required attribute 'to'");
  AttrMap badType{{"to", Attribute(int64_t{8})}};
  EXPECT_EQ(applyAttributes(*f.n, schema(), badType, "node 'n0' (Transpose)").message(),
            "node 'n0' (Transpose): attribute 'to': unsupported data type string");
  EXPECT_TRUE(f.n->attrs().empty()); // nothing is set on failure
}

TEST(OnnxAttributes, PlaceholderRowsTakeAttributesAsTheyAre) {
  Fixture f;
  OpDef placeholder;
  placeholder.op = Op::kTranspose;
  placeholder.minInputs = 0;
  placeholder.maxInputs = -1;
  placeholder.minOutputs = 0;
  placeholder.maxOutputs = -1;
  ASSERT_TRUE(detail::isPlaceholderDef(placeholder));
  EXPECT_FALSE(detail::isPlaceholderDef(schema()));
  AttrMap attrs{{"anything", Attribute("goes")}};
  ASSERT_TRUE(applyAttributes(*f.n, placeholder, attrs, "n").isOk());
  EXPECT_EQ(*f.n->findAttr("anything"), Attribute("goes"));
}

TEST(OnnxAttributes, Arity) {
  Fixture f;
  OpDef def = schema();
  EXPECT_TRUE(checkArity(*f.n, def, "n").isOk());
  def.minInputs = 2;
  def.maxInputs = 2;
  EXPECT_EQ(checkArity(*f.n, def, "node 't' (Transpose)").message(),
            "node 't' (Transpose): takes 2 inputs, got 1");
  Node *gap = f.g.createNode(Op::kTranspose, {nullptr, f.g.findValue("x")}, 1, "gap");
  EXPECT_EQ(checkArity(*gap, def, "node 'gap' (Transpose)").message(),
            "node 'gap' (Transpose): required input 0 is missing");
  def.minInputs = 0;
  def.maxInputs = -1;
  def.minOutputs = 2;
  def.maxOutputs = 3;
  EXPECT_EQ(checkArity(*f.n, def, "node 't' (Transpose)").message(),
            "node 't' (Transpose): has 2 to 3 outputs, got 1");
}

} // namespace
} // namespace dlc::onnx
