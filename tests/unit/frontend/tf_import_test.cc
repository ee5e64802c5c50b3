// The TensorFlow frontend's pieces: TensorProto -> Tensor with TensorFlow's rules, dtypes,
// shapes, format detection, and GraphDefs built in memory (binary and text).
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include "frontend/model_format.h"
#include "frontend/tf/importer.h"
#include "frontend/tf/tensor_proto.h"

namespace dlc::tf {
namespace {

tfproto::TensorProto proto(tfproto::DataType dt, std::vector<int64_t> dims) {
  tfproto::TensorProto t;
  t.set_dtype(dt);
  for (int64_t d : dims)
    t.mutable_tensor_shape()->add_dim()->set_size(d);
  return t;
}

TEST(TfTensor, FewerValuesThanElementsRepeatTheLast) {
  tfproto::TensorProto t = proto(tfproto::DT_FLOAT, {2, 3});
  t.add_float_val(1.5f);
  t.add_float_val(-2.0f);
  auto r = fromTfTensor(t);
  ASSERT_TRUE(r) << r.status().message();
  std::vector<float> got(r->data<float>(), r->data<float>() + 6);
  EXPECT_EQ(got, (std::vector<float>{1.5f, -2.0f, -2.0f, -2.0f, -2.0f, -2.0f}));
}

TEST(TfTensor, NoValuesMeansZeros) {
  auto r = fromTfTensor(proto(tfproto::DT_INT64, {4}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->toInt64Vector(), (std::vector<int64_t>{0, 0, 0, 0}));
}

TEST(TfTensor, HalfValHoldsTheBits) {
  tfproto::TensorProto t = proto(tfproto::DT_HALF, {2});
  t.add_half_val(0x3c00); // 1.0
  t.add_half_val(0xc000); // -2.0
  auto r = fromTfTensor(t);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->dtype(), DType::kF16);
  EXPECT_EQ(r->elementAsDouble(0), 1.0);
  EXPECT_EQ(r->elementAsDouble(1), -2.0);
  tfproto::TensorProto b = proto(tfproto::DT_BFLOAT16, {1});
  b.add_half_val(0x4040); // 3.0
  auto rb = fromTfTensor(b);
  ASSERT_TRUE(rb);
  EXPECT_EQ(rb->elementAsDouble(0), 3.0);
}

TEST(TfTensor, SmallIntegersComeFromIntVal) {
  tfproto::TensorProto t = proto(tfproto::DT_UINT8, {3});
  for (int v : {0, 200, 255})
    t.add_int_val(v);
  auto r = fromTfTensor(t);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->toInt64Vector(), (std::vector<int64_t>{0, 200, 255}));
  tfproto::TensorProto b = proto(tfproto::DT_BOOL, {2});
  b.add_bool_val(true);
  auto rb = fromTfTensor(b);
  ASSERT_TRUE(rb);
  EXPECT_EQ(rb->toInt64Vector(), (std::vector<int64_t>{1, 1}));
}

TEST(TfTensor, ContentMustMatchTheShape) {
  tfproto::TensorProto t = proto(tfproto::DT_FLOAT, {3});
  t.set_tensor_content(std::string(8, '\0'));
  auto r = fromTfTensor(t);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().message(), "tensor_content holds 8 bytes but f32 [3] needs 12");
  tfproto::TensorProto v = proto(tfproto::DT_INT32, {1});
  v.add_int_val(1);
  v.add_int_val(2);
  EXPECT_FALSE(fromTfTensor(v));
  EXPECT_FALSE(fromTfTensor(proto(tfproto::DT_FLOAT, {-1})));
}

