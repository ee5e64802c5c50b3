#include "ir/shape.h"

namespace dlc {

std::string Dim::str() const {
  if (isKnown())
    return std::to_string(value_);
  if (isSymbol())
    return symbol_;
  return "?";
}

bool dimsCompatible(const Dim &a, const Dim &b) {
  if (a.isKnown() && b.isKnown())
    return a.value() == b.value();
  return true;
}

Shape::Shape(std::initializer_list<int64_t> dims) : ranked_(true) {
  for (int64_t d : dims)
    dims_.emplace_back(d);
}

Shape Shape::fromSizes(const std::vector<int64_t> &sizes) {
  std::vector<Dim> dims;
  dims.reserve(sizes.size());
  for (int64_t s : sizes)
    dims.emplace_back(s);
  return Shape(std::move(dims));
}

bool Shape::isStatic() const {
  if (!ranked_)
    return false;
  for (const Dim &d : dims_)
    if (!d.isKnown())
      return false;
  return true;
}

std::vector<int64_t> Shape::sizes() const {
  std::vector<int64_t> out;
  out.reserve(dims_.size());
  for (const Dim &d : dims_)
    out.push_back(d.value());
  return out;
}

std::optional<int64_t> Shape::numElements() const {
  if (!isStatic())
    return std::nullopt;
  int64_t n = 1;
  for (const Dim &d : dims_)
    if (__builtin_mul_overflow(n, d.value(), &n))
      return std::nullopt;
  return n;
}

std::string Shape::str() const {
  if (!ranked_)
    return "[*]";
  std::string s = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i)
      s += ',';
    s += dims_[i].str();
  }
  return s + "]";
}

bool shapesCompatible(const Shape &a, const Shape &b) {
  if (!a.isRanked() || !b.isRanked())
    return true;
  if (a.rank() != b.rank())
    return false;
  for (int64_t i = 0; i < a.rank(); ++i)
    if (!dimsCompatible(a[i], b[i]))
      return false;
  return true;
}

Expected<int64_t> checkedNumElements(const std::vector<int64_t> &sizes, const std::string &what) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    if (s < 0)
      return invalidArgument("{}: negative dimension {}", what, s);
    if (__builtin_mul_overflow(n, s, &n))
      return invalidArgument("{}: number of elements overflows int64", what);
  }
  return n;
}

std::string TensorType::str() const {
  if (dtype == DType::kUnknown && !shape.isRanked())
    return "?";
  return std::string(dtypeName(dtype)) + shape.str();
}

bool typesCompatible(const TensorType &a, const TensorType &b) {
  if (a.dtype != DType::kUnknown && b.dtype != DType::kUnknown && a.dtype != b.dtype)
    return false;
  return shapesCompatible(a.shape, b.shape);
}

namespace {
std::optional<Dim> refineDim(const Dim &inferred, const Dim &hint) {
  if (inferred.isKnown()) {
    if (hint.isKnown() && hint.value() != inferred.value())
      return std::nullopt;
    return inferred;
  }
  if (hint.isKnown() || inferred.isUnknown())
    return hint;
  return inferred;
}
} // namespace

std::optional<TensorType> refineType(const TensorType &inferred, const TensorType &hint) {
  TensorType out = inferred;
  if (out.dtype == DType::kUnknown)
    out.dtype = hint.dtype;
  else if (hint.dtype != DType::kUnknown && hint.dtype != out.dtype)
    return std::nullopt;
  if (!hint.shape.isRanked())
    return out;
  if (!out.shape.isRanked()) {
    out.shape = hint.shape;
    return out;
  }
  if (out.shape.rank() != hint.shape.rank())
    return std::nullopt;
  for (int64_t i = 0; i < out.shape.rank(); ++i) {
    std::optional<Dim> d = refineDim(out.shape[i], hint.shape[i]);
    if (!d)
      return std::nullopt;
    out.shape[i] = *d;
  }
  return out;
}

TensorType joinTypes(const TensorType &a, const TensorType &b) {
  TensorType out;
  out.dtype = a.dtype == b.dtype ? a.dtype : DType::kUnknown;
  if (!a.shape.isRanked() || !b.shape.isRanked() || a.shape.rank() != b.shape.rank())
    return out;
  std::vector<Dim> dims;
  for (int64_t i = 0; i < a.shape.rank(); ++i)
    dims.push_back(a.shape[i] == b.shape[i] ? a.shape[i] : Dim::unknown());
  out.shape = Shape(std::move(dims));
  return out;
}

Expected<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return invalidArgument("axis {} is out of range for rank {}", axis, rank);
  return axis < 0 ? axis + rank : axis;
}

} // namespace dlc
