#include "codegen/byte_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "codegen/elementwise_expr.h"

namespace dlc::codegen {

namespace {

struct Interval {
  int64_t lo, hi;
};

/// Rough instructions per element of `n` in the epilogue: what a table load replaces.
int elementCost(const Node &n) {
  if (n.op() == Op::kQuantizeLinear) // a correctly rounded division (dlc_quant_div), round, clamp
    return 12;
  return isPlainArithmetic(n.op()) ? 1 : 8; // else division, transcendental math
}

/// A table load: the index's conversion and offset, the load, a bank conflict or two.
constexpr int kLookupCost = 5;

/// The bytes of one element of `t` in its compute type (float for f16 / bf16).
int computeBytes(DType t) { return isFloat(t) ? (t == DType::kF64 ? 8 : 4) : dtypeSize(t); }

/// All values of an integer type of at most 4 bytes.
Interval typeInterval(DType t) {
  const int bits = 8 * static_cast<int>(dtypeSize(t));
  return isSignedInt(t) ? Interval{-(int64_t(1) << (bits - 1)), (int64_t(1) << (bits - 1)) - 1}
                        : Interval{0, (int64_t(1) << bits) - 1};
}

/// Makes `table` hold one entry per value in `r`.
void cover(ByteTable &table, Interval r) {
  table.lo = r.lo;
  table.entries = r.hi - r.lo + 1;
}

/// The values integer values of `chain` can take, where interval arithmetic bounds them: 8- and
/// 16-bit values (whatever computes them), integer constants (one-element group inputs), and
/// casts, sums, differences, minima and maxima of bounded values (a value of up to 32 bits
/// whose bounds are unknown takes its whole type, which a clamp then narrows).
std::map<const Value *, Interval> integerRanges(const std::vector<const Node *> &chain) {
  std::map<const Value *, Interval> range;
  auto of = [&](const Value *v) -> std::optional<Interval> {
    if (!v || !isInteger(v->dtype()))
      return std::nullopt;
    if (auto it = range.find(v); it != range.end())
      return it->second;
    if (v->isConstant() && v->shape().isStatic() && v->shape().numElements() == 1 &&
        dtypeSize(v->dtype()) <= 4) {
      const int64_t c = v->constant().toInt64Vector().at(0);
      return Interval{c, c};
    }
    if (dtypeSize(v->dtype()) > 4)
      return std::nullopt;
    return typeInterval(v->dtype()); // whatever its type holds: a clamp may bound it
  };
  for (const Node *n : chain) {
    if (n->numOutputs() != 1 || !n->output(0))
      continue;
    const Value *out = n->output(0);
    const DType t = out->dtype();
    if (!isInteger(t) || dtypeSize(t) > 4)
      continue;
    std::optional<Interval> r;
    const std::optional<Interval> a = n->numInputs() > 0 ? of(n->input(0)) : std::nullopt;
    const std::optional<Interval> b = n->numInputs() > 1 ? of(n->input(1)) : std::nullopt;
    switch (n->op()) {
    case Op::kCast:
      r = a;
      break;
    case Op::kAdd:
      if (a && b)
        r = Interval{a->lo + b->lo, a->hi + b->hi};
      break;
    case Op::kSub:
      if (a && b)
        r = Interval{a->lo - b->hi, a->hi - b->lo};
      break;
    case Op::kMin:
      if (a && b && n->numInputs() == 2)
        r = Interval{std::min(a->lo, b->lo), std::min(a->hi, b->hi)};
      break;
    case Op::kMax:
      if (a && b && n->numInputs() == 2)
        r = Interval{std::max(a->lo, b->lo), std::max(a->hi, b->hi)};
      break;
    default:
      break;
    }
    // A value outside its type's range wraps: then all an 8- or 16-bit type holds.
    const Interval type = typeInterval(t);
    if (r && r->lo >= type.lo && r->hi <= type.hi)
      range[out] = *r;
    else if (dtypeSize(t) <= 2)
      range[out] = type;
  }
  return range;
}

/// The tail of `chain` after position `at` that `result` depends on through `x` alone, or
/// nullopt where `result` depends on something else or the tail's values leak out of it.
std::optional<ByteTable> tailOf(const std::vector<const Node *> &chain, size_t at, const Value *x,
                                const std::set<const Value *> &uniform, const Value *result) {
  // Forward: the nodes whose every operand is x, a value of the tail, or uniform.
  std::set<const Value *> produced{x};
  std::vector<const Node *> tail;
  for (size_t i = at + 1; i < chain.size(); ++i) {
    const Node *n = chain[i];
    bool reads = false, closed = n->numOutputs() == 1;
    for (const Value *in : n->inputs()) {
      if (!in)
        continue;
      if (produced.count(in))
        reads = true;
      else if (!uniform.count(in))
        closed = false;
    }
    if (reads && closed) {
      tail.push_back(n);
      produced.insert(n->output(0));
    }
  }
  if (!produced.count(result) || result == x)
    return std::nullopt;
  // Backward: only what the result needs.
  std::set<const Value *> needed{result};
  std::vector<const Node *> kept;
  for (auto it = tail.rbegin(); it != tail.rend(); ++it) {
    if (!needed.count((*it)->output(0)))
      continue;
    kept.push_back(*it);
    for (const Value *in : (*it)->inputs())
      if (in)
        needed.insert(in);
  }
  std::reverse(kept.begin(), kept.end());
  // The tail's intermediate values are computed only in the table: nothing else may read them.
  const std::set<const Node *> inTail(kept.begin(), kept.end());
  for (const Node *n : kept) {
    const Value *v = n->output(0);
    if (v == result)
      continue;
    for (const Use &u : v->uses())
      if (!inTail.count(u.node))
        return std::nullopt;
  }
  return ByteTable{x, std::move(kept), result};
}

} // namespace

uint32_t ByteTable::bytes() const {
  return static_cast<uint32_t>(entries * computeBytes(result->dtype()));
}

std::string ByteTable::lookup(const std::string &x) const {
  return fmt::format("dlc_tab[(int)({}){}]", x,
                     lo < 0   ? fmt::format(" + {}", -lo)
                     : lo > 0 ? fmt::format(" - {}", lo)
                              : std::string());
}

std::optional<ByteTable> findByteTable(const FusedGroup &group) {
  if (group.outputs.size() != 1)
    return std::nullopt;
  const Value *result = group.outputs[0];
  if (computeBytes(result->dtype()) > 4 || computeBytes(result->dtype()) < 1)
    return std::nullopt;
  std::vector<const Node *> chain;
  for (const Node *n : group.nodes)
    if (n != group.anchor)
      chain.push_back(n);
  std::set<const Value *> uniform;
  for (const Value *v : group.inputs)
    if (v->shape().isStatic() && v->shape().numElements() == 1)
      uniform.insert(v);
  // An 8-bit index whose tail is worth a table (the earliest: the longest tail).
  std::optional<ByteTable> table;
  size_t at = 0;
  for (size_t i = 0; i < chain.size() && !table; ++i) {
    const Value *x = chain[i]->numOutputs() == 1 ? chain[i]->output(0) : nullptr;
    if (!x || (x->dtype() != DType::kI8 && x->dtype() != DType::kU8))
      continue;
    auto tail = tailOf(chain, i, x, uniform, result);
    if (!tail)
      continue;
    int cost = 0;
    for (const Node *n : tail->nodes)
      cost += elementCost(*n);
    if (cost <= kLookupCost)
      continue;
    table = std::move(tail);
    cover(*table, typeInterval(x->dtype())); // all its values: its conversion may wrap
    at = i;
  }
  if (!table)
    return std::nullopt;
  // Then the earliest wider integer before it that the chain bounds to few enough values and
  // whose tail holds the 8-bit one's: the table absorbs what computes the 8-bit value from it
  // (a saturating clamp and its conversion).
  const std::map<const Value *, Interval> ranges = integerRanges(chain);
  for (size_t i = 0; i < at; ++i) {
    const Value *x = chain[i]->numOutputs() == 1 ? chain[i]->output(0) : nullptr;
    auto r = x ? ranges.find(x) : ranges.end();
    if (r == ranges.end() || dtypeSize(x->dtype()) == 1 ||
        r->second.hi - r->second.lo + 1 > kMaxTableEntries)
      continue;
    auto wide = tailOf(chain, i, x, uniform, result);
    const auto inWide = [&](const Node *n) {
      return std::find(wide->nodes.begin(), wide->nodes.end(), n) != wide->nodes.end();
    };
    if (!wide || !std::all_of(table->nodes.begin(), table->nodes.end(), inWide))
      continue;
    cover(*wide, r->second);
    return wide;
  }
  return table;
}

Status writeByteTableInit(CodeWriter &w, const ByteTable &table, const LoadFn &load,
                          bool deferred) {
  w.line("// The epilogue's tail from '{}' to '{}', for its {} values from {} (byte_table.h).",
         table.index->name(), table.result->name(), table.entries, table.lo);
  w.line("__shared__ {} dlc_tab[{}];", cudaComputeType(table.result->dtype()), table.entries);
  {
    std::optional<CodeWriter::Scope> lambda;
    if (deferred)
      lambda.emplace(w.blockSemi("auto dlc_tab_fill = [&]()"));
    auto fill = w.block("for (int i = threadIdx.x; i < {}; i += blockDim.x)", table.entries);
    const std::string x = w.fresh("tx");
    w.line("const {} {} = ({})(i {} {});", cudaComputeType(table.index->dtype()), x,
           cudaComputeType(table.index->dtype()), table.lo < 0 ? "-" : "+",
           table.lo < 0 ? -table.lo : table.lo);
    ValueEnv env{{table.index, x}};
    DLC_RETURN_IF_ERROR(emitElementwiseNodes(w, table.nodes, env, load, "t"));
    w.line("dlc_tab[i] = {};", env.at(table.result));
  }
  if (!deferred)
    w.line("__syncthreads();");
  return Status::ok();
}

} // namespace dlc::codegen
