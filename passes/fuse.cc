// fuse: rewrites exporters' normalisation pieces into single ops, then groups nodes into the
// fused groups that codegen turns into one kernel each (ir/annotations/fusion_roles.h).
//
// Step 1, patterns (passes/util/fuse_patterns.h): LayerNormalization from
// ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div (+ Mul gamma, Add beta), Gelu from Erf and its
// multiplications, Softmax from Exp(x - ReduceMax(x)) / ReduceSum over the last axis.
//
// Step 2, groups. Nodes are elementwise (their op has a CUDA expression), anchors, or opaque:
//
//     prologue (reductions only)       anchor                    epilogue
//   x ─► sub ─► mul ─┐
//                    ├─► reduce_sum / softmax ─► relu ─► add(bias) ─► (one value leaves)
//   y ───────────────┘   matmul, gemm, conv, conv_transpose, pooling, data movement
//
//  a. Anchors, in node order: MatMul/Gemm/Conv (the table's out-fusable ops), pooling, data
//     movement (the table's injective ops except views, and Resize), and the reductions
//     Reduce*, Softmax, LogSoftmax, LayerNormalization. A reduction first takes a prologue:
//     elementwise producers of its input 0 whose outputs have that input's full shape and are
//     used only inside the group. Then any anchor takes an epilogue: elementwise consumers
//     whose outputs have exactly the anchor output's shape, grown while exactly one value
//     leaves the group and no value inside it is used outside (so the anchor output, when
//     followed by an epilogue, is used only by it); the last state that satisfies this is kept.
//  b. The remaining elementwise nodes join their elementwise producers' groups when both have
//     the same output shape (the group's iteration shape); several values may leave such a
//     group.
//  c. Every merge keeps the graph of groups acyclic: it is refused when a path leaves the new
//     group and comes back to it, through any nodes or groups.
//  d. With `fuse{gemm-layer-norm=true}`, a LayerNormalization over the last axis whose group
//     holds it alone joins the GEMM group (MatMul/Gemm anchor) whose one exit is its input:
//     the GEMM kernel then normalizes its own rows (codegen/gemm_sm90.cc: clusters of the
//     row tile's column tiles), and the group leaves the layer norm's result and, when used
//     elsewhere, its input too. Only where the layer norm's Mean/InvStdDev are unused and its
//     scale and bias are not computed in the GEMM's group.
// Only nodes on the same GPU fuse; an unplaced node counts as gpu:0 (so `dlc opt -p fuse`
// works on plain graphs); nodes on cpu never fuse. A node with a used second output (dropout's
// mask, max_pool's indices) is opaque. Views (reshape, flatten, squeeze, unsqueeze, identity)
// are not fused: plan-memory makes them free aliases.
//
// After: each node of a group of two or more has `fuse.group = K`, K = 0, 1, ... in order of
// the groups, and the nodes are reordered so that each group is contiguous (a stable
// topological order of the groups). Earlier `fuse.group` annotations are recomputed. Every
// refusal is logged under --debug-only=fuse as `<node>: not fused with <node>: <reason>`.
// Not done here: horizontal fusion of siblings, anchor-to-anchor fusion, recomputing cheap
// producers in several groups.
#include <algorithm>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ir/annotations/fused_groups.h"
#include "ir/annotations/fusion_roles.h"
#include "ir/match.h"
#include "passes/registry.h"
#include "passes/util/fuse_patterns.h"

