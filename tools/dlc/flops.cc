#include "tools/dlc/flops.h"

namespace dlc::tool {

namespace {

struct DimResolver {
  const std::map<std::string, int64_t> &given;
  std::map<std::string, int64_t> &used;

  /// Size of a dim: known, a symbol's given size (default 1), or nullopt when unknown.
  std::optional<double> operator()(const Dim &d) const {
    if (d.isKnown())
      return static_cast<double>(d.value());
    if (d.isSymbol()) {
      auto it = given.find(d.symbolName());
      int64_t v = it == given.end() ? 1 : it->second;
      used[d.symbolName()] = v;
      return static_cast<double>(v);
    }
    return std::nullopt;
  }

  std::optional<double> product(const Shape &s, int64_t from, int64_t to) const {
    double p = 1;
    for (int64_t i = from; i < to; ++i) {
      auto v = (*this)(s[i]);
      if (!v)
        return std::nullopt;
      p *= *v;
    }
    return p;
  }
};

/// FLOPs of one node, or nullopt when it is not counted or its shapes are not known.
std::optional<double> nodeFlops(const Node &n, const DimResolver &dim) {
  auto ranked = [&](int i) { return n.hasInput(i) && n.input(i)->shape().isRanked(); };
  const Value *out = n.output(0);
  if (!out || !out->shape().isRanked())
    return std::nullopt;
  const Shape &y = out->shape();
  switch (n.op()) {
  case Op::kConv:
  case Op::kConvInteger:
  case Op::kQLinearConv: {
    int w = n.op() == Op::kQLinearConv ? 3 : 1;
    if (!ranked(w) || n.input(w)->shape().rank() < 2)
      return std::nullopt;
    // Each output element: C/group * prod(kernel) MACs; weight is [M, C/group, k...].
    const Shape &ws = n.input(w)->shape();
    auto perOut = dim.product(ws, 1, ws.rank());
    auto outs = dim.product(y, 0, y.rank());
    if (!perOut || !outs)
      return std::nullopt;
    return 2.0 * *perOut * *outs;
  }
  case Op::kConvTranspose: {
    // Each input element scatters into M/group * prod(kernel) outputs; weight is [C, M/group,
    // k...].
    if (!ranked(0) || !ranked(1))
      return std::nullopt;
    const Shape &ws = n.input(1)->shape();
    auto perIn = dim.product(ws, 1, ws.rank());
    auto ins = dim.product(n.input(0)->shape(), 0, n.input(0)->shape().rank());
    if (!perIn || !ins)
      return std::nullopt;
    return 2.0 * *perIn * *ins;
  }
  case Op::kMatMul:
  case Op::kMatMulInteger:
  case Op::kQLinearMatMul:
  case Op::kGemm: {
    int a = 0;
    if (!ranked(a) || n.input(a)->shape().rank() < 1)
      return std::nullopt;
    const Shape &as = n.input(a)->shape();
    bool transA = n.op() == Op::kGemm && n.getInt("transA") != 0;
    auto k = dim(transA ? as[0] : as[as.rank() - 1]);
    auto outs = dim.product(y, 0, y.rank());
    if (!k || !outs)
      return std::nullopt;
    return 2.0 * *k * *outs;
  }
  default:
    return std::nullopt;
  }
}

} // namespace

FlopReport estimateFlops(const Graph &g, const std::map<std::string, int64_t> &dims) {
  FlopReport r;
  DimResolver dim{dims, r.assumedDims};
  for (const Node *n : g.nodes()) {
    if (auto f = nodeFlops(*n, dim)) {
      r.total += *f;
      r.byOp[std::string(opOnnxName(n->op()))] += *f;
    }
  }
  return r;
}

} // namespace dlc::tool