TEST(TfTensor, TypesDlcLacksAreNamed) {
  auto r = fromTfTensor(proto(tfproto::DT_STRING, {1}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().message(), "dtype DT_STRING has no dlc equivalent");
  EXPECT_EQ(tfTypeName(77), "DataType 77");
}

TEST(TfTypes, ReferenceTypesReadAsTheirBase) {
  TfType t = fromTfType(tfproto::DT_FLOAT_REF);
  EXPECT_EQ(t.dtype, DType::kF32);
  EXPECT_TRUE(t.ref);
  EXPECT_FALSE(fromTfType(tfproto::DT_INT32).ref);
  EXPECT_EQ(fromTfType(tfproto::DT_COMPLEX64).dtype, DType::kUnknown);
}

TEST(TfTypes, UnknownDimsBecomeNamedSymbols) {
  tfproto::TensorShapeProto s;
  s.add_dim()->set_size(-1);
  s.add_dim()->set_size(784);
  auto r = fromTfShape(s, "input/x:0");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->str(), "[input_x_0_d0,784]");
  s.mutable_dim(1)->set_size(-7);
  EXPECT_FALSE(fromTfShape(s, "x"));
  tfproto::TensorShapeProto u;
  u.set_unknown_rank(true);
  EXPECT_FALSE(fromTfShape(u, "x")->isRanked());
}

class TempDir {
public:
  TempDir()
      : path_(std::filesystem::temp_directory_path() /
              ("dlc-tf-test-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string write(const std::string &name, const std::string &bytes) const {
    std::string p = (path_ / name).string();
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }

private:
  std::filesystem::path path_;
};

const char *kGraph = R"(
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape { dim { size: -1 } dim { size: 2 } } } } }
node { name: "scope/y" op: "Relu" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "split" op: "Split" input: "dim" input: "scope/y" attr { key: "num_split" value { i: 2 } } }
node { name: "dim" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }
)";

std::string binary(const char *text) {
  tfproto::GraphDef g;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &g));
  return g.SerializeAsString();
}

TEST(TfImport, SinksAreTheOutputsUnderTensorFlowNames) {
  ImportOptions opts;
  auto g = importBytes(binary(kGraph), "g.pb", opts);
  ASSERT_TRUE(g) << g.status().message();
  ASSERT_EQ((*g)->outputs().size(), 2u);
  EXPECT_EQ((*g)->outputs()[0].name, "split");
  EXPECT_EQ((*g)->outputs()[1].name, "split:1");
  EXPECT_EQ((*g)->inputs()[0]->type().str(), "f32[x_d0,2]");
  EXPECT_NE((*g)->findValue("scope/y"), nullptr);
}

TEST(TfImport, OutputsPickTensorsAndPruneTheRest) {
  ImportOptions opts;
  opts.outputs = {"scope/y:0"};
  auto g = importBytes(binary(kGraph), "g.pb", opts);
  ASSERT_TRUE(g) << g.status().message();
  ASSERT_EQ((*g)->outputs().size(), 1u);
  EXPECT_EQ((*g)->outputs()[0].name, "scope/y");
  EXPECT_EQ((*g)->numNodes(), 1u); // the Split is not needed
  opts.outputs = {"split:2"};
  auto bad = importBytes(binary(kGraph), "g.pb", opts);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.status().message(), "output 'split:2': node 'split' (Split) has 2 outputs");
}

TEST(TfImport, TextAndBinaryGiveTheSameGraph) {
  ImportOptions text;
  text.text = true;
  auto a = importBytes(kGraph, "g.pbtxt", text);
  auto b = importBytes(binary(kGraph), "g.pb", ImportOptions());
  ASSERT_TRUE(a && b);
  EXPECT_TRUE((*a)->structurallyEqual(**b));
}

TEST(TfImport, TruncatedBytesAreAnErrorNamingTheFile) {
  std::string bytes = binary(kGraph);
  for (size_t n : {size_t{1}, bytes.size() / 2, bytes.size() - 1}) {
    auto g = importBytes(std::string_view(bytes).substr(0, n), "cut.pb", ImportOptions());
    ASSERT_FALSE(g) << n;
    EXPECT_NE(g.status().message().find("cut.pb:"), std::string::npos) << g.status().message();
  }
}