namespace dlc {

namespace {

using Role = FusionRole;

/// Where a node runs for fusion purposes: unplaced counts as gpu:0.
Device placeOf(const Node &n) { return n.device().isSet() ? n.device() : Device::gpu(0); }

/// Ranked with every dim known or symbolic.
bool knownShape(const Value *v) {
  if (!v->shape().isRanked())
    return false;
  for (const Dim &d : v->shape().dims())
    if (d.isUnknown())
      return false;
  return true;
}

int countUses(const Value *v) {
  std::set<const Node *> users;
  for (const Use &u : v->uses())
    users.insert(u.node);
  return static_cast<int>(users.size()) + (v->graph()->isOutput(v) ? 1 : 0);
}

/// For groups keyed by their first node position: the largest last position among groups
/// that start at or before a position (a max segment tree over positions).
class SpanIndex {
public:
  explicit SpanIndex(size_t n) {
    while (size_ < n)
      size_ <<= 1;
    tree_.assign(2 * size_, -1);
  }
  void set(int first, int last) {
    size_t i = static_cast<size_t>(first) + size_;
    tree_[i] = last;
    for (i >>= 1; i > 0; i >>= 1)
      tree_[i] = std::max(tree_[2 * i], tree_[2 * i + 1]);
  }
  /// Max over first positions 0..upTo.
  int maxLast(int upTo) const {
    int best = -1;
    for (size_t l = size_, r = static_cast<size_t>(upTo) + size_ + 1; l < r; l >>= 1, r >>= 1) {
      if (l & 1)
        best = std::max(best, tree_[l++]);
      if (r & 1)
        best = std::max(best, tree_[--r]);
    }
    return best;
  }

private:
  size_t size_ = 1;
  std::vector<int> tree_;
};

class Grouping {
public:
  Grouping(Graph &g, const PassOptions &options) : g_(g), options_(options), spans_(g.numNodes()) {
    for (Node *n : g.nodes()) {
      pos_[n] = static_cast<int>(pos_.size());
      kind_[n] = classifyForFusion(*n);
    }
  }

  void run(bool gemmLayerNorm) {
    for (Node *n : g_.nodes())
      if (kind_[n].role == Role::kAnchor && onGpu(*n) && !groupOf_.count(n))
        growAnchor(n);
    for (Node *n : g_.nodes())
      if (kind_[n].role == Role::kElementwise && onGpu(*n))
        joinProducers(n);
    if (gemmLayerNorm)
      for (Node *n : g_.nodes())
        if (n->op() == Op::kLayerNormalization && onGpu(*n))
          joinGemm(n);
  }

  /// Annotates groups of two or more, reorders nodes so groups are contiguous and numbers them
  /// in order, logging each group.
  Status annotate() {
    for (Node *n : g_.nodes())
      if (auto it = groupOf_.find(n); it != groupOf_.end() && groups_[it->second].size() > 1)
        n->setAttr(std::string(kFuseGroupAttr), Attribute(int64_t{it->second}));
    DLC_ASSIGN_OR_RETURN(std::vector<NodeGroup> order, orderedGroups(g_));
    int64_t next = 0;
    for (const NodeGroup &unit : order) {
      for (Node *n : unit.nodes) {
        g_.moveNode(n, nullptr);
        if (unit.id)
          n->setAttr(std::string(kFuseGroupAttr), Attribute(next));
      }
      if (unit.id)
        logGroup(next++, unit.nodes);
    }
    return Status::ok();
  }

private:
  bool onGpu(const Node &n) const { return placeOf(n).kind == Device::Kind::kGpu; }

  void refuse(const Node &n, const Node &other, const std::string &why) const {
    options_.debugf("{}: not fused with {}: {}", n.describe(), other.describe(), why);
  }

  /// Why `n` cannot join a group on `device` as an elementwise member, or "".
  std::string elementwiseRefusal(const Node &n, Device device, const char *as) const {
    const FusionClass &k = kind_.at(&n);
    if (k.role == Role::kAnchor)
      return fmt::format("{} is itself an anchor (a group holds one)", as);
    if (k.role == Role::kOpaque)
      return k.why.empty() ? fmt::format("{} is opaque", as)
                           : fmt::format("{} is opaque ({})", as, k.why);
    if (placeOf(n) != device)
      return fmt::format("{} is on {}", as, placeOf(n).str());
    if (groupOf_.count(&n))
      return fmt::format("{} is already in another group", as);
    if (!knownShape(n.output(0)))
      return fmt::format("the shape of %{} is not known", n.output(0)->name());
    return "";
  }

