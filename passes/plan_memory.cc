// plan-memory: plans one device arena for the graph and writes it into the IR.
//
// The planning rules are in passes/plan_memory.h. The pass writes the plan as annotations
// (ir/annotations/memory_plan.h): every node gets `mem.offset` (ints, one per output: the
// arena offset of that output, its root's for a view, -1 for none) and the graph `mem.arena`,
// `mem.inputs` and `mem.outputs`; codegen's lowering reads them. Option `reuse` (default true):
// false gives every buffer memory of its own. It logs under --debug-only=plan-memory one
// line per buffer, one per view, and last
//     arena N bytes for M values (sum of intermediates S bytes, X% reuse)
// where S is the arena that no reuse would need (every buffer side by side).
//
// Before: shapes static (after binding input shapes), fuse run if groups are wanted. After:
// annotations only; the graph is otherwise unchanged. A pass that changes the graph later
// invalidates the plan; the GPU pipeline runs plan-memory last.
// Not done here: separate host memory for cpu nodes (every value is planned in the one arena),
// in-place reuse of an input by an elementwise kernel, scratch memory of kernels (the
// emitters ask for it per group).
#include "passes/plan_memory.h"

#include <algorithm>
#include <map>

#include "ir/annotations/fusion_roles.h"
#include "ir/match.h"
#include "passes/registry.h"

