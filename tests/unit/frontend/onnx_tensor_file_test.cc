// TensorProto files (the ONNX test data sets' input_N.pb / output_N.pb).
#include "frontend/onnx/tensor_file.h"
#include "onnx_test_util.h"

namespace dlc::onnx {
namespace {

using TP = ::onnx::TensorProto;

TEST(OnnxTensorFile, ReadsTheTensorAndItsName) {
  testing::TempDir dir;
  std::string path = dir.write(
      "input_0.pb", testing::floatTensor("x", {2, 2}, {1, -2, 3.5f, 4}).SerializeAsString());
  std::string name;
  auto t = readTensorProtoFile(path, &name);
  ASSERT_TRUE(t) << t.status().message();
  EXPECT_EQ(name, "x");
  EXPECT_EQ(t->type().str(), "f32[2,2]");
  EXPECT_EQ(t->data<float>()[2], 3.5f);
}

TEST(OnnxTensorFile, TypedFieldsAndScalars) {
  testing::TempDir dir;
  TP p;
  p.set_data_type(TP::INT64);
  p.add_int64_data(-5);
  auto t = readTensorProtoFile(dir.write("s.pb", p.SerializeAsString()));
  ASSERT_TRUE(t) << t.status().message();
  EXPECT_EQ(t->type().str(), "i64[]");
  EXPECT_EQ(t->toInt64Vector(), std::vector<int64_t>{-5});
}

TEST(OnnxTensorFile, ExternalDataIsRelativeToTheFile) {
  testing::TempDir dir;
  float values[] = {1, 2, 3};
  dir.write("sub/data.bin", std::string(reinterpret_cast<const char *>(values), sizeof(values)));
  TP p = testing::floatTensor("x", {3}, {});
  p.clear_raw_data();
  p.set_data_location(TP::EXTERNAL);
  auto *e = p.add_external_data();
  e->set_key("location");
  e->set_value("data.bin");
  auto t = readTensorProtoFile(dir.write("sub/x.pb", p.SerializeAsString()));
  ASSERT_TRUE(t) << t.status().message();
  EXPECT_EQ(t->data<float>()[2], 3.0f);
}

TEST(OnnxTensorFile, Errors) {
  testing::TempDir dir;
  std::string missing = dir.file("none.pb");
  EXPECT_EQ(readTensorProtoFile(missing).status().message(),
            missing + ": cannot open file: No such file or directory");
  std::string garbage = dir.write("bad.pb", "\xff\xff\xff\xff");
  EXPECT_EQ(readTensorProtoFile(garbage).status().message(),
            garbage + ": not a valid ONNX TensorProto (protobuf parsing failed)");
  TP p = testing::floatTensor("x", {2, 2}, {1, 2, 3});
  std::string shortData = dir.write("short.pb", p.SerializeAsString());
  EXPECT_EQ(readTensorProtoFile(shortData).status().message(),
            shortData + ": raw_data has 12 bytes but f32[2,2] needs 16");
  TP s;
  s.set_data_type(TP::STRING);
  s.add_string_data("hi");
  std::string str = dir.write("str.pb", s.SerializeAsString());
  auto r = readTensorProtoFile(str);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().message(), str + ": unsupported data type string");
}

} // namespace
} // namespace dlc::onnx
