#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "ir/dtype_bulk.h"
#include "ir/tensor.h"

namespace dlc {
namespace {

TEST(DTypeTest, NamesAndSizes) {
  EXPECT_EQ(dtypeName(DType::kBF16), "bf16");
  EXPECT_EQ(parseDType("u16"), DType::kU16);
  EXPECT_FALSE(parseDType("float").has_value());
  EXPECT_EQ(dtypeSize(DType::kF64), 8);
  EXPECT_EQ(dtypeSize(DType::kBool), 1);
}

TEST(DTypeTest, HalfConversionsRoundToNearestEven) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);              // overflows to inf
  EXPECT_EQ(floatToHalf(5.9604645e-8f), 0x0001);         // smallest subnormal
  EXPECT_EQ(floatToHalf(1.0f + 1.0f / 2048.0f), 0x3c00); // tie -> even
  EXPECT_EQ(floatToHalf(1.0f + 3.0f / 2048.0f), 0x3c02); // tie -> even (up)
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
  for (uint32_t h = 0; h < 0x7c00; ++h) // every finite half round-trips
    ASSERT_EQ(floatToHalf(halfToFloat(static_cast<uint16_t>(h))), h) << h;
  EXPECT_EQ(halfToFloat(0x0001), 5.9604645e-8f);
}

TEST(DTypeTest, BulkHalfConversionsAreBitIdenticalToTheScalarOnes) {
  // The bulk conversions take a vector path (F16C on x86) where the CPU has one; every result,
  // NaNs included, must be the scalar conversion's, in any position of a vector group.
  std::vector<uint16_t> halves(65536 + 5);
  for (size_t i = 0; i < halves.size(); ++i)
    halves[i] = static_cast<uint16_t>(i * 7919u); // every half value, in scrambled groups
  std::vector<float> floats(halves.size());
  halfToFloat(halves.data(), floats.data(), halves.size());
  for (size_t i = 0; i < halves.size(); ++i) {
    const float want = halfToFloat(halves[i]);
    ASSERT_EQ(std::memcmp(&floats[i], &want, 4), 0) << "half " << std::hex << halves[i];
  }
  // Floats: an even sweep of all bit patterns (normals, subnormals, ties, overflow, NaNs with
  // payloads), each group of 8 mixing them.
  std::vector<float> sweep;
  for (uint64_t bits = 0; bits < (1ull << 32); bits += 1237)
    sweep.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  for (uint32_t h = 0; h < 0x7c00; ++h) { // the ties between neighbouring halves
    const uint32_t f = std::bit_cast<uint32_t>(halfToFloat(static_cast<uint16_t>(h)));
    sweep.push_back(std::bit_cast<float>(f + 0x1000u));
    sweep.push_back(std::bit_cast<float>((f + 0x1000u) | 0x80000000u));
  }
  std::vector<uint16_t> out(sweep.size());
  floatToHalf(sweep.data(), out.data(), sweep.size());
  for (size_t i = 0; i < sweep.size(); ++i)
    ASSERT_EQ(out[i], floatToHalf(sweep[i]))
        << "float bits " << std::hex << std::bit_cast<uint32_t>(sweep[i]);
}

TEST(DTypeTest, Bf16Conversions) {
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(floatToBf16(1.00390625f), 0x3f80); // tie -> even
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(NAN))));
}

TEST(TensorTest, ZerosIsAlignedAndZeroed) {
  Tensor t = Tensor::zeros(DType::kF32, {3, 5});
  EXPECT_EQ(t.numElements(), 15);
  EXPECT_EQ(t.byteSize(), 60);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw()) % 64, 0u);
  for (int64_t i = 0; i < 15; ++i)
    EXPECT_EQ(t.data<float>()[i], 0.0f);
  EXPECT_EQ(t.type().str(), "f32[3,5]");
}

TEST(TensorTest, CopiesShareCloneCopies) {
  Tensor a = Tensor::vectorI64({1, 2, 3});
  Tensor b = a;
  EXPECT_EQ(a.raw(), b.raw());
  Tensor c = a.clone();
  EXPECT_NE(a.raw(), c.raw());
  EXPECT_TRUE(a.identical(c));
  EXPECT_EQ(a.hash(), c.hash());
  c.mutableData<int64_t>()[0] = 7;
  EXPECT_FALSE(a.identical(c));
  EXPECT_NE(a.hash(), c.hash());
}

TEST(TensorTest, HashCoversShapeAndDtype) {
  Tensor a = Tensor::fromVector<int32_t>(DType::kI32, {2, 2}, {1, 2, 3, 4});
  Tensor b = a.reshaped({4});
  Tensor c = Tensor::fromVector<uint32_t>(DType::kU32, {2, 2}, {1, 2, 3, 4});
  EXPECT_NE(a.hash(), b.hash());
  EXPECT_NE(a.hash(), c.hash());
  EXPECT_FALSE(a.identical(b));
}

