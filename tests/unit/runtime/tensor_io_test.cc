// .npy reading and writing: NumPy's exact layout, a round trip for every dtype, versions 2.0
// and 3.0, and every refusal with its message.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <random>

#include "runtime/random_tensor.h"
#include "runtime/tensor_io.h"
#include "runtime_test_util.h"

namespace dlc {
namespace {

using testing::TempDir;

/// A version 1.0 file: magic, version, header length, header, data.
std::string npyV1(const std::string &dict, const std::string &data) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\0';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

std::string f32Bytes(std::vector<float> v) {
  return std::string(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(float));
}

std::string readError(const TempDir &dir, const std::string &bytes) {
  auto t = readNpy(dir.write("t.npy", bytes));
  return t ? "(no error)" : t.status().message();
}

TEST(Npy, WritesNumPysExactLayout) {
  TempDir dir;
  Tensor t = Tensor::fromVector<float>(DType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(writeNpy(dir.file("a.npy"), t).isOk());
  std::ifstream in(dir.file("a.npy"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // What numpy.save writes for np.arange(1, 7, dtype=np.float32).reshape(2, 3).
  EXPECT_EQ(bytes, npyV1("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                         f32Bytes({1, 2, 3, 4, 5, 6})));
  EXPECT_EQ(bytes.size(), 128u + 24u);
}

TEST(Npy, ShapesOfRankZeroAndOneUsePythonTuples) {
  TempDir dir;
  ASSERT_TRUE(writeNpy(dir.file("s.npy"), Tensor::scalarI64(5)).isOk());
  ASSERT_TRUE(writeNpy(dir.file("v.npy"), Tensor::vectorI64({1, 2, 3})).isOk());
  std::ifstream s(dir.file("s.npy")), v(dir.file("v.npy"));
  std::string sb((std::istreambuf_iterator<char>(s)), {}),
      vb((std::istreambuf_iterator<char>(v)), {});
  EXPECT_NE(sb.find("'descr': '<i8', 'fortran_order': False, 'shape': (), }"), std::string::npos);
  EXPECT_NE(vb.find("'shape': (3,), }"), std::string::npos);
}

TEST(Npy, RoundTripsEveryDtype) {
  TempDir dir;
  std::mt19937_64 rng(7);
  const DType dtypes[] = {DType::kF32, DType::kF16, DType::kF64, DType::kI8,
                          DType::kI16, DType::kI32, DType::kI64, DType::kU8,
                          DType::kU16, DType::kU32, DType::kU64, DType::kBool};
  const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {5}, {2, 3, 4}, {1, 0, 3}};
  for (DType d : dtypes) {
    for (const auto &shape : shapes) {
      Tensor t = randomTensor(d, shape, rng).value();
      std::string path = dir.file("t.npy");
      ASSERT_TRUE(writeNpy(path, t).isOk()) << dtypeName(d);
      auto back = readNpy(path);
      ASSERT_TRUE(back) << back.status().message();
      EXPECT_TRUE(back->identical(t)) << dtypeName(d) << Shape::fromSizes(shape).str();
    }
  }
}

TEST(Npy, Bf16HasNoNumPyDtype) {
  TempDir dir;
  Status st = writeNpy(dir.file("b.npy"), Tensor::zeros(DType::kBF16, {2}));
  EXPECT_EQ(st.message(),
            dir.file("b.npy") + ": bf16 has no NumPy dtype; convert the tensor first");
  EXPECT_EQ(npyDescr(DType::kBF16), "");
  EXPECT_EQ(npyDescr(DType::kU16), "<u2");
  EXPECT_EQ(npyDescr(DType::kBool), "|b1");
}

TEST(Npy, ReadsVersionsTwoAndThreeAndFreeKeyOrder) {
  TempDir dir;
  for (char version : {'\x02', '\x03'}) {
    std::string header = "{\"shape\": (2,), \"fortran_order\": False, \"descr\": \"<f4\"}";
    while ((12 + header.size() + 1) % 64 != 0)
      header += ' ';
    header += '\n';
    std::string bytes = "\x93NUMPY";
    bytes += version;
    bytes += '\0';
    bytes += static_cast<char>(header.size());
    bytes += std::string(3, '\0');
    bytes += header + f32Bytes({1.5f, -2});
    auto t = readNpy(dir.write("v.npy", bytes));
    ASSERT_TRUE(t) << t.status().message();
    EXPECT_EQ(t->type().str(), "f32[2]");
    EXPECT_EQ(t->data<float>()[1], -2.0f);
  }
}

TEST(Npy, ByteOrderFreeAndNativeDescrs) {
  TempDir dir;
  auto t = readNpy(dir.write(
      "a.npy", npyV1("{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }", "\x03\x04")));
  ASSERT_TRUE(t) << t.status().message();
  EXPECT_EQ(t->toInt64Vector(), (std::vector<int64_t>{3, 4}));
  auto n = readNpy(dir.write("b.npy", npyV1("{'descr': '=f4', 'fortran_order': False, "
                                            "'shape': (1,), }",
                                            f32Bytes({2.5f}))));
  ASSERT_TRUE(n) << n.status().message();
  EXPECT_EQ(n->data<float>()[0], 2.5f);
}

TEST(Npy, NonzeroBoolBytesReadAsTrue) {
  TempDir dir;
  auto t =
      readNpy(dir.write("b.npy", npyV1("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                                       std::string("\x00\x01\x07", 3))));
  ASSERT_TRUE(t) << t.status().message();
  EXPECT_EQ(t->toInt64Vector(), (std::vector<int64_t>{0, 1, 1}));
}

TEST(Npy, Errors) {
  TempDir dir;
  std::string p = dir.file("t.npy");
  auto dict = [](const std::string &descr, const std::string &order, const std::string &shape) {
    return "{'descr': '" + descr + "', 'fortran_order': " + order + ", 'shape': " + shape + ", }";
  };
  EXPECT_EQ(readError(dir, npyV1(dict("<f4", "True", "(2, 2)"), f32Bytes({1, 2, 3, 4}))),
            p + ": Fortran-ordered arrays are not supported; save a C-ordered array "
                "(np.ascontiguousarray)");
  EXPECT_EQ(readError(dir, npyV1(dict(">f4", "False", "(1,)"), f32Bytes({1}))),
            p + ": big-endian dtype '>f4' is not supported; save little-endian data "
                "(arr.astype('<f4'))");
  EXPECT_EQ(readError(dir, npyV1(dict("<f4", "False", "(2, 2)"), f32Bytes({1, 2, 3}))),
            p + ": truncated data: the header says f32[2,2] (16 bytes), the file has 12");
  EXPECT_EQ(readError(dir, npyV1(dict("<f4", "False", "(1,)"), f32Bytes({1, 2}))),
            p + ": 4 bytes after the data of the f32[1] array");
  EXPECT_EQ(readError(dir, npyV1(dict("|O", "False", "(1,)"), "12345678")),
            p + ": object arrays ('|O') are not supported");
  EXPECT_EQ(readError(dir, npyV1(dict("<c8", "False", "(1,)"), "12345678")),
            p + ": complex dtype '<c8' is not supported");
  EXPECT_EQ(readError(dir, npyV1(dict("<U3", "False", "(1,)"), "123456789012")),
            p + ": unsupported dtype '<U3'");
  EXPECT_EQ(readError(dir, npyV1(dict("<f3", "False", "(1,)"), "123")),
            p + ": unsupported dtype '<f3'");
  EXPECT_EQ(readError(dir, npyV1("{'descr': [('a', '<f4')], 'fortran_order': False, "
                                 "'shape': (1,), }",
                                 "1234")),
            p + ": structured dtypes (a list of fields in 'descr') are not supported");
  EXPECT_EQ(readError(dir, npyV1("{'descr': '<f4', 'shape': (1,), }", "1234")),
            p + ": malformed header (no 'fortran_order')");
  EXPECT_EQ(readError(dir, npyV1(dict("<f4", "False", "(-1,)"), "")),
            p + ": malformed header (expected a non-negative integer dim at offset 51)");
  EXPECT_EQ(readError(dir, "PK\x03\x04 not numpy"),
            p + ": not a .npy file (it does not start with \\x93NUMPY)");
  EXPECT_EQ(readError(dir, std::string("\x93NUMPY\x04\x00", 8) + "xx"),
            p + ": unsupported .npy format version 4.0");
  EXPECT_EQ(readError(dir, std::string("\x93NUMPY\x01\x00\x50\x00{'descr'", 17)),
            p + ": truncated header");
  std::filesystem::create_directories(dir.file("d.npy"));
  EXPECT_EQ(readNpy(dir.file("d.npy")).status().message(), dir.file("d.npy") + ": is a directory");
  // A FIFO would block the read until a writer came: refused before it is opened.
  ASSERT_EQ(mkfifo(dir.file("f.npy").c_str(), 0600), 0);
  EXPECT_EQ(readNpy(dir.file("f.npy")).status().message(),
            dir.file("f.npy") +
                ": is a FIFO; dlc reads only regular files (it would block or never end)");
  EXPECT_EQ(readNpy("/dev/zero").status().message(),
            "/dev/zero: is a character device; dlc reads only regular files (it would block or "
            "never end)");
  auto missing = readNpy(dir.file("none.npy"));
  EXPECT_EQ(missing.status().message(),
            dir.file("none.npy") + ": cannot open file: No such file or directory");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

} // namespace
} // namespace dlc
