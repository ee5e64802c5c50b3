#include "runtime/c_api_session.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "ir/graph.h"
#include "runtime/cuda_driver.h"

namespace dlc::capi {
namespace {

// --- dtypes -----------------------------------------------------------------------------------

bool sameDType(const DLDataType &a, DType t) {
  if (a.lanes != 1)
    return false;
  if (t == DType::kBool) // DLPack >= 0.8 names it kDLBool (6), 8 bits
    return (a.code == kDLUInt && a.bits == 1) || (a.code == 6 && a.bits == 8);
  const DLDataType b = toDl(t);
  return a.code == b.code && a.bits == b.bits;
}

std::string dlTypeName(const DLDataType &t) {
  const char *code = t.code == kDLInt      ? "int"
                     : t.code == kDLUInt   ? "uint"
                     : t.code == kDLFloat  ? "float"
                     : t.code == kDLBfloat ? "bfloat"
                                           : "code";
  std::string s = fmt::format("{}{}", code, static_cast<int>(t.bits));
  if (t.code > kDLBfloat)
    s = fmt::format("code {} bits {}", static_cast<int>(t.code), static_cast<int>(t.bits));
  if (t.lanes != 1)
    s += fmt::format("x{}", t.lanes);
  return s;
}

std::string shapeText(const std::vector<int64_t> &shape) { return Shape::fromSizes(shape).str(); }

// --- bindings ---------------------------------------------------------------------------------

bool onHost(const DLTensor &t) {
  return t.device.device_type == kDLCPU || t.device.device_type == kDLCUDAHost;
}

void *dataOf(const DLTensor &t) { return static_cast<char *>(t.data) + t.byte_offset; }

/// Checks a tensor the caller binds: layout, device, dtype, rank and fixed dims.
Status checkTensor(const rt::PackageTensor &p, const char *fn, const char *role, const DLTensor &t,
                   int gpu) {
  const char *name = p.name.c_str();
  if (t.ndim < 0 || (t.ndim > 0 && !t.shape))
    return invalidArgument("{}: {} '{}' has ndim {} and shape {}", fn, role, name, t.ndim,
                           t.shape ? "set" : "NULL");
  if (!onHost(t) && t.device.device_type != kDLCUDA)
    return invalidArgument("{}: {} '{}' is on device type {}; dlc takes host (kDLCPU, "
                           "kDLCUDAHost) or GPU (kDLCUDA) memory",
                           fn, role, name, static_cast<int>(t.device.device_type));
  if (t.device.device_type == kDLCUDA && t.device.device_id != gpu)
    return invalidArgument("{}: {} '{}' is on GPU {}; the session runs on GPU {}", fn, role, name,
                           t.device.device_id, gpu);
  if (!sameDType(t.dtype, p.type.dtype))
    return invalidArgument("{}: {} '{}' must be {} ({}), got {}", fn, role, name,
                           dtypeName(p.type.dtype), dlTypeName(toDl(p.type.dtype)),
                           dlTypeName(t.dtype));
  const Shape &shape = p.type.shape;
  if (shape.isRanked() && t.ndim != shape.rank())
    return invalidArgument("{}: {} '{}' must have rank {} ({}), got rank {}", fn, role, name,
                           shape.rank(), p.type.str(), t.ndim);
  int64_t elements = 1;
  for (int32_t i = 0; i < t.ndim; ++i) {
    if (t.shape[i] < 0)
      return invalidArgument("{}: {} '{}' has a negative dim {}", fn, role, name, t.shape[i]);
    if (shape.isRanked() && shape[i].isKnown() && shape[i].value() != t.shape[i])
      return invalidArgument("{}: {} '{}' dim {} must be {} ({}), got {}", fn, role, name, i,
                             shape[i].value(), p.type.str(), t.shape[i]);
    if (__builtin_mul_overflow(elements, t.shape[i], &elements))
      return invalidArgument("{}: {} '{}' has shape {}, whose element count overflows int64", fn,
                             role, name,
                             shapeText(std::vector<int64_t>(t.shape, t.shape + t.ndim)));
  }
  // The tensor's bytes must lie inside an address range a process can map (user space is below
  // 2^57 even with 5-level paging): a byte_offset or size past it can only crash the run.
  uint64_t bytes = 0, end = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(elements), uint64_t{t.dtype.bits} / 8, &bytes) ||
      __builtin_add_overflow(reinterpret_cast<uint64_t>(t.data), t.byte_offset, &end) ||
      __builtin_add_overflow(end, bytes, &end) || end > (uint64_t{1} << 57))
    return invalidArgument("{}: {} '{}' ({} bytes at byte_offset {}) lies past any address a "
                           "process can map",
                           fn, role, name, bytes, t.byte_offset);
  if (t.strides) { // compact row-major only
    int64_t expect = 1;
    for (int32_t i = t.ndim - 1; i >= 0; --i) {
      if (t.shape[i] != 1 && t.strides[i] != expect)
        return invalidArgument("{}: {} '{}' is not compact row-major (stride {} of dim {}); "
                               "pass a contiguous tensor",
                               fn, role, name, t.strides[i], i);
      expect *= t.shape[i];
    }
  }
  if (!t.data && elements > 0)
    return invalidArgument("{}: {} '{}' has NULL data", fn, role, name);
  return Status::ok();
}

