// TensorProto -> Tensor: raw_data, every typed field, and their size checks.
#include "onnx_test_util.h"

namespace dlc::onnx {
namespace {

using testing::ModelBuilder;
using TP = ::onnx::TensorProto;

// Imports a model whose only content is initializer `t` (returned as graph output) and
// returns its tensor.
Tensor importTensor(const TP &t) {
  ModelBuilder m;
  m.initializer(t);
  m.output(t.name(), TP::UNDEFINED); // declared type unknown: any dtype verifies
  auto g = m.importOk();
  if (!g)
    return Tensor();
  return g->findValue(t.name())->constant();
}

TP proto(int dtype, std::vector<int64_t> dims) {
  TP t;
  t.set_name("t");
  t.set_data_type(dtype);
  for (int64_t d : dims)
    t.add_dims(d);
  return t;
}

TEST(OnnxTensor, RawDataIsCopiedIntoOwnedStorage) {
  Tensor t = importTensor(testing::floatTensor("t", {2, 2}, {1, -2, 3.5f, 4}));
  EXPECT_EQ(t.type(), TensorType(DType::kF32, Shape({2, 2})));
  EXPECT_EQ(t.data<float>()[2], 3.5f);
  EXPECT_TRUE(t.buffer()->isOwned());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw()) % 64, 0u);
}

TEST(OnnxTensor, FloatAndDoubleFields) {
  TP f = proto(TP::FLOAT, {3});
  for (float v : {1.0f, 2.5f, -3.0f})
    f.add_float_data(v);
  Tensor tf = importTensor(f);
  EXPECT_EQ(tf.dtype(), DType::kF32);
  EXPECT_EQ(tf.elementAsDouble(1), 2.5);
  TP d = proto(TP::DOUBLE, {2});
  d.add_double_data(0.125);
  d.add_double_data(-7);
  Tensor td = importTensor(d);
  EXPECT_EQ(td.dtype(), DType::kF64);
  EXPECT_EQ(td.data<double>()[0], 0.125);
  EXPECT_EQ(td.data<double>()[1], -7.0);
}

TEST(OnnxTensor, Int64AndUint64Fields) {
  TP i = proto(TP::INT64, {2});
  i.add_int64_data(-5);
  i.add_int64_data(int64_t{1} << 40);
  EXPECT_EQ(importTensor(i).toInt64Vector(), (std::vector<int64_t>{-5, int64_t{1} << 40}));
  TP u64 = proto(TP::UINT64, {1});
  u64.add_uint64_data(~uint64_t{0});
  Tensor t64 = importTensor(u64);
  EXPECT_EQ(t64.dtype(), DType::kU64);
  EXPECT_EQ(t64.data<uint64_t>()[0], ~uint64_t{0});
  TP u32 = proto(TP::UINT32, {1});
  u32.add_uint64_data(4000000000u);
  Tensor t32 = importTensor(u32);
  EXPECT_EQ(t32.dtype(), DType::kU32);
  EXPECT_EQ(t32.data<uint32_t>()[0], 4000000000u);
}

TEST(OnnxTensor, Int32DataHoldsSmallTypes) {
  struct Case {
    int onnx;
    DType dtype;
    std::vector<int32_t> in;
    std::vector<int64_t> out;
  };
  for (const Case &c : {Case{TP::INT8, DType::kI8, {-128, 127}, {-128, 127}},
                        Case{TP::INT16, DType::kI16, {-300, 300}, {-300, 300}},
                        Case{TP::INT32, DType::kI32, {-70000, 70000}, {-70000, 70000}},
                        Case{TP::UINT8, DType::kU8, {0, 255}, {0, 255}},
                        Case{TP::UINT16, DType::kU16, {1, 65535}, {1, 65535}},
                        Case{TP::BOOL, DType::kBool, {0, 1}, {0, 1}}}) {
    TP t = proto(c.onnx, {2});
    for (int32_t v : c.in)
      t.add_int32_data(v);
    Tensor r = importTensor(t);
    EXPECT_EQ(r.dtype(), c.dtype) << dtypeName(c.dtype);
    EXPECT_EQ(r.toInt64Vector(), c.out) << dtypeName(c.dtype);
  }
}