  // --- reachability -----------------------------------------------------------------------

  /// Whether merging the groups `a` and `b` (b may be -1) and the ungrouped node `extra` (may
  /// be null) into one group would put it on a cycle: a path that leaves the merged set and
  /// comes back, through any nodes and groups. Paths leave a group only from its exits, so the
  /// search starts there and crosses other groups through theirs: its cost follows the region
  /// between the members, not the size of the groups.
  bool createsCycle(int a, int b, const Node *extra) const {
    auto member = [&](const Node *n) {
      if (n == extra)
        return true;
      auto it = groupOf_.find(n);
      return it != groupOf_.end() && (it->second == a || it->second == b);
    };
    // Edges go up in node position, except jumps between members of a group. Past `bound`,
    // the smallest position >= every member's such that no group straddles it, nothing can
    // lead back to the members, so the search stops there.
    int bound = extra ? pos_.at(extra) : 0;
    for (int id : {a, b})
      if (id >= 0)
        bound = std::max(bound, info_.at(id).last);
    for (int wider = spans_.maxLast(bound); wider > bound; wider = spans_.maxLast(bound))
      bound = wider;
    std::vector<const Node *> stack;
    std::unordered_set<const Node *> seen;
    std::unordered_set<int> seenGroups;
    bool cycle = false;
    auto follow = [&](const Node *from, bool outside) {
      for (const Value *out : from->outputs())
        if (out)
          for (const Use &u : out->uses()) {
            if (member(u.node))
              cycle |= outside;
            else if (pos_.at(u.node) <= bound && seen.insert(u.node).second)
              stack.push_back(u.node);
          }
    };
    for (int id : {a, b})
      if (id >= 0)
        for (const auto &[pos, m] : info_.at(id).exits)
          follow(m, false);
    if (extra)
      follow(extra, false);
    while (!stack.empty() && !cycle) {
      const Node *v = stack.back();
      stack.pop_back();
      auto it = groupOf_.find(v);
      if (it == groupOf_.end()) {
        follow(v, true);
      } else if (seenGroups.insert(it->second).second) {
        for (const auto &[pos, w] : info_.at(it->second).exits)
          follow(w, true);
      }
    }
    return cycle;
  }

  /// What fusion keeps about each group beside its members, updated as they change.
  struct GroupInfo {
    int first = INT32_MAX, last = -1; // the members' smallest and largest positions
    int nonElementwise = 0;           // members that are not elementwise (anchors)
    /// Members with a use outside the group or a graph output, by position.
    std::map<int, const Node *> exits;
  };

  /// Whether a value of `m` is used outside its group (or is a graph output).
  bool leaves(const Node *m, int id) const {
    for (const Value *out : m->outputs()) {
      if (!out)
        continue;
      if (g_.isOutput(out))
        return true;
      for (const Use &u : out->uses())
        if (!inGroup(u.node, id))
          return true;
    }
    return false;
  }

  void updateExit(const Node *m, int id) {
    if (leaves(m, id))
      info_[id].exits[pos_.at(m)] = m;
    else
      info_[id].exits.erase(pos_.at(m));
  }

  void add(int group, Node *n) {
    groups_[group].push_back(n);
    groupOf_[n] = group;
    GroupInfo &info = info_[group];
    const int p = pos_.at(n);
    if (p < info.first) {
      if (info.last >= 0)
        spans_.set(info.first, -1);
      info.first = p;
    }
    info.last = std::max(info.last, p);
    spans_.set(info.first, info.last);
    info.nonElementwise += kind_.at(n).role != Role::kElementwise;
    updateExit(n, group);
    for (const Value *in : n->inputs())
      if (in && in->producer() && inGroup(in->producer(), group))
        updateExit(in->producer(), group);
  }

