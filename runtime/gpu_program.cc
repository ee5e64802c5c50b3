#include "runtime/gpu_program.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <set>

#include <spdlog/spdlog.h>

#include "ir/graph.h"
#include "ir/parser.h"

namespace dlc::rt {
namespace {

std::string typeText(DType dtype, const std::vector<int64_t> &shape) {
  return TensorType(dtype, Shape::fromSizes(shape)).str();
}

/// 90 for "sm_90", "sm_90a" or "compute_90"; nullopt for anything else.
std::optional<int> archNumber(std::string_view arch) {
  for (std::string_view prefix : {"sm_", "compute_"}) {
    if (arch.substr(0, prefix.size()) != prefix)
      continue;
    std::string_view digits = arch.substr(prefix.size());
    int v = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc() || end == digits.data() || v <= 0)
      return std::nullopt;
    std::string_view rest(end, static_cast<size_t>(digits.data() + digits.size() - end));
    if (rest.empty() || rest == "a" || rest == "f")
      return v;
  }
  return std::nullopt;
}

/// Whether `arch` names an arch-specific target (sm_90a, sm_100f): code for it runs on that
/// compute capability alone, and its PTX is JIT-compiled for no other.
bool archSpecific(std::string_view arch) {
  return !arch.empty() && (arch.back() == 'a' || arch.back() == 'f');
}

std::string kernelList(const Module &m) {
  std::string out;
  for (size_t i = 0; i < m.kernels.size() && i < 4; ++i)
    out += (i ? ", " : "") + m.kernels[i];
  if (m.kernels.size() > 4)
    out += fmt::format(", ... ({} more)", m.kernels.size() - 4);
  return out.empty() ? "" : " (kernels " + out + ")";
}

/// `ref` lies inside its space.
Status checkBuffer(const Program &p, const BufferRef &ref, const std::string &what) {
  uint64_t size = ref.space == Space::kArena ? p.arenaBytes : p.constants.size();
  const char *space = ref.space == Space::kArena ? "arena" : "constant pool";
  if (ref.space != Space::kArena && ref.space != Space::kConstants)
    return invalidArgument("{}: unknown buffer space {}", what, static_cast<int>(ref.space));
  if (ref.offset > size || ref.bytes > size - ref.offset)
    return invalidArgument("{}: bytes [{}, {}) lie outside the {} of {} bytes", what, ref.offset,
                           ref.offset + ref.bytes, space, size);
  return Status::ok();
}

Status checkTensors(const Program &p, const std::vector<ProgramTensor> &tensors, const char *kind) {
  std::set<std::string> names;
  for (const ProgramTensor &t : tensors) {
    std::string what = fmt::format("{} '{}'", kind, t.name);
    if (!names.insert(t.name).second)
      return invalidArgument("{}: the name is used twice", what);
    if (t.dtype == DType::kUnknown)
      return invalidArgument("{}: unknown dtype", what);
    int64_t elements = 1;
    for (int64_t d : t.shape) {
      if (d < 0)
        return invalidArgument("{}: dim {} is not static", what, d);
      elements *= d;
    }
    if (static_cast<uint64_t>(elements * dtypeSize(t.dtype)) != t.buffer.bytes)
      return invalidArgument("{}: {} needs {} bytes but its buffer holds {}", what,
                             typeText(t.dtype, t.shape), elements * dtypeSize(t.dtype),
                             t.buffer.bytes);
    if (t.buffer.space != Space::kArena)
      return invalidArgument("{}: must live in the arena", what);
    DLC_RETURN_IF_ERROR(checkBuffer(p, t.buffer, what));
  }
  return Status::ok();
}

/// What cuTensorMapEncodeTiled accepts for the maps codegen writes (2-D, 128-byte swizzle),
/// and the tensor inside its buffer.
Status checkTensorMap(const Program &p, const TensorMapArg &m, const std::string &what) {
  DLC_RETURN_IF_ERROR(checkBuffer(p, m.buffer, what));
  if (m.dtype != DType::kF16 && m.dtype != DType::kBF16 && m.dtype != DType::kI8)
    return invalidArgument("{}: element type {} (f16, bf16 or i8)", what, dtypeName(m.dtype));
  const uint64_t eb = dtypeSize(m.dtype);
  if (m.dims[0] == 0 || m.dims[1] == 0 || m.pitchBytes % 16 != 0 || m.buffer.offset % 16 != 0 ||
      m.pitchBytes < m.dims[0] * eb)
    return invalidArgument("{}: dims {} x {} with rows {} bytes apart (16-byte multiples, each "
                           "row inside its pitch)",
                           what, m.dims[0], m.dims[1], m.pitchBytes);
  if (m.box[0] == 0 || m.box[1] == 0 || m.box[1] > 256 || m.box[0] * eb % 16 != 0 ||
      m.box[0] * eb > 128)
    return invalidArgument("{}: box {} x {} (inner 16 to 128 bytes in 16-byte steps, outer at "
                           "most 256)",
                           what, m.box[0], m.box[1]);
  if ((m.dims[1] - 1) * m.pitchBytes + m.dims[0] * eb > m.buffer.bytes)
    return invalidArgument(
        "{}: {} x {} elements, rows {} bytes apart, exceed the buffer's {} bytes", what, m.dims[0],
        m.dims[1], m.pitchBytes, m.buffer.bytes);
  return Status::ok();
}

Status checkLaunch(const Program &p, const LaunchStep &s, const std::string &what) {
  if (s.module >= p.modules.size())
    return invalidArgument("{}: module {} does not exist (the program has {})", what, s.module,
                           p.modules.size());
  if (s.kernel.empty())
    return invalidArgument("{}: no kernel name", what);
  const auto &names = p.modules[s.module].kernels;
  if (!names.empty() && std::find(names.begin(), names.end(), s.kernel) == names.end())
    return invalidArgument("{}: module {} has no kernel '{}'{}", what, s.module, s.kernel,
                           kernelList(p.modules[s.module]));
  const uint32_t maxBlock[3] = {1024, 1024, 64};
  const uint32_t maxGrid[3] = {0x7fffffffu, 65535, 65535};
  for (int i = 0; i < 3; ++i) {
    if (s.grid[i] == 0 || s.grid[i] > maxGrid[i] || s.block[i] == 0 || s.block[i] > maxBlock[i])
      return invalidArgument("{}: invalid launch shape grid {}x{}x{}, block {}x{}x{}", what,
                             s.grid[0], s.grid[1], s.grid[2], s.block[0], s.block[1], s.block[2]);
  }
  if (uint64_t threads = uint64_t{s.block[0]} * s.block[1] * s.block[2]; threads > 1024)
    return invalidArgument("{}: a block of {} threads exceeds CUDA's 1024", what, threads);
  for (size_t i = 0; i < s.args.size(); ++i)
    DLC_RETURN_IF_ERROR(checkBuffer(p, s.args[i], fmt::format("{}, argument {}", what, i)));
  for (size_t i = 0; i < s.tensorMaps.size(); ++i)
    DLC_RETURN_IF_ERROR(
        checkTensorMap(p, s.tensorMaps[i], fmt::format("{}, tensor map {}", what, i)));
  return Status::ok();
}

Status checkHostBuffers(const Program &p, const std::vector<BufferRef> &refs,
                        const std::vector<TensorType> &types, const std::vector<std::string> &names,
                        const char *kind, const std::string &what) {
  if (refs.size() != types.size())
    return invalidArgument("{}: the graph has {} {}s but the step lists {} buffers", what,
                           types.size(), kind, refs.size());
  for (size_t i = 0; i < refs.size(); ++i) {
    std::string w = fmt::format("{}, {} '{}'", what, kind, names[i]);
    const TensorType &t = types[i];
    if (t.dtype == DType::kUnknown || !t.shape.isStatic())
      return invalidArgument("{}: type {} is not static", w, t.str());
    int64_t bytes = 0;
    if (!t.shape.numElements() ||
        __builtin_mul_overflow(*t.shape.numElements(), dtypeSize(t.dtype), &bytes))
      return invalidArgument("{}: the size of {} overflows", w, t.str());
    if (static_cast<uint64_t>(bytes) != refs[i].bytes)
      return invalidArgument("{}: {} needs {} bytes but its buffer holds {}", w, t.str(), bytes,
                             refs[i].bytes);
    DLC_RETURN_IF_ERROR(checkBuffer(p, refs[i], w));
    if (std::string_view(kind) == "output" && refs[i].space != Space::kArena)
      return invalidArgument("{}: outputs must be written to the arena", w);
  }
  return Status::ok();
}

Expected<HostStepGraph> parseHostStep(const Program &p, size_t index) {
  const auto &s = std::get<HostStep>(p.steps[index]);
  std::string what = describeStep(p, index);
  auto parsed = parseGraph(s.graphText, fmt::format("host step {}", index));
  if (!parsed)
    return parsed.status().withContext(what);
  HostStepGraph out;
  out.graph = std::move(*parsed);
  const Graph &g = *out.graph;
  if (g.numNodes() != 1)
    return invalidArgument("{}: the graph must hold exactly one node, it has {}", what,
                           g.numNodes());
  out.node = g.nodes().front();
  std::vector<TensorType> inTypes, outTypes;
  std::vector<std::string> inNames, outNames;
  for (const Value *v : g.inputs()) {
    inTypes.push_back(v->type());
    inNames.push_back(v->name());
  }
  for (const Graph::Output &o : g.outputs()) {
    if (o.value->producer() != out.node)
      return invalidArgument("{}: output '{}' is not produced by the step's node", what, o.name);
    outTypes.push_back(o.value->type());
    outNames.push_back(o.name);
  }
  DLC_RETURN_IF_ERROR(checkHostBuffers(p, s.inputs, inTypes, inNames, "input", what));
  DLC_RETURN_IF_ERROR(checkHostBuffers(p, s.outputs, outTypes, outNames, "output", what));
  return out;
}

} // namespace