namespace dlc {

namespace {

uint64_t aligned(uint64_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

std::string describeValue(const Value *v) {
  if (v->producer())
    return fmt::format("%{} (output of {})", v->name(), v->producer()->describe());
  return fmt::format("%{} ({})", v->name(), v->isInput() ? "graph input" : "constant");
}

Expected<uint64_t> byteSize(const Value *v) {
  std::optional<int64_t> count = v->shape().numElements();
  if (!count || !v->type().isKnown())
    return invalidArgument("{} has no static type ({}): bind the input shapes first",
                           describeValue(v), v->type().str());
  return static_cast<uint64_t>(*count * dtypeSize(v->dtype()));
}

class Planner {
public:
  Planner(const Graph &g, bool reuse) : g_(g), reuse_(reuse) {}

  Expected<MemoryPlan> plan() {
    DLC_ASSIGN_OR_RETURN(plan_.steps, orderedGroups(g_));
    const int end = static_cast<int>(plan_.steps.size()); // the copy-out step
    for (int s = 0; s < end; ++s)
      for (const Node *n : plan_.steps[static_cast<size_t>(s)].nodes)
        stepOf_[n] = s;

    for (const Value *in : g_.inputs())
      DLC_RETURN_IF_ERROR(addBuffer(in, 0, end));
    for (int s = 0; s < end; ++s) {
      const NodeGroup &step = plan_.steps[static_cast<size_t>(s)];
      for (const Node *n : step.nodes) {
        if (step.nodes.size() == 1 && isViewNode(*n)) {
          plan_.slots[n->output(0)] = {-1, n->input(0)};
          continue;
        }
        for (const Value *out : n->outputs()) {
          if (out && needsBuffer(out))
            DLC_RETURN_IF_ERROR(addBuffer(out, s, s));
          else if (out)
            plan_.slots[out] = {-1, nullptr}; // internal to its group
        }
      }
    }
    // Lifetimes reach the last read, through views.
    for (const Node *n : g_.nodes())
      for (const Value *in : n->inputs())
        if (in)
          extend(in, stepOf_.at(n));
    plan_.outputBuffers.reserve(g_.outputs().size());
    std::map<const Value *, int> copies;
    for (const Graph::Output &o : g_.outputs()) {
      extend(o.value, end);
      const Value *root = rootOf(o.value);
      if (root->isNodeOutput()) {
        plan_.outputBuffers.push_back(plan_.slots.at(root).buffer);
        continue;
      }
      auto [it, fresh] = copies.emplace(o.value, static_cast<int>(plan_.buffers.size()));
      if (fresh) {
        DLC_ASSIGN_OR_RETURN(uint64_t bytes, byteSize(o.value));
        plan_.buffers.push_back({o.value, 0, bytes, end, end, root});
      }
      plan_.outputBuffers.push_back(it->second);
    }
    place();
    return std::move(plan_);
  }

private:
  /// Used outside its group, a graph output, or used by nobody.
  bool needsBuffer(const Value *v) const {
    if (g_.isOutput(v) || !v->hasUses())
      return true;
    std::optional<int64_t> group = fuseGroupOf(*v->producer());
    for (const Use &u : v->uses())
      if (!group || fuseGroupOf(*u.node) != group)
        return true;
    return false;
  }

  Status addBuffer(const Value *v, int first, int last) {
    DLC_ASSIGN_OR_RETURN(uint64_t bytes, byteSize(v));
    plan_.slots[v] = {static_cast<int>(plan_.buffers.size()), nullptr};
    plan_.buffers.push_back({v, 0, bytes, first, last, nullptr});
    return Status::ok();
  }

  const Value *rootOf(const Value *v) const {
    for (auto it = plan_.slots.find(v); it != plan_.slots.end() && it->second.aliasOf;
         it = plan_.slots.find(v))
      v = it->second.aliasOf;
    return v;
  }

  void extend(const Value *v, int step) {
    auto it = plan_.slots.find(rootOf(v));
    if (it != plan_.slots.end() && it->second.buffer >= 0) {
      ArenaBuffer &b = plan_.buffers[static_cast<size_t>(it->second.buffer)];
      b.last = std::max(b.last, step);
    }
  }

  /// Greedy by size, best fit among the gaps left by buffers whose lifetimes overlap. The
  /// neighbours of a buffer are found through an index of the placed lifetimes, so planning
  /// costs the overlaps there are, not the square of the number of buffers.
  void place() {
    std::vector<size_t> order(plan_.buffers.size());
    for (size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    auto &bufs = plan_.buffers;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return aligned(bufs[a].bytes) > aligned(bufs[b].bytes);
    });
    int steps = 1;
    for (const ArenaBuffer &b : bufs)
      steps = std::max(steps, b.last + 1);
    LifetimeIndex placed(steps);
    std::vector<size_t> live;
    for (size_t i : order) {
      ArenaBuffer &b = bufs[i];
      const uint64_t size = aligned(b.bytes);
      if (!reuse_) { // every buffer of its own: side by side, in this order
        b.offset = plan_.arenaBytes;
        plan_.arenaBytes += size;
        continue;
      }
      std::vector<std::pair<uint64_t, uint64_t>> busy; // [begin, end) of live neighbours
      placed.overlapping(b.first, b.last, live);
      for (size_t j : live)
        busy.emplace_back(bufs[j].offset, bufs[j].offset + aligned(bufs[j].bytes));
      std::sort(busy.begin(), busy.end());
      uint64_t top = 0, bestGap = UINT64_MAX;
      b.offset = UINT64_MAX;
      for (const auto &[begin, stop] : busy) {
        if (begin >= top && begin - top >= size && begin - top < bestGap) {
          bestGap = begin - top;
          b.offset = top;
        }
        top = std::max(top, stop);
      }
      if (b.offset == UINT64_MAX)
        b.offset = top;
      plan_.arenaBytes = std::max(plan_.arenaBytes, b.offset + size);
      placed.insert(b.first, b.last, i);
    }
  }

  /// Lifetimes [first, last] over steps 0..steps-1, and which of them overlap a query: those
  /// that contain its first step (a segment tree holding each lifetime at the nodes that
  /// cover it) and those that start after it, up to its last (by first step).
  class LifetimeIndex {
  public:
    explicit LifetimeIndex(int steps) {
      while (size_ < steps)
        size_ <<= 1;
      nodes_.resize(2 * static_cast<size_t>(size_));
    }
    void insert(int first, int last, size_t id) {
      for (int l = first + size_, r = last + size_ + 1; l < r; l >>= 1, r >>= 1) {
        if (l & 1)
          nodes_[static_cast<size_t>(l++)].push_back(id);
        if (r & 1)
          nodes_[static_cast<size_t>(--r)].push_back(id);
      }
      byFirst_.emplace(first, id);
    }
    void overlapping(int first, int last, std::vector<size_t> &out) const {
      out.clear();
      for (int i = first + size_; i > 0; i >>= 1)
        out.insert(out.end(), nodes_[static_cast<size_t>(i)].begin(),
                   nodes_[static_cast<size_t>(i)].end());
      for (auto it = byFirst_.upper_bound(first); it != byFirst_.end() && it->first <= last; ++it)
        out.push_back(it->second);
    }

  private:
    int size_ = 1;
    std::vector<std::vector<size_t>> nodes_;
    std::multimap<int, size_t> byFirst_;
  };

  const Graph &g_;
  const bool reuse_;
  MemoryPlan plan_;
  std::unordered_map<const Node *, int> stepOf_;
};

class PlanMemory : public Pass {
public:
  std::vector<PassOptionSpec> options() const override {
    return {{"reuse", PassOptionSpec::Kind::kBool,
             "let buffers whose lifetimes do not overlap share memory (default true)"}};
  }

