#include "codegen/lower.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>

#include "codegen/cuda_prelude.h"
#include "ir/printer.h"
#include "passes/plan_memory.h"
#include "passes/util/fusion_rules.h"
#include "passes/util/groups.h"

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

Expected<std::vector<FusedGroup>> collectGroups(const Graph &g) {
  // The same order plan-memory's lifetimes use (passes/util/groups.h).
  DLC_ASSIGN_OR_RETURN(std::vector<passes::NodeGroup> ordered, passes::orderedGroups(g));
  std::vector<FusedGroup> groups(ordered.size());
  std::unordered_map<const Node *, size_t> groupOf;
  for (size_t i = 0; i < ordered.size(); ++i)
    for (const Node *n : ordered[i].nodes) {
      groups[i].nodes.push_back(n);
      groupOf[n] = i;
    }
  for (size_t i = 0; i < groups.size(); ++i) {
    FusedGroup &grp = groups[i];
    grp.id = static_cast<int>(i);
    std::set<const Value *> seen;
    for (const Node *n : grp.nodes) {
      if (onCpu(*n) != onCpu(*grp.nodes.front()))
        return invalidArgument("fused group of {} mixes devices: {} is on {}",
                               grp.nodes.front()->describe(), n->describe(), n->device().str());
      if (!elementwiseExpr(n->op())) {
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

/// Buffer assignment: the memory plan's arena slots (passes/plan_memory.h) for non-constant
/// values, the constant pool for constants; without a plan every value gets a slot of its own.
/// Scratch buffers of a group go above the plan's arena; groups run one at a time, so they
/// share that region.
class Buffers {
public:
  Buffers(rt::Program &p, const MemoryPlan *plan) : p_(p), plan_(plan) {
    if (plan)
      p_.arenaBytes = plan->arenaBytes;
    scratchBase_ = p_.arenaBytes;
  }

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

  /// A fresh arena slot of its own (no plan, or a value the plan does not place).
  rt::BufferRef fresh(uint64_t bytes) {
    const uint64_t top = std::max(p_.arenaBytes, scratchTop_);
    rt::BufferRef ref{rt::Space::kArena, top, bytes};
    p_.arenaBytes = top + alignUp(std::max<uint64_t>(bytes, 1));
    scratchBase_ = scratchTop_ = p_.arenaBytes;
    return ref;
  }

  /// Scratch for the group being lowered; call newGroup() between groups.
  rt::BufferRef scratch(uint64_t bytes) {
    rt::BufferRef ref{rt::Space::kArena, scratchTop_, bytes};
    scratchTop_ += alignUp(std::max<uint64_t>(bytes, 1));
    p_.arenaBytes = std::max(p_.arenaBytes, scratchTop_);
    return ref;
  }
  void newGroup() { scratchTop_ = scratchBase_; }

  Expected<rt::BufferRef> of(const Value *v) {
    if (auto it = slots_.find(v); it != slots_.end())
      return it->second;
    if (v->isConstant())
      return constant(v);
    rt::BufferRef ref;
    if (plan_) {
      auto it = plan_->slots.find(v);
      if (it == plan_->slots.end() || (it->second.buffer < 0 && !it->second.aliasOf))
        return internalError("the memory plan has no buffer for '{}'", v->name());
      if (it->second.aliasOf) {
        DLC_ASSIGN_OR_RETURN(ref, of(it->second.aliasOf));
      } else {
        const ArenaBuffer &b = plan_->buffers[static_cast<size_t>(it->second.buffer)];
        ref = {rt::Space::kArena, b.offset, 0};
      }
      ref.bytes = byteSize(v);
    } else {
      ref = fresh(byteSize(v));
    }
    slots_[v] = ref;
    return ref;
  }

  Status alias(const Value *v, const Value *of) {
    DLC_ASSIGN_OR_RETURN(rt::BufferRef ref, this->of(of));
    ref.bytes = byteSize(v);
    slots_[v] = ref;
    return Status::ok();
  }
  bool has(const Value *v) const { return slots_.count(v) != 0; }

private:
  rt::Program &p_;
  const MemoryPlan *plan_;
  uint64_t scratchBase_ = 0, scratchTop_ = 0;
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
  std::optional<MemoryPlan> plan;
  if (!opts.exposeIntermediates) { // exposed intermediates must all survive the run
    DLC_ASSIGN_OR_RETURN(MemoryPlan mp, planMemory(g));
    plan = std::move(mp);
  }
  Buffers buffers(p, plan ? &*plan : nullptr);

  for (const Value *v : g.inputs()) {
    DLC_ASSIGN_OR_RETURN(rt::BufferRef ref, buffers.of(v));
    p.inputs.push_back({v->name(), v->dtype(), v->shape().sizes(), ref});
  }

  std::vector<Kernel> kernels;
  std::vector<size_t> kernelStep; // steps index of each kernel
  for (const FusedGroup &grp : groups) {
    buffers.newGroup();
    if (grp.nodes.size() == 1 && passes::isViewNode(*grp.nodes[0]) && !onCpu(*grp.nodes[0])) {
      DLC_RETURN_IF_ERROR(buffers.alias(grp.nodes[0]->output(0), grp.nodes[0]->input(0)));
      continue;
    }
    if (onCpu(*grp.nodes.front())) {
      for (const Node *n : grp.nodes) {
        rt::HostStep h;
        h.graphText = hostStepGraph(*n);
        for (const Value *v : n->inputs())
          if (v && !v->isConstant()) { // constants are part of the step's graph text
            DLC_ASSIGN_OR_RETURN(rt::BufferRef ref, buffers.of(v));
            h.inputs.push_back(ref);
          }
        for (const Value *v : n->outputs())
          if (v) {
            DLC_ASSIGN_OR_RETURN(rt::BufferRef ref, buffers.of(v));
            h.outputs.push_back(ref);
          }
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
      scratch.push_back(buffers.scratch(bytes));
    for (Kernel &k : set->kernels) {
      rt::LaunchStep step;
      step.kernel = k.name;
      std::copy(std::begin(k.launch.grid), std::end(k.launch.grid), step.grid);
      std::copy(std::begin(k.launch.block), std::end(k.launch.block), step.block);
      step.sharedBytes = k.launch.sharedBytes;
      for (const KernelParam &param : k.params) {
        if (param.value) {
          DLC_ASSIGN_OR_RETURN(rt::BufferRef ref, buffers.of(param.value));
          step.args.push_back(ref);
        } else {
          if (param.scratch < 0 || static_cast<size_t>(param.scratch) >= scratch.size())
            return internalError("kernel '{}': scratch parameter {} out of range", k.name,
                                 param.scratch);
          step.args.push_back(scratch[static_cast<size_t>(param.scratch)]);
        }
      }
      step.origin = origin(grp);
      kernelStep.push_back(p.steps.size());
      p.steps.emplace_back(std::move(step));
      kernels.push_back(std::move(k));
    }
  }

  // Outputs. With a plan, the plan says where each ends up (and what to copy there); without
  // one, a value that is a graph input, a constant or returned twice gets its own slot.
  std::set<const Value *> returned;
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const Graph::Output &o = g.outputs()[i];
    const Value *v = o.value;
    rt::BufferRef ref;
    if (plan) {
      const ArenaBuffer &b = plan->buffers.at(static_cast<size_t>(plan->outputBuffers.at(i)));
      ref = {rt::Space::kArena, b.offset, byteSize(v)};
      if (b.copyFrom) {
        DLC_ASSIGN_OR_RETURN(rt::BufferRef src, buffers.of(b.copyFrom));
        src.bytes = ref.bytes;
        p.steps.emplace_back(rt::CopyStep{src, ref, fmt::format("output '{}'", o.name)});
      }
    } else {
      DLC_ASSIGN_OR_RETURN(ref, buffers.of(v));
      bool needsCopy = v->isInput() || v->isConstant() || returned.count(v);
      for (const rt::ProgramTensor &in : p.inputs)
        needsCopy = needsCopy || (in.buffer.space == ref.space && in.buffer.offset == ref.offset);
      if (needsCopy) {
        rt::BufferRef dst = buffers.fresh(ref.bytes);
        p.steps.emplace_back(rt::CopyStep{ref, dst, fmt::format("output '{}'", o.name)});
        ref = dst;
      }
    }
    returned.insert(v);
    p.outputs.push_back({o.name, v->dtype(), v->shape().sizes(), ref});
  }

  if (opts.exposeIntermediates) {
    for (const FusedGroup &grp : groups)
      for (const Value *v : grp.outputs)
        if (!returned.count(v) && buffers.has(v)) {
          DLC_ASSIGN_OR_RETURN(rt::BufferRef ref, buffers.of(v));
          p.outputs.push_back({v->name(), v->dtype(), v->shape().sizes(), ref});
        }
  }

  // Modules: kernels dealt round-robin into a few NVRTC programs, compiled in parallel.
  for (const Kernel &k : kernels)
    p.sources.emplace_back(k.name, k.source);
  if (kernels.empty())
    return p;
  const int jobs = opts.jobs > 0
                       ? opts.jobs
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
  std::vector<std::string> names;
  for (size_t m = 0; m < numModules; ++m)
    names.push_back(fmt::format("module {} ({})", m, fmt::join(p.modules[m].kernels, ", ")));
  CompileStats stats;
  DLC_ASSIGN_OR_RETURN(std::vector<CompiledModule> compiled,
                       compileModules(moduleSources, names, opts.nvrtc, jobs, &stats));
  for (size_t m = 0; m < numModules; ++m) {
    p.modules[m].cubin = std::move(compiled[m].cubin);
    p.modules[m].ptx = std::move(compiled[m].ptx);
  }
  p.compileSeconds = stats.seconds;
  p.cacheHits = stats.hits;
  return p;
}

std::string describeProgram(const rt::Program &p) {
  size_t launches = 0, copies = 0, host = 0;
  for (const rt::Step &s : p.steps) {
    launches += std::holds_alternative<rt::LaunchStep>(s);
    copies += std::holds_alternative<rt::CopyStep>(s);
    host += std::holds_alternative<rt::HostStep>(s);
  }
  return fmt::format("{} kernels in {} modules ({} from the cache, NVRTC {:.2f} s), {} launches, "
                     "{} copies, {} host steps; arena {} bytes, constants {} bytes",
                     p.sources.size(), p.modules.size(), p.cacheHits, p.compileSeconds, launches,
                     copies, host, p.arenaBytes, p.constants.size());
}

} // namespace dlc::codegen