HostStepGraph::HostStepGraph() = default;
HostStepGraph::HostStepGraph(HostStepGraph &&) noexcept = default;
HostStepGraph &HostStepGraph::operator=(HostStepGraph &&) noexcept = default;
HostStepGraph::~HostStepGraph() = default;

std::string describeStep(const Program &p, size_t index) {
  if (index >= p.steps.size())
    return fmt::format("step {}", index);
  const Step &step = p.steps[index];
  std::string origin;
  std::visit([&](const auto &s) { origin = s.origin; }, step);
  std::string from = origin.empty() ? "" : ", from " + origin;
  if (const auto *l = std::get_if<LaunchStep>(&step))
    return fmt::format("step {} (kernel '{}'{})", index, l->kernel, from);
  if (std::holds_alternative<CopyStep>(step))
    return fmt::format("step {} (device copy{})", index, from);
  return fmt::format("step {} (host step{})", index, from);
}

std::vector<DirectTensor> planDirectTensors(const Program &p) {
  std::vector<DirectTensor> out;
  for (const Step &s : p.steps)
    if (std::holds_alternative<HostStep>(s))
      return out;
  auto overlaps = [](const BufferRef &r, const BufferRef &t) {
    return r.space == t.space && r.offset < t.offset + t.bytes &&
           t.offset < r.offset + std::max<uint64_t>(r.bytes, 1);
  };
  std::vector<DirectTensor> tensors;
  for (size_t i = 0; i < p.inputs.size(); ++i)
    tensors.push_back({false, i, {}, {}});
  for (size_t i = 0; i < p.outputs.size(); ++i)
    tensors.push_back({true, i, {}, {}});
  for (DirectTensor &d : tensors) {
    const BufferRef &buf = tensorOf(p, d).buffer;
    const int64_t from = d.output ? tensorOf(p, d).firstStep : 0;
    if (buf.space != Space::kArena || buf.bytes == 0 || from < 0)
      continue;
    bool ok = true;
    for (const DirectTensor &o : tensors)
      if (&o != &d && overlaps(tensorOf(p, o).buffer, buf))
        ok = false;
    // A reference that overlaps the tensor is one of its views when it lies inside it: noted.
    auto note = [&](const BufferRef &r, size_t step, size_t k, std::vector<DirectTensor::Arg> &to) {
      if (!overlaps(r, buf))
        return true;
      to.push_back({step, k, r.offset - buf.offset});
      return r.offset >= buf.offset && r.offset + r.bytes <= buf.offset + buf.bytes;
    };
    for (size_t i = static_cast<size_t>(from); i < p.steps.size() && ok; ++i) {
      if (const auto *c = std::get_if<CopyStep>(&p.steps[i])) {
        ok = !overlaps(c->src, buf) && !overlaps(c->dst, buf);
        continue;
      }
      const auto &l = std::get<LaunchStep>(p.steps[i]);
      for (size_t k = 0; k < l.tensorMaps.size() && ok; ++k)
        ok = note(l.tensorMaps[k].buffer, i, k, d.maps);
      for (size_t k = 0; k < l.args.size() && ok; ++k)
        ok = note(l.args[k], i, k, d.args);
    }
    if (ok && (!d.args.empty() || !d.maps.empty()))
      out.push_back(d);
  }
  return out;
}