  /// Recomputes what info_ keeps of `group` from its members (after members left it); drops
  /// it when it has none.
  void recompute(int group) {
    if (auto it = info_.find(group); it != info_.end()) {
      if (it->second.last >= 0)
        spans_.set(it->second.first, -1);
      info_.erase(it);
    }
    auto it = groups_.find(group);
    if (it == groups_.end() || it->second.empty())
      return;
    GroupInfo &info = info_[group];
    for (const Node *m : it->second) {
      info.first = std::min(info.first, pos_.at(m));
      info.last = std::max(info.last, pos_.at(m));
      info.nonElementwise += kind_.at(m).role != Role::kElementwise;
      updateExit(m, group);
    }
    spans_.set(info.first, info.last);
  }

  // --- a. anchors --------------------------------------------------------------------------

  void growAnchor(Node *anchor) {
    int id = nextId_;
    newGroup(anchor);
    if (kind_[anchor].takesPrologue)
      growPrologue(id, anchor);
    growEpilogue(id, anchor);
  }

  void growPrologue(int id, Node *anchor) {
    const Value *data = anchor->input(0);
    if (!data || !knownShape(data))
      return;
    auto later = [&](Node *a, Node *b) { return pos_.at(a) < pos_.at(b); };
    std::priority_queue<Node *, std::vector<Node *>, decltype(later)> candidates(later);
    std::set<Node *> queued;
    auto push = [&](const Value *v) {
      if (v && v->producer() && queued.insert(v->producer()).second)
        candidates.push(v->producer());
    };
    push(data);
    while (!candidates.empty()) {
      Node *p = candidates.top();
      candidates.pop();
      std::string why = prologueRefusal(*p, id, anchor);
      if (!why.empty()) {
        refuse(*p, *anchor, why);
        continue;
      }
      add(id, p);
      for (const Value *in : p->inputs())
        push(in);
    }
  }

  std::string prologueRefusal(const Node &p, int id, const Node *anchor) const {
    std::string why = elementwiseRefusal(p, placeOf(*anchor), "producer");
    if (!why.empty())
      return why;
    const Value *out = p.output(0);
    if (out->shape() != anchor->input(0)->shape())
      return fmt::format("producer shape {} differs from the reduction input {}",
                         out->shape().str(), anchor->input(0)->shape().str());
    if (g_.isOutput(out))
      return fmt::format("%{} is a graph output", out->name());
    for (const Use &u : out->uses()) {
      auto it = groupOf_.find(u.node);
      bool inside = it != groupOf_.end() && it->second == id && (u.node != anchor || u.index == 0);
      if (!inside)
        return fmt::format("%{} is also used by {}", out->name(), u.node->describe());
    }
    if (createsCycle(id, -1, &p))
      return "fusing would create a cycle between groups";
    return "";
  }

  void growEpilogue(int id, Node *anchor) {
    const Value *result = anchor->output(0);
    if (!result || !knownShape(result))
      return;
    // Grow by the earliest acceptable consumer; keep the last state with a single exit.
    const size_t base = groups_[id].size();
    size_t best = base;
    while (Node *next = nextConsumer(id, anchor)) {
      add(id, next);
      // An int8 value leaves better than its dequantized float (a quarter of the bytes), or
      // than its widening cast, when its readers take those into their own kernels
      // (absorbSideProducers, elementwise chains); a reduction (a layer norm) would leave the
      // dequantization a kernel of its own, so then the float leaves.
      if (singleExit(id) && !(widens(*next) && readersWiden(*next)))
        best = groups_[id].size();
    }
    std::vector<Node *> &nodes = groups_[id];
    const Value *exit = best == base ? result : nodes[best - 1]->output(0);
    for (size_t i = best; i < nodes.size(); ++i) {
      refuse(*nodes[i], *anchor, fmt::format("%{} has {} uses", exit->name(), countUses(exit)));
      groupOf_.erase(nodes[i]);
    }
    nodes.resize(best);
    recompute(id);
    absorbSideProducers(id, anchor);
    std::set<const Node *> logged;
    for (const Value *open : openValues(id))
      for (const Use &u : open->uses())
        if (!inGroup(u.node, id) && logged.insert(u.node).second) {
          std::string why = epilogueRefusal(*u.node, id, anchor);
          if (!why.empty())
            refuse(*u.node, *anchor, why);
        }
  }

