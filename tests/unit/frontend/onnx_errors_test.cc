// The ONNX importer on bad input: every error names the file and where, word for word.
#include <sys/stat.h>

#include <random>

#include "frontend/onnx/tensor_file.h"
#include "onnx_test_util.h"

namespace dlc::onnx {
namespace {

using testing::ModelBuilder;
using TP = ::onnx::TensorProto;

std::string errorOf(const Expected<std::unique_ptr<Graph>> &r) {
  return r ? "" : r.status().message();
}

TEST(OnnxErrors, MissingFile) {
  testing::TempDir dir;
  std::string path = dir.file("absent.onnx");
  auto r = importFile(path);
  EXPECT_EQ(errorOf(r), path + ": cannot open file: No such file or directory");
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(summarizeFile(path).status().message(),
            path + ": cannot open file: No such file or directory");
}

TEST(OnnxErrors, DirectoryInsteadOfFile) {
  testing::TempDir dir;
  EXPECT_EQ(errorOf(importFile(dir.path().string())),
            dir.path().string() + ": cannot open file: is a directory");
}

TEST(OnnxErrors, SpecialFilesAreRefusedBeforeAnyRead) {
  // A FIFO blocked inspect, opt and run forever (the open waited for a writer); a device
  // streams without end. Both are refused after a stat, for models and tensor files alike.
  testing::TempDir dir;
  const std::string fifo = dir.file("m.onnx");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string why = ": is a FIFO; dlc reads only regular files (it would block or never end)";
  EXPECT_EQ(errorOf(importFile(fifo)), fifo + ": cannot open file" + why);
  auto tensor = readTensorProtoFile(fifo);
  ASSERT_FALSE(tensor.hasValue());
  EXPECT_NE(tensor.status().message().find("is a FIFO"), std::string::npos)
      << tensor.status().message();
  EXPECT_NE(errorOf(importFile("/dev/zero")).find("is a character device"), std::string::npos);
}

TEST(OnnxErrors, NotAProtobuf) {
  std::mt19937 rng(42);
  std::string junk(4096, '\0');
  for (char &c : junk)
    c = static_cast<char>(rng());
  EXPECT_EQ(errorOf(importBytes(junk, "", "model.onnx")),
            "model.onnx: not a valid ONNX model (protobuf parsing failed)");
  EXPECT_EQ(errorOf(importBytes("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", "", "m.onnx")),
            "m.onnx: not a valid ONNX model (protobuf parsing failed)");
}

TEST(OnnxErrors, TruncatedProtobuf) {
  ModelBuilder m;
  m.input("x", TP::FLOAT, {2, 2});
  m.initializer(testing::floatTensor("w", {2, 2}, {1, 2, 3, 4}));
  m.node("Add", {"x", "w"}, {"y"});
  m.output("y");
  std::string bytes = m.bytes();
  ASSERT_EQ(errorOf(importBytes(bytes, "", "model.onnx")), "");
  // Cut inside the graph (a length-delimited field): the parser must refuse, not abort.
  for (size_t cut : {bytes.size() - 1, bytes.size() / 2, size_t{12}}) {
    EXPECT_EQ(errorOf(importBytes(std::string_view(bytes).substr(0, cut), "", "model.onnx")),
              "model.onnx: not a valid ONNX model (protobuf parsing failed)")
        << "cut at " << cut;
  }
}

TEST(OnnxErrors, NoGraph) {
  ::onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  EXPECT_EQ(errorOf(importBytes(model.SerializeAsString(), "", "model.onnx")),
            "model.onnx: model has no graph");
}

TEST(OnnxErrors, UndefinedValue) {
  ModelBuilder m;
  m.input("x");
  m.node("Add", {"x", "nope"}, {"y"}, "n1");
  m.output("y");
  EXPECT_EQ(m.importError(), "model.onnx: node 'n1' (Add) uses undefined value 'nope'");
  ModelBuilder unnamed;
  unnamed.input("x");
  unnamed.node("Relu", {"x"}, {"a"});
  unnamed.node("Relu", {"b"}, {"y"});
  unnamed.output("y");
  EXPECT_EQ(unnamed.importError(), "model.onnx: node #1 (Relu) uses undefined value 'b'");
}

TEST(OnnxErrors, UndefinedGraphOutput) {
  ModelBuilder m;
  m.input("x");
  m.output("z");
  EXPECT_EQ(m.importError(), "model.onnx: graph output 'z' is not defined");
}

TEST(OnnxErrors, TwoProducers) {
  ModelBuilder m;
  m.input("x");
  m.node("Relu", {"x"}, {"y"}, "a");
  m.node("Neg", {"x"}, {"y"}, "b");
  m.output("y");
  EXPECT_EQ(m.importError(), "model.onnx: value 'y' has two producers: node 'a' (Relu) and "
                             "node 'b' (Neg)");
  ModelBuilder input;
  input.input("x");
  input.node("Relu", {"x"}, {"x"}, "r");
  input.output("x");
  EXPECT_EQ(input.importError(),
            "model.onnx: value 'x' has two producers: graph input 'x' and node 'r' (Relu)");
  ModelBuilder inits;
  inits.initializer(testing::floatTensor("w", {1}, {1}));
  inits.initializer(testing::floatTensor("w", {1}, {2}));
  inits.output("w");
  EXPECT_EQ(inits.importError(),
            "model.onnx: value 'w' has two producers: initializer 'w' and initializer 'w'");
}

TEST(OnnxErrors, Cycle) {
  ModelBuilder m;
  m.input("x");
  m.node("Add", {"x", "b"}, {"a"}, "first");
  m.node("Relu", {"a"}, {"b"}, "second");
  m.node("Neg", {"b"}, {"y"}, "third");
  m.output("y");
  EXPECT_EQ(m.importError(), "model.onnx: graph has a cycle through node 'first' (Add)");
}

TEST(OnnxErrors, InitializerSizeMismatch) {
  ModelBuilder m;
  auto &w = m.initializer(testing::floatTensor("w", {2, 2}, {1, 2, 3}));
  (void)w;
  m.output("w");
  EXPECT_EQ(m.importError(), "model.onnx: initializer 'w': raw_data has 12 bytes but f32[2,2] "
                             "needs 16");
}

TEST(OnnxErrors, NegativeDims) {
  ModelBuilder m;
  m.initializer(testing::floatTensor("w", {2, -2}, {}));
  m.output("w");
  EXPECT_EQ(m.importError(), "model.onnx: initializer 'w': negative dimension -2");
}

TEST(OnnxErrors, DimProductOverflows) {
  ModelBuilder m;
  m.initializer(testing::floatTensor("w", {int64_t{1} << 40, int64_t{1} << 40}, {}));
  m.output("w");
  EXPECT_EQ(m.importError(), "model.onnx: initializer 'w': number of elements overflows int64");
  ModelBuilder bytes; // elements fit, bytes do not
  bytes.initializer(testing::floatTensor("w", {int64_t{1} << 62}, {}));
  bytes.output("w");
  EXPECT_EQ(bytes.importError(), "model.onnx: initializer 'w': byte size overflows int64");
}

TEST(OnnxErrors, UnknownAndUnsupportedDTypes) {
  ModelBuilder unknown;
  auto &t = unknown.initializer(testing::floatTensor("w", {1}, {1}));
  t.set_data_type(99);
  unknown.output("w");
  EXPECT_EQ(unknown.importError(), "model.onnx: initializer 'w': unknown data type 99");
  for (auto [code, name] :
       {std::pair{8, "string"}, {14, "complex64"}, {17, "float8e4m3fn"}, {22, "int4"}}) {
    ModelBuilder m;
    m.initializer(testing::floatTensor("w", {1}, {1})).set_data_type(code);
    m.output("w");
    EXPECT_EQ(m.importError(),
              fmt::format("model.onnx: initializer 'w': unsupported data type {}", name));
  }
  ModelBuilder input;
  input.input("s", TP::STRING, {1});
  input.output("s");
  EXPECT_EQ(input.importError(), "model.onnx: graph input 's': unsupported data type string");
}

TEST(OnnxErrors, OpsetTooNew) {
  ModelBuilder m(24);
  m.input("x");
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  EXPECT_EQ(m.importError(), "model.onnx: opset ai.onnx 24 is newer than supported (23)");
}

TEST(OnnxErrors, NoDefaultOpset) {
  ModelBuilder m;
  m.model.clear_opset_import();
  m.input("x");
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  EXPECT_EQ(m.importError(), "model.onnx: the model uses ai.onnx ops but imports no ai.onnx opset");
}

TEST(OnnxErrors, AttributeOfWrongType) {
  ModelBuilder cast;
  cast.input("x");
  testing::addAttr(cast.node("Cast", {"x"}, {"y"}, "c"), "to", 1.0f);
  cast.output("y");
  EXPECT_EQ(cast.importError(), "model.onnx: node 'c' (Cast): attribute 'to' must be int, got "
                                "float");

  if (!opDef(Op::kTranspose).findAttr("perm"))
    GTEST_SKIP() << "Transpose has no attribute schema yet";
  ModelBuilder m;
  m.input("x");
  testing::addAttr(m.node("Transpose", {"x"}, {"y"}, "n0"), "perm", 1.0f);
  m.output("y");
  EXPECT_EQ(m.importError(), "model.onnx: node 'n0' (Transpose): attribute 'perm' must be ints, "
                             "got float");
}

TEST(OnnxErrors, GraphAttributesOnlyWhereTheOpHasABody) {
  ModelBuilder m;
  m.input("x");
  auto &n = m.node("Relu", {"x"}, {"y"}, "r");
  auto *a = n.add_attribute();
  a->set_name("body");
  a->set_type(::onnx::AttributeProto::GRAPH);
  m.output("y");
  EXPECT_EQ(m.importError(), "model.onnx: node 'r' (Relu): unknown attribute 'body'");
  a->set_type(::onnx::AttributeProto::GRAPHS);
  EXPECT_EQ(m.importError(), "model.onnx: node 'r' (Relu): attribute 'body' is of type graphs, "
                             "which dlc does not support");
}

TEST(OnnxErrors, DuplicateAttribute) {
  ModelBuilder m;
  m.input("x");
  auto &n = m.node("LeakyRelu", {"x"}, {"y"}, "r");
  testing::addAttr(n, "alpha", 0.1f);
  testing::addAttr(n, "alpha", 0.2f);
  m.output("y");
  EXPECT_EQ(m.importError(), "model.onnx: node 'r' (LeakyRelu): attribute 'alpha' is given twice");
}

TEST(OnnxErrors, SparseInitializer) {
  ModelBuilder m;
  m.graph().add_sparse_initializer()->mutable_values()->set_name("sp");
  m.output("sp");
  EXPECT_EQ(m.importError(), "model.onnx: sparse initializer 'sp' is not supported");
}

TEST(OnnxErrors, NonTensorTypes) {
  ModelBuilder m;
  auto *vi = m.graph().add_input();
  vi->set_name("seq");
  vi->mutable_type()->mutable_sequence_type();
  m.output("seq");
  EXPECT_EQ(m.importError(), "model.onnx: graph input 'seq': sequence types are not supported");
}

} // namespace
} // namespace dlc::onnx
