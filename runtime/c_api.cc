// The C API (dlc/dlc.h): its entry points, over the package format (package.h) and the
// sessions of c_api_session.h. Every entry point catches everything: a C caller never sees an
// exception, and every failure leaves its message in dlc_last_error().
#include "dlc/dlc.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "runtime/c_api_session.h"
#include "runtime/tensor_io.h"

// Defined (by `dlc compile -o`) only inside a model library; null elsewhere.
extern "C" {
extern const unsigned char dlc_embedded_package_begin[] __attribute__((weak));
extern const unsigned char dlc_embedded_package_end[] __attribute__((weak));
}

namespace {

using dlc::Status;
using dlc::StatusCode;

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
  auto m = dlc::capi::makeModel(std::move(*pkg), name);
  if (!m)
    return fail(DLC_ERROR_CORRUPT, m.status().message());
  *out = m->release();
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
  out->dtype = dlc::capi::toDl(t.type.dtype);
  out->ndim = static_cast<int32_t>(info.shape.size());
  out->shape = info.shape.data();
  out->dim_names = info.dimNamePtrs.data();
  return DLC_OK;
}

/// dlc_session_set_input/set_output.
dlc_status bind(dlc_session *s, const char *fn, const char *name, const DLTensor *t, bool input) {
  DLC_API_REQUIRE(s, fmt::format("{}: session is NULL", fn));
  DLC_API_REQUIRE(name, fmt::format("{}: name is NULL", fn));
  DLC_API_REQUIRE(t, fmt::format("{}: tensor '{}' is NULL", fn, name));
  Status st = dlc::capi::bindTensor(*s, fn, name, *t, input);
  return st.isOk() ? DLC_OK : fail(st);
}