Status validateProgram(const Program &p) {
  for (size_t i = 0; i < p.modules.size(); ++i) {
    const Module &m = p.modules[i];
    std::string what = fmt::format("module {}{}", i, kernelList(m));
    if (m.cubin.empty() && m.ptx.empty())
      return invalidArgument("{}: holds neither a cubin nor PTX", what);
    if (!archNumber(m.arch))
      return invalidArgument("{}: arch '{}' is not of the form sm_XX", what, m.arch);
  }
  DLC_RETURN_IF_ERROR(checkTensors(p, p.inputs, "input"));
  DLC_RETURN_IF_ERROR(checkTensors(p, p.outputs, "output"));
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const Step &step = p.steps[i];
    std::string what = describeStep(p, i);
    if (const auto *l = std::get_if<LaunchStep>(&step)) {
      DLC_RETURN_IF_ERROR(checkLaunch(p, *l, what));
    } else if (const auto *c = std::get_if<CopyStep>(&step)) {
      DLC_RETURN_IF_ERROR(checkBuffer(p, c->src, what + ", source"));
      DLC_RETURN_IF_ERROR(checkBuffer(p, c->dst, what + ", destination"));
      if (c->src.bytes != c->dst.bytes)
        return invalidArgument("{}: copies {} bytes into {}", what, c->src.bytes, c->dst.bytes);
      if (c->dst.space != Space::kArena)
        return invalidArgument("{}: the destination must be in the arena", what);
    } else {
      DLC_RETURN_IF_ERROR(parseHostStep(p, i));
    }
  }
  return Status::ok();
}