TEST(OnnxTensor, HalfTypesKeepTheirBitPatterns) {
  TP h = proto(TP::FLOAT16, {2});
  h.add_int32_data(floatToHalf(1.5f));
  h.add_int32_data(floatToHalf(-2.0f));
  Tensor th = importTensor(h);
  EXPECT_EQ(th.dtype(), DType::kF16);
  EXPECT_EQ(th.elementAsDouble(0), 1.5);
  EXPECT_EQ(th.elementAsDouble(1), -2.0);
  TP b = proto(TP::BFLOAT16, {1});
  b.add_int32_data(floatToBf16(3.0f));
  Tensor tb = importTensor(b);
  EXPECT_EQ(tb.dtype(), DType::kBF16);
  EXPECT_EQ(tb.elementAsDouble(0), 3.0);
}

TEST(OnnxTensor, ScalarsAndEmptyTensors) {
  TP s = proto(TP::INT64, {});
  s.add_int64_data(9);
  Tensor ts = importTensor(s);
  EXPECT_EQ(ts.rank(), 0);
  EXPECT_EQ(ts.toInt64Vector(), (std::vector<int64_t>{9}));
  Tensor te = importTensor(proto(TP::FLOAT, {0, 3}));
  EXPECT_EQ(te.type(), TensorType(DType::kF32, Shape({0, 3})));
  EXPECT_EQ(te.numElements(), 0);
}

TEST(OnnxTensor, TypedFieldCountMustMatch) {
  TP f = proto(TP::FLOAT, {2, 2});
  f.add_float_data(1);
  ModelBuilder m;
  m.initializer(f);
  m.output("t");
  EXPECT_EQ(m.importError(), "model.onnx: initializer 't': float_data has 1 values but f32[2,2] "
                             "needs 4");
  // Huge dims with a little data fail on the count, before anything is allocated.
  TP huge = proto(TP::INT32, {int64_t{1} << 40});
  huge.add_int32_data(1);
  ModelBuilder h;
  h.initializer(huge);
  h.output("t");
  EXPECT_EQ(h.importError(), "model.onnx: initializer 't': int32_data has 1 values but "
                             "i32[1099511627776] needs 1099511627776");
}

TEST(OnnxTensor, SegmentsAreRejected) {
  TP t = testing::floatTensor("t", {1}, {1});
  t.mutable_segment()->set_begin(0);
  ModelBuilder m;
  m.initializer(t);
  m.output("t");
  EXPECT_EQ(m.importError(), "model.onnx: initializer 't': segmented tensors are not supported");
}

TEST(OnnxTensor, TensorAttributesConvertToo) {
  ModelBuilder m;
  m.input("shape", TP::INT64, {2});
  TP v = proto(TP::INT32, {1});
  v.add_int32_data(7);
  testing::addAttr(m.node("ConstantOfShape", {"shape"}, {"y"}, "fill"), "value", v);
  m.output("y");
  auto g = m.importOk();
  ASSERT_TRUE(g);
  const Attribute *a = testing::producerOf(*g, "y")->findAttr("value");
  ASSERT_TRUE(a);
  ASSERT_EQ(a->kind(), AttrKind::kTensor);
  EXPECT_EQ(a->tensor().dtype(), DType::kI32);
  EXPECT_EQ(a->tensor().toInt64Vector(), (std::vector<int64_t>{7}));

  ModelBuilder bad;
  bad.input("shape", TP::INT64, {2});
  testing::addAttr(bad.node("ConstantOfShape", {"shape"}, {"y"}, "fill"), "value",
                   proto(TP::INT32, {1}));
  bad.output("y");
  EXPECT_EQ(bad.importError(), "model.onnx: node 'fill' (ConstantOfShape): attribute 'value': "
                               "int32_data has 0 values but i32[1] needs 1");
}

} // namespace
} // namespace dlc::onnx