TEST(ModelFormat, PbIsToldApartByContent) {
  TempDir dir;
  EXPECT_EQ(*detectModelFormat(dir.write("g.pb", binary(kGraph))), ModelFormat::kTfGraphDef);
  EXPECT_EQ(*detectModelFormat(dir.write("o.pb", std::string("\x08\x07\x12\x03", 4) + "dlc")),
            ModelFormat::kOnnx);
  EXPECT_EQ(*detectModelFormat(dir.write("t.pbtxt", kGraph)), ModelFormat::kTfText);
  EXPECT_EQ(*detectModelFormat(dir.write("m.txt", "// a comment\ngraph @g() -> () {\n}\n")),
            ModelFormat::kDlcText);
  EXPECT_EQ(*detectModelFormat(dir.write("g.pb", binary(kGraph)), ModelFormat::kOnnx),
            ModelFormat::kOnnx); // --format wins
  auto bad = detectModelFormat(dir.write("x.bin", std::string("\xff\xfe\x00\x01", 4)));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("starts with bytes ff fe 00 01"), std::string::npos);
  auto empty = detectModelFormat(dir.write("e.pb", ""));
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.status().message().find("the file is empty"), std::string::npos);
  EXPECT_FALSE(parseModelFormatFlag("tensorflow"));
}

} // namespace
} // namespace dlc::tf

namespace dlc::tf {
namespace {

// A graph that takes most of the importer's paths: typed *_val and tensor_content constants,
// a control input, a Switch on a constant predicate, an NHWC convolution, a StridedSlice,
// device strings and colocation.
const char *kRich = R"(
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape { dim { size: 1 } dim { size: 4 } dim { size: 4 } dim { size: 2 } } } } }
node { name: "w" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } dim { size: 1 } dim { size: 2 } dim { size: 2 } } float_val: 0.5 } } } }
node { name: "w/read" op: "Identity" input: "w" attr { key: "_class" value { list { s: "loc:@w" } } } }
node { name: "conv" op: "Conv2D" input: "x" input: "w/read" device: "/device:GPU:0"
       attr { key: "T" value { type: DT_FLOAT } } attr { key: "padding" value { s: "SAME" } }
       attr { key: "strides" value { list { i: 1 i: 1 i: 1 i: 1 } } } }
node { name: "p" op: "Const" attr { key: "dtype" value { type: DT_BOOL } }
       attr { key: "value" value { tensor { dtype: DT_BOOL tensor_shape { } bool_val: true } } } }
node { name: "sw" op: "Switch" input: "conv" input: "p" }
node { name: "r" op: "Relu" input: "sw:1" input: "^w/read" }
node { name: "m" op: "Merge" input: "sw" input: "r" }
node { name: "b" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 4 } } tensor_content: "\000\000\000\000\001\000\000\000\000\000\000\000\000\000\000\000" } } } }
node { name: "e" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 4 } } int_val: 0 int_val: 3 int_val: 0 int_val: 0 } } } }
node { name: "s" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 4 } } int_val: 1 } } } }
node { name: "ss" op: "StridedSlice" input: "m" input: "b" input: "e" input: "s"
       attr { key: "Index" value { type: DT_INT32 } } attr { key: "T" value { type: DT_FLOAT } }
       attr { key: "begin_mask" value { i: 13 } } attr { key: "end_mask" value { i: 13 } }
       attr { key: "shrink_axis_mask" value { i: 0 } } }
)";

TEST(TfFuzz, CorruptedBytesFailCleanly) {
  const std::string good = binary(kRich);
  auto ok = importBytes(good, "rich.pb", ImportOptions());
  ASSERT_TRUE(ok) << ok.status().message();
  std::mt19937 rng(20261203);
  int imported = 0, refused = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string bytes = good;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t at = rng() % bytes.size();
      switch (rng() % 3) {
      case 0:
        bytes[at] = static_cast<char>(rng());
        break;
      case 1:
        bytes.erase(at, 1 + rng() % 8);
        break;
      default:
        bytes.insert(at, 1, static_cast<char>(rng()));
      }
      if (bytes.empty())
        bytes = "\x0a";
    }
    auto g = importBytes(bytes, "fuzz.pb", ImportOptions());
    (g ? imported : refused)++;
  }
  RecordProperty("imported", imported);
  RecordProperty("refused", refused);
  // Both outcomes occur: the corruptions reach past the protobuf parser into the importer.
  EXPECT_GT(imported, 0);
  EXPECT_GT(refused, 0);
}

} // namespace
} // namespace dlc::tf