Status checkInputs(const Program &p, const std::map<std::string, Tensor> &inputs,
                   const std::set<std::string> &onDevice) {
  for (const std::string &name : onDevice) {
    if (inputs.count(name))
      return invalidArgument("input '{}' is given both from the host and from the device", name);
    if (std::none_of(p.inputs.begin(), p.inputs.end(),
                     [&](const ProgramTensor &t) { return t.name == name; }))
      return notFound("unknown device input '{}'", name);
  }
  for (const auto &entry : inputs) {
    const std::string &name = entry.first; // a plain reference: clang 14 cannot capture bindings
    auto it = std::find_if(p.inputs.begin(), p.inputs.end(),
                           [&](const ProgramTensor &t) { return t.name == name; });
    if (it != p.inputs.end())
      continue;
    std::string expected;
    for (const ProgramTensor &t : p.inputs)
      expected += (expected.empty() ? "" : ", ") + t.name + ": " + typeText(t.dtype, t.shape);
    return notFound("unknown input '{}'; the program's inputs are {}", name,
                    expected.empty() ? "(none)" : expected);
  }
  for (const ProgramTensor &t : p.inputs) {
    if (onDevice.count(t.name))
      continue;
    auto it = inputs.find(t.name);
    if (it == inputs.end())
      return notFound("missing input '{}' ({})", t.name, typeText(t.dtype, t.shape));
    const Tensor &x = it->second;
    if (x.empty())
      return invalidArgument("input '{}': the tensor is empty (no dtype, no data)", t.name);
    if (x.dtype() != t.dtype || x.shape() != t.shape)
      return invalidArgument("input '{}': expected {}, got {}", t.name, typeText(t.dtype, t.shape),
                             typeText(x.dtype(), x.shape()));
  }
  return Status::ok();
}