  Expected<bool> run(Graph &g, const PassOptions &options) override {
    DLC_ASSIGN_OR_RETURN(bool reuse, options.getBool("reuse", true));
    DLC_ASSIGN_OR_RETURN(MemoryPlan plan, planMemory(g, reuse));
    bool changed = writeArenaLayout(g, plan.layout());
    if (options.debug)
      log(plan, options);
    return changed;
  }

private:
  static void log(const MemoryPlan &plan, const PassOptions &options) {
    for (const ArenaBuffer &b : plan.buffers)
      options.debugf("{}%{}: offset {}, {} bytes, steps {}..{}", b.copyFrom ? "copy of " : "",
                     b.value->name(), b.offset, b.bytes, b.first, b.last);
    std::vector<std::pair<std::string, std::string>> views;
    for (const auto &[v, slot] : plan.slots)
      if (slot.aliasOf)
        views.emplace_back(v->name(), slot.aliasOf->name());
    std::sort(views.begin(), views.end());
    for (const auto &[v, root] : views)
      options.debugf("%{}: view of %{}", v, root);
    options.debugf("{}", plan.summary());
  }
};

} // namespace

int64_t MemoryPlan::offsetOf(const Value *v) const {
  for (auto it = slots.find(v); it != slots.end(); it = slots.find(it->second.aliasOf)) {
    if (it->second.buffer >= 0)
      return static_cast<int64_t>(buffers[static_cast<size_t>(it->second.buffer)].offset);
    if (!it->second.aliasOf)
      break;
  }
  return -1;
}

uint64_t MemoryPlan::unsharedBytes() const {
  uint64_t sum = 0;
  for (const ArenaBuffer &b : buffers)
    sum += aligned(b.bytes);
  return sum;
}

std::string MemoryPlan::summary() const {
  uint64_t unshared = unsharedBytes();
  double reuse = unshared ? 100.0 * (1.0 - static_cast<double>(arenaBytes) / unshared) : 0.0;
  return fmt::format("arena {} bytes for {} values (sum of intermediates {} bytes, {:.1f}% reuse)",
                     arenaBytes, buffers.size(), unshared, reuse);
}

ArenaLayout MemoryPlan::layout() const {
  ArenaLayout layout;
  layout.arenaBytes = arenaBytes;
  for (const auto &[v, slot] : slots)
    if (int64_t offset = offsetOf(v); offset >= 0)
      layout.offsets[v] = static_cast<uint64_t>(offset);
  for (int b : outputBuffers)
    layout.outputOffsets.push_back(buffers[static_cast<size_t>(b)].offset);
  return layout;
}

Expected<MemoryPlan> planMemory(const Graph &g, bool reuse) { return Planner(g, reuse).plan(); }

std::unique_ptr<Pass> createPlanMemory() { return std::make_unique<PlanMemory>(); }

} // namespace dlc
