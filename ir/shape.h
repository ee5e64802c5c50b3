// Shapes whose dims are known integers, named symbols (dynamic sizes such as `N`), or
// unknown (`?`), and TensorType = dtype + shape. A shape may also be of unknown rank (`*`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/status.h"

namespace dlc {

/// One dimension: a known size >= 0, a named symbol, or unknown.
class Dim {
public:
  Dim() : value_(-1) {} // unknown
  Dim(int64_t v) : value_(v) {}
  static Dim unknown() { return Dim(); }
  static Dim symbol(std::string name) {
    Dim d;
    d.symbol_ = std::move(name);
    return d;
  }

  bool isKnown() const { return value_ >= 0; }
  bool isSymbol() const { return value_ < 0 && !symbol_.empty(); }
  bool isUnknown() const { return value_ < 0 && symbol_.empty(); }
  int64_t value() const { return value_; } // -1 unless isKnown()
  const std::string &symbolName() const { return symbol_; }

  /// Text form: `7`, `N`, `?`.
  std::string str() const;

  bool operator==(const Dim &o) const { return value_ == o.value_ && symbol_ == o.symbol_; }
  bool operator!=(const Dim &o) const { return !(*this == o); }

private:
  int64_t value_;
  std::string symbol_;
};

/// Two dims could describe the same size (equal, or at least one is not known).
bool dimsCompatible(const Dim &a, const Dim &b);

class Shape {
public:
  Shape() : ranked_(true) {} // scalar
  Shape(std::vector<Dim> dims) : ranked_(true), dims_(std::move(dims)) {}
  Shape(std::initializer_list<int64_t> dims);
  static Shape unranked() {
    Shape s;
    s.ranked_ = false;
    return s;
  }
  static Shape fromSizes(const std::vector<int64_t> &sizes);

  bool isRanked() const { return ranked_; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); } // 0 if unranked
  const std::vector<Dim> &dims() const { return dims_; }
  std::vector<Dim> &dims() { return dims_; }
  const Dim &operator[](int64_t i) const { return dims_[static_cast<size_t>(i)]; }
  Dim &operator[](int64_t i) { return dims_[static_cast<size_t>(i)]; }

  /// Every dim is a known integer (and the rank is known).
  bool isStatic() const;
  /// Known sizes; only valid when isStatic().
  std::vector<int64_t> sizes() const;
  /// Product of dims if static and it fits in int64, else nullopt.
  std::optional<int64_t> numElements() const;

  /// Text form: `[N,3,224,224]`, `[]`, `[*]`.
  std::string str() const;

  bool operator==(const Shape &o) const { return ranked_ == o.ranked_ && dims_ == o.dims_; }
  bool operator!=(const Shape &o) const { return !(*this == o); }

private:
  bool ranked_;
  std::vector<Dim> dims_;
};

bool shapesCompatible(const Shape &a, const Shape &b);

/// Product of sizes, or an error naming `what` when a size is negative or the product
/// overflows int64.
Expected<int64_t> checkedNumElements(const std::vector<int64_t> &sizes, const std::string &what);

struct TensorType {
  DType dtype = DType::kUnknown;
  Shape shape = Shape::unranked();

  TensorType() = default;
  TensorType(DType d, Shape s) : dtype(d), shape(std::move(s)) {}

  bool isKnown() const { return dtype != DType::kUnknown; }
  /// Text form: `f32[N,3]`, `i64[]`, `?` when nothing is known.
  std::string str() const;

  bool operator==(const TensorType &o) const { return dtype == o.dtype && shape == o.shape; }
  bool operator!=(const TensorType &o) const { return !(*this == o); }
};

/// Same dtype (or one unknown) and compatible shapes.
bool typesCompatible(const TensorType &a, const TensorType &b);

/// `inferred` completed by `hint` (a type given earlier: a model's declaration, a previous
/// inference): per dim, known beats symbolic beats unknown and `inferred` wins a tie; an
/// unknown dtype or rank is taken from the hint. nullopt when the two contradict (known dims,
/// dtypes or ranks that differ).
std::optional<TensorType> refineType(const TensorType &inferred, const TensorType &hint);

/// What both `a` and `b` are known to be (a value that is one or the other, like the result
/// of If): dims that differ become unknown, ranks that differ give an unknown rank, dtypes
/// that differ (or one unknown) give an unknown dtype.
TensorType joinTypes(const TensorType &a, const TensorType &b);

/// Normalises a possibly negative axis against `rank`; error if out of [-rank, rank).
Expected<int64_t> normalizeAxis(int64_t axis, int64_t rank);

} // namespace dlc