Expected<std::shared_ptr<const GpuProgram>> GpuProgram::create(std::shared_ptr<const Program> p,
                                                               const GpuProgramOptions &opts) {
  if (!p)
    return invalidArgument("GpuProgram::create: no program");
  DLC_RETURN_IF_ERROR(validateProgram(*p));
  DLC_ASSIGN_OR_RETURN(CudaDriver * driver, CudaDriver::get(opts.device));
  DLC_RETURN_IF_ERROR(driver->makeCurrent());
  std::shared_ptr<GpuProgram> gp(new GpuProgram());
  gp->program_ = std::move(p);
  gp->driver_ = driver;
  for (size_t i = 0; i < gp->program_->steps.size(); ++i)
    if (std::holds_alternative<HostStep>(gp->program_->steps[i])) {
      DLC_ASSIGN_OR_RETURN(HostStepGraph g, parseHostStep(*gp->program_, i));
      gp->hostSteps_.emplace(i, std::move(g));
    }
  DLC_RETURN_IF_ERROR(gp->loadModules(opts));
  DLC_RETURN_IF_ERROR(gp->resolveKernels());
  const auto &constants = gp->program_->constants;
  DLC_ASSIGN_OR_RETURN(gp->constants_,
                       allocateDevice(*driver, constants.size(), "the constant pool"));
  if (!constants.empty())
    DLC_RETURN_IF_ERROR(driver->check(
        driver->api().memcpyHtoD(gp->constants_.get(), constants.data(), constants.size()),
        fmt::format("uploading {} bytes of constants", constants.size())));
  return std::shared_ptr<const GpuProgram>(std::move(gp));
}

GpuProgram::~GpuProgram() = default;

const HostStepGraph *GpuProgram::hostStep(size_t index) const {
  auto it = hostSteps_.find(index);
  return it == hostSteps_.end() ? nullptr : &it->second;
}

Status GpuProgram::loadModules(const GpuProgramOptions &opts) {
  const DeviceInfo &dev = driver_->device();
  const int sm = dev.smVersion();
  for (size_t i = 0; i < program_->modules.size(); ++i) {
    const Module &m = program_->modules[i];
    const int moduleSm = *archNumber(m.arch); // validated
    const bool cubinFits = !m.cubin.empty() && moduleSm == sm && !opts.forcePtx;
    const bool specific = archSpecific(m.arch);
    const bool ptxFits = !m.ptx.empty() && (specific ? moduleSm == sm : moduleSm <= sm);
    std::string what = fmt::format("module {}{}", i, kernelList(m));
    if (!cubinFits && !ptxFits) {
      std::string has = m.cubin.empty() ? "" : "a cubin for " + m.arch;
      if (!m.ptx.empty())
        has += (has.empty() ? "" : " and ") + ("PTX for " + m.arch);
      return unavailable("{} holds {}, but the GPU is {} ({}): {}; recompile for {} "
                         "(--gpu-arch {})",
                         what, has, dev.name, dev.arch(),
                         m.ptx.empty() ? "no PTX to JIT-compile"
                         : specific    ? "arch-specific PTX runs only on its own arch"
                                       : "PTX runs only on its own arch or newer",
                         dev.arch(), dev.arch());
    }
    // The JIT's log says why a load failed (PTX errors, unsupported features).
    char errorLog[8192] = {};
    CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {errorLog, reinterpret_cast<void *>(sizeof(errorLog) - 1)};
    CUmodule module = nullptr;
    std::string image;
    const void *data = nullptr;
    if (cubinFits) {
      data = m.cubin.data();
    } else {
      image = m.ptx; // NUL-terminated copy: the driver reads PTX as a C string
      data = image.c_str();
    }
    CUresult r = driver_->api().moduleLoadDataEx(&module, data, 2, keys, values);
    if (r != CUDA_SUCCESS) {
      std::string log(errorLog);
      return driver_->error(
          r, fmt::format("loading {} from its {} on {}{}{}", what,
                         cubinFits ? "cubin (" + m.arch + ")" : "PTX (" + m.arch + ")", dev.arch(),
                         log.empty() ? "" : "\n", log));
    }
    modules_.emplace_back(driver_, module);
    moduleLoads_.push_back(cubinFits
                               ? "cubin " + m.arch
                               : fmt::format("PTX {}, JIT-compiled for {}", m.arch, dev.arch()));
    spdlog::debug("GPU runtime: {} loaded ({})", what, moduleLoads_.back());
  }
  return Status::ok();
}

