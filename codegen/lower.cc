#include "codegen/lower.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <future>
#include <map>
#include <set>
#include <thread>
#include <unordered_map>

#include "codegen/cuda_prelude.h"
#include "ir/printer.h"

namespace dlc::codegen {
namespace {

constexpr uint64_t kAlign = 256;

uint64_t alignUp(uint64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

uint64_t byteSize(const Value *v) {
  auto n = v->shape().numElements();
  return static_cast<uint64_t>(n.value_or(0) * dtypeSize(v->dtype()));
}

bool onCpu(const Node &n) { return n.device().kind == Device::Kind::kCpu; }

/// A C identifier from an op name: "conv_transpose" stays, anything else becomes '_'.
std::string identifier(std::string_view s) {
  std::string out;
  for (char c : s)
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

std::string groupName(const FusedGroup &g) {
  // "g12_conv_relu": the anchor (or first node) and the last node's ops.
  const Node *first = g.anchor ? g.anchor : g.nodes.front();
  std::string name = fmt::format("g{}_{}", g.id, identifier(first->opName()));
  const Node *last = g.nodes.back();
  if (last != first)
    name += "_" + identifier(last->opName());
  return name;
}

} // namespace

bool isViewNode(const Node &node) {
  switch (node.op()) {
  case Op::kReshape:
  case Op::kFlatten:
  case Op::kSqueeze:
  case Op::kUnsqueeze:
  case Op::kIdentity:
    return true;
  case Op::kDropout:
    return node.numOutputs() < 2 || !node.output(1) || !node.output(1)->hasUses();
  default:
    return false;
  }
}

Expected<std::vector<FusedGroup>> collectGroups(const Graph &g) {
  std::vector<FusedGroup> groups;
  std::map<int64_t, size_t> byAnnotation;
  std::unordered_map<const Node *, size_t> groupOf;
  for (const Node *n : g.nodes()) {
    const Attribute *a = n->findAttr("fuse.group");
    size_t index;
    if (a && a->kind() == AttrKind::kInt) {
      auto [it, fresh] = byAnnotation.emplace(a->i(), groups.size());
      if (fresh)
        groups.emplace_back();
      index = it->second;
    } else {
      index = groups.size();
      groups.emplace_back();
    }
    groups[index].nodes.push_back(n);
    groupOf[n] = index;
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    FusedGroup &grp = groups[i];
    grp.id = static_cast<int>(i);
    std::set<const Value *> seen;
    for (const Node *n : grp.nodes) {
      if (onCpu(*n) != onCpu(*grp.nodes.front()))
        return invalidArgument("fused group of {} mixes devices: {} is on {}",
                               grp.nodes.front()->describe(), n->describe(), n->device().str());
      if (!n->def().cuda) {
        if (grp.anchor)
          return invalidArgument("fused group has two non-elementwise nodes: {} and {}",
                                 grp.anchor->describe(), n->describe());
        grp.anchor = n;
      }
      for (const Value *v : n->inputs()) {
        if (!v || seen.count(v))
          continue;
        const Node *p = v->producer();
        if (!p || groupOf.at(p) != i) {
          grp.inputs.push_back(v);
          seen.insert(v);
        }
      }
    }
    for (const Node *n : grp.nodes)
      for (const Value *v : n->outputs()) {
        if (!v)
          continue;
        bool escapes = g.isOutput(v);
        for (const Use &u : v->uses())
          escapes = escapes || groupOf.at(u.node) != i;
        if (escapes)
          grp.outputs.push_back(v);
      }
    grp.name = groupName(grp);
  }
  return groups;
}

namespace {

/// Buffer assignment: arena slots for non-constant values, the constant pool for constants.
class Buffers {
public:
  explicit Buffers(rt::Program &p) : p_(p) {}

  rt::BufferRef constant(const Value *v) {
    if (auto it = slots_.find(v); it != slots_.end())
      return it->second;
    const Tensor &t = v->constant();
    rt::BufferRef ref{rt::Space::kConstants, p_.constants.size(), byteSize(v)};
    const auto *bytes = static_cast<const uint8_t *>(t.raw());
    p_.constants.insert(p_.constants.end(), bytes, bytes + ref.bytes);
    p_.constants.resize(alignUp(p_.constants.size()));
    slots_[v] = ref;
    return ref;
  }

  /// A fresh arena slot. (No reuse yet: passes/plan_memory.h replaces this.)
  rt::BufferRef fresh(uint64_t bytes) {
    rt::BufferRef ref{rt::Space::kArena, p_.arenaBytes, bytes};
    p_.arenaBytes += alignUp(std::max<uint64_t>(bytes, 1));
    return ref;
  }

  rt::BufferRef of(const Value *v) {
    if (auto it = slots_.find(v); it != slots_.end())
      return it->second;
    if (v->isConstant())
      return constant(v);
    rt::BufferRef ref = fresh(byteSize(v));
    slots_[v] = ref;
    return ref;
  }

  void alias(const Value *v, const Value *of) { slots_[v] = this->of(of); }
  bool has(const Value *v) const { return slots_.count(v) != 0; }

private:
  rt::Program &p_;
  std::unordered_map<const Value *, rt::BufferRef> slots_;
};

/// The one-node text-IR graph a host step evaluates: the node's inputs become graph inputs
/// (constants stay constants), its outputs graph outputs.
std::string hostStepGraph(const Node &n) {
  Graph g("host_step");
  std::vector<Value *> inputs;
  for (const Value *v : n.inputs()) {
    if (!v) {
      inputs.push_back(nullptr);
      continue;
    }
    inputs.push_back(v->isConstant() ? g.addConstant(v->name(), v->constant())
                                     : g.addInput(v->name(), v->type()));
  }
  Node *c = g.createNode(n.op(), std::move(inputs), n.numOutputs(), "$host");
  c->setName(n.name());
  for (const auto &[name, attr] : n.attrs())
    if (!isAnnotation(name))
      c->setAttr(name, attr);
  for (int i = 0; i < n.numOutputs(); ++i) {
    if (!n.output(i)) {
      c->removeOutput(i);
      continue;
    }
    g.renameValue(c->output(i), n.output(i)->name());
    c->output(i)->setType(n.output(i)->type());
    g.addOutput(n.output(i)->name(), c->output(i), n.output(i)->type());
  }
  PrintOptions po;
  po.printConstants = true;
  return printGraph(g, po);
}

std::string origin(const FusedGroup &g) {
  std::string s;
  for (const Node *n : g.nodes)
    s += (s.empty() ? "" : " + ") + n->describe();
  return s;
}

} // namespace

Expected<rt::Program> lowerToProgram(const Graph &g, const LowerOptions &opts) {
  for (const Value *v : g.inputs())
    if (!v->shape().isStatic() || v->dtype() == DType::kUnknown)
      return invalidArgument("graph input '{}' has type {}; the GPU backend needs static shapes",
                             v->name(), v->type().str());
  DLC_ASSIGN_OR_RETURN(std::vector<FusedGroup> groups, collectGroups(g));
  rt::Program p;
  Buffers buffers(p);

  for (const Value *v : g.inputs()) {
    rt::ProgramTensor t{v->name(), v->dtype(), v->shape().sizes(), buffers.of(v)};
    p.inputs.push_back(std::move(t));
  }

  std::vector<Kernel> kernels;
  std::vector<size_t> kernelStep; // steps index of each kernel
  for (const FusedGroup &grp : groups) {
    if (grp.nodes.size() == 1 && isViewNode(*grp.nodes[0]) && !onCpu(*grp.nodes[0])) {
      buffers.alias(grp.nodes[0]->output(0), grp.nodes[0]->input(0));
      continue;
    }
    if (onCpu(*grp.nodes.front())) {
      for (const Node *n : grp.nodes) {
        rt::HostStep h;
        h.graphText = hostStepGraph(*n);
        for (const Value *v : n->inputs())
          if (v && !v->isConstant()) // constants are part of the step's graph text
            h.inputs.push_back(buffers.of(v));
        for (const Value *v : n->outputs())
          if (v)
            h.outputs.push_back(buffers.of(v));
        h.origin = n->describe();
        p.steps.emplace_back(std::move(h));
      }
      continue;
    }
    auto set = emitGroup(grp, opts.emit);
    if (!set)
      return set.status();
    std::vector<rt::BufferRef> scratch;
    for (uint64_t bytes : set->scratchBytes)
      scratch.push_back(buffers.fresh(bytes));
    for (Kernel &k : set->kernels) {
      rt::LaunchStep step;
      step.kernel = k.name;
      std::copy(std::begin(k.launch.grid), std::end(k.launch.grid), step.grid);
      std::copy(std::begin(k.launch.block), std::end(k.launch.block), step.block);
      step.sharedBytes = k.launch.sharedBytes;
      for (const KernelParam &param : k.params)
        step.args.push_back(param.value ? buffers.of(param.value)
                                        : scratch.at(static_cast<size_t>(param.scratch)));
      step.origin = origin(grp);
      kernelStep.push_back(p.steps.size());
      p.steps.emplace_back(std::move(step));
      kernels.push_back(std::move(k));
    }
  }

  // Outputs: a value that is a graph input, a constant, or returned twice gets its own slot.
  std::set<const Value *> returned;
  for (const Graph::Output &o : g.outputs()) {
    const Value *v = o.value;
    rt::BufferRef ref = buffers.of(v);
    bool needsCopy = v->isInput() || v->isConstant() || returned.count(v);
    for (const rt::ProgramTensor &in : p.inputs)
      needsCopy = needsCopy || (in.buffer.space == ref.space && in.buffer.offset == ref.offset);
    if (needsCopy) {
      rt::BufferRef dst = buffers.fresh(ref.bytes);
      p.steps.emplace_back(rt::CopyStep{ref, dst, fmt::format("output '{}'", o.name)});
      ref = dst;
    }
    returned.insert(v);
    p.outputs.push_back({o.name, v->dtype(), v->shape().sizes(), ref});
  }

  // Modules: kernels dealt round-robin into a few NVRTC programs, compiled in parallel.
  for (const Kernel &k : kernels)
    p.sources.emplace_back(k.name, k.source);
  if (kernels.empty())
    return p;
  const int jobs = opts.jobs > 0 ? opts.jobs
                                 : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const size_t numModules = std::min<size_t>(kernels.size(), static_cast<size_t>(jobs));
  std::vector<std::string> moduleSources(numModules, std::string(cudaPrelude()));
  p.modules.resize(numModules);
  for (size_t i = 0; i < kernels.size(); ++i) {
    const size_t m = i % numModules;
    moduleSources[m] += "\n" + kernels[i].source;
    p.modules[m].kernels.push_back(kernels[i].name);
    std::get<rt::LaunchStep>(p.steps[kernelStep[i]]).module = static_cast<uint32_t>(m);
  }
  for (auto &m : p.modules)
    m.arch = fmt::format("sm_{}", opts.nvrtc.smVersion);
  if (!opts.compile) {
    for (size_t m = 0; m < numModules; ++m)
      p.modules[m].ptx.clear();
    return p;
  }
  std::vector<std::future<Expected<CompiledModule>>> futures;
  for (size_t m = 0; m < numModules; ++m)
    futures.push_back(std::async(std::launch::async, [&, m] {
      return compileCuda(moduleSources[m], fmt::format("module{}", m), opts.nvrtc);
    }));
  Status first = Status::ok();
  for (size_t m = 0; m < numModules; ++m) {
    auto compiled = futures[m].get();
    if (!compiled) {
      if (first.isOk())
        first = compiled.status().withContext(
            fmt::format("kernels {}", fmt::join(p.modules[m].kernels, ", ")));
      continue;
    }
    p.modules[m].cubin = std::move(compiled->cubin);
    p.modules[m].ptx = std::move(compiled->ptx);
  }
  if (!first.isOk())
    return first;
  return p;
}

std::string describeProgram(const rt::Program &p) {
  size_t launches = 0, copies = 0, host = 0;
  for (const rt::Step &s : p.steps) {
    launches += std::holds_alternative<rt::LaunchStep>(s);
    copies += std::holds_alternative<rt::CopyStep>(s);
    host += std::holds_alternative<rt::HostStep>(s);
  }
  return fmt::format("{} kernels in {} modules, {} launches, {} copies, {} host steps; arena {} "
                     "bytes, constants {} bytes",
                     p.sources.size(), p.modules.size(), launches, copies, host, p.arenaBytes,
                     p.constants.size());
}

} // namespace dlc::codegen