  /// Whether `n`'s output is wider than its input (dequantize_linear, a widening cast): cheaper
  /// to recompute in each reader than to store.
  static bool widens(const Node &n) {
    if (n.op() == Op::kDequantizeLinear)
      return true;
    return n.op() == Op::kCast && n.input(0) && n.output(0) &&
           dtypeSize(n.output(0)->dtype()) > dtypeSize(n.input(0)->dtype());
  }

  /// Whether every reader of `n`'s output can compute `n` itself, in its own kernel:
  /// elementwise nodes (a GEMM epilogue's residual add too), data movement and views.
  /// Reductions and normalizations read it from memory, as do GEMM operands, and so does
  /// whoever reads a graph output (a float16 LayerNorm's cast to a float32 model output).
  bool readersWiden(const Node &n) const {
    if (g_.isOutput(n.output(0)) || n.output(0)->uses().empty())
      return false;
    for (const Use &u : n.output(0)->uses())
      if (!isElementwiseNode(*u.node) && !isViewOp(u.node->op()) &&
          opDef(u.node->op()).fusion != FusionKind::kInjective)
        return false;
    return true;
  }

  /// Takes into the epilogue the nodes that widen what feeds it from outside (a residual read
  /// as int8 and dequantized, or cast to int32, in the kernel): ungrouped, read only inside the
  /// group, with the anchor output's shape. The group keeps its single exit.
  void absorbSideProducers(int id, const Node *anchor) {
    const Shape &want = anchor->output(0)->shape();
    for (size_t i = 0; i < groups_[id].size(); ++i) {
      const Node *m = groups_[id][i];
      if (m == anchor)
        continue;
      for (const Value *in : m->inputs()) {
        Node *p = in ? in->producer() : nullptr;
        if (!p || !widens(*p) || groupOf_.count(p) ||
            !elementwiseRefusal(*p, placeOf(*anchor), "producer").empty() ||
            p->output(0)->shape() != want || g_.isOutput(p->output(0)))
          continue;
        bool inside = true;
        for (const Use &u : p->output(0)->uses())
          inside = inside && inGroup(u.node, id);
        if (!inside || createsCycle(id, -1, p))
          continue;
        add(id, p);
        options_.debugf("{}: joins the epilogue of {} as a side producer", p->describe(),
                        anchor->describe());
      }
    }
  }

  /// The earliest consumer of a value leaving the group that may join its epilogue.
  Node *nextConsumer(int id, const Node *anchor) const {
    Node *next = nullptr;
    for (const Value *open : openValues(id))
      for (const Use &u : open->uses())
        if (!inGroup(u.node, id) && (!next || pos_.at(u.node) < pos_.at(next)) &&
            epilogueRefusal(*u.node, id, anchor).empty())
          next = u.node;
    return next;
  }

  bool inGroup(const Node *n, int id) const {
    auto it = groupOf_.find(n);
    return it != groupOf_.end() && it->second == id;
  }

  std::string epilogueRefusal(const Node &c, int id, const Node *anchor) const {
    std::string why = elementwiseRefusal(c, placeOf(*anchor), "consumer");
    if (!why.empty())
      return why;
    const Shape &want = anchor->output(0)->shape();
    if (c.output(0)->shape() != want)
      return fmt::format("consumer shape {} differs from anchor output {}",
                         c.output(0)->shape().str(), want.str());
    if (createsCycle(id, -1, &c))
      return "fusing would create a cycle between groups";
    return "";
  }

  /// Values of the group used outside it (or graph outputs), in node order.
  std::vector<const Value *> openValues(int id) const {
    std::vector<const Value *> open;
    for (const auto &[pos, n] : info_.at(id).exits)
      for (const Value *out : n->outputs()) {
        if (!out)
          continue;
        bool leaves = g_.isOutput(out);
        for (const Use &u : out->uses())
          leaves |= !groupOf_.count(u.node) || groupOf_.at(u.node) != id;
        if (leaves)
          open.push_back(out);
      }
    return open;
  }

