// dce: removes nodes and constants whose results are never used.
//
// A node is dead when none of its outputs is an input of another node or a graph output.
// Nodes are visited from last to first, so a whole dead chain goes in one run; constants
// with no use left are removed afterwards.
//
// Before: any graph. After: every node has a used output and every constant is used.
// Not done here: graph inputs are never removed (they are the model's interface); an unused
// output of a live node stays (a node is kept or removed whole). No op has side effects in
// inference, so random ops go like any other.
#include <algorithm>

#include "ir/match.h"
#include "passes/registry.h"

namespace dlc {

namespace {

class Dce : public Pass {
public:
  Expected<bool> run(Graph &g, const PassOptions &options) override {
    bool changed = false;
    std::vector<Node *> nodes = g.nodes();
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      Node *n = *it;
      std::vector<Value *> outs = n->outputs();
      if (!std::all_of(outs.begin(), outs.end(), isUnused))
        continue;
      options.debugf("{}: removed: no output is used", n->describe());
      g.eraseNode(n);
      changed = true;
    }
    std::vector<Value *> constants = g.constants();
    for (Value *c : constants) {
      if (!isUnused(c))
        continue;
      options.debugf("constant '{}': removed: not used", c->name());
      g.eraseConstant(c);
      changed = true;
    }
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createDce() { return std::make_unique<Dce>(); }

} // namespace dlc