/// The sizes the bound inputs give the model's symbolic dims, checked against each other and
/// against the ranges the model was compiled for.
Expected<DimBindings> bindDims(const dlc_session &s) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const rt::PackageTensor &in : s.model->package.inputs) {
    auto it = s.inputs.find(in.name);
    if (it == s.inputs.end())
      return invalidArgument("input '{}' ({}) is not bound; call dlc_session_set_input", in.name,
                             in.type.str());
    shapes.emplace(in.name, it->second.shape);
  }
  DLC_ASSIGN_OR_RETURN(DimBindings dims, bindInputShapes(*s.model->package.graph, shapes));
  for (const rt::DimRange &r : s.model->package.dimRanges) {
    auto it = dims.find(r.name);
    if (it != dims.end() && (it->second < r.min || it->second > r.max))
      return outOfRange("dim '{}' = {} is outside the range {}..{} the model was compiled for",
                        r.name, it->second, r.min, r.max);
  }
  return dims;
}

// --- GPU programs -----------------------------------------------------------------------------

int smOf(const rt::Program &p) {
  if (p.modules.empty())
    return 0; // no kernels: runs anywhere
  const std::string &a = p.modules.front().arch;
  return a.rfind("sm_", 0) == 0 ? std::atoi(a.c_str() + 3) : -1;
}

/// Among the programs for `dims` (any dims when null), the one that suits a GPU of compute
/// capability `sm`: its arch's cubin, else the newest older arch's PTX. -1 when none does.
long bestProgram(const dlc_model &m, int sm, const DimBindings *dims) {
  long best = -1;
  for (size_t i = 0; i < m.package.programs.size(); ++i) {
    const rt::CompiledProgram &cp = m.package.programs[i];
    const int arch = smOf(*cp.program);
    if ((!dims || cp.dims == *dims) && arch <= sm &&
        (best < 0 || arch > smOf(*m.package.programs[static_cast<size_t>(best)].program)))
      best = static_cast<long>(i);
  }
  return best;
}

std::string archList(const dlc_model &m) {
  std::string have;
  for (const std::string &a : m.arches)
    have += (have.empty() ? "" : ", ") + a;
  return have;
}

Status wrongArch(const dlc_model &m, const rt::DeviceInfo &device) {
  return unimplemented("the model's GPU programs are for {}, but this GPU is {} ({}); recompile "
                       "with --gpu-arch {}",
                       archList(m), device.arch(), device.name, device.arch());
}

