// The C API (dlc/dlc.h) over the package format (package.h), the reference executor and the
// GPU runtime. Every entry point catches everything: a C caller never sees an exception, and
// every failure leaves its message in dlc_last_error().
#include "dlc/dlc.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ir/graph.h"
#include "runtime/cuda_driver.h"
#include "runtime/gpu_program.h"
#include "runtime/gpu_session.h"
#include "runtime/package.h"
#include "runtime/reference_executor.h"

// Defined (by `dlc compile -o`) only inside a model library; null elsewhere.
extern "C" {
extern const unsigned char dlc_embedded_package_begin[] __attribute__((weak));
extern const unsigned char dlc_embedded_package_end[] __attribute__((weak));
}

namespace {

using dlc::DType;
using dlc::Expected;
using dlc::Status;
using dlc::StatusCode;
using dlc::Tensor;

thread_local std::string g_lastError;

dlc_status fail(dlc_status code, std::string message) {
  g_lastError = std::move(message);
  return code;
}

dlc_status codeOf(const Status &st) {
  switch (st.code()) {
  case StatusCode::kOk:
    return DLC_OK;
  case StatusCode::kInvalidArgument:
    return DLC_ERROR_INVALID_ARGUMENT;
  case StatusCode::kNotFound:
    return DLC_ERROR_NOT_FOUND;
  case StatusCode::kOutOfRange:
    return DLC_ERROR_OUT_OF_RANGE;
  case StatusCode::kUnavailable:
    return DLC_ERROR_UNAVAILABLE;
  case StatusCode::kUnimplemented:
    return DLC_ERROR_INCOMPATIBLE;
  default:
    return DLC_ERROR_RUNTIME;
  }
}

dlc_status fail(const Status &st) { return fail(codeOf(st), st.message()); }

/// Runs `body` (returning dlc_status) with every exception turned into an error.
template <typename F> dlc_status guarded(const char *function, F &&body) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return fail(DLC_ERROR_RUNTIME, fmt::format("{}: out of host memory", function));
  } catch (const std::exception &e) {
    return fail(DLC_ERROR_RUNTIME, fmt::format("{}: {}", function, e.what()));
  } catch (...) {
    return fail(DLC_ERROR_RUNTIME, fmt::format("{}: unknown exception", function));
  }
}

#define DLC_API_REQUIRE(cond, what)                                                                \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      return fail(DLC_ERROR_INVALID_ARGUMENT, what);                                               \
  } while (0)

// --- dtypes -----------------------------------------------------------------------------------

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

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

// --- loading ----------------------------------------------------------------------------------

} // namespace

// --- the handles ------------------------------------------------------------------------------

struct dlc_model {
  dlc::rt::Package package;
  std::string name;
  std::vector<std::string> arches;
  struct Info {
    std::vector<int64_t> shape;
    std::vector<std::string> dimNames;
    std::vector<const char *> dimNamePtrs;
  };
  std::vector<Info> inputInfo, outputInfo;
  /// GPU programs loaded on first use, by index into package.programs.
  mutable std::mutex mu;
  mutable std::map<size_t, std::shared_ptr<const dlc::rt::GpuProgram>> loaded;
};

struct dlc_session {
  const dlc_model *model = nullptr;
  dlc_device device = DLC_DEVICE_CPU;
  std::unique_ptr<dlc::ReferenceExecutor> executor; // built on first CPU run
  std::map<size_t, std::unique_ptr<dlc::rt::GpuSession>> gpu;
  struct Bound {
    DLTensor tensor;
    std::vector<int64_t> shape;
  };
  std::map<std::string, Bound> inputs, outputs;
  /// Outputs of the last run the session keeps (unbound outputs), and their DLTensor views.
  std::map<std::string, Tensor> kept;
  std::map<std::string, std::pair<DLTensor, std::vector<int64_t>>> keptViews;
  std::set<std::string> warned; // dims without a GPU program, warned about once
};