Status GpuProgram::resolveKernels() {
  const Program &p = *program_;
  const DriverApi &api = driver_->api();
  const DeviceInfo &dev = driver_->device();
  functions_.assign(p.steps.size(), nullptr);
  std::map<std::pair<uint32_t, std::string>, CUfunction> byName;
  std::map<CUfunction, uint32_t> optedIn; // dynamic shared bytes already allowed
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const auto *s = std::get_if<LaunchStep>(&p.steps[i]);
    if (!s)
      continue;
    std::string what = describeStep(p, i);
    CUfunction &f = byName[{s->module, s->kernel}];
    if (!f) {
      CUresult r = api.moduleGetFunction(&f, modules_[s->module].get(), s->kernel.c_str());
      if (r != CUDA_SUCCESS)
        return driver_->error(r,
                              fmt::format("{}: finding the kernel in module {}", what, s->module));
    }
    functions_[i] = f;
    int maxThreads = 0, staticShared = 0, registers = 0;
    DLC_RETURN_IF_ERROR(driver_->check(
        api.funcGetAttribute(&maxThreads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f), what));
    DLC_RETURN_IF_ERROR(driver_->check(
        api.funcGetAttribute(&staticShared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f), what));
    DLC_RETURN_IF_ERROR(
        driver_->check(api.funcGetAttribute(&registers, CU_FUNC_ATTRIBUTE_NUM_REGS, f), what));
    const uint64_t threads = uint64_t{s->block[0]} * s->block[1] * s->block[2];
    if (threads > static_cast<uint64_t>(maxThreads))
      return invalidArgument("{}: a block of {} threads exceeds the kernel's limit of {} (it "
                             "uses {} registers per thread)",
                             what, threads, maxThreads, registers);
    const uint64_t shared = uint64_t{s->sharedBytes} + static_cast<uint64_t>(staticShared);
    if (shared > static_cast<uint64_t>(dev.sharedPerBlockOptin))
      return invalidArgument("{}: needs {} bytes of shared memory ({} dynamic + {} static) but "
                             "{} allows at most {} per block",
                             what, shared, s->sharedBytes, staticShared, dev.name,
                             dev.sharedPerBlockOptin);
    // Without opting in, a kernel gets sharedPerBlock (48 KiB) less its static shared memory.
    if (shared > static_cast<uint64_t>(dev.sharedPerBlock) && s->sharedBytes > optedIn[f]) {
      DLC_RETURN_IF_ERROR(driver_->check(
          api.funcSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                               static_cast<int>(s->sharedBytes)),
          fmt::format("{}: allowing {} bytes of dynamic shared memory", what, s->sharedBytes)));
      optedIn[f] = s->sharedBytes;
    }
  }
  return Status::ok();
}

} // namespace dlc::rt