TEST(TensorTest, HashIsMemoizedPerViewAndForgottenOnWrite) {
  // Big enough to be memoized (Tensor::kHashMemoBytes).
  const int64_t n = Tensor::kHashMemoBytes / 4 * 2;
  Tensor a = Tensor::zeros(DType::kF32, {n});
  for (int64_t i = 0; i < n; ++i)
    a.mutableData<float>()[i] = static_cast<float>(i);
  auto direct = [](const Tensor &t) {
    uint8_t d = static_cast<uint8_t>(t.dtype());
    uint64_t h = fnv1a64(&d, 1);
    for (int64_t s : t.shape())
      h = fnv1a64(&s, sizeof(s), h);
    return XXH3_64bits_withSeed(t.raw(), static_cast<size_t>(t.byteSize()), h);
  };
  const uint64_t first = a.hash();
  EXPECT_EQ(first, direct(a));
  EXPECT_EQ(a.hash(), first) << "the memo gives the same value";
  // Another view of the same buffer (another shape, another offset) is not the memo's view.
  Tensor reshaped = a.reshaped({2, n / 2});
  EXPECT_EQ(reshaped.hash(), direct(reshaped));
  auto half = Tensor::fromBuffer(DType::kF32, {n / 2}, a.buffer(), static_cast<size_t>(n / 2) * 4);
  ASSERT_TRUE(half.hasValue());
  EXPECT_EQ(half->hash(), direct(*half));
  EXPECT_EQ(a.hash(), first);
  // A write through any tensor sharing the buffer forgets the memo.
  Tensor copy = a;
  copy.mutableData<float>()[3] = -1.0f;
  EXPECT_NE(a.hash(), first);
  EXPECT_EQ(a.hash(), direct(a));
}

TEST(TensorTest, Fnv1aMatchesThePublishedTestVectors) {
  // FNV-1a 64 as published (Fowler, Noll, Vo; the IETF draft's test vectors): offset basis
  // 0xcbf29ce484222325, prime 0x100000001b3.
  auto fnv = [](std::string_view s) { return fnv1a64(s.data(), s.size()); };
  EXPECT_EQ(kFnv1a64Offset, 14695981039346656037ull);
  EXPECT_EQ(fnv(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv("foobar"), 0x85944171f73967e8ull);
  // Continuing from a partial hash is hashing the concatenation.
  EXPECT_EQ(fnv1a64("bar", 3, fnv("foo")), fnv("foobar"));
}

TEST(TensorTest, FromBufferChecksSize) {
  auto buf = Buffer::allocate(16);
  EXPECT_TRUE(Tensor::fromBuffer(DType::kF32, {4}, buf).hasValue());
  auto bad = Tensor::fromBuffer(DType::kF32, {2, 3}, buf);
  ASSERT_FALSE(bad.hasValue());
  EXPECT_EQ(bad.status().message(),
            "tensor of 24 bytes does not fit in a buffer of 16 bytes at offset 0");
  auto neg = Tensor::fromBuffer(DType::kF32, {-1}, buf);
  EXPECT_EQ(neg.status().message(), "tensor: negative dimension -1");
  auto huge = Tensor::fromBuffer(DType::kF32, {1LL << 40, 1LL << 40}, buf);
  EXPECT_EQ(huge.status().message(), "tensor: number of elements overflows int64");
}

TEST(TensorTest, ViewOfForeignMemoryIsNotOwned) {
  static const float data[4] = {1, 2, 3, 4};
  auto buf = Buffer::view(data, sizeof(data), nullptr);
  auto t = Tensor::fromBuffer(DType::kF32, {2, 2}, buf);
  ASSERT_TRUE(t.hasValue());
  EXPECT_FALSE(t->buffer()->isOwned());
  EXPECT_EQ(t->data<float>()[3], 4.0f);
}

TEST(TensorTest, CastFollowsNumpy) {
  Tensor f = Tensor::fromVector<float>(DType::kF32, {4}, {1.7f, -1.7f, 0.0f, 300.0f});
  Tensor i = f.castTo(DType::kI32);
  EXPECT_EQ(i.toInt64Vector(), (std::vector<int64_t>{1, -1, 0, 300}));
  Tensor b = f.castTo(DType::kBool);
  EXPECT_EQ(b.toInt64Vector(), (std::vector<int64_t>{1, 1, 0, 1}));
  Tensor h = f.castTo(DType::kF16);
  EXPECT_FLOAT_EQ(static_cast<float>(h.elementAsDouble(0)), 1.7001953f);
  Tensor u = Tensor::vectorI64({-1}).castTo(DType::kU8);
  EXPECT_EQ(u.data<uint8_t>()[0], 255); // wraps like C / numpy
}

TEST(ShapeTest, TextAndQueries) {
  Shape s({Dim::symbol("N"), Dim(3), Dim::unknown()});
  EXPECT_EQ(s.str(), "[N,3,?]");
  EXPECT_FALSE(s.isStatic());
  EXPECT_EQ(Shape::unranked().str(), "[*]");
  EXPECT_EQ(Shape().str(), "[]");
  EXPECT_EQ(Shape({2, 3}).numElements(), 6);
  EXPECT_FALSE(Shape({1LL << 40, 1LL << 40}).numElements().has_value());
  EXPECT_TRUE(shapesCompatible(s, Shape({7, 3, 9})));
  EXPECT_FALSE(shapesCompatible(s, Shape({7, 4, 9})));
  EXPECT_FALSE(shapesCompatible(s, Shape({7, 3})));
  EXPECT_EQ(TensorType().str(), "?");
  EXPECT_EQ(normalizeAxis(-1, 3).value(), 2);
  EXPECT_EQ(normalizeAxis(3, 3).status().message(), "axis 3 is out of range for rank 3");
}

} // namespace
} // namespace dlc
