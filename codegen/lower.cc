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
#include "ir/annotations/fused_groups.h"
#include "ir/annotations/fusion_roles.h"
#include "ir/annotations/memory_plan.h"
#include "ir/printer.h"

namespace dlc::codegen {
namespace {

uint64_t alignUp(uint64_t n) {
  return (n + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

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
  // The same order plan-memory's lifetimes use (ir/annotations/fused_groups.h).
  DLC_ASSIGN_OR_RETURN(std::vector<NodeGroup> ordered, orderedGroups(g));
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
      if (!isElementwiseNode(*n)) {
        // fuse{gemm-layer-norm}: a layer norm after the GEMM's epilogue.
        const bool gemm =
            grp.anchor && (grp.anchor->op() == Op::kMatMul || grp.anchor->op() == Op::kGemm);
        if (gemm && !grp.norm && n->op() == Op::kLayerNormalization)
          grp.norm = n;
        else if (grp.anchor)
          return invalidArgument("fused group has two non-elementwise nodes: {} and {}",
                                 grp.anchor->describe(), n->describe());
        else
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

/// Where values live: the arena offsets plan-memory annotated (ir/annotations/memory_plan.h),
/// the constant pool for constants read by GPU code. Views alias their input. Scratch buffers
/// of a group go above the planned arena; groups run one at a time, so they share that region.
class Buffers {
public:
  Buffers(rt::Program &p, ArenaLayout layout) : p_(p), layout_(std::move(layout)) {
    p_.arenaBytes = layout_.arenaBytes;
  }

  const ArenaLayout &layout() const { return layout_; }

  /// Scratch for the group being lowered; call newGroup() between groups.
  rt::BufferRef scratch(uint64_t bytes) {
    rt::BufferRef ref{rt::Space::kArena, scratchTop_, bytes};
    scratchTop_ += alignUp(std::max<uint64_t>(bytes, 1));
    p_.arenaBytes = std::max(p_.arenaBytes, scratchTop_);
    return ref;
  }
  void newGroup() { scratchTop_ = layout_.arenaBytes; }

  Expected<rt::BufferRef> of(const Value *v) {
    if (auto it = slots_.find(v); it != slots_.end())
      return it->second;
    rt::BufferRef ref{rt::Space::kArena, 0, byteSize(v)};
    if (v->isConstant()) {
      const auto *bytes = static_cast<const uint8_t *>(v->constant().raw());
      ref = {rt::Space::kConstants, p_.constants.size(), byteSize(v)};
      p_.constants.insert(p_.constants.end(), bytes, bytes + ref.bytes);
      p_.constants.resize(alignUp(p_.constants.size()));
    } else if (int64_t offset = layout_.offsetOf(v); offset >= 0) {
      ref.offset = static_cast<uint64_t>(offset);
    } else {
      return internalError("the memory plan gives '{}' no place in the arena ({} = -1), but a "
                           "step reads or writes it",
                           v->name(), kMemOffsetAttr);
    }
    slots_[v] = ref;
    return ref;
  }

  /// `v` takes the memory of `of` (a view).
  Status alias(const Value *v, const Value *of) {
    DLC_ASSIGN_OR_RETURN(rt::BufferRef ref, this->of(of));
    ref.bytes = byteSize(v);
    slots_[v] = ref;
    root_[v] = rootOf(of);
    return Status::ok();
  }
  bool has(const Value *v) const { return slots_.count(v) != 0; }
  /// The value whose memory `v` is: itself, or for a view the value it aliases.
  const Value *rootOf(const Value *v) const {
    auto it = root_.find(v);
    return it == root_.end() ? v : it->second;
  }
  /// `v`'s buffer for step `step`, which refers to it (the first such step is kept, by root
  /// value: an output's producer).
  Expected<rt::BufferRef> use(const Value *v, size_t step) {
    firstStep_.try_emplace(rootOf(v), step);
    return of(v);
  }
  /// The first step that refers to `v`'s memory, or -1 when none does.
  int32_t firstStepOf(const Value *v) const {
    auto it = firstStep_.find(rootOf(v));
    return it == firstStep_.end() ? -1 : static_cast<int32_t>(it->second);
  }

private:
  rt::Program &p_;
  const ArenaLayout layout_;
  uint64_t scratchTop_ = 0;
  std::unordered_map<const Value *, rt::BufferRef> slots_;
  std::unordered_map<const Value *, const Value *> root_;
  std::unordered_map<const Value *, size_t> firstStep_;
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

} // namespace

Status waitForGrid(Kernel &k, bool early) {
  const char *helper = early ? "dlc_grid_dependency" : "dlc_grid_wait";
  // The kernel's head, `extern "C" __global__ void [attributes] name(params) {`, ends at the
  // first brace after its name (no parameter holds one).
  const std::string call = " " + k.name + "(";
  for (size_t at = k.source.find("__global__"); at != std::string::npos;
       at = k.source.find("__global__", at + 1)) {
    const size_t named = k.source.find(call, at), brace = k.source.find('{', at);
    if (named == std::string::npos || brace == std::string::npos || named > brace)
      continue;
    k.source.insert(brace + 1, fmt::format("\n  {}();", helper));
    k.prelude.add(helper);
    return Status::ok();
  }
  return internalError("kernel '{0}': its source has no `__global__ ... {0}(...) {{` head", k.name);
}

namespace {

std::string origin(const FusedGroup &g) {
  std::string s;
  for (const Node *n : g.nodes)
    s += (s.empty() ? "" : " + ") + n->describe();
  return s;
}

/// One lowering: the steps of every group, then the outputs, then the modules.
class Lowering {
public:
  Lowering(const Graph &g, const LowerOptions &opts, ArenaLayout layout)
      : g_(g), opts_(opts), buffers_(p_, std::move(layout)) {}

  Expected<rt::Program> run() {
    DLC_ASSIGN_OR_RETURN(std::vector<FusedGroup> groups, collectGroups(g_));
    DLC_RETURN_IF_ERROR(checkTileOverrides(groups));
    // The pool holds at most every constant once: reserved up front, it grows without the
    // reallocations and copies of a doubling vector (a warm ResNet-50 compile spent 13% of its
    // samples there). Capacity not written is never touched.
    uint64_t pool = 0;
    for (const Value *c : g_.constants())
      pool += alignUp(static_cast<uint64_t>(std::max<int64_t>(c->constant().byteSize(), 0)));
    p_.constants.reserve(pool);
    for (const Value *v : g_.inputs()) {
      DLC_ASSIGN_OR_RETURN(rt::BufferRef ref, buffers_.of(v));
      p_.inputs.push_back({v->name(), v->dtype(), v->shape().sizes(), ref});
    }
    for (const FusedGroup &grp : groups) {
      buffers_.newGroup();
      const Node &first = *grp.nodes.front();
      // A view launches nothing. A copy (insert-copies) is a view on either device: its input
      // already lives in the arena, and the runtime stages every host step's inputs and
      // outputs between the arena and the host, which is the transfer the copy stands for.
      if (grp.nodes.size() == 1 && isViewNode(first) && (!onCpu(first) || first.op() == Op::kCopy))
        DLC_RETURN_IF_ERROR(buffers_.alias(first.output(0), first.input(0)));
      else if (onCpu(first))
        DLC_RETURN_IF_ERROR(lowerHostGroup(grp));
      else
        DLC_RETURN_IF_ERROR(lowerKernelGroup(grp));
    }
    DLC_RETURN_IF_ERROR(lowerOutputs());
    if (opts_.exposeIntermediates)
      DLC_RETURN_IF_ERROR(exposeIntermediates(groups));
    placeZeroedState();
    DLC_RETURN_IF_ERROR(buildModules());
    return std::move(p_);
  }

private:
  /// Each `--gemm-tile` name is a node of a GPU kernel that runs a matrix product or a
  /// convolution (its tile then applies there: gemm::emitWithTileOverride).
  Status checkTileOverrides(const std::vector<FusedGroup> &groups) const {
    for (const auto &[name, tile] : opts_.emit.gemmTiles) {
      const FusedGroup *owner = nullptr;
      for (const FusedGroup &grp : groups)
        if (std::any_of(grp.nodes.begin(), grp.nodes.end(),
                        [&](const Node *n) { return n->name() == name; }))
          owner = &grp;
      if (!owner)
        return invalidArgument("--gemm-tile {}={}: the graph has no node '{}' (names as `dlc opt` "
                               "and `dlc run --profile` print them)",
                               name, tile, name);
      const Op op = owner->anchor ? owner->anchor->op() : Op::kIdentity;
      const bool product = op == Op::kMatMul || op == Op::kGemm || op == Op::kConv ||
                           op == Op::kMatMulInteger || op == Op::kConvInteger;
      if (!product || onCpu(*owner->nodes.front()))
        return invalidArgument("--gemm-tile {}={}: node '{}' is in {}, not a GPU kernel of a "
                               "matrix product or convolution",
                               name, tile, name, owner->name);
    }
    return Status::ok();
  }

  /// Each node of a CPU group is a host step of its own.
  Status lowerHostGroup(const FusedGroup &grp) {
    for (const Node *n : grp.nodes) {
      rt::HostStep h;
      h.graphText = hostStepGraph(*n);
      for (const Value *v : n->inputs())
        if (v && !v->isConstant()) { // constants are part of the step's graph text
          DLC_ASSIGN_OR_RETURN(rt::BufferRef ref, buffers_.use(v, p_.steps.size()));
          h.inputs.push_back(ref);
        }
      for (const Value *v : n->outputs())
        if (v) {
          DLC_ASSIGN_OR_RETURN(rt::BufferRef ref, buffers_.use(v, p_.steps.size()));
          h.outputs.push_back(ref);
        }
      h.origin = n->describe();
      p_.steps.emplace_back(std::move(h));
    }
    return Status::ok();
  }

  /// `k`'s source with its name, wherever it stands as a whole identifier, replaced: the key
  /// under which identical kernels of different groups are compiled once.
  static std::string anonymous(const Kernel &k) {
    auto isIdent = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    std::string out;
    const std::string &src = k.source;
    size_t from = 0;
    for (size_t at = src.find(k.name); at != std::string::npos; at = src.find(k.name, at + 1)) {
      const size_t end = at + k.name.size();
      if ((at > 0 && isIdent(src[at - 1])) || (end < src.size() && isIdent(src[end])))
        continue;
      out.append(src, from, at - from).append("\x01");
      from = end;
    }
    out.append(src, from, std::string::npos);
    return out + (k.sm90a ? "\x02sm90a" : "");
  }

  /// The family emitter's kernels for a GPU group, one launch step each.
  Status lowerKernelGroup(const FusedGroup &grp) {
    DLC_ASSIGN_OR_RETURN(KernelSet set, emitGroup(grp, opts_.emit));
    std::vector<rt::BufferRef> scratch;
    for (uint64_t bytes : set.scratchBytes)
      scratch.push_back(buffers_.scratch(bytes));
    for (Kernel &k : set.kernels) {
      rt::LaunchStep step;
      step.kernel = k.name;
      if (opts_.emit.programmaticLaunch && opts_.emit.smVersion >= 90) {
        DLC_RETURN_IF_ERROR(waitForGrid(k, opts_.emit.earlyDependents));
        step.waitsForGrid = true;
      }
      std::copy(std::begin(k.launch.grid), std::end(k.launch.grid), step.grid);
      std::copy(std::begin(k.launch.block), std::end(k.launch.block), step.block);
      step.sharedBytes = k.launch.sharedBytes;
      for (const KernelParam &param : k.params) {
        if (param.map) { // a TMA descriptor of the value's buffer, after every pointer
          DLC_ASSIGN_OR_RETURN(rt::BufferRef ref, buffers_.use(param.value, p_.steps.size()));
          step.tensorMaps.push_back(rt::TensorMapArg{*param.map, ref});
          continue;
        }
        if (!step.tensorMaps.empty())
          return internalError("kernel '{}': a pointer parameter follows a tensor map", k.name);
        if (param.value) {
          DLC_ASSIGN_OR_RETURN(rt::BufferRef ref, buffers_.use(param.value, p_.steps.size()));
          step.args.push_back(ref);
          continue;
        }
        if (param.zeroed) { // placed by placeZeroedState once the arena's size is known
          zeroedArgs_.emplace_back(p_.steps.size(), step.args.size());
          zeroedBytes_ = std::max(zeroedBytes_, set.zeroedBytes);
          step.args.push_back({rt::Space::kArena, 0, set.zeroedBytes});
          continue;
        }
        if (param.scratch < 0 || static_cast<size_t>(param.scratch) >= scratch.size())
          return internalError("kernel '{}': scratch parameter {} out of range", k.name,
                               param.scratch);
        step.args.push_back(scratch[static_cast<size_t>(param.scratch)]);
      }
      step.origin = origin(grp);
      kernelStep_.push_back(p_.steps.size());
      p_.steps.emplace_back(std::move(step));
      kernels_.push_back(std::move(k));
    }
    return Status::ok();
  }

  /// Each output ends where `mem.outputs` says; a value that lives elsewhere (a graph input, a
  /// constant, a value returned twice) is copied there by a last step.
  Status lowerOutputs() {
    for (size_t i = 0; i < g_.outputs().size(); ++i) {
      const Graph::Output &o = g_.outputs()[i];
      const Value *v = o.value;
      DLC_ASSIGN_OR_RETURN(rt::BufferRef src, buffers_.of(v));
      rt::BufferRef dst{rt::Space::kArena, buffers_.layout().outputOffsets.at(i), byteSize(v)};
      int32_t first = buffers_.firstStepOf(v);
      if (src.space != dst.space || src.offset != dst.offset) {
        first = static_cast<int32_t>(p_.steps.size());
        p_.steps.emplace_back(rt::CopyStep{src, dst, fmt::format("output '{}'", o.name)});
      }
      returned_.insert(v);
      p_.outputs.push_back({o.name, v->dtype(), v->shape().sizes(), dst, first});
    }
    return Status::ok();
  }

  /// `--verify`: every value a group writes is an output too (the plan gave each its own
  /// memory: plan-memory{reuse=false}).
  Status exposeIntermediates(const std::vector<FusedGroup> &groups) {
    for (const FusedGroup &grp : groups)
      for (const Value *v : grp.outputs)
        if (!returned_.count(v) && buffers_.has(v)) {
          DLC_ASSIGN_OR_RETURN(rt::BufferRef ref, buffers_.of(v));
          p_.outputs.push_back({v->name(), v->dtype(), v->shape().sizes(), ref});
        }
    return Status::ok();
  }

  /// Kernels dealt round-robin into a few NVRTC programs, compiled in parallel. Kernels that
  /// differ only in their names (one per layer of a repeated block: ResNet's bottlenecks, a
  /// transformer's layers) are compiled once; the steps of the others launch the first.
  Status buildModules() {
    for (const Kernel &k : kernels_)
      p_.sources.emplace_back(k.name, k.source);
    if (kernels_.empty())
      return Status::ok();
    std::map<std::string, size_t> firstWith; // source with the name taken out -> kernel
    std::vector<size_t> sameAs(kernels_.size()), unique;
    for (size_t i = 0; i < kernels_.size(); ++i) {
      auto [it, fresh] = firstWith.emplace(anonymous(kernels_[i]), i);
      sameAs[i] = it->second;
      if (fresh)
        unique.push_back(i);
    }
    const int jobs = opts_.jobs > 0
                         ? opts_.jobs
                         : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    const size_t numModules = std::min<size_t>(unique.size(), static_cast<size_t>(jobs));
    // Each module starts with the prelude helpers its kernels name, not the whole prelude.
    std::vector<HelperSet> helpers(numModules);
    std::vector<std::string> kernelSources(numModules);
    std::vector<uint32_t> moduleOf(kernels_.size());
    p_.modules.resize(numModules);
    for (size_t j = 0; j < unique.size(); ++j) {
      const size_t i = unique[j], m = j % numModules;
      helpers[m].merge(kernels_[i].prelude);
      kernelSources[m] += "\n" + kernels_[i].source;
      p_.modules[m].kernels.push_back(kernels_[i].name);
      moduleOf[i] = static_cast<uint32_t>(m);
    }
    for (size_t i = 0; i < kernels_.size(); ++i) {
      auto &step = std::get<rt::LaunchStep>(p_.steps[kernelStep_[i]]);
      step.module = moduleOf[sameAs[i]];
      step.kernel = kernels_[sameAs[i]].name;
    }
    std::vector<std::string> moduleSources;
    for (size_t m = 0; m < numModules; ++m)
      moduleSources.push_back(cudaPrelude(helpers[m]) + kernelSources[m]);
    // One arch for the whole program: sm_90a when a kernel needs its instructions (the cubin
    // runs on the same GPUs as an sm_90 one; its PTX does not carry forward).
    NvrtcOptions nvrtc = opts_.nvrtc;
    nvrtc.archSpecific = needsSm90a(kernels_);
    for (auto &m : p_.modules)
      m.arch = fmt::format("sm_{}{}", nvrtc.smVersion, nvrtc.archSpecific ? "a" : "");
    if (!opts_.compile)
      return Status::ok();
    std::vector<std::string> names;
    for (const rt::Module &m : p_.modules)
      names.push_back(fmt::format("module {} ({})", names.size(), fmt::join(m.kernels, ", ")));
    CompileStats stats;
    CompileProgressFn onModule;
    KernelProgress progress;
    progress.kernelsTotal = unique.size();
    progress.modulesTotal = numModules;
    if (opts_.progress) {
      opts_.progress(progress);
      onModule = [&](const CompileEvent &e) {
        const rt::Module &m = p_.modules[e.index];
        progress.kernelsDone += m.kernels.size();
        progress.modulesDone = e.done;
        progress.elapsed = e.elapsed;
        if (!e.fromCache && e.seconds > progress.slowestSeconds && !m.kernels.empty()) {
          progress.slowestSeconds = e.seconds;
          progress.slowestKernels =
              m.kernels.size() == 1
                  ? m.kernels[0]
                  : fmt::format("{} and {} more", m.kernels[0], m.kernels.size() - 1);
        }
        opts_.progress(progress);
      };
    }
    DLC_ASSIGN_OR_RETURN(std::vector<CompiledModule> compiled,
                         compileModules(moduleSources, names, nvrtc, jobs, &stats, onModule));
    for (size_t m = 0; m < numModules; ++m) {
      p_.modules[m].cubin = std::move(compiled[m].cubin);
      p_.modules[m].ptx = std::move(compiled[m].ptx);
    }
    p_.compileSeconds = stats.seconds;
    p_.cacheHits = stats.hits;
    return Status::ok();
  }

  /// The zeroed state (rt::Program::zeroedBytes) at the end of the arena, past every buffer
  /// and scratch region; the kernels that use it all get the same one.
  void placeZeroedState() {
    if (zeroedArgs_.empty())
      return;
    const uint64_t offset = alignUp(p_.arenaBytes);
    p_.zeroedBytes = alignUp(zeroedBytes_);
    p_.arenaBytes = offset + p_.zeroedBytes;
    for (const auto &[step, arg] : zeroedArgs_)
      std::get<rt::LaunchStep>(p_.steps[step]).args[arg].offset = offset;
  }

  const Graph &g_;
  const LowerOptions &opts_;
  rt::Program p_;
  Buffers buffers_;
  std::vector<std::pair<size_t, size_t>> zeroedArgs_; // (step, argument) in the zeroed state
  uint64_t zeroedBytes_ = 0;
  std::vector<Kernel> kernels_;
  std::vector<size_t> kernelStep_; // the steps index of each kernel
  std::set<const Value *> returned_;
};

} // namespace

Expected<rt::Program> lowerToProgram(const Graph &g, const LowerOptions &opts) {
  for (const Value *v : g.inputs())
    if (!v->shape().isStatic() || v->dtype() == DType::kUnknown)
      return invalidArgument("graph input '{}' has type {}; the GPU backend needs static shapes",
                             v->name(), v->type().str());
  DLC_ASSIGN_OR_RETURN(ArenaLayout layout, readArenaLayout(g));
  return Lowering(g, opts, std::move(layout)).run();
}

std::string describeProgram(const rt::Program &p) {
  size_t launches = 0, copies = 0, host = 0;
  for (const rt::Step &s : p.steps) {
    launches += std::holds_alternative<rt::LaunchStep>(s);
    copies += std::holds_alternative<rt::CopyStep>(s);
    host += std::holds_alternative<rt::HostStep>(s);
  }
  size_t compiled = 0;
  for (const rt::Module &m : p.modules)
    compiled += m.kernels.size();
  const std::string distinct =
      compiled && compiled < p.sources.size() ? fmt::format(" ({} distinct)", compiled) : "";
  return fmt::format("{} kernels{} in {} modules ({} from the cache, NVRTC {:.2f} s), {} "
                     "launches, {} copies, {} host steps; arena {} bytes, constants {} bytes",
                     p.sources.size(), distinct, p.modules.size(), p.cacheHits, p.compileSeconds,
                     launches, copies, host, p.arenaBytes, p.constants.size());
}

} // namespace dlc::codegen
