#include "codegen/byte_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

#include "codegen/elementwise_expr.h"

namespace dlc::codegen {

namespace {

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

std::string indexOffset(DType index) { return index == DType::kI8 ? " + 128" : ""; }

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
  return static_cast<uint32_t>(256 * computeBytes(result->dtype()));
}

std::string ByteTable::lookup(const std::string &x) const {
  return fmt::format("dlc_tab[(int)({}){}]", x, indexOffset(index->dtype()));
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
  for (size_t i = 0; i < chain.size(); ++i) {
    if (chain[i]->numOutputs() != 1)
      continue;
    const Value *x = chain[i]->output(0);
    if (!x || (x->dtype() != DType::kI8 && x->dtype() != DType::kU8))
      continue;
    auto table = tailOf(chain, i, x, uniform, result);
    if (!table)
      continue;
    int cost = 0;
    for (const Node *n : table->nodes)
      cost += elementCost(*n);
    if (cost > kLookupCost)
      return table;
  }
  return std::nullopt;
}

Status writeByteTableInit(CodeWriter &w, const ByteTable &table, const LoadFn &load,
                          bool deferred) {
  w.line("// The epilogue's tail from the 8-bit '{}' to '{}', for all 256 inputs (byte_table.h).",
         table.index->name(), table.result->name());
  w.line("__shared__ {} dlc_tab[256];", cudaComputeType(table.result->dtype()));
  {
    std::optional<CodeWriter::Scope> lambda;
    if (deferred)
      lambda.emplace(w.blockSemi("auto dlc_tab_fill = [&]()"));
    auto fill = w.block("for (int i = threadIdx.x; i < 256; i += blockDim.x)");
    const std::string x = w.fresh("tx");
    w.line("const {} {} = ({})(i - {});", cudaComputeType(table.index->dtype()), x,
           cudaComputeType(table.index->dtype()), table.index->dtype() == DType::kI8 ? 128 : 0);
    ValueEnv env{{table.index, x}};
    DLC_RETURN_IF_ERROR(emitElementwiseNodes(w, table.nodes, env, load, "t"));
    w.line("dlc_tab[i] = {};", env.at(table.result));
  }
  if (!deferred)
    w.line("__syncthreads();");
  return Status::ok();
}

} // namespace dlc::codegen
