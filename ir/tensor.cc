#include "ir/tensor.h"

#include <sys/mman.h>

#define XXH_INLINE_ALL // header-only (libxxhash-dev)
#include <xxhash.h>

#include <cstdlib>
#include <limits>
#include <type_traits>

#include "ir/numeric.h"

namespace dlc {

namespace {

/// Allocations of at least this size come straight from mmap: the kernel's pages are already
/// zero, so they are not written twice (malloc + memset touched every page of a 100 MB weight
/// pool once more before its data went in). AddressSanitizer builds keep malloc, which it checks.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kMmapBytes = std::numeric_limits<size_t>::max();
#else
constexpr size_t kMmapBytes = size_t{1} << 20;
#endif

} // namespace

std::shared_ptr<Buffer> Buffer::tryAllocate(size_t bytes) {
  if (bytes > std::numeric_limits<size_t>::max() - 4095)
    return nullptr;
  std::shared_ptr<Buffer> b(new Buffer());
  if (bytes >= kMmapBytes) {
    void *p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      return nullptr;
    b->data_ = static_cast<uint8_t *>(p);
    b->mapped_ = true;
  } else {
    size_t rounded = (bytes + 63) / 64 * 64;
    if (rounded == 0)
      rounded = 64;
    b->data_ = static_cast<uint8_t *>(std::aligned_alloc(64, rounded));
    if (b->data_ == nullptr)
      return nullptr;
    std::memset(b->data_, 0, rounded);
  }
  b->size_ = bytes;
  b->owned_ = true;
  return b;
}

std::shared_ptr<Buffer> Buffer::view(const void *data, size_t bytes, std::shared_ptr<void> owner) {
  std::shared_ptr<Buffer> b(new Buffer());
  b->data_ = static_cast<uint8_t *>(const_cast<void *>(data));
  b->size_ = bytes;
  b->owned_ = false;
  b->owner_ = std::move(owner);
  return b;
}

std::shared_ptr<Buffer> Buffer::allocate(size_t bytes) {
  std::shared_ptr<Buffer> b = tryAllocate(bytes);
  DLC_CHECK(b != nullptr, "out of memory allocating {} bytes", bytes);
  return b;
}

Buffer::~Buffer() {
  if (owned_ && mapped_)
    ::munmap(data_, size_);
  else if (owned_)
    std::free(data_);
}

Expected<Tensor> Tensor::tryZeros(DType dtype, std::vector<int64_t> shape) {
  DLC_ASSIGN_OR_RETURN(int64_t n, checkedNumElements(shape, "tensor"));
  int64_t bytes;
  if (__builtin_mul_overflow(n, dtypeSize(dtype), &bytes))
    return outOfRange("a {} tensor of {} elements: its byte size overflows int64", dtypeName(dtype),
                      n);
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numElements_ = n;
  t.buffer_ = Buffer::tryAllocate(static_cast<size_t>(bytes));
  if (!t.buffer_)
    return unavailable("out of host memory allocating {} bytes for a {} tensor", bytes,
                       dtypeName(dtype));
  return t;
}

Tensor Tensor::zeros(DType dtype, std::vector<int64_t> shape) {
  auto t = tryZeros(dtype, std::move(shape));
  DLC_CHECK(t.hasValue(), "{}", t.status().message());
  return std::move(*t);
}

Expected<Tensor> Tensor::fromBuffer(DType dtype, std::vector<int64_t> shape,
                                    std::shared_ptr<Buffer> buffer, size_t offset) {
  DLC_ASSIGN_OR_RETURN(int64_t n, checkedNumElements(shape, "tensor"));
  int64_t bytes;
  if (__builtin_mul_overflow(n, dtypeSize(dtype), &bytes))
    return invalidArgument("tensor byte size overflows int64");
  if (offset > buffer->size() || static_cast<uint64_t>(bytes) > buffer->size() - offset)
    return invalidArgument("tensor of {} bytes does not fit in a buffer of {} bytes at offset {}",
                           bytes, buffer->size(), offset);
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numElements_ = n;
  t.buffer_ = std::move(buffer);
  t.offset_ = offset;
  return t;
}

namespace {
/// f(at) with `at(i)` reading element i in its own C++ type (f16 and bf16 decoded to double),
/// the dtype dispatched once: the one type switch of visitElement and visitAll.
template <typename F> auto withElements(const Tensor &t, F f) {
  const void *p = t.raw();
  switch (t.dtype()) {
  case DType::kF16:
    return f([p](int64_t i) {
      return static_cast<double>(halfToFloat(static_cast<const uint16_t *>(p)[i]));
    });
  case DType::kBF16:
    return f([p](int64_t i) {
      return static_cast<double>(bf16ToFloat(static_cast<const uint16_t *>(p)[i]));
    });
#define X(e, n, s, ty)                                                                             \
  case DType::k##e:                                                                                \
    return f([p](int64_t i) { return static_cast<const ty *>(p)[i]; });
    X(F32, "", 4, float)
    X(F64, "", 8, double)
    X(I8, "", 1, int8_t)
    X(I16, "", 2, int16_t)
    X(I32, "", 4, int32_t)
    X(I64, "", 8, int64_t)
    X(U8, "", 1, uint8_t)
    X(U16, "", 2, uint16_t)
    X(U32, "", 4, uint32_t)
    X(U64, "", 8, uint64_t)
    X(Bool, "", 1, bool)
#undef X
  case DType::kUnknown:
    break;
  }
  return f([](int64_t) { return 0; });
}

template <typename F> auto visitElement(const Tensor &t, int64_t i, F f) {
  return withElements(t, [&](auto at) { return f(at(i)); });
}

/// f(i, element) for every element, in order, the dtype dispatched once (elements as
/// visitElement passes them: f16 and bf16 as double).
template <typename F> void visitAll(const Tensor &t, F f) {
  withElements(t, [&](auto at) {
    for (int64_t i = 0; i < t.numElements(); ++i)
      f(i, at(i));
  });
}
} // namespace

int64_t Tensor::elementAsInt64(int64_t i) const {
  return visitElement(*this, i, [](auto v) -> int64_t {
    using V = decltype(v);
    if constexpr (std::is_floating_point_v<V>)
      return truncSaturate<int64_t>(v);
    else
      return static_cast<int64_t>(v);
  });
}

double Tensor::elementAsDouble(int64_t i) const {
  return visitElement(*this, i, [](auto v) -> double { return static_cast<double>(v); });
}

std::vector<int64_t> Tensor::toInt64Vector() const {
  std::vector<int64_t> out(static_cast<size_t>(numElements_));
  for (int64_t i = 0; i < numElements_; ++i)
    out[static_cast<size_t>(i)] = elementAsInt64(i);
  return out;
}

std::vector<double> Tensor::toDoubleVector() const {
  std::vector<double> out(static_cast<size_t>(numElements_));
  visitAll(*this, [&](int64_t i, auto v) { out[static_cast<size_t>(i)] = static_cast<double>(v); });
  return out;
}

Tensor Tensor::clone() const {
  if (empty())
    return Tensor();
  Tensor t = zeros(dtype_, shape_);
  if (byteSize() > 0)
    std::memcpy(t.mutableRaw(), raw(), static_cast<size_t>(byteSize()));
  return t;
}

Tensor Tensor::reshaped(std::vector<int64_t> shape) const {
  Tensor t = *this;
  auto n = checkedNumElements(shape, "reshape");
  DLC_CHECK(n.hasValue() && *n == numElements_, "reshape changes the element count");
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::castTo(DType to) const {
  if (to == dtype_)
    return *this;
  Tensor out = zeros(to, shape_);
  void *dst = out.mutableRaw();
  // The target dispatched once, the source once per target (visitAll): the same conversions
  // as elementAsDouble / elementAsInt64 per element, without a switch per element.
  switch (to) {
  case DType::kF32:
    visitAll(*this, [&](int64_t i, auto v) {
      static_cast<float *>(dst)[i] = static_cast<float>(static_cast<double>(v));
    });
    break;
  case DType::kF64:
    visitAll(*this,
             [&](int64_t i, auto v) { static_cast<double *>(dst)[i] = static_cast<double>(v); });
    break;
  case DType::kF16:
    visitAll(*this, [&](int64_t i, auto v) {
      static_cast<uint16_t *>(dst)[i] = floatToHalf(static_cast<float>(static_cast<double>(v)));
    });
    break;
  case DType::kBF16:
    visitAll(*this, [&](int64_t i, auto v) {
      static_cast<uint16_t *>(dst)[i] = floatToBf16(static_cast<float>(static_cast<double>(v)));
    });
    break;
  case DType::kBool:
    visitAll(*this, [&](int64_t i, auto v) {
      static_cast<bool *>(dst)[i] = static_cast<double>(v) != 0.0;
    });
    break;
#define X(e, ty)                                                                                   \
  case DType::k##e:                                                                                \
    visitAll(*this, [&](int64_t i, auto v) {                                                       \
      if constexpr (std::is_floating_point_v<decltype(v)>)                                         \
        static_cast<ty *>(dst)[i] = truncSaturate<ty>(static_cast<double>(v));                     \
      else                                                                                         \
        static_cast<ty *>(dst)[i] = static_cast<ty>(static_cast<int64_t>(v));                      \
    });                                                                                            \
    break;
    X(I8, int8_t)
    X(I16, int16_t)
    X(I32, int32_t)
    X(I64, int64_t)
    X(U8, uint8_t)
    X(U16, uint16_t)
    X(U32, uint32_t)
    X(U64, uint64_t)
#undef X
  case DType::kUnknown:
    break;
  }
  return out;
}

uint64_t fnv1a64(const void *data, size_t n, uint64_t h) {
  const uint8_t *b = static_cast<const uint8_t *>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= b[i];
    h *= 1099511628211ull;
  }
  return h;
}

std::optional<uint64_t> Buffer::memoizedHash(size_t offset, size_t bytes, uint64_t start) const {
  if (!hashValid_.load(std::memory_order_acquire))
    return std::nullopt;
  std::lock_guard<std::mutex> lock(hashMutex_);
  const HashMemo &m = hashMemo_;
  if (m.offset == offset && m.bytes == bytes && m.start == start)
    return m.hash;
  return std::nullopt;
}

void Buffer::rememberHash(size_t offset, size_t bytes, uint64_t start, uint64_t hash) const {
  std::lock_guard<std::mutex> lock(hashMutex_);
  hashMemo_ = {offset, bytes, start, hash};
  hashValid_.store(true, std::memory_order_release);
}

uint64_t Tensor::hash() const {
  uint8_t d = static_cast<uint8_t>(dtype_);
  uint64_t h = fnv1a64(&d, 1);
  for (int64_t s : shape_)
    h = fnv1a64(&s, sizeof(s), h);
  if (!raw())
    return h;
  const size_t n = static_cast<size_t>(byteSize());
  if (byteSize() < kHashMemoBytes)
    return XXH3_64bits_withSeed(raw(), n, h);
  if (std::optional<uint64_t> known = buffer_->memoizedHash(offset_, n, h))
    return *known;
  const uint64_t full = XXH3_64bits_withSeed(raw(), n, h);
  buffer_->rememberHash(offset_, n, h, full);
  return full;
}

bool Tensor::identical(const Tensor &o) const {
  if (dtype_ != o.dtype_ || shape_ != o.shape_)
    return false;
  if (byteSize() == 0)
    return true;
  return std::memcmp(raw(), o.raw(), static_cast<size_t>(byteSize())) == 0;
}

} // namespace dlc