/// The GPU program compiled for `dims` that suits this GPU, loaded on first use; null when the
/// model has none for these dims.
Expected<std::pair<size_t, std::shared_ptr<const rt::GpuProgram>>>
gpuProgram(const dlc_model &m, const DimBindings &dims, int gpu) {
  DLC_ASSIGN_OR_RETURN(rt::CudaDriver * driver, rt::CudaDriver::get(gpu));
  bool any = false;
  for (const rt::CompiledProgram &cp : m.package.programs)
    any |= cp.dims == dims;
  if (!any)
    return std::make_pair(size_t{0}, std::shared_ptr<const rt::GpuProgram>());
  const long best = bestProgram(m, driver->device().smVersion(), &dims);
  if (best < 0)
    return wrongArch(m, driver->device()).withContext(m.name);
  const size_t i = static_cast<size_t>(best);
  std::lock_guard<std::mutex> lock(m.mu);
  auto &slot = m.loaded[{i, gpu}];
  if (!slot) {
    rt::GpuProgramOptions po;
    po.device = gpu;
    auto gp = rt::GpuProgram::create(m.package.programs[i].program, po);
    if (!gp)
      return gp.status().withContext(m.name);
    slot = *gp;
  }
  return std::make_pair(i, slot);
}

// --- runs -------------------------------------------------------------------------------------

/// Host tensors over the bound (host) inputs. Aligned memory is wrapped, not copied: the
/// caller's buffers stay valid through the run.
Expected<std::map<std::string, Tensor>> hostInputs(const dlc_session &s) {
  std::map<std::string, Tensor> inputs;
  for (const rt::PackageTensor &in : s.model->package.inputs) {
    const auto &b = s.inputs.at(in.name);
    if (!onHost(b.tensor))
      return invalidArgument("input '{}' is in GPU memory, but this run is on the CPU", in.name);
    void *data = dataOf(b.tensor);
    const auto bytes = static_cast<size_t>(Shape::fromSizes(b.shape).numElements().value_or(0) *
                                           dtypeSize(in.type.dtype));
    if (reinterpret_cast<uintptr_t>(data) % static_cast<uintptr_t>(dtypeSize(in.type.dtype)) == 0) {
      DLC_ASSIGN_OR_RETURN(
          Tensor t, Tensor::fromBuffer(in.type.dtype, b.shape, Buffer::view(data, bytes, nullptr)));
      inputs.emplace(in.name, std::move(t));
      continue;
    }
    Tensor t = Tensor::zeros(in.type.dtype, b.shape); // misaligned: copy
    if (bytes > 0)
      std::memcpy(t.mutableRaw(), data, bytes);
    inputs.emplace(in.name, std::move(t));
  }
  return inputs;
}

/// Drops the outputs the session kept from its last run.
void forgetKept(dlc_session &s) {
  s.kept.clear();
  s.keptDevice.clear();
  s.keptViews.clear();
}

/// The DLTensor dlc_session_get_output hands out for kept output `name`.
void keepView(dlc_session &s, const std::string &name, void *data, DLDevice device, DType dtype,
              const std::vector<int64_t> &shape) {
  auto &[view, dims] = s.keptViews[name];
  dims = shape;
  view = DLTensor{};
  view.data = data;
  view.device = device;
  view.ndim = static_cast<int32_t>(dims.size());
  view.dtype = toDl(dtype);
  view.shape = dims.data();
}

