// insert-copies: makes every transfer between devices an explicit `copy` node (DESIGN.md
// "Placement"), as ONNX Runtime inserts its MemcpyToHost/MemcpyFromHost nodes.
//
//     %h = matmul(%x, %w) : f32[4,8] @gpu:0              %h = matmul(%x, %w) : f32[4,8] @gpu:0
//     %a = top_k(%h, %k) : ... @cpu             ==>      %h.to_cpu = copy(%h) : f32[4,8] @cpu
//     %b = sort(%h) : ... @cpu                           %a = top_k(%h.to_cpu, %k) : ... @cpu
//                                                        %b = sort(%h.to_cpu) : ... @cpu
//
// An edge crosses devices when the producing node's device differs from the consuming node's.
// Each such edge reads a copy of the value made on the consumer's device: one copy per (value,
// destination device), shared by every consumer there, placed just before the first of them,
// with the destination's device. The pass warns once with the number of copies it added (the
// debug log lists them) and annotates each with `place.reason` (ir/annotations/placement.h).
//
// Before: every node has a device (place-devices). After: no node reads a value made on another
// device, except the copies themselves. Running it again adds nothing.
// Not copied: constants and graph inputs (they have no device: the runtime stages them where
// they are read), graph outputs (the runtime returns each from wherever it is), and edges with
// an unplaced node on either end. The copy moves nothing by itself: codegen's lowering aliases
// it (the runtime stages every CPU step's inputs and outputs between the device arena and the
// host), so the count is what a user should read: each copy is a transfer at run time.
#include <map>

#include "ir/annotations/placement.h"
#include "passes/registry.h"

namespace dlc {

namespace {

/// `cpu`, `gpu1`: a device as part of a value name.
std::string nameSuffix(const Device &d) {
  return d.kind == Device::Kind::kCpu ? "cpu" : fmt::format("gpu{}", d.index);
}

class InsertCopies : public Pass {
public:
  Expected<bool> run(Graph &g, const PassOptions &options) override {
    // (value, destination) -> its copy; copies from an earlier run count.
    std::map<std::pair<const Value *, std::string>, Value *> copies;
    for (Node *n : g.nodes())
      if (n->op() == Op::kCopy && n->input(0) && n->output(0))
        copies.emplace(std::make_pair(n->input(0), n->device().str()), n->output(0));

    std::vector<std::string> added;
    std::map<std::string, int> perDevice;
    for (Node *n : g.nodes()) {
      if (n->op() == Op::kCopy || !n->device().isSet())
        continue;
      for (int i = 0; i < n->numInputs(); ++i) {
        Value *v = n->input(i);
        const Node *p = v ? v->producer() : nullptr;
        if (!p || !p->device().isSet() || p->device() == n->device())
          continue;
        Value *&copy = copies[{v, n->device().str()}];
        if (!copy) {
          copy = makeCopy(g, v, n->device(), n);
          ++perDevice[n->device().str()];
          added.push_back(fmt::format("%{} ({} on {}) -> %{} on {}, first read by {}", v->name(),
                                      p->describe(), p->device().str(), copy->name(),
                                      n->device().str(), n->describe()));
        }
        n->setInput(i, copy);
      }
    }
    for (const std::string &line : added)
      options.debugf("copy {}", line);
    if (!added.empty()) {
      std::string where;
      for (const auto &[device, count] : perDevice)
        where += fmt::format("{}{} to {}", where.empty() ? "" : ", ", count, device);
      options.warnf("{} Copy node{} added to the graph: {}; cross-device transfers may hurt "
                    "performance (--debug-only=insert-copies lists them)",
                    added.size(), added.size() == 1 ? " was" : "s were", where);
    }
    return !added.empty();
  }

private:
  /// A copy of `v` on `device`, just before `before`.
  static Value *makeCopy(Graph &g, Value *v, Device device, Node *before) {
    const std::string name = v->name() + ".to_" + nameSuffix(device);
    Node *c = g.createNode(Op::kCopy, {v}, 1, name, before);
    c->setName(name);
    c->setDevice(device);
    g.renameValue(c->output(0), name);
    c->output(0)->setType(v->type());
    c->setAttr(std::string(kPlaceReasonAttr),
               fmt::format("copy of %{} from {} to {}", v->name(), v->producer()->device().str(),
                           device.str()));
    return c->output(0);
  }
};

} // namespace

std::unique_ptr<Pass> createInsertCopies() { return std::make_unique<InsertCopies>(); }

} // namespace dlc
