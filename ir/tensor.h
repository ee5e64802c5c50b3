// Host tensors: dtype, static shape and a shared, 64-byte aligned byte buffer.
//
// Copying a Tensor shares its buffer (weights are never copied needlessly); clone() makes a
// deep copy. A buffer is either owned heap memory or a view kept alive by an owner (for
// example a memory-mapped external-data file).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/shape.h"
#include "ir/status.h"

namespace dlc {

/// 64-bit FNV-1a of `n` bytes, continuing from `h` (start with kFnv1a64Offset, FNV's published
/// offset basis 0xcbf29ce484222325 = 14695981039346656037). Until package format 2 dlc used
/// 1469598103934665603, the decimal basis with its last digit lost; runtime/package.cc still
/// checks format-1 packages with it.
inline constexpr uint64_t kFnv1a64Offset = 0xcbf29ce484222325ull;
uint64_t fnv1a64(const void *data, size_t n, uint64_t h = kFnv1a64Offset);

class Buffer {
public:
  /// Zero-filled, 64-byte aligned (page-aligned from 1 MiB), owned storage; null when the memory
  /// cannot be had.
  static std::shared_ptr<Buffer> tryAllocate(size_t bytes);
  /// tryAllocate for sizes the program chose (running out is an internal error).
  static std::shared_ptr<Buffer> allocate(size_t bytes);
  /// A view of `bytes` bytes at `data`, valid while `owner` lives.
  static std::shared_ptr<Buffer> view(const void *data, size_t bytes, std::shared_ptr<void> owner);

  ~Buffer();
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;

  /// Writable bytes; forgets the memoized hash (rememberHash).
  uint8_t *data() {
    hashValid_.store(false, std::memory_order_relaxed);
    return data_;
  }
  const uint8_t *data() const { return data_; }
  size_t size() const { return size_; }
  bool isOwned() const { return owned_; }

  /// Tensor::hash's memo: the hash last computed over `bytes` bytes at `offset`, continued from
  /// `start` (the dtype and shape), if it is that one and nothing wrote through data() since.
  std::optional<uint64_t> memoizedHash(size_t offset, size_t bytes, uint64_t start) const;
  void rememberHash(size_t offset, size_t bytes, uint64_t start, uint64_t hash) const;

private:
  Buffer() = default;
  uint8_t *data_ = nullptr;
  size_t size_ = 0;
  bool owned_ = false;
  bool mapped_ = false; // owned, from mmap
  std::shared_ptr<void> owner_;
  struct HashMemo {
    size_t offset = 0, bytes = 0;
    uint64_t start = 0, hash = 0;
  };
  mutable std::mutex hashMutex_;
  mutable HashMemo hashMemo_;
  mutable std::atomic<bool> hashValid_{false};
};

class Tensor {
public:
  Tensor() = default; // empty: no dtype, no data

  /// Zero-filled tensor of the given type. Sizes must be valid (non-negative, no overflow).
  static Tensor zeros(DType dtype, std::vector<int64_t> shape);
  /// The same for sizes that come from outside (a model, a file, a user): an error, never an
  /// abort, when the element count or byte size overflows or the memory cannot be had.
  static Expected<Tensor> tryZeros(DType dtype, std::vector<int64_t> shape);
  /// Tensor over an existing buffer (shared, not copied). Size must match.
  static Expected<Tensor> fromBuffer(DType dtype, std::vector<int64_t> shape,
                                     std::shared_ptr<Buffer> buffer, size_t offset = 0);
  /// Tensor holding a copy of `values` (T must be the dtype's storage type).
  template <typename T>
  static Tensor fromVector(DType dtype, std::vector<int64_t> shape, const std::vector<T> &values) {
    Tensor t = zeros(dtype, std::move(shape));
    DLC_CHECK(static_cast<size_t>(t.byteSize()) == values.size() * sizeof(T), "size mismatch");
    if (!values.empty())
      std::memcpy(t.mutableRaw(), values.data(), values.size() * sizeof(T));
    return t;
  }
  static Tensor scalarI64(int64_t v) { return fromVector<int64_t>(DType::kI64, {}, {v}); }
  static Tensor vectorI64(const std::vector<int64_t> &v) {
    return fromVector<int64_t>(DType::kI64, {static_cast<int64_t>(v.size())}, v);
  }
  static Tensor scalarF32(float v) { return fromVector<float>(DType::kF32, {}, {v}); }

  bool empty() const { return buffer_ == nullptr; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numElements() const { return numElements_; }
  int64_t byteSize() const { return numElements_ * dtypeSize(dtype_); }
  TensorType type() const { return TensorType(dtype_, Shape::fromSizes(shape_)); }

  const void *raw() const {
    return buffer_ ? static_cast<const Buffer &>(*buffer_).data() + offset_ : nullptr;
  }
  /// Writable bytes. Only for tensors the caller just created (buffers may be shared).
  void *mutableRaw() { return buffer_ ? buffer_->data() + offset_ : nullptr; }
  template <typename T> const T *data() const { return static_cast<const T *>(raw()); }
  template <typename T> T *mutableData() { return static_cast<T *>(mutableRaw()); }

  /// Element i converted to int64 / double (any dtype; f16/bf16 decoded).
  int64_t elementAsInt64(int64_t i) const;
  double elementAsDouble(int64_t i) const;
  /// All elements as int64 (for shape tensors).
  std::vector<int64_t> toInt64Vector() const;
  /// Every element as double (elementAsDouble of each, the dtype dispatched once).
  std::vector<double> toDoubleVector() const;

  /// Deep copy into a fresh owned buffer.
  Tensor clone() const;
  /// Same data, different static shape with the same number of elements.
  Tensor reshaped(std::vector<int64_t> shape) const;
  /// Elementwise conversion to another dtype (numpy-style casts).
  Tensor castTo(DType to) const;

  /// 64-bit hash of dtype, shape (FNV-1a) and bytes (XXH3 seeded with it): the constant's
  /// identity in printed IR. Memoized in the buffer for tensors of at least kHashMemoBytes (a
  /// weight is hashed by the printer, CSE and the package writer). The bytes were FNV-1a'd
  /// one at a time before: 10% of a warm ResNet-50 `dlc compile -o` (perf, session 32).
  uint64_t hash() const;
  static constexpr int64_t kHashMemoBytes = 4096;
  /// Same dtype, shape and bytes.
  bool identical(const Tensor &o) const;
  /// Shared buffer (for tests of the no-copy guarantee).
  const std::shared_ptr<Buffer> &buffer() const { return buffer_; }

private:
  DType dtype_ = DType::kUnknown;
  std::vector<int64_t> shape_;
  int64_t numElements_ = 0;
  std::shared_ptr<Buffer> buffer_;
  size_t offset_ = 0;
};

} // namespace dlc