namespace {

Status prepareModel(dlc_model &m) {
  m.arches = m.package.arches();
  auto describe = [](const dlc::rt::PackageTensor &t, dlc_model::Info &info) {
    const dlc::Shape &s = t.type.shape;
    for (int64_t i = 0; s.isRanked() && i < s.rank(); ++i) {
      const dlc::Dim &d = s[i];
      info.shape.push_back(d.isKnown() ? d.value() : -1);
      info.dimNames.push_back(d.isSymbol() ? d.symbolName() : "");
    }
    for (const std::string &n : info.dimNames)
      info.dimNamePtrs.push_back(n.empty() ? nullptr : n.c_str());
  };
  m.inputInfo.resize(m.package.inputs.size());
  m.outputInfo.resize(m.package.outputs.size());
  for (size_t i = 0; i < m.package.inputs.size(); ++i)
    describe(m.package.inputs[i], m.inputInfo[i]);
  for (size_t i = 0; i < m.package.outputs.size(); ++i)
    describe(m.package.outputs[i], m.outputInfo[i]);
  if (!m.package.graph)
    return dlc::invalidArgument("{}: the package holds no graph", m.name);
  return Status::ok();
}

dlc_status loadFromBytes(const uint8_t *data, size_t size, const std::string &name,
                         dlc_model **out) {
  auto pkg = dlc::rt::deserializePackage(data, size, name);
  if (!pkg) {
    const Status &st = pkg.status();
    // Another format version is incompatible; anything else unreadable is corrupt.
    return fail(st.code() == StatusCode::kUnimplemented ? DLC_ERROR_INCOMPATIBLE
                                                        : DLC_ERROR_CORRUPT,
                st.message());
  }
  auto m = std::make_unique<dlc_model>();
  m->package = std::move(*pkg);
  m->name = name;
  if (Status st = prepareModel(*m); !st.isOk())
    return fail(DLC_ERROR_CORRUPT, st.message());
  *out = m.release();
  return DLC_OK;
}

dlc_status tensorInfo(const dlc_model *model, int32_t index, dlc_tensor_info *out, bool input) {
  DLC_API_REQUIRE(model, "dlc_model_input/output: model is NULL");
  DLC_API_REQUIRE(out, "dlc_model_input/output: out is NULL");
  const auto &tensors = input ? model->package.inputs : model->package.outputs;
  const auto &infos = input ? model->inputInfo : model->outputInfo;
  if (index < 0 || static_cast<size_t>(index) >= tensors.size())
    return fail(DLC_ERROR_INVALID_ARGUMENT,
                fmt::format("{} index {} is out of range: the model has {} {}",
                            input ? "input" : "output", index, tensors.size(),
                            input ? "inputs" : "outputs"));
  const auto &t = tensors[static_cast<size_t>(index)];
  const auto &info = infos[static_cast<size_t>(index)];
  out->name = t.name.c_str();
  out->dtype = toDl(t.type.dtype);
  out->ndim = static_cast<int32_t>(info.shape.size());
  out->shape = info.shape.data();
  out->dim_names = info.dimNamePtrs.data();
  return DLC_OK;
}

const dlc::rt::PackageTensor *findTensor(const std::vector<dlc::rt::PackageTensor> &ts,
                                         const std::string &name) {
  for (const auto &t : ts)
    if (t.name == name)
      return &t;
  return nullptr;
}

std::string names(const std::vector<dlc::rt::PackageTensor> &ts) {
  std::string s;
  for (const auto &t : ts)
    s += (s.empty() ? "'" : ", '") + t.name + "'";
  return s.empty() ? "(none)" : s;
}

bool onHost(const DLTensor &t) {
  return t.device.device_type == kDLCPU || t.device.device_type == kDLCUDAHost;
}

/// Checks a tensor the caller binds: layout, device, dtype, rank and fixed dims.
dlc_status checkBinding(const dlc_session *s, const char *fn, const char *name, const DLTensor *t,
                        bool input) {
  DLC_API_REQUIRE(s, fmt::format("{}: session is NULL", fn));
  DLC_API_REQUIRE(name, fmt::format("{}: name is NULL", fn));
  DLC_API_REQUIRE(t, fmt::format("{}: tensor '{}' is NULL", fn, name));
  const auto &all = input ? s->model->package.inputs : s->model->package.outputs;
  const dlc::rt::PackageTensor *p = findTensor(all, name);
  if (!p)
    return fail(DLC_ERROR_INVALID_ARGUMENT,
                fmt::format("{}: the model has no {} '{}'; its {} are {}", fn,
                            input ? "input" : "output", name, input ? "inputs" : "outputs",
                            names(all)));
  const char *role = input ? "input" : "output";
  if (t->ndim < 0 || (t->ndim > 0 && !t->shape))
    return fail(DLC_ERROR_INVALID_ARGUMENT,
                fmt::format("{}: {} '{}' has ndim {} and shape {}", fn, role, name, t->ndim,
                            t->shape ? "set" : "NULL"));
  if (!onHost(*t) && t->device.device_type != kDLCUDA)
    return fail(DLC_ERROR_INVALID_ARGUMENT,
                fmt::format("{}: {} '{}' is on device type {}; dlc takes host (kDLCPU, "
                            "kDLCUDAHost) or GPU (kDLCUDA) memory",
                            fn, role, name, static_cast<int>(t->device.device_type)));
  if (t->device.device_type == kDLCUDA && t->device.device_id != 0)
    return fail(DLC_ERROR_INVALID_ARGUMENT,
                fmt::format("{}: {} '{}' is on GPU {}; dlc runs on GPU 0", fn, role, name,
                            t->device.device_id));
  if (!sameDType(t->dtype, p->type.dtype))
    return fail(DLC_ERROR_INVALID_ARGUMENT,
                fmt::format("{}: {} '{}' must be {} ({}), got {}", fn, role, name,
                            dlc::dtypeName(p->type.dtype), dlTypeName(toDl(p->type.dtype)),
                            dlTypeName(t->dtype)));
  const dlc::Shape &shape = p->type.shape;
  if (shape.isRanked() && t->ndim != shape.rank())
    return fail(DLC_ERROR_INVALID_ARGUMENT,
                fmt::format("{}: {} '{}' must have rank {} ({}), got rank {}", fn, role, name,
                            shape.rank(), p->type.str(), t->ndim));
  int64_t elements = 1;
  for (int32_t i = 0; i < t->ndim; ++i) {
    if (t->shape[i] < 0)
      return fail(DLC_ERROR_INVALID_ARGUMENT,
                  fmt::format("{}: {} '{}' has a negative dim {}", fn, role, name, t->shape[i]));
    if (shape.isRanked() && shape[i].isKnown() && shape[i].value() != t->shape[i])
      return fail(DLC_ERROR_INVALID_ARGUMENT,
                  fmt::format("{}: {} '{}' dim {} must be {} ({}), got {}", fn, role, name, i,
                              shape[i].value(), p->type.str(), t->shape[i]));
    elements *= t->shape[i];
  }
  if (t->strides) { // compact row-major only
    int64_t expect = 1;
    for (int32_t i = t->ndim - 1; i >= 0; --i) {
      if (t->shape[i] != 1 && t->strides[i] != expect)
        return fail(DLC_ERROR_INVALID_ARGUMENT,
                    fmt::format("{}: {} '{}' is not compact row-major (stride {} of dim {}); "
                                "pass a contiguous tensor",
                                fn, role, name, t->strides[i], i));
      expect *= t->shape[i];
    }
  }
  if (!t->data && elements > 0)
    return fail(DLC_ERROR_INVALID_ARGUMENT,
                fmt::format("{}: {} '{}' has NULL data", fn, role, name));
  return DLC_OK;
}

void *dataOf(const DLTensor &t) { return static_cast<char *>(t.data) + t.byte_offset; }

/// The sizes the bound inputs give the model's symbolic dims, checked against each other and
/// against the ranges the model was compiled for.
Expected<std::map<std::string, int64_t>> bindDims(const dlc_session &s) {
  std::map<std::string, int64_t> dims;
  for (const auto &in : s.model->package.inputs) {
    auto it = s.inputs.find(in.name);
    if (it == s.inputs.end())
      return dlc::invalidArgument("input '{}' ({}) is not bound; call dlc_session_set_input",
                                  in.name, in.type.str());
    const dlc::Shape &shape = in.type.shape;
    for (int64_t i = 0; shape.isRanked() && i < shape.rank(); ++i) {
      if (!shape[i].isSymbol())
        continue;
      const int64_t size = it->second.shape[static_cast<size_t>(i)];
      auto [pos, fresh] = dims.emplace(shape[i].symbolName(), size);
      if (!fresh && pos->second != size)
        return dlc::invalidArgument("input '{}' dim {} is '{}' = {}, but another input has "
                                    "'{}' = {}",
                                    in.name, i, shape[i].symbolName(), size, shape[i].symbolName(),
                                    pos->second);
    }
  }
  for (const auto &r : s.model->package.dimRanges) {
    auto it = dims.find(r.name);
    if (it != dims.end() && (it->second < r.min || it->second > r.max))
      return dlc::outOfRange("dim '{}' = {} is outside the range {}..{} the model was compiled "
                             "for",
                             r.name, it->second, r.min, r.max);
  }
  return dims;
}

int smOf(const dlc::rt::Program &p) {
  if (p.modules.empty())
    return 0; // no kernels: runs anywhere
  const std::string &a = p.modules.front().arch;
  return a.rfind("sm_", 0) == 0 ? std::atoi(a.c_str() + 3) : -1;
}

/// The GPU program compiled for `dims` that suits this GPU (its arch's cubin, else the newest
/// older arch's PTX), loaded on first use; null when the model has none for these dims.
Expected<std::pair<size_t, std::shared_ptr<const dlc::rt::GpuProgram>>>
gpuProgram(const dlc_model &m, const std::map<std::string, int64_t> &dims) {
  DLC_ASSIGN_OR_RETURN(dlc::rt::CudaDriver * driver, dlc::rt::CudaDriver::get());
  const int device = driver->device().smVersion();
  long best = -1;
  std::string have;
  for (size_t i = 0; i < m.package.programs.size(); ++i) {
    if (m.package.programs[i].dims != dims)
      continue;
    const int sm = smOf(*m.package.programs[i].program);
    have += fmt::format("{}sm_{}", have.empty() ? "" : ", ", sm);
    if (sm <= device && (best < 0 || sm > smOf(*m.package.programs[size_t(best)].program)))
      best = static_cast<long>(i);
  }
  if (have.empty())
    return std::make_pair(size_t{0}, std::shared_ptr<const dlc::rt::GpuProgram>());
  if (best < 0)
    return dlc::unimplemented("{}: the model's GPU programs are for {}, but this GPU is {} ({}); "
                              "recompile with --gpu-arch {}",
                              m.name, have, driver->device().arch(), driver->device().name,
                              driver->device().arch());
  const size_t i = static_cast<size_t>(best);
  std::lock_guard<std::mutex> lock(m.mu);
  auto &slot = m.loaded[i];
  if (!slot) {
    auto gp = dlc::rt::GpuProgram::create(m.package.programs[i].program);
    if (!gp)
      return gp.status().withContext(m.name);
    slot = *gp;
  }
  return std::make_pair(i, slot);
}

/// Host tensors for the bound (host) inputs, copied.
Expected<std::map<std::string, Tensor>> hostInputs(const dlc_session &s) {
  std::map<std::string, Tensor> inputs;
  for (const auto &in : s.model->package.inputs) {
    const auto &b = s.inputs.at(in.name);
    if (!onHost(b.tensor))
      return dlc::invalidArgument("input '{}' is in GPU memory, but this run is on the CPU",
                                  in.name);
    Tensor t = Tensor::zeros(in.type.dtype, b.shape);
    if (t.byteSize() > 0)
      std::memcpy(t.mutableRaw(), dataOf(b.tensor), static_cast<size_t>(t.byteSize()));
    inputs.emplace(in.name, std::move(t));
  }
  return inputs;
}

/// Writes host results into bound host outputs and keeps the others.
Status deliverHostOutputs(dlc_session &s, std::vector<dlc::NamedTensor> outs) {
  s.kept.clear();
  s.keptViews.clear();
  for (dlc::NamedTensor &o : outs) {
    auto it = s.outputs.find(o.name);
    if (it == s.outputs.end()) {
      s.kept[o.name] = std::move(o.tensor);
      continue;
    }
    const auto &b = it->second;
    if (b.shape != o.tensor.shape())
      return dlc::invalidArgument("output '{}' is {} for these inputs, but the tensor bound to "
                                  "it has shape {}",
                                  o.name, o.tensor.type().str(), shapeText(b.shape));
    if (!onHost(b.tensor))
      return dlc::invalidArgument("output '{}' is bound to GPU memory, but this run is on the "
                                  "CPU or has host inputs",
                                  o.name);
    if (o.tensor.byteSize() > 0)
      std::memcpy(dataOf(b.tensor), o.tensor.raw(), static_cast<size_t>(o.tensor.byteSize()));
  }
  for (auto &[name, t] : s.kept) {
    auto &[view, shape] = s.keptViews[name];
    shape = t.shape();
    view = DLTensor{};
    view.data = const_cast<void *>(t.raw());
    view.device = DLDevice{kDLCPU, 0};
    view.ndim = static_cast<int32_t>(shape.size());
    view.dtype = toDl(t.dtype());
    view.shape = shape.data();
  }
  return Status::ok();
}

Status runCpu(dlc_session &s) {
  if (!s.executor) {
    DLC_ASSIGN_OR_RETURN(auto ex, dlc::ReferenceExecutor::create(*s.model->package.graph));
    s.executor = std::make_unique<dlc::ReferenceExecutor>(std::move(ex));
  }
  DLC_ASSIGN_OR_RETURN(auto inputs, hostInputs(s));
  DLC_ASSIGN_OR_RETURN(auto outs, s.executor->run(inputs));
  return deliverHostOutputs(s, std::move(outs));
}

/// Runs on the GPU. `stream` null: synchronous. Returns false in `ran` when no GPU program
/// fits the dims (the caller falls back to the CPU).
Status runGpu(dlc_session &s, const std::map<std::string, int64_t> &dims, CUstream stream,
              bool &ran) {
  ran = false;
  DLC_ASSIGN_OR_RETURN(auto found, gpuProgram(*s.model, dims));
  if (!found.second)
    return Status::ok();
  auto &session = s.gpu[found.first];
  if (!session) {
    DLC_ASSIGN_OR_RETURN(session, dlc::rt::GpuSession::create(found.second));
  }
  const dlc::rt::Program &p = found.second->program();
  bool anyDevice = false, anyHost = false;
  for (const auto &[name, b] : s.inputs)
    (onHost(b.tensor) ? anyHost : anyDevice) = true;
  for (const auto &[name, b] : s.outputs)
    (onHost(b.tensor) ? anyHost : anyDevice) = true;
  if (anyDevice && anyHost)
    return dlc::invalidArgument("the bound tensors mix host and GPU memory; bind all of them "
                                "on one side");
  if (!anyDevice) {
    if (stream)
      return dlc::invalidArgument("dlc_session_run_async needs tensors in GPU memory; these are "
                                  "on the host (use dlc_session_run)");
    DLC_ASSIGN_OR_RETURN(auto inputs, hostInputs(s));
    DLC_ASSIGN_OR_RETURN(auto outs, session->run(inputs));
    ran = true;
    return deliverHostOutputs(s, std::move(outs));
  }
  std::vector<CUdeviceptr> in, out;
  for (const dlc::rt::ProgramTensor &t : p.inputs)
    in.push_back(reinterpret_cast<CUdeviceptr>(dataOf(s.inputs.at(t.name).tensor)));
  for (const dlc::rt::ProgramTensor &t : p.outputs) {
    auto it = s.outputs.find(t.name);
    if (it == s.outputs.end())
      return dlc::invalidArgument("output '{}' is not bound; with inputs in GPU memory bind every "
                                  "output with dlc_session_set_output",
                                  t.name);
    if (it->second.shape != t.shape)
      return dlc::invalidArgument("output '{}' is {}{} for these inputs, but the tensor bound to "
                                  "it has shape {}",
                                  t.name, dlc::dtypeName(t.dtype), shapeText(t.shape),
                                  shapeText(it->second.shape));
    out.push_back(reinterpret_cast<CUdeviceptr>(dataOf(it->second.tensor)));
  }
  s.kept.clear();
  s.keptViews.clear();
  DLC_RETURN_IF_ERROR(session->runDevice(in, out, stream));
  ran = true;
  return Status::ok();
}

dlc_status run(dlc_session *s, void *stream, const char *fn) {
  DLC_API_REQUIRE(s, fmt::format("{}: session is NULL", fn));
  auto dims = bindDims(*s);
  if (!dims)
    return fail(dims.status().withContext(fn));
  if (s->device == DLC_DEVICE_GPU) {
    bool ran = false;
    if (Status st = runGpu(*s, *dims, static_cast<CUstream>(stream), ran); !st.isOk())
      return fail(st.withContext(fn));
    if (ran)
      return DLC_OK;
    if (stream)
      return fail(DLC_ERROR_INVALID_ARGUMENT,
                  fmt::format("{}: the model has no GPU program for {}; recompile with --dim "
                              "set to these sizes",
                              fn, dlc::rt::dimBindingText(*dims)));
    if (s->warned.insert(dlc::rt::dimBindingText(*dims)).second)
      std::fprintf(stderr,
                   "dlc: warning: %s: no GPU program for %s in the model; running on the CPU "
                   "reference backend\n",
                   s->model->name.c_str(), dlc::rt::dimBindingText(*dims).c_str());
  } else if (stream) {
    return fail(DLC_ERROR_INVALID_ARGUMENT,
                fmt::format("{}: the session runs on the CPU; use dlc_session_run", fn));
  }
  if (Status st = runCpu(*s); !st.isOk())
    return fail(st.withContext(fn));
  return DLC_OK;
}

} // namespace