/// dlc_session_run/run_async.
dlc_status run(dlc_session *s, void *stream, const char *fn) {
  DLC_API_REQUIRE(s, fmt::format("{}: session is NULL", fn));
  Status st = dlc::capi::runSession(*s, static_cast<CUstream>(stream), fn);
  return st.isOk() ? DLC_OK : fail(st);
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

namespace {
void releaseModel(const dlc_model *model) {
  if (model && model->refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
    delete model;
}
} // namespace

void dlc_model_free(dlc_model *model) { releaseModel(model); }

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

namespace {

dlc_status createSession(const char *fn, const dlc_model *model, dlc_device device, int32_t gpu,
                         dlc_session **out) {
  DLC_API_REQUIRE(model && out, fmt::format("{}: model or out is NULL", fn));
  *out = nullptr;
  if (device != DLC_DEVICE_AUTO && device != DLC_DEVICE_CPU && device != DLC_DEVICE_GPU)
    return fail(DLC_ERROR_INVALID_ARGUMENT,
                fmt::format("{}: unknown device {}", fn, static_cast<int>(device)));
  if (gpu < 0)
    return fail(DLC_ERROR_INVALID_ARGUMENT, fmt::format("{}: GPU {} does not exist", fn, gpu));
  auto where = dlc::capi::chooseDevice(*model, device, gpu);
  if (!where)
    return fail(where.status().withContext(fn));
  auto s = std::make_unique<dlc_session>();
  model->refs.fetch_add(1, std::memory_order_relaxed); // released by dlc_session_free
  s->model = model;
  s->device = *where;
  s->gpuOrdinal = gpu;
  *out = s.release();
  return DLC_OK;
}

} // namespace

dlc_status dlc_session_create(const dlc_model *model, dlc_device device, dlc_session **out) {
  return guarded("dlc_session_create",
                 [&] { return createSession("dlc_session_create", model, device, 0, out); });
}

dlc_status dlc_session_create_on_gpu(const dlc_model *model, dlc_device device, int32_t gpu,
                                     dlc_session **out) {
  return guarded("dlc_session_create_on_gpu", [&] {
    return createSession("dlc_session_create_on_gpu", model, device, gpu, out);
  });
}

void dlc_session_free(dlc_session *session) {
  if (!session)
    return;
  const dlc_model *model = session->model;
  delete session; // its GPU state first: it uses the model's programs
  releaseModel(model);
}

dlc_status dlc_session_device(const dlc_session *session, dlc_device *out) {
  return guarded("dlc_session_device", [&] {
    DLC_API_REQUIRE(session && out, "dlc_session_device: session or out is NULL");
    *out = session->device;
    return DLC_OK;
  });
}

dlc_status dlc_session_set_input(dlc_session *session, const char *name, const DLTensor *tensor) {
  return guarded("dlc_session_set_input",
                 [&] { return bind(session, "dlc_session_set_input", name, tensor, true); });
}

dlc_status dlc_session_set_output(dlc_session *session, const char *name, const DLTensor *tensor) {
  return guarded("dlc_session_set_output",
                 [&] { return bind(session, "dlc_session_set_output", name, tensor, false); });
}

dlc_status dlc_session_run(dlc_session *session) {
  return guarded("dlc_session_run", [&] { return run(session, nullptr, "dlc_session_run"); });
}

dlc_status dlc_session_run_async(dlc_session *session, void *cuda_stream) {
  return guarded("dlc_session_run_async", [&] {
    // NULL is the legacy default stream, as CUDA libraries take it (0 is what most callers
    // write); inside, a null stream means a synchronous run.
    void *stream = cuda_stream ? cuda_stream : static_cast<void *>(CU_STREAM_LEGACY);
    return run(session, stream, "dlc_session_run_async");
  });
}

dlc_status dlc_session_get_output(dlc_session *session, const char *name, const DLTensor **out) {
  return guarded("dlc_session_get_output", [&] {
    DLC_API_REQUIRE(session && name && out, "dlc_session_get_output: session, name or out is NULL");
    *out = nullptr;
    if (!dlc::capi::findTensor(session->model->package.outputs, name))
      return fail(DLC_ERROR_INVALID_ARGUMENT,
                  fmt::format("dlc_session_get_output: the model has no output '{}'; its outputs "
                              "are {}",
                              name, dlc::capi::names(session->model->package.outputs)));
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

dlc_status dlc_session_take_output(dlc_session *session, const char *name, DLManagedTensor **out) {
  return guarded("dlc_session_take_output", [&] {
    DLC_API_REQUIRE(session && name && out,
                    "dlc_session_take_output: session, name or out is NULL");
    *out = nullptr;
    if (!dlc::capi::findTensor(session->model->package.outputs, name))
      return fail(DLC_ERROR_INVALID_ARGUMENT,
                  fmt::format("dlc_session_take_output: the model has no output '{}'; its "
                              "outputs are {}",
                              name, dlc::capi::names(session->model->package.outputs)));
    auto taken = dlc::capi::takeOutput(*session, name);
    if (!taken)
      return fail(taken.status().withContext("dlc_session_take_output"));
    *out = *taken;
    return DLC_OK;
  });
}

// --- .npy arrays ------------------------------------------------------------------------------

struct dlc_array {
  dlc::Tensor tensor;
  std::vector<int64_t> shape;
  DLTensor view{};
};

dlc_status dlc_array_read_npy(const char *path, dlc_array **out) {
  return guarded("dlc_array_read_npy", [&] {
    DLC_API_REQUIRE(path && out, "dlc_array_read_npy: path or out is NULL");
    *out = nullptr;
    auto t = dlc::readNpy(path);
    if (!t)
      return fail(t.status());
    auto a = std::make_unique<dlc_array>();
    a->tensor = std::move(*t);
    a->shape = a->tensor.shape();
    a->view.data = a->tensor.numElements() > 0 ? a->tensor.mutableRaw() : nullptr;
    a->view.device = {kDLCPU, 0};
    a->view.ndim = static_cast<int32_t>(a->shape.size());
    a->view.dtype = dlc::capi::toDl(a->tensor.dtype());
    a->view.shape = a->shape.data();
    *out = a.release();
    return DLC_OK;
  });
}

const DLTensor *dlc_array_tensor(const dlc_array *array) { return array ? &array->view : nullptr; }

void dlc_array_free(dlc_array *array) { delete array; }

dlc_status dlc_array_write_npy(const char *path, const DLTensor *tensor) {
  return guarded("dlc_array_write_npy", [&] {
    DLC_API_REQUIRE(path && tensor, "dlc_array_write_npy: path or tensor is NULL");
    const DLTensor &t = *tensor;
    DLC_API_REQUIRE(t.ndim >= 0 && (t.ndim == 0 || t.shape),
                    fmt::format("dlc_array_write_npy: {}: ndim {} with shape {}", path, t.ndim,
                                t.shape ? "set" : "NULL"));
    DLC_API_REQUIRE(
        t.device.device_type == kDLCPU || t.device.device_type == kDLCUDAHost,
        fmt::format("dlc_array_write_npy: {}: the tensor must be in host memory", path));
    auto dtype = dlc::capi::fromDl(t.dtype);
    if (!dtype)
      return fail(dtype.status().withContext(fmt::format("dlc_array_write_npy: {}", path)));
    std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
    int64_t expect = 1;
    for (int32_t i = t.ndim - 1; i >= 0; --i) {
      DLC_API_REQUIRE(
          !t.strides || t.shape[i] == 1 || t.strides[i] == expect,
          fmt::format("dlc_array_write_npy: {}: the tensor is not compact row-major", path));
      if (__builtin_mul_overflow(expect, std::max<int64_t>(t.shape[i], 1), &expect))
        expect = 0; // tryZeros below refuses the shape
    }
    auto copy = dlc::Tensor::tryZeros(*dtype, shape);
    if (!copy)
      return fail(copy.status().withContext(fmt::format("dlc_array_write_npy: {}", path)));
    if (copy->byteSize() > 0) {
      DLC_API_REQUIRE(t.data, fmt::format("dlc_array_write_npy: {}: NULL data", path));
      std::memcpy(copy->mutableRaw(), static_cast<const char *>(t.data) + t.byte_offset,
                  copy->byteSize());
    }
    dlc::Status st = dlc::writeNpy(path, *copy);
    return st.isOk() ? DLC_OK : fail(st);
  });
}

} // extern "C"
