// Integer index expressions that are both printed into CUDA source and evaluated on the host.
//
// Data-movement kernels compute, for each output element, which input element to read. That
// arithmetic (transpose strides, slice steps, pad reflection, gather index wrapping) is built
// once as an IndexExpr tree: the emitter prints it, and the unit tests evaluate the very same
// tree on the host and compare the elements it selects with the reference op. Construction
// folds constants (x * 1, x + 0, 3 * 4), so the printed source stays readable.
//
// Semantics are C's on 64-bit integers: `/` and `%` truncate toward zero, comparisons and
// `&&` give 0 or 1, select evaluates only the chosen operand.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

namespace dlc::codegen {

class IndexExpr {
public:
  enum class Kind : uint8_t {
    kConst,
    kVar,
    kAdd,
    kSub,
    kMul,
    kDiv,
    kMod,
    kMin,
    kMax,
    kLt,
    kLe,
    kEq,
    kAnd,
    kSelect,
    kLoad,
  };

  /// A constant (implicit, so `c * 4 + 1` reads naturally).
  IndexExpr(int64_t c); // NOLINT(google-explicit-constructor)
  /// A named variable: a coordinate ("c2") or a temporary the kernel declares.
  static IndexExpr var(std::string name);
  /// `(long long)buffer[offset]`: an integer element of a kernel parameter (gather indices).
  static IndexExpr load(std::string buffer, const IndexExpr &offset);
  static IndexExpr min(const IndexExpr &a, const IndexExpr &b);
  static IndexExpr max(const IndexExpr &a, const IndexExpr &b);
  /// `c ? a : b`.
  static IndexExpr select(const IndexExpr &c, const IndexExpr &a, const IndexExpr &b);

  friend IndexExpr operator+(const IndexExpr &a, const IndexExpr &b);
  friend IndexExpr operator-(const IndexExpr &a, const IndexExpr &b);
  friend IndexExpr operator*(const IndexExpr &a, const IndexExpr &b);
  friend IndexExpr operator/(const IndexExpr &a, const IndexExpr &b);
  friend IndexExpr operator%(const IndexExpr &a, const IndexExpr &b);
  friend IndexExpr operator<(const IndexExpr &a, const IndexExpr &b);
  friend IndexExpr operator<=(const IndexExpr &a, const IndexExpr &b);
  friend IndexExpr operator==(const IndexExpr &a, const IndexExpr &b);
  friend IndexExpr operator&&(const IndexExpr &a, const IndexExpr &b);

  Kind kind() const;
  bool isConst() const { return kind() == Kind::kConst; }
  /// The value of a constant (0 for other kinds).
  int64_t constValue() const;

  /// The C expression. Constants beyond 32 bits get an `LL` suffix.
  std::string str() const;

  struct Env {
    std::map<std::string, int64_t> vars;
    /// Element `offset` of `buffer`, for load nodes.
    std::function<int64_t(const std::string &buffer, int64_t offset)> load;
  };
  /// The value on the host. A variable missing from `env` or a division by zero is an internal
  /// error (DLC_CHECK).
  int64_t eval(const Env &env) const;

  /// Adds the names of the variables the expression reads to `out`.
  void collectVars(std::set<std::string> &out) const;

private:
  struct Node;
  explicit IndexExpr(std::shared_ptr<const Node> n) : n_(std::move(n)) {}
  static IndexExpr make(Kind k, std::initializer_list<IndexExpr> operands);
  std::shared_ptr<const Node> n_;
};

} // namespace dlc::codegen