extern "C" {

const char *dlc_version(void) { return DLC_VERSION_STRING; }

const char *dlc_last_error(void) { return g_lastError.c_str(); }

const char *dlc_status_name(dlc_status status) {
  switch (status) {
  case DLC_OK:
    return "DLC_OK";
  case DLC_ERROR_INVALID_ARGUMENT:
    return "DLC_ERROR_INVALID_ARGUMENT";
  case DLC_ERROR_NOT_FOUND:
    return "DLC_ERROR_NOT_FOUND";
  case DLC_ERROR_INCOMPATIBLE:
    return "DLC_ERROR_INCOMPATIBLE";
  case DLC_ERROR_CORRUPT:
    return "DLC_ERROR_CORRUPT";
  case DLC_ERROR_OUT_OF_RANGE:
    return "DLC_ERROR_OUT_OF_RANGE";
  case DLC_ERROR_UNAVAILABLE:
    return "DLC_ERROR_UNAVAILABLE";
  case DLC_ERROR_RUNTIME:
    return "DLC_ERROR_RUNTIME";
  case DLC_STATUS_MAX_ENUM:
    break;
  }
  return "DLC_ERROR_UNKNOWN";
}

dlc_status dlc_model_load(const char *path, dlc_model **out) {
  return guarded("dlc_model_load", [&] {
    DLC_API_REQUIRE(path, "dlc_model_load: path is NULL");
    DLC_API_REQUIRE(out, "dlc_model_load: out is NULL");
    *out = nullptr;
    auto bytes = dlc::rt::readPackageFile(path);
    if (!bytes)
      return fail(bytes.status().code() == StatusCode::kNotFound ? DLC_ERROR_NOT_FOUND
                                                                 : DLC_ERROR_CORRUPT,
                  bytes.status().message());
    return loadFromBytes(bytes->data(), bytes->size(), path, out);
  });
}

dlc_status dlc_model_load_memory(const void *data, size_t size, const char *name, dlc_model **out) {
  return guarded("dlc_model_load_memory", [&] {
    DLC_API_REQUIRE(out, "dlc_model_load_memory: out is NULL");
    *out = nullptr;
    DLC_API_REQUIRE(data || size == 0, "dlc_model_load_memory: data is NULL");
    return loadFromBytes(static_cast<const uint8_t *>(data), size, name ? name : "<memory>", out);
  });
}

dlc_status dlc_model_load_embedded(dlc_model **out) {
  return guarded("dlc_model_load_embedded", [&] {
    DLC_API_REQUIRE(out, "dlc_model_load_embedded: out is NULL");
    *out = nullptr;
    if (!dlc_embedded_package_begin || !dlc_embedded_package_end)
      return fail(DLC_ERROR_NOT_FOUND, "dlc_model_load_embedded: this library has no model in it "
                                       "(only libraries written by `dlc compile -o` do)");
    Dl_info info{};
    std::string name = "<embedded model>";
    if (dladdr(static_cast<const void *>(dlc_embedded_package_begin), &info) && info.dli_fname)
      name = info.dli_fname;
    return loadFromBytes(dlc_embedded_package_begin,
                         static_cast<size_t>(dlc_embedded_package_end - dlc_embedded_package_begin),
                         name, out);
  });
}

void dlc_model_free(dlc_model *model) { delete model; }

dlc_status dlc_model_compiler_version(const dlc_model *model, const char **out) {
  return guarded("dlc_model_compiler_version", [&] {
    DLC_API_REQUIRE(model && out, "dlc_model_compiler_version: model or out is NULL");
    *out = model->package.dlcVersion.c_str();
    return DLC_OK;
  });
}

dlc_status dlc_model_num_arches(const dlc_model *model, int32_t *out) {
  return guarded("dlc_model_num_arches", [&] {
    DLC_API_REQUIRE(model && out, "dlc_model_num_arches: model or out is NULL");
    *out = static_cast<int32_t>(model->arches.size());
    return DLC_OK;
  });
}

dlc_status dlc_model_arch(const dlc_model *model, int32_t index, const char **out) {
  return guarded("dlc_model_arch", [&] {
    DLC_API_REQUIRE(model && out, "dlc_model_arch: model or out is NULL");
    if (index < 0 || static_cast<size_t>(index) >= model->arches.size())
      return fail(DLC_ERROR_INVALID_ARGUMENT,
                  fmt::format("dlc_model_arch: index {} is out of range: the model has {} arches",
                              index, model->arches.size()));
    *out = model->arches[static_cast<size_t>(index)].c_str();
    return DLC_OK;
  });
}

dlc_status dlc_model_num_inputs(const dlc_model *model, int32_t *out) {
  return guarded("dlc_model_num_inputs", [&] {
    DLC_API_REQUIRE(model && out, "dlc_model_num_inputs: model or out is NULL");
    *out = static_cast<int32_t>(model->package.inputs.size());
    return DLC_OK;
  });
}

dlc_status dlc_model_num_outputs(const dlc_model *model, int32_t *out) {
  return guarded("dlc_model_num_outputs", [&] {
    DLC_API_REQUIRE(model && out, "dlc_model_num_outputs: model or out is NULL");
    *out = static_cast<int32_t>(model->package.outputs.size());
    return DLC_OK;
  });
}

dlc_status dlc_model_input(const dlc_model *model, int32_t index, dlc_tensor_info *out) {
  return guarded("dlc_model_input", [&] { return tensorInfo(model, index, out, true); });
}

dlc_status dlc_model_output(const dlc_model *model, int32_t index, dlc_tensor_info *out) {
  return guarded("dlc_model_output", [&] { return tensorInfo(model, index, out, false); });
}

dlc_status dlc_model_dim_range(const dlc_model *model, const char *dim, int64_t *min,
                               int64_t *max) {
  return guarded("dlc_model_dim_range", [&] {
    DLC_API_REQUIRE(model && dim && min && max,
                    "dlc_model_dim_range: model, dim, min or max is NULL");
    for (const auto &r : model->package.dimRanges)
      if (r.name == dim) {
        *min = r.min;
        *max = r.max;
        return DLC_OK;
      }
    return fail(DLC_ERROR_NOT_FOUND,
                fmt::format("dlc_model_dim_range: the model has no symbolic dim '{}'", dim));
  });
}

dlc_status dlc_session_create(const dlc_model *model, dlc_device device, dlc_session **out) {
  return guarded("dlc_session_create", [&] {
    DLC_API_REQUIRE(model && out, "dlc_session_create: model or out is NULL");
    *out = nullptr;
    if (device != DLC_DEVICE_AUTO && device != DLC_DEVICE_CPU && device != DLC_DEVICE_GPU)
      return fail(DLC_ERROR_INVALID_ARGUMENT,
                  fmt::format("dlc_session_create: unknown device {}", static_cast<int>(device)));
    auto s = std::make_unique<dlc_session>();
    s->model = model;
    s->device = DLC_DEVICE_CPU;
    if (device != DLC_DEVICE_CPU) {
      std::string why;
      dlc_status code = DLC_ERROR_UNAVAILABLE;
      auto driver = dlc::rt::CudaDriver::get();
      if (!driver) {
        why = driver.status().message();
      } else if (model->package.programs.empty()) {
        why = "the model has no GPU program (it was compiled without one)";
      } else {
        // Some program must suit this GPU: its arch's cubin, or an older arch's PTX.
        const int device = (*driver)->device().smVersion();
        bool fits = false;
        for (const auto &cp : model->package.programs)
          fits |= smOf(*cp.program) <= device;
        if (!fits) {
          std::string have;
          for (const std::string &a : model->arches)
            have += (have.empty() ? "" : ", ") + a;
          why = fmt::format("the model's GPU programs are for {}, but this GPU is {} ({}); "
                            "recompile with --gpu-arch {}",
                            have, (*driver)->device().arch(), (*driver)->device().name,
                            (*driver)->device().arch());
          code = DLC_ERROR_INCOMPATIBLE;
        }
      }
      if (why.empty()) {
        s->device = DLC_DEVICE_GPU;
      } else if (device == DLC_DEVICE_GPU) {
        return fail(code, fmt::format("dlc_session_create: {}", why));
      } else {
        std::fprintf(stderr, "dlc: warning: running %s on the CPU reference backend: %s\n",
                     model->name.c_str(), why.c_str());
      }
    }
    *out = s.release();
    return DLC_OK;
  });
}

void dlc_session_free(dlc_session *session) { delete session; }

dlc_status dlc_session_device(const dlc_session *session, dlc_device *out) {
  return guarded("dlc_session_device", [&] {
    DLC_API_REQUIRE(session && out, "dlc_session_device: session or out is NULL");
    *out = session->device;
    return DLC_OK;
  });
}

dlc_status dlc_session_set_input(dlc_session *session, const char *name, const DLTensor *tensor) {
  return guarded("dlc_session_set_input", [&] {
    if (dlc_status st = checkBinding(session, "dlc_session_set_input", name, tensor, true))
      return st;
    auto &b = session->inputs[name];
    b.tensor = *tensor;
    b.shape.assign(tensor->shape, tensor->shape + tensor->ndim);
    b.tensor.shape = b.shape.data();
    b.tensor.strides = nullptr;
    return DLC_OK;
  });
}

dlc_status dlc_session_set_output(dlc_session *session, const char *name, const DLTensor *tensor) {
  return guarded("dlc_session_set_output", [&] {
    if (dlc_status st = checkBinding(session, "dlc_session_set_output", name, tensor, false))
      return st;
    auto &b = session->outputs[name];
    b.tensor = *tensor;
    b.shape.assign(tensor->shape, tensor->shape + tensor->ndim);
    b.tensor.shape = b.shape.data();
    b.tensor.strides = nullptr;
    return DLC_OK;
  });
}

dlc_status dlc_session_run(dlc_session *session) {
  return guarded("dlc_session_run", [&] { return run(session, nullptr, "dlc_session_run"); });
}

dlc_status dlc_session_run_async(dlc_session *session, void *cuda_stream) {
  return guarded("dlc_session_run_async", [&] {
    DLC_API_REQUIRE(cuda_stream, "dlc_session_run_async: stream is NULL (use dlc_session_run "
                                 "to run synchronously)");
    return run(session, cuda_stream, "dlc_session_run_async");
  });
}

dlc_status dlc_session_get_output(dlc_session *session, const char *name, const DLTensor **out) {
  return guarded("dlc_session_get_output", [&] {
    DLC_API_REQUIRE(session && name && out, "dlc_session_get_output: session, name or out is NULL");
    *out = nullptr;
    if (!findTensor(session->model->package.outputs, name))
      return fail(DLC_ERROR_INVALID_ARGUMENT,
                  fmt::format("dlc_session_get_output: the model has no output '{}'; its outputs "
                              "are {}",
                              name, names(session->model->package.outputs)));
    if (auto it = session->outputs.find(name); it != session->outputs.end()) {
      *out = &it->second.tensor;
      return DLC_OK;
    }
    auto it = session->keptViews.find(name);
    if (it == session->keptViews.end())
      return fail(DLC_ERROR_INVALID_ARGUMENT,
                  fmt::format("dlc_session_get_output: no output '{}' yet: call dlc_session_run "
                              "first",
                              name));
    *out = &it->second.first;
    return DLC_OK;
  });
}

} // extern "C"
