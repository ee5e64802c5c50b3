// External tensor data: resolved only inside the model's directory, memory-mapped, viewed.
#include <cstring>

#include "onnx_test_util.h"

namespace dlc::onnx {
namespace {

using testing::ModelBuilder;
using TP = ::onnx::TensorProto;

void setExternal(TP &t, const std::string &location, std::optional<int64_t> offset = {},
                 std::optional<int64_t> length = {}) {
  t.clear_raw_data();
  t.set_data_location(TP::EXTERNAL);
  auto add = [&](const char *k, const std::string &v) {
    auto *e = t.add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  if (offset)
    add("offset", std::to_string(*offset));
  if (length)
    add("length", std::to_string(*length));
}

std::string floatBytes(const std::vector<float> &v) {
  return std::string(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(float));
}

// A model with initializers "a" (f32[2] at offset 0) and "b" (f32[3] at offset 8) in data.bin.
struct ExternalModel {
  testing::TempDir dir;
  ModelBuilder m;
  TP *a;
  TP *b;
  ExternalModel() {
    dir.write("data.bin", floatBytes({1, 2, 3, 4, 5}));
    a = &m.initializer(testing::floatTensor("a", {2}, {}));
    setExternal(*a, "data.bin", 0, 8);
    b = &m.initializer(testing::floatTensor("b", {3}, {}));
    setExternal(*b, "data.bin", 8);
    m.output("a");
    m.output("b");
  }
  std::string save() const { return dir.write("model.onnx", m.bytes()); }
  std::string error() const {
    std::string path = save();
    auto g = importFile(path);
    return g ? "" : g.status().message();
  }
};

TEST(OnnxExternalData, TensorsViewOneSharedMapping) {
  ExternalModel e;
  auto g = importFile(e.save());
  ASSERT_TRUE(g.hasValue()) << g.status().message();
  const Tensor &a = (*g)->findValue("a")->constant();
  const Tensor &b = (*g)->findValue("b")->constant();
  EXPECT_EQ(a.type(), TensorType(DType::kF32, Shape({2})));
  EXPECT_EQ(b.type(), TensorType(DType::kF32, Shape({3})));
  EXPECT_FALSE(a.buffer()->isOwned());
  EXPECT_FALSE(b.buffer()->isOwned());
  EXPECT_EQ(a.data<float>()[1], 2.0f);
  EXPECT_EQ(b.data<float>()[0], 3.0f);
  EXPECT_EQ(b.data<float>()[2], 5.0f);
  // Same mapping: b sits 8 bytes after a.
  EXPECT_EQ(static_cast<const uint8_t *>(b.raw()) - static_cast<const uint8_t *>(a.raw()), 8);
  // The tensors outlive the graph (the mapping is owned by the buffers).
  Tensor kept = b;
  g->reset();
  EXPECT_EQ(kept.data<float>()[1], 4.0f);
}

TEST(OnnxExternalData, SubdirectoriesInsideTheModelDirAreFine) {
  ExternalModel e;
  e.dir.write("weights/w.bin", floatBytes({9, 8}));
  setExternal(*e.a, "weights/./w.bin");
  auto g = importFile(e.save());
  ASSERT_TRUE(g.hasValue()) << g.status().message();
  EXPECT_EQ((*g)->findValue("a")->constant().data<float>()[0], 9.0f);
}

TEST(OnnxExternalData, DotDotIsRejected) {
  ExternalModel e;
  setExternal(*e.a, "../data.bin");
  EXPECT_EQ(e.error(), e.dir.file("model.onnx") +
                           ": initializer 'a': external data location '../data.bin' escapes the "
                           "model directory");
  setExternal(*e.a, "sub/../../data.bin");
  EXPECT_EQ(e.error(), e.dir.file("model.onnx") +
                           ": initializer 'a': external data location 'sub/../../data.bin' "
                           "escapes the model directory");
}

TEST(OnnxExternalData, AbsolutePathIsRejected) {
  ExternalModel e;
  std::string abs = e.dir.file("data.bin");
  setExternal(*e.a, abs);
  EXPECT_EQ(e.error(), e.dir.file("model.onnx") + ": initializer 'a': external data location '" +
                           abs + "' is an absolute path");
}

TEST(OnnxExternalData, SymlinkOutsideIsRejected) {
  ExternalModel e;
  testing::TempDir other;
  std::string target = other.write("secret.bin", floatBytes({1, 2}));
  std::filesystem::create_symlink(target, e.dir.path() / "link.bin");
  setExternal(*e.a, "link.bin");
  EXPECT_EQ(e.error(), e.dir.file("model.onnx") + ": initializer 'a': external data location "
                                                  "'link.bin' resolves outside the model "
                                                  "directory");
}

TEST(OnnxExternalData, OffsetAndLengthAreChecked) {
  ExternalModel e;
  std::string model = e.dir.file("model.onnx");
  setExternal(*e.b, "data.bin", 100);
  EXPECT_EQ(e.error(), model + ": initializer 'b': external data offset 100 is past the end of "
                               "'data.bin' (20 bytes)");
  setExternal(*e.b, "data.bin", 12);
  EXPECT_EQ(e.error(), model + ": initializer 'b': external data 'data.bin' has 8 bytes after "
                               "offset 12 but f32[3] needs 12");
  setExternal(*e.b, "data.bin", 8, 16);
  EXPECT_EQ(e.error(), model + ": initializer 'b': external data offset 8 + length 16 is past "
                               "the end of 'data.bin' (20 bytes)");
  setExternal(*e.b, "data.bin", 0, 8);
  EXPECT_EQ(e.error(), model + ": initializer 'b': external data length 8 does not match f32[3] "
                               "(12 bytes)");
  setExternal(*e.b, "data.bin", -4);
  EXPECT_EQ(e.error(), model + ": initializer 'b': external data offset '-4' is not a "
                               "non-negative integer");
}

TEST(OnnxExternalData, MissingFileAndMissingLocation) {
  ExternalModel e;
  std::string model = e.dir.file("model.onnx");
  setExternal(*e.a, "nothere.bin");
  EXPECT_EQ(e.error(), model + ": initializer 'a': cannot open external data file 'nothere.bin': "
                               "No such file or directory");
  setExternal(*e.a, "");
  EXPECT_EQ(e.error(), model + ": initializer 'a': external data has no 'location'");
}

TEST(OnnxExternalData, ForbiddenWithoutAModelDirectory) {
  ExternalModel e;
  auto g = importBytes(e.m.bytes(), "", "mem.onnx");
  EXPECT_EQ(g.status().message(), "mem.onnx: initializer 'a': external data is not allowed (the "
                                  "model has no directory)");
}

} // namespace
} // namespace dlc::onnx