/// Writes host results into bound host outputs and keeps the others (copied when they share
/// the caller's input memory, so they outlive it).
Status deliverHostOutputs(dlc_session &s, std::vector<NamedTensor> outs) {
  forgetKept(s);
  for (NamedTensor &o : outs) {
    auto it = s.outputs.find(o.name);
    if (it == s.outputs.end()) {
      const bool borrowed = o.tensor.buffer() && !o.tensor.buffer()->isOwned();
      s.kept[o.name] = borrowed ? o.tensor.clone() : std::move(o.tensor);
      continue;
    }
    const auto &b = it->second;
    if (b.shape != o.tensor.shape())
      return invalidArgument("output '{}' is {} for these inputs, but the tensor bound to it has "
                             "shape {}",
                             o.name, o.tensor.type().str(), shapeText(b.shape));
    if (!onHost(b.tensor))
      return invalidArgument("output '{}' is bound to GPU memory, but this run is on the CPU or "
                             "has host inputs",
                             o.name);
    if (o.tensor.byteSize() > 0)
      std::memmove(dataOf(b.tensor), o.tensor.raw(), static_cast<size_t>(o.tensor.byteSize()));
  }
  for (auto &[name, t] : s.kept) {
    keepView(s, name, const_cast<void *>(t.raw()), DLDevice{kDLCPU, 0}, t.dtype(), t.shape());
  }
  return Status::ok();
}

Status runCpu(dlc_session &s) {
  if (!s.executor) {
    DLC_ASSIGN_OR_RETURN(auto ex, ReferenceExecutor::create(*s.model->package.graph));
    s.executor = std::make_unique<ReferenceExecutor>(std::move(ex));
  }
  DLC_ASSIGN_OR_RETURN(auto inputs, hostInputs(s));
  DLC_ASSIGN_OR_RETURN(auto outs, s.executor->run(inputs));
  return deliverHostOutputs(s, std::move(outs));
}

/// Runs on the GPU. `stream` null: synchronous. Returns false in `ran` when no GPU program
/// fits the dims (the caller falls back to the CPU).
Status runGpu(dlc_session &s, const DimBindings &dims, CUstream stream, bool &ran) {
  ran = false;
  DLC_ASSIGN_OR_RETURN(auto found, gpuProgram(*s.model, dims, s.gpuOrdinal));
  if (!found.second)
    return Status::ok();
  auto &session = s.gpu[found.first];
  if (!session) {
    DLC_ASSIGN_OR_RETURN(session, rt::GpuSession::create(found.second));
  }
  const rt::Program &p = found.second->program();
  bool anyDevice = false, anyHost = false;
  for (const auto &[name, b] : s.inputs)
    (onHost(b.tensor) ? anyHost : anyDevice) = true;
  for (const auto &[name, b] : s.outputs)
    (onHost(b.tensor) ? anyHost : anyDevice) = true;
  if (anyDevice && anyHost)
    return invalidArgument("the bound tensors mix host and GPU memory; bind all of them on one "
                           "side");
  if (!anyDevice) {
    if (stream)
      return invalidArgument("dlc_session_run_async needs tensors in GPU memory; these are on "
                             "the host (use dlc_session_run)");
    DLC_ASSIGN_OR_RETURN(auto inputs, hostInputs(s));
    DLC_ASSIGN_OR_RETURN(auto outs, session->run(inputs));
    ran = true;
    return deliverHostOutputs(s, std::move(outs));
  }
  std::vector<CUdeviceptr> in, out;
  for (const rt::ProgramTensor &t : p.inputs)
    in.push_back(reinterpret_cast<CUdeviceptr>(dataOf(s.inputs.at(t.name).tensor)));
  forgetKept(s);
  for (const rt::ProgramTensor &t : p.outputs) {
    auto it = s.outputs.find(t.name);
    if (it == s.outputs.end()) { // GPU memory of the session's, until the next run or taken
      DLC_ASSIGN_OR_RETURN(rt::DeviceMemory mem,
                           rt::allocateDevice(found.second->driver(),
                                              std::max<uint64_t>(t.buffer.bytes, 1),
                                              fmt::format("output '{}'", t.name)));
      out.push_back(mem.get());
      keepView(s, t.name, reinterpret_cast<void *>(mem.get()), DLDevice{kDLCUDA, s.gpuOrdinal},
               t.dtype, t.shape);
      s.keptDevice.emplace(t.name, std::move(mem));
      continue;
    }
    if (it->second.shape != t.shape)
      return invalidArgument("output '{}' is {} for these inputs, but the tensor bound to it "
                             "has shape {}",
                             t.name, TensorType(t.dtype, Shape::fromSizes(t.shape)).str(),
                             shapeText(it->second.shape));
    out.push_back(reinterpret_cast<CUdeviceptr>(dataOf(it->second.tensor)));
  }
  DLC_RETURN_IF_ERROR(session->runDevice(in, out, stream));
  ran = true;
  return Status::ok();
}

