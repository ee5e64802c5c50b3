#include "ir/annotations/memory_plan.h"

#include <fmt/format.h>

namespace dlc {

namespace {

/// How a malformed annotation is shown in an error: its ints, or its kind.
std::string shown(const Attribute &a) {
  if (a.kind() == AttrKind::kInts)
    return fmt::format("[{}]", fmt::join(a.ints(), ", "));
  if (a.kind() == AttrKind::kInt)
    return std::to_string(a.i());
  return fmt::format("an attribute of kind {}", attrKindName(a.kind()));
}

Expected<std::vector<int64_t>> graphInts(const Graph &g, std::string_view name, size_t count,
                                         std::string_view what) {
  const Attribute *a = g.findAnnotation(name);
  if (!a)
    return invalidArgument("graph '{}' has no '{}' annotation: run plan-memory first", g.name(),
                           name);
  if (a->kind() != AttrKind::kInts || a->ints().size() != count)
    return invalidArgument("graph annotation '{}' must list {} offsets (one per {}), got {}", name,
                           count, what, shown(*a));
  return a->ints();
}

class Reader {
public:
  explicit Reader(const Graph &g) : g_(g) {}

  Expected<ArenaLayout> read() {
    const Attribute *arena = g_.findAnnotation(kMemArenaAttr);
    if (!arena)
      return invalidArgument("graph '{}' has no '{}' annotation: run plan-memory first", g_.name(),
                             kMemArenaAttr);
    if (arena->kind() != AttrKind::kInt || arena->i() < 0)
      return invalidArgument("graph annotation '{}' must be a size in bytes, got {}", kMemArenaAttr,
                             shown(*arena));
    layout_.arenaBytes = static_cast<uint64_t>(arena->i());
    DLC_ASSIGN_OR_RETURN(auto inputs, graphInts(g_, kMemInputsAttr, g_.inputs().size(), "input"));
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Value *in = g_.inputs()[i];
      DLC_RETURN_IF_ERROR(place(in, inputs[i], fmt::format("graph input '{}'", in->name())));
      if (inputs[i] < 0)
        return invalidArgument("graph input '{}' has no place in the arena ({} = {})", in->name(),
                               kMemInputsAttr, fmt::join(inputs, ", "));
    }
    for (const Node *n : g_.nodes())
      DLC_RETURN_IF_ERROR(readNode(*n));
    DLC_ASSIGN_OR_RETURN(auto outputs,
                         graphInts(g_, kMemOutputsAttr, g_.outputs().size(), "output"));
    for (size_t i = 0; i < outputs.size(); ++i) {
      const Graph::Output &o = g_.outputs()[i];
      std::string what = fmt::format("graph output '{}'", o.name);
      if (outputs[i] < 0)
        return invalidArgument("{} has no place in the arena", what);
      DLC_RETURN_IF_ERROR(check(o.value, outputs[i], what));
      layout_.outputOffsets.push_back(static_cast<uint64_t>(outputs[i]));
    }
    return std::move(layout_);
  }

private:
  Status readNode(const Node &n) {
    const Attribute *a = n.findAttr(kMemOffsetAttr);
    if (!a)
      return invalidArgument("{} has no '{}' annotation: run plan-memory first", n.describe(),
                             kMemOffsetAttr);
    if (a->kind() != AttrKind::kInts || a->ints().size() != static_cast<size_t>(n.numOutputs()))
      return invalidArgument("{}: '{}' must list one offset per output ({}), got {}", n.describe(),
                             kMemOffsetAttr, n.numOutputs(), shown(*a));
    for (int i = 0; i < n.numOutputs(); ++i) {
      const Value *v = n.output(i);
      int64_t offset = a->ints()[static_cast<size_t>(i)];
      if (!v || offset < 0)
        continue;
      DLC_RETURN_IF_ERROR(place(v, offset, fmt::format("{} output {}", n.describe(), i)));
    }
    return Status::ok();
  }

  Status place(const Value *v, int64_t offset, const std::string &what) {
    if (offset < 0)
      return Status::ok();
    DLC_RETURN_IF_ERROR(check(v, offset, what));
    layout_.offsets[v] = static_cast<uint64_t>(offset);
    return Status::ok();
  }

  /// Aligned, and the value's bytes inside the arena.
  Status check(const Value *v, int64_t offset, const std::string &what) const {
    std::optional<int64_t> count = v->shape().numElements();
    if (!count || !v->type().isKnown())
      return invalidArgument("{}: %{} has no static type ({})", what, v->name(), v->type().str());
    const auto bytes = static_cast<uint64_t>(*count * dtypeSize(v->dtype()));
    const auto begin = static_cast<uint64_t>(offset);
    if (begin % kArenaAlignment != 0 || begin + bytes > layout_.arenaBytes)
      return invalidArgument("{}: offset {} of %{} ({} bytes) is not a {}-byte aligned place "
                             "inside the arena of {} bytes",
                             what, offset, v->name(), bytes, kArenaAlignment, layout_.arenaBytes);
    return Status::ok();
  }

  const Graph &g_;
  ArenaLayout layout_;
};

} // namespace

int64_t ArenaLayout::offsetOf(const Value *v) const {
  auto it = offsets.find(v);
  return it == offsets.end() ? -1 : static_cast<int64_t>(it->second);
}

Expected<ArenaLayout> readArenaLayout(const Graph &g) { return Reader(g).read(); }

bool writeArenaLayout(Graph &g, const ArenaLayout &layout) {
  bool changed = false;
  auto annotate = [&](std::string_view name, Attribute a) {
    const Attribute *old = g.findAnnotation(name);
    if (!old || *old != a) {
      g.setAnnotation(std::string(name), std::move(a));
      changed = true;
    }
  };
  annotate(kMemArenaAttr, Attribute(static_cast<int64_t>(layout.arenaBytes)));
  std::vector<int64_t> inputs;
  for (const Value *in : g.inputs())
    inputs.push_back(layout.offsetOf(in));
  annotate(kMemInputsAttr, Attribute(std::move(inputs)));
  annotate(kMemOutputsAttr, Attribute(std::vector<int64_t>(layout.outputOffsets.begin(),
                                                           layout.outputOffsets.end())));
  for (Node *n : g.nodes()) {
    std::vector<int64_t> offsets;
    for (const Value *out : n->outputs())
      offsets.push_back(out ? layout.offsetOf(out) : -1);
    Attribute a(std::move(offsets));
    const Attribute *old = n->findAttr(kMemOffsetAttr);
    if (!old || *old != a) {
      n->setAttr(std::string(kMemOffsetAttr), std::move(a));
      changed = true;
    }
  }
  return changed;
}

} // namespace dlc
