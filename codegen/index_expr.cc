#include "codegen/index_expr.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "ir/status.h"

namespace dlc::codegen {

struct IndexExpr::Node {
  Kind kind;
  int64_t value = 0; // kConst
  std::string name;  // kVar, kLoad (the buffer)
  std::vector<IndexExpr> operands;
};

IndexExpr::IndexExpr(int64_t c) : n_(std::make_shared<Node>(Node{Kind::kConst, c, {}, {}})) {}

IndexExpr IndexExpr::var(std::string name) {
  return IndexExpr(std::make_shared<Node>(Node{Kind::kVar, 0, std::move(name), {}}));
}

IndexExpr IndexExpr::load(std::string buffer, const IndexExpr &offset) {
  return IndexExpr(std::make_shared<Node>(Node{Kind::kLoad, 0, std::move(buffer), {offset}}));
}

IndexExpr::Kind IndexExpr::kind() const { return n_->kind; }
int64_t IndexExpr::constValue() const { return n_->kind == Kind::kConst ? n_->value : 0; }

IndexExpr IndexExpr::make(Kind k, std::initializer_list<IndexExpr> operands) {
  std::vector<IndexExpr> ops(operands);
  bool allConst =
      std::all_of(ops.begin(), ops.end(), [](const IndexExpr &e) { return e.isConst(); });
  IndexExpr e(std::make_shared<Node>(Node{k, 0, {}, ops}));
  if (allConst && ((k != Kind::kDiv && k != Kind::kMod) || ops[1].constValue() != 0))
    return IndexExpr(e.eval({}));
  const auto isC = [&](size_t i, int64_t v) {
    return ops[i].isConst() && ops[i].constValue() == v;
  };
  switch (k) {
  case Kind::kAdd:
    if (isC(0, 0))
      return ops[1];
    if (isC(1, 0))
      return ops[0];
    break;
  case Kind::kSub:
    if (isC(1, 0))
      return ops[0];
    break;
  case Kind::kMul:
    if (isC(0, 0) || isC(1, 0))
      return IndexExpr(0);
    if (isC(0, 1))
      return ops[1];
    if (isC(1, 1))
      return ops[0];
    break;
  case Kind::kDiv:
    if (isC(1, 1) || isC(0, 0))
      return ops[0];
    break;
  case Kind::kMod:
    if (isC(1, 1) || isC(0, 0))
      return IndexExpr(0);
    break;
  case Kind::kAnd:
    if (isC(0, 0) || isC(1, 0))
      return IndexExpr(0);
    if (ops[0].isConst())
      return ops[1];
    if (ops[1].isConst())
      return ops[0];
    break;
  case Kind::kSelect:
    if (ops[0].isConst())
      return ops[0].constValue() != 0 ? ops[1] : ops[2];
    break;
  default:
    break;
  }
  return e;
}

IndexExpr IndexExpr::min(const IndexExpr &a, const IndexExpr &b) {
  return make(Kind::kMin, {a, b});
}
IndexExpr IndexExpr::max(const IndexExpr &a, const IndexExpr &b) {
  return make(Kind::kMax, {a, b});
}
IndexExpr IndexExpr::select(const IndexExpr &c, const IndexExpr &a, const IndexExpr &b) {
  return make(Kind::kSelect, {c, a, b});
}
IndexExpr operator+(const IndexExpr &a, const IndexExpr &b) {
  return IndexExpr::make(IndexExpr::Kind::kAdd, {a, b});
}
IndexExpr operator-(const IndexExpr &a, const IndexExpr &b) {
  return IndexExpr::make(IndexExpr::Kind::kSub, {a, b});
}
IndexExpr operator*(const IndexExpr &a, const IndexExpr &b) {
  return IndexExpr::make(IndexExpr::Kind::kMul, {a, b});
}
IndexExpr operator/(const IndexExpr &a, const IndexExpr &b) {
  return IndexExpr::make(IndexExpr::Kind::kDiv, {a, b});
}
IndexExpr operator%(const IndexExpr &a, const IndexExpr &b) {
  return IndexExpr::make(IndexExpr::Kind::kMod, {a, b});
}
IndexExpr operator<(const IndexExpr &a, const IndexExpr &b) {
  return IndexExpr::make(IndexExpr::Kind::kLt, {a, b});
}
IndexExpr operator<=(const IndexExpr &a, const IndexExpr &b) {
  return IndexExpr::make(IndexExpr::Kind::kLe, {a, b});
}
IndexExpr operator==(const IndexExpr &a, const IndexExpr &b) {
  return IndexExpr::make(IndexExpr::Kind::kEq, {a, b});
}
IndexExpr operator&&(const IndexExpr &a, const IndexExpr &b) {
  return IndexExpr::make(IndexExpr::Kind::kAnd, {a, b});
}

std::string IndexExpr::str() const {
  const Node &n = *n_;
  auto op = [&](size_t i) { return n.operands[i].str(); };
  auto bin = [&](const char *o) { return fmt::format("({} {} {})", op(0), o, op(1)); };
  switch (n.kind) {
  case Kind::kConst:
    if (n.value > std::numeric_limits<int32_t>::max() ||
        n.value < std::numeric_limits<int32_t>::min())
      return fmt::format("{}LL", n.value);
    return n.value < 0 ? fmt::format("({})", n.value) : fmt::format("{}", n.value);
  case Kind::kVar:
    return n.name;
  case Kind::kAdd:
    return bin("+");
  case Kind::kSub:
    return bin("-");
  case Kind::kMul:
    return bin("*");
  case Kind::kDiv:
    return bin("/");
  case Kind::kMod:
    return bin("%");
  case Kind::kMin:
    return fmt::format("dlc_imin({}, {})", op(0), op(1));
  case Kind::kMax:
    return fmt::format("dlc_imax({}, {})", op(0), op(1));
  case Kind::kLt:
    return bin("<");
  case Kind::kLe:
    return bin("<=");
  case Kind::kEq:
    return bin("==");
  case Kind::kAnd:
    return bin("&&");
  case Kind::kSelect:
    return fmt::format("({} ? {} : {})", op(0), op(1), op(2));
  case Kind::kLoad:
    return fmt::format("((long long){}[{}])", n.name, op(0));
  }
  return "";
}

int64_t IndexExpr::eval(const Env &env) const {
  const Node &n = *n_;
  auto v = [&](size_t i) { return n.operands[i].eval(env); };
  switch (n.kind) {
  case Kind::kConst:
    return n.value;
  case Kind::kVar: {
    auto it = env.vars.find(n.name);
    DLC_CHECK(it != env.vars.end());
    return it->second;
  }
  case Kind::kAdd:
    return v(0) + v(1);
  case Kind::kSub:
    return v(0) - v(1);
  case Kind::kMul:
    return v(0) * v(1);
  case Kind::kDiv: {
    int64_t d = v(1);
    DLC_CHECK(d != 0);
    return v(0) / d;
  }
  case Kind::kMod: {
    int64_t d = v(1);
    DLC_CHECK(d != 0);
    return v(0) % d;
  }
  case Kind::kMin:
    return std::min(v(0), v(1));
  case Kind::kMax:
    return std::max(v(0), v(1));
  case Kind::kLt:
    return v(0) < v(1);
  case Kind::kLe:
    return v(0) <= v(1);
  case Kind::kEq:
    return v(0) == v(1);
  case Kind::kAnd:
    return v(0) != 0 && v(1) != 0;
  case Kind::kSelect:
    return v(0) != 0 ? v(1) : v(2);
  case Kind::kLoad:
    DLC_CHECK(env.load != nullptr);
    return env.load(n.name, v(0));
  }
  return 0;
}

void IndexExpr::collectVars(std::set<std::string> &out) const {
  if (n_->kind == Kind::kVar)
    out.insert(n_->name);
  for (const IndexExpr &e : n_->operands)
    e.collectVars(out);
}

} // namespace dlc::codegen