void describeInfo(const rt::PackageTensor &t, dlc_model::Info &info) {
  const Shape &s = t.type.shape;
  for (int64_t i = 0; s.isRanked() && i < s.rank(); ++i) {
    const Dim &d = s[i];
    info.shape.push_back(d.isKnown() ? d.value() : -1);
    info.dimNames.push_back(d.isSymbol() ? d.symbolName() : "");
  }
  for (const std::string &n : info.dimNames)
    info.dimNamePtrs.push_back(n.empty() ? nullptr : n.c_str());
}

} // namespace

namespace {

/// A DLManagedTensor and what it owns: a host tensor or GPU memory.
struct TakenTensor {
  DLManagedTensor managed{};
  std::vector<int64_t> shape;
  Tensor host;
  rt::DeviceMemory device;
};

} // namespace

Expected<DLManagedTensor *> takeOutput(dlc_session &s, const std::string &name) {
  auto view = s.keptViews.find(name);
  if (view == s.keptViews.end())
    return invalidArgument("no kept output '{}': it is bound to the caller's memory, was taken "
                           "already, or no run has made it",
                           name);
  auto taken = std::make_unique<TakenTensor>();
  taken->shape = view->second.second;
  taken->managed.dl_tensor = view->second.first;
  taken->managed.dl_tensor.shape = taken->shape.data();
  if (auto d = s.keptDevice.find(name); d != s.keptDevice.end()) {
    taken->device = std::move(d->second);
    s.keptDevice.erase(d);
  } else {
    taken->host = std::move(s.kept.at(name));
    s.kept.erase(name);
  }
  s.keptViews.erase(view);
  taken->managed.manager_ctx = taken.get();
  taken->managed.deleter = [](DLManagedTensor *t) {
    delete static_cast<TakenTensor *>(t->manager_ctx);
  };
  return &taken.release()->managed;
}

Expected<DType> fromDl(const DLDataType &t) {
  for (DType d :
       {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI8, DType::kI16, DType::kI32,
        DType::kI64, DType::kU8, DType::kU16, DType::kU32, DType::kU64, DType::kBool})
    if (sameDType(t, d))
      return d;
  return invalidArgument("dlc has no dtype for DLPack type {}", dlTypeName(t));
}

DLDataType toDl(DType t) {
  auto make = [](uint8_t code, uint8_t bits) { return DLDataType{code, bits, 1}; };
  switch (t) {
  case DType::kF32:
    return make(kDLFloat, 32);
  case DType::kF16:
    return make(kDLFloat, 16);
  case DType::kBF16:
    return make(kDLBfloat, 16);
  case DType::kF64:
    return make(kDLFloat, 64);
  case DType::kI8:
    return make(kDLInt, 8);
  case DType::kI16:
    return make(kDLInt, 16);
  case DType::kI32:
    return make(kDLInt, 32);
  case DType::kI64:
    return make(kDLInt, 64);
  case DType::kU8:
    return make(kDLUInt, 8);
  case DType::kU16:
    return make(kDLUInt, 16);
  case DType::kU32:
    return make(kDLUInt, 32);
  case DType::kU64:
    return make(kDLUInt, 64);
  case DType::kBool:
    return make(kDLUInt, 1); // stored one byte per element (TVM's convention)
  default:
    return make(kDLOpaqueHandle, 0);
  }
}