  /// The epilogue contract: one value leaves the group, and nothing inside uses it.
  bool singleExit(int id) const {
    std::vector<const Value *> open = openValues(id);
    if (open.size() != 1)
      return false;
    for (const Use &u : open[0]->uses())
      if (groupOf_.count(u.node) && groupOf_.at(u.node) == id)
        return false;
    return true;
  }

  // --- d. a layer norm into the GEMM that produces its input ------------------------------

  void joinGemm(Node *ln) {
    const Value *x = ln->input(0);
    Node *p = x ? x->producer() : nullptr;
    if (!p || !groupOf_.count(p) || !groupOf_.count(ln))
      return;
    const int from = groupOf_.at(ln), to = groupOf_.at(p);
    const Node *gemm = nullptr;
    for (const Node *m : groups_.at(to))
      if (m->op() == Op::kMatMul || m->op() == Op::kGemm)
        gemm = m;
    if (!gemm)
      return; // not a GEMM's result: nothing to say
    std::string why = gemmLayerNormRefusal(*ln, from, to);
    if (!why.empty()) {
      refuse(*ln, *gemm, why);
      return;
    }
    groups_.erase(from);
    recompute(from);
    add(to, ln);
    options_.debugf("{}: joins the GEMM group of {}", ln->describe(), gemm->describe());
  }

  std::string gemmLayerNormRefusal(const Node &ln, int from, int to) const {
    if (groups_.at(from).size() != 1)
      return "the layer norm's group has a prologue or an epilogue";
    if (placeOf(ln) != placeOf(*groups_.at(to).front()))
      return fmt::format("the layer norm is on {}", placeOf(ln).str());
    const Value *x = ln.input(0);
    std::vector<const Value *> open = openValues(to);
    if (open.size() != 1 || open[0] != x)
      return fmt::format("%{} is not the one value the GEMM group leaves", x->name());
    const Shape &shape = x->shape();
    if (!knownShape(x) || shape.rank() < 2)
      return fmt::format("the input's shape {} is not static with at least two axes", shape.str());
    const int64_t axis = ln.getInt("axis");
    if (axis != -1 && axis != static_cast<int64_t>(shape.rank()) - 1)
      return fmt::format("axis {} normalizes more than the last axis", axis);
    if (x->dtype() != DType::kF16 && x->dtype() != DType::kBF16)
      return fmt::format("the input is {} (f16 and bf16 only)", dtypeName(x->dtype()));
    if (ln.output(0)->dtype() != x->dtype())
      return "the result's type differs from the input's";
    for (int i = 1; i < ln.numOutputs(); ++i)
      if (ln.output(i) && countUses(ln.output(i)) > 0)
        return fmt::format("its output %{} is used", ln.output(i)->name());
    for (int i = 1; i < ln.numInputs(); ++i) {
      const Value *v = ln.hasInput(i) ? ln.input(i) : nullptr;
      if (!v)
        continue;
      if (v->producer() && inGroup(v->producer(), to))
        return fmt::format("%{} is computed in the GEMM's group", v->name());
      if (v->shape().rank() != 1 || !knownShape(v) ||
          v->shape()[0].value() != shape[shape.rank() - 1].value() || v->dtype() != x->dtype())
        return fmt::format("%{} is not a vector of the normalized axis' {} elements in {}",
                           v->name(), shape[shape.rank() - 1].value(), dtypeName(x->dtype()));
    }
    if (createsCycle(to, from, nullptr))
      return "fusing would create a cycle between groups";
    return "";
  }

  // --- b. elementwise groups ---------------------------------------------------------------

