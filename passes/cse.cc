// cse: merges identical nodes and identical constants.
//
// Constants first: two constants with the same dtype, shape and bytes (Tensor::identical,
// bucketed by Tensor::hash) become one, the first in creation order. Then nodes, in order:
// a node with the same op, the same inputs (by value, in order, absent ones included), equal
// attributes, the same device and the same number of outputs as an earlier node is replaced
// by it. Merging constants first lets nodes that read twin constants merge too.
//
// Before: nodes in topological order. After: no two mergeable nodes or constants remain.
// Graph outputs keep their public names (only the value behind them changes).
// Not done here: random ops are never merged (two draws differ); commutative operands are
// not reordered (add(a, b) and add(b, a) stay apart); names and output types do not take part
// in the comparison.
#include <map>
#include <unordered_map>

#include "ir/match.h"
#include "passes/registry.h"

namespace dlc {

namespace {

size_t combine(size_t seed, size_t v) { return seed ^ (v + 0x9e3779b97f4a7c15ULL + (seed << 6)); }

size_t nodeHash(const Node &n) {
  size_t h = std::hash<int>()(static_cast<int>(n.op()));
  for (const Value *in : n.inputs())
    h = combine(h, std::hash<const Value *>()(in));
  for (const auto &[name, attr] : n.attrs())
    h = combine(h, std::hash<std::string>()(name));
  h = combine(h, static_cast<size_t>(n.device().kind) * 1024 + n.device().index);
  return combine(h, static_cast<size_t>(n.numOutputs()));
}

bool sameNode(const Node &a, const Node &b) {
  return a.op() == b.op() && a.inputs() == b.inputs() && a.attrs() == b.attrs() &&
         a.device() == b.device() && a.numOutputs() == b.numOutputs();
}

/// `keep` can stand in for `drop` if it has every output of `drop` that is used.
bool coversOutputs(const Node &keep, const Node &drop) {
  for (int i = 0; i < drop.numOutputs(); ++i)
    if (!keep.output(i) && !isUnused(drop.output(i)))
      return false;
  return true;
}

class Cse : public Pass {
public:
  Expected<bool> run(Graph &g, const PassOptions &options) override {
    bool changed = mergeConstants(g, options);
    std::unordered_map<size_t, std::vector<Node *>> seen;
    for (Node *n : g.nodes()) {
      if (opDef(n->op()).random)
        continue;
      std::vector<Node *> &bucket = seen[nodeHash(*n)];
      Node *twin = nullptr;
      for (Node *m : bucket) {
        if (sameNode(*m, *n) && coversOutputs(*m, *n)) {
          twin = m;
          break;
        }
      }
      if (!twin) {
        bucket.push_back(n);
        continue;
      }
      options.debugf("{}: merged into {}", n->describe(), twin->describe());
      replaceNode(g, n, twin->outputs());
      changed = true;
    }
    return changed;
  }

private:
  static bool mergeConstants(Graph &g, const PassOptions &options) {
    bool changed = false;
    std::vector<Value *> constants = g.constants();
    // Twins have one dtype and shape. A constant that shares them with no other is skipped;
    // among a few, the kept ones are compared directly (two different weights differ within
    // their first bytes); only many (scalars, say) are bucketed by hash first. Hashing every
    // weight byte by byte was most of cse's time on a large model.
    using TypeKey = std::pair<DType, std::vector<int64_t>>;
    std::map<TypeKey, int> count;
    for (const Value *c : constants)
      ++count[{c->constant().dtype(), c->constant().shape()}];
    std::map<TypeKey, std::vector<Value *>> kept;
    std::unordered_map<uint64_t, std::vector<Value *>> byHash;
    for (Value *c : constants) {
      const TypeKey key{c->constant().dtype(), c->constant().shape()};
      const int n = count[key];
      if (n < 2)
        continue;
      std::vector<Value *> &candidates = n <= 16 ? kept[key] : byHash[c->constant().hash()];
      Value *twin = nullptr;
      for (Value *k : candidates) {
        if (k->constant().identical(c->constant())) {
          twin = k;
          break;
        }
      }
      if (!twin) {
        candidates.push_back(c);
        continue;
      }
      options.debugf("constant '{}': merged into '{}'", c->name(), twin->name());
      g.replaceAllUsesWith(c, twin);
      g.eraseConstant(c);
      changed = true;
    }
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createCse() { return std::make_unique<Cse>(); }

} // namespace dlc