Expected<std::unique_ptr<dlc_model>> makeModel(rt::Package package, const std::string &name) {
  if (!package.graph)
    return invalidArgument("{}: the package holds no graph", name);
  auto m = std::make_unique<dlc_model>();
  m->package = std::move(package);
  m->name = name;
  m->arches = m->package.arches();
  m->inputInfo.resize(m->package.inputs.size());
  m->outputInfo.resize(m->package.outputs.size());
  for (size_t i = 0; i < m->package.inputs.size(); ++i)
    describeInfo(m->package.inputs[i], m->inputInfo[i]);
  for (size_t i = 0; i < m->package.outputs.size(); ++i)
    describeInfo(m->package.outputs[i], m->outputInfo[i]);
  return m;
}

const rt::PackageTensor *findTensor(const std::vector<rt::PackageTensor> &ts,
                                    const std::string &name) {
  for (const auto &t : ts)
    if (t.name == name)
      return &t;
  return nullptr;
}

std::string names(const std::vector<rt::PackageTensor> &ts) {
  std::string s;
  for (const auto &t : ts)
    s += (s.empty() ? "'" : ", '") + t.name + "'";
  return s.empty() ? "(none)" : s;
}

Expected<dlc_device> chooseDevice(const dlc_model &model, dlc_device requested, int gpu) {
  if (requested == DLC_DEVICE_CPU)
    return DLC_DEVICE_CPU;
  Status why = Status::ok();
  auto driver = rt::CudaDriver::get(gpu);
  if (!driver && gpu != 0) // a GPU asked for by number must exist
    return driver.status();
  if (!driver)
    why = driver.status();
  else if (model.package.programs.empty())
    why = unavailable("the model has no GPU program (it was compiled without one)");
  else if (bestProgram(model, (*driver)->device().smVersion(), nullptr) < 0)
    why = wrongArch(model, (*driver)->device());
  if (why.isOk())
    return DLC_DEVICE_GPU;
  if (requested == DLC_DEVICE_GPU)
    return why;
  std::fprintf(stderr, "dlc: warning: running %s on the CPU reference backend: %s\n",
               model.name.c_str(), why.message().c_str());
  return DLC_DEVICE_CPU;
}

Status bindTensor(dlc_session &s, const char *fn, const char *name, const DLTensor &t, bool input) {
  const auto &all = input ? s.model->package.inputs : s.model->package.outputs;
  const rt::PackageTensor *p = findTensor(all, name);
  if (!p)
    return invalidArgument("{}: the model has no {} '{}'; its {} are {}", fn,
                           input ? "input" : "output", name, input ? "inputs" : "outputs",
                           names(all));
  DLC_RETURN_IF_ERROR(checkTensor(*p, fn, input ? "input" : "output", t, s.gpuOrdinal));
  auto &b = (input ? s.inputs : s.outputs)[name];
  b.tensor = t;
  b.shape.assign(t.shape, t.shape + t.ndim);
  b.tensor.shape = b.shape.data();
  b.tensor.strides = nullptr;
  return Status::ok();
}

Status runSession(dlc_session &s, CUstream stream, const char *fn) {
  auto dims = bindDims(s);
  if (!dims)
    return dims.status().withContext(fn);
  if (s.device == DLC_DEVICE_GPU) {
    bool ran = false;
    DLC_RETURN_IF_ERROR(runGpu(s, *dims, stream, ran).withContext(fn));
    if (ran)
      return Status::ok();
    const std::string text = rt::dimBindingText(*dims);
    if (stream)
      return invalidArgument("{}: the model has no GPU program for {}; recompile with --dim set "
                             "to these sizes",
                             fn, text);
    if (s.warned.insert(text).second)
      std::fprintf(stderr,
                   "dlc: warning: %s: no GPU program for %s in the model; running on the CPU "
                   "reference backend\n",
                   s.model->name.c_str(), text.c_str());
  } else if (stream) {
    return invalidArgument("{}: the session runs on the CPU; use dlc_session_run", fn);
  }
  return runCpu(s).withContext(fn);
}

} // namespace dlc::capi