  void joinProducers(Node *n) {
    if (groupOf_.count(n) || !knownShape(n->output(0)))
      return; // taken by an anchor, or nothing to compare
    newGroup(n);
    for (const Value *in : n->inputs()) {
      Node *p = in ? in->producer() : nullptr;
      if (!p || kind_.at(p).role != Role::kElementwise || inGroup(p, groupOf_.at(n)))
        continue; // an anchor's group already decided about n
      if (placeOf(*p) != placeOf(*n)) {
        refuse(*n, *p, fmt::format("producer is on {}", placeOf(*p).str()));
        continue;
      }
      if (!groupOf_.count(p) || !isElementwiseGroup(groupOf_.at(p)))
        continue;
      std::string why = joinRefusal(*p, *n);
      if (!why.empty()) {
        refuse(*n, *p, why);
        continue;
      }
      // The smaller group moves into the larger, so a long chain costs n log n moves.
      int from = groupOf_.at(p), to = groupOf_.at(n);
      if (groups_[from].size() > groups_[to].size())
        std::swap(from, to);
      std::vector<Node *> moved = std::move(groups_[from]);
      groups_.erase(from);
      recompute(from);
      for (Node *m : moved)
        add(to, m);
    }
  }

  void newGroup(Node *n) {
    groups_[nextId_] = {};
    add(nextId_++, n);
  }

  bool isElementwiseGroup(int id) const { return info_.at(id).nonElementwise == 0; }

  std::string joinRefusal(const Node &p, const Node &n) const {
    if (p.output(0)->shape() != n.output(0)->shape())
      return fmt::format("%{} has shape {}, the group iterates over {}", p.output(0)->name(),
                         p.output(0)->shape().str(), n.output(0)->shape().str());
    if (createsCycle(groupOf_.at(&p), groupOf_.at(&n), nullptr))
      return "fusing would create a cycle between groups";
    return "";
  }

  void logGroup(int64_t k, const std::vector<Node *> &nodes) const {
    if (!options_.debug)
      return;
    std::string list;
    for (const Node *n : nodes)
      list += (list.empty() ? "" : ", ") + n->describe() +
              (kind_.at(n).role == Role::kAnchor ? " [anchor]" : "");
    options_.debugf("group {}: {}", k, list);
  }

  Graph &g_;
  const PassOptions &options_;
  std::unordered_map<const Node *, int> pos_;
  std::unordered_map<const Node *, FusionClass> kind_;
  std::map<int, std::vector<Node *>> groups_;
  std::unordered_map<const Node *, int> groupOf_;
  std::unordered_map<int, GroupInfo> info_;
  int nextId_ = 0;
  /// Where each group starts and ends in node order, for createsCycle.
  SpanIndex spans_;
};

/// Each node's group annotation, in node order, to tell whether anything changed.
std::vector<std::pair<const Node *, int64_t>> snapshot(const Graph &g) {
  std::vector<std::pair<const Node *, int64_t>> s;
  for (const Node *n : g.nodes())
    s.emplace_back(n, fuseGroupOf(*n).value_or(-1));
  return s;
}

class Fuse : public Pass {
public:
  std::vector<PassOptionSpec> options() const override {
    return {{"gemm-layer-norm", PassOptionSpec::Kind::kBool,
             "a LayerNormalization over the last axis joins the GEMM group that produces its "
             "input, whose kernel then normalizes its rows (default false)"}};
  }

  Expected<bool> run(Graph &g, const PassOptions &options) override {
    DLC_ASSIGN_OR_RETURN(bool gemmLayerNorm, options.getBool("gemm-layer-norm", false));
    auto before = snapshot(g);
    int rewrites = passes::rewriteNormalizationPatterns(g, options);
    for (Node *n : g.nodes())
      n->removeAttr(kFuseGroupAttr);
    Grouping grouping(g, options);
    grouping.run(gemmLayerNorm);
    DLC_RETURN_IF_ERROR(grouping.annotate());
    return rewrites > 0 || snapshot(g) != before;
  }
};

} // namespace

std::unique_ptr<Pass> createFuse() { return std::make_unique<Fuse>(); }

} // namespace dlc
