// Corrupted models never crash the importer or the summary: every byte-level corruption of a
// model that uses most of the importer's paths ends in a graph or a clean error.
#include <random>

#include "onnx_test_util.h"

namespace dlc::onnx {
namespace {

using testing::addAttr;
using testing::ModelBuilder;
using TP = ::onnx::TensorProto;

ModelBuilder richModel() {
  ModelBuilder m(11);
  m.input("x", TP::FLOAT, {"N", 4});
  m.initializer(testing::floatTensor("w", {4, 4}, std::vector<float>(16, 0.5f)));
  TP shape;
  shape.set_name("shape");
  shape.set_data_type(TP::INT64);
  shape.add_dims(2);
  shape.add_int64_data(-1);
  shape.add_int64_data(2);
  m.initializer(shape);
  addAttr(m.node("Constant", {}, {"c"}, "const"), "value",
          testing::floatTensor("", {4}, {1, 2, 3, 4}));
  m.node("MatMul", {"x", "w"}, {"h"}, "mm");
  m.node("Add", {"h", "c"}, {"a"}, "add");
  addAttr(m.node("Softmax", {"a"}, {"s"}, "sm"), "axis", int64_t{0});
  m.node("Reshape", {"s", "shape"}, {"r"}, "reshape");
  auto &clip = m.node("Clip", {"r"}, {"y"}, "clip");
  clip.add_input("");
  m.valueInfo("h", TP::FLOAT, {"N", 4});
  m.output("y", TP::FLOAT, {"", 2});
  return m;
}

TEST(OnnxFuzz, CorruptedBytesFailCleanly) {
  const std::string good = richModel().bytes();
  ASSERT_EQ(richModel().importError(), "");
  std::mt19937 rng(1234);
  testing::TempDir dir;
  int imported = 0, pastParsing = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string bytes = good;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k)
      bytes[rng() % bytes.size()] = static_cast<char>(rng());
    if (iter % 7 == 0)
      bytes.resize(rng() % bytes.size());
    auto g = importBytes(bytes, "", "model.onnx");
    if (g) {
      ++imported;
      continue;
    }
    ASSERT_EQ(g.status().message().rfind("model.onnx: ", 0), 0u) << g.status().message();
    if (g.status().message().find("protobuf parsing failed") == std::string::npos)
      ++pastParsing;
    ASSERT_NE(g.status().code(), StatusCode::kInternal) << g.status().message();
    if (iter % 50 == 0) { // the summary reads the same bytes through a file
      std::string path = dir.write("m.onnx", bytes);
      auto s = summarizeFile(path);
      if (!s) {
        ASSERT_EQ(s.status().message().rfind(path + ": ", 0), 0u) << s.status().message();
      }
    }
  }
  EXPECT_GT(imported, 0); // some corruptions (inside float data, names) still import
  EXPECT_LT(imported, 3000);
  EXPECT_GT(pastParsing, 300); // most corruptions reach the importer proper, not just protobuf
  std::printf("fuzz: %d imported, %d rejected after parsing\n", imported, pastParsing);
}

} // namespace
} // namespace dlc::onnx
