// The extension module `dlc._dlc`: dlc's C API (runtime/dlc/dlc.h) for Python, built with
// pybind11. A model library (`dlc compile -o model.so`) is loaded and run through the same
// functions a C host uses, so Python and C give the same results; the package around it
// (python/dlc/__init__.py) compiles models with the `dlc` command.
//
// Inputs are NumPy arrays (read in place when C-contiguous, otherwise copied once) or any
// object that speaks DLPack (`__dlpack__`, e.g. a torch tensor on the GPU), read in place.
// Host outputs come back as NumPy arrays (copies: the session's buffers are reused by the next
// run). Every failure raises dlc.DlcError with dlc's message.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "dlc/dlc.h"

namespace py = pybind11;

namespace {

PyObject *gDlcError = nullptr;

/// DLPack >= 0.8's kDLBool (8-bit); Debian's older dlpack.h lacks the name. Older producers
/// spell bool as kDLUInt with 1 bit.
constexpr uint8_t kBoolCode = 6;

bool isBool(DLDataType t) { return t.code == kBoolCode || (t.code == kDLUInt && t.bits == 1); }

[[noreturn]] void raise(dlc_status status) {
  std::string message = dlc_last_error();
  if (message.empty())
    message = dlc_status_name(status);
  PyErr_SetString(gDlcError, message.c_str());
  throw py::error_already_set();
}

void check(dlc_status status) {
  if (status != DLC_OK)
    raise(status);
}

/// NumPy's dtype for a DLPack dtype; raises for types NumPy lacks (bfloat16).
py::dtype numpyDtype(DLDataType t) {
  if (t.lanes != 1)
    throw py::value_error("vector dtypes have no NumPy equivalent");
  if (isBool(t))
    return py::dtype("bool");
  switch (t.code) {
  case kDLFloat:
    if (t.bits == 16)
      return py::dtype("float16");
    if (t.bits == 32)
      return py::dtype("float32");
    if (t.bits == 64)
      return py::dtype("float64");
    break;
  case kDLInt:
    return py::dtype("int" + std::to_string(t.bits));
  case kDLUInt:
    return py::dtype("uint" + std::to_string(t.bits));
  case kDLBfloat:
    throw py::type_error("bfloat16 has no NumPy dtype: bind the output to a DLPack tensor");
  default:
    break;
  }
  throw py::type_error("unsupported DLPack dtype code " + std::to_string(t.code));
}

/// The DLPack dtype of a NumPy array. Read through Python attributes: pybind11 before 2.12
/// reads the dtype's item size from NumPy 1's struct layout, which NumPy 2 changed.
DLDataType dlpackDtype(const py::array &a) {
  const py::object dtype = a.attr("dtype");
  const char kind = py::cast<std::string>(dtype.attr("kind")).at(0);
  const uint8_t bits = static_cast<uint8_t>(py::cast<int>(dtype.attr("itemsize")) * 8);
  switch (kind) {
  case 'f':
    return {kDLFloat, bits, 1};
  case 'i':
    return {kDLInt, bits, 1};
  case 'u':
    return {kDLUInt, bits, 1};
  case 'b':
    return {kBoolCode, 8, 1};
  default:
    throw py::type_error("unsupported NumPy dtype '" + std::string(py::str(a.dtype())) + "'");
  }
}

std::string dtypeName(DLDataType t) {
  if (isBool(t))
    return "bool";
  switch (t.code) {
  case kDLFloat:
    return "float" + std::to_string(t.bits);
  case kDLBfloat:
    return "bfloat16";
  case kDLInt:
    return "int" + std::to_string(t.bits);
  case kDLUInt:
    return "uint" + std::to_string(t.bits);
  default:
    return "dtype" + std::to_string(t.code);
  }
}

/// A tensor description: {"name", "dtype", "shape"} with symbolic dims as their names.
py::dict describe(const dlc_tensor_info &info) {
  py::list shape;
  for (int32_t i = 0; i < info.ndim; ++i) {
    if (info.shape[i] < 0 && info.dim_names && info.dim_names[i])
      shape.append(py::str(info.dim_names[i]));
    else
      shape.append(py::int_(info.shape[i]));
  }
  py::dict d;
  d["name"] = info.name;
  d["dtype"] = dtypeName(info.dtype);
  d["shape"] = py::tuple(shape);
  return d;
}

class Model {
public:
  explicit Model(const std::string &path) {
    dlc_model *m = nullptr;
    check(dlc_model_load(path.c_str(), &m));
    model_.reset(m, dlc_model_free);
  }
  py::list inputs() const { return infos(true); }
  py::list outputs() const { return infos(false); }
  std::shared_ptr<dlc_model> handle() const { return model_; }

private:
  py::list infos(bool in) const {
    int32_t n = 0;
    check(in ? dlc_model_num_inputs(model_.get(), &n) : dlc_model_num_outputs(model_.get(), &n));
    py::list out;
    for (int32_t i = 0; i < n; ++i) {
      dlc_tensor_info info{};
      check(in ? dlc_model_input(model_.get(), i, &info)
               : dlc_model_output(model_.get(), i, &info));
      out.append(describe(info));
    }
    return out;
  }
  std::shared_ptr<dlc_model> model_;
};

/// An output in GPU memory, handed to Python without a copy: a DLPack producer
/// (`__dlpack__`, `__dlpack_device__`) for torch.from_dlpack, cupy.from_dlpack and the like.
/// It owns the memory until a consumer takes it (once, as DLPack allows).
class DeviceArray {
public:
  explicit DeviceArray(DLManagedTensor *t) : t_(t) {}
  ~DeviceArray() {
    if (t_)
      t_->deleter(t_);
  }
  DeviceArray(const DeviceArray &) = delete;
  DeviceArray &operator=(const DeviceArray &) = delete;

  py::capsule dlpack(const py::object &stream) {
    (void)stream; // ready: the run waited, or was ordered on the stream the caller gave it
    if (!t_)
      throw py::value_error("this output was handed over already (DLPack has one consumer)");
    DLManagedTensor *t = std::exchange(t_, nullptr);
    return py::capsule(t, "dltensor", [](PyObject *cap) {
      // A capsule no consumer took (still "dltensor", not "used_dltensor") frees its tensor.
      if (PyCapsule_IsValid(cap, "dltensor"))
        if (auto *m = static_cast<DLManagedTensor *>(PyCapsule_GetPointer(cap, "dltensor")))
          m->deleter(m);
    });
  }
  py::tuple device() const {
    const DLDevice d = info().device;
    return py::make_tuple(static_cast<int>(d.device_type), d.device_id);
  }
  py::tuple shape() const {
    const DLTensor &t = info();
    py::tuple out(t.ndim);
    for (int32_t i = 0; i < t.ndim; ++i)
      out[static_cast<size_t>(i)] = t.shape[i];
    return out;
  }
  py::dtype dtype() const { return numpyDtype(info().dtype); }

private:
  const DLTensor &info() const {
    if (!t_)
      throw py::value_error("this output was handed over already (DLPack has one consumer)");
    return t_->dl_tensor;
  }
  DLManagedTensor *t_ = nullptr;
};

class Session {
public:
  Session(const Model &model, const std::string &device) : model_(model.handle()) {
    dlc_device d = DLC_DEVICE_AUTO;
    const size_t colon = device.find(':');
    const std::string kind = device.substr(0, colon);
    if (colon != std::string::npos) { // "gpu:1", "cuda:1": a GPU by number
      const std::string n = device.substr(colon + 1);
      if ((kind != "gpu" && kind != "cuda") || n.empty() || n.size() > 4 ||
          n.find_first_not_of("0123456789") != std::string::npos)
        throw py::value_error("device must be 'auto', 'cpu', 'gpu' or 'gpu:N', got '" + device +
                              "'");
      gpu_ = std::stoi(n);
    }
    if (kind == "cpu" && colon == std::string::npos)
      d = DLC_DEVICE_CPU;
    else if (kind == "gpu" || kind == "cuda")
      d = DLC_DEVICE_GPU;
    else if (device != "auto")
      throw py::value_error("device must be 'auto', 'cpu', 'gpu' or 'gpu:N', got '" + device + "'");
    dlc_session *s = nullptr;
    check(dlc_session_create_on_gpu(model_.get(), d, gpu_, &s));
    session_.reset(s, dlc_session_free);
  }

  std::string device() const {
    dlc_device d = DLC_DEVICE_AUTO;
    check(dlc_session_device(session_.get(), &d));
    if (d != DLC_DEVICE_GPU)
      return "cpu";
    return gpu_ ? "gpu:" + std::to_string(gpu_) : "gpu";
  }

  /// Runs on `feed` ({name: array or DLPack object}); returns {name: NumPy array}, or, for a
  /// run on GPU tensors, {name: DeviceArray} (DLPack, no copy). `stream` (a CUstream as an
  /// integer, torch.cuda.current_stream().cuda_stream) orders a GPU-tensor run on it.
  py::dict run(const py::dict &feed, uintptr_t stream) {
    std::vector<py::object> keep; // arrays and capsules that must outlive the run
    std::vector<DLTensor> tensors;
    std::vector<std::vector<int64_t>> shapes;
    tensors.reserve(feed.size());
    shapes.reserve(feed.size());
    for (const auto &[key, value] : feed) {
      const std::string name = py::cast<std::string>(key);
      DLTensor t{};
      py::object obj = py::reinterpret_borrow<py::object>(value);
      if (py::isinstance<py::array>(obj) || !py::hasattr(obj, "__dlpack__")) {
        // NumPy (or anything NumPy can read): C-contiguous, in place when it already is.
        py::array a = py::array::ensure(obj, py::array::c_style);
        if (!a)
          throw py::type_error("input '" + name + "' is neither an array nor a DLPack tensor");
        keep.push_back(a);
        shapes.emplace_back(a.shape(), a.shape() + a.ndim());
        t.data = const_cast<void *>(a.data());
        t.device = {kDLCPU, 0};
        t.ndim = static_cast<int32_t>(a.ndim());
        t.dtype = dlpackDtype(a);
        t.shape = shapes.back().data();
      } else {
        py::capsule capsule = obj.attr("__dlpack__")();
        auto *managed =
            static_cast<DLManagedTensor *>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
        if (!managed)
          throw py::error_already_set();
        keep.push_back(capsule); // its destructor returns the tensor to its producer
        t = managed->dl_tensor;
      }
      tensors.push_back(t);
      check(dlc_session_set_input(session_.get(), name.c_str(), &tensors.back()));
    }
    {
      py::gil_scoped_release release;
      dlc_status s = stream
                         ? dlc_session_run_async(session_.get(), reinterpret_cast<void *>(stream))
                         : dlc_session_run(session_.get());
      if (s != DLC_OK) {
        py::gil_scoped_acquire acquire;
        raise(s);
      }
    }
    int32_t n = 0;
    check(dlc_model_num_outputs(model_.get(), &n));
    py::dict out;
    for (int32_t i = 0; i < n; ++i) {
      dlc_tensor_info info{};
      check(dlc_model_output(model_.get(), i, &info));
      const DLTensor *t = nullptr;
      check(dlc_session_get_output(session_.get(), info.name, &t));
      if (t->device.device_type != kDLCPU && t->device.device_type != kDLCUDAHost) {
        DLManagedTensor *taken = nullptr; // GPU memory: handed over, not copied
        check(dlc_session_take_output(session_.get(), info.name, &taken));
        out[py::str(info.name)] =
            py::cast(new DeviceArray(taken), py::return_value_policy::take_ownership);
        continue;
      }
      // numpy.empty, not py::array(dtype, shape): pybind11 before 2.12 computes the strides
      // from NumPy 1's dtype layout (zero strides under NumPy 2).
      py::tuple shape(t->ndim);
      for (int32_t d = 0; d < t->ndim; ++d)
        shape[static_cast<size_t>(d)] = t->shape[d];
      py::array a = py::module_::import("numpy").attr("empty")(shape, numpyDtype(t->dtype));
      size_t bytes = (t->dtype.bits * t->dtype.lanes + 7u) / 8u; // not a.nbytes(): see dlpackDtype
      for (int32_t d = 0; d < t->ndim; ++d)
        bytes *= static_cast<size_t>(t->shape[d]);
      std::memcpy(a.mutable_data(), static_cast<const char *>(t->data) + t->byte_offset, bytes);
      out[py::str(info.name)] = a;
    }
    return out;
  }

private:
  std::shared_ptr<dlc_model> model_; // the session never outlives its model
  std::shared_ptr<dlc_session> session_;
  int gpu_ = 0;
};

} // namespace

PYBIND11_MODULE(_dlc, m) {
  m.doc() = "dlc's runtime: model libraries compiled by `dlc compile`, run from Python";
  gDlcError = PyErr_NewException("dlc.DlcError", PyExc_RuntimeError, nullptr);
  m.attr("DlcError") = py::handle(gDlcError);
  m.def(
      "version", [] { return std::string(dlc_version()); }, "The runtime's version.");
  py::class_<Model>(m, "Model")
      .def(py::init<const std::string &>(), py::arg("path"),
           "Loads a model library written by `dlc compile -o model.so`.")
      .def_property_readonly("inputs", &Model::inputs,
                             "[{'name', 'dtype', 'shape'}], symbolic dims by name")
      .def_property_readonly("outputs", &Model::outputs)
      .def(
          "session",
          [](const Model &model, const std::string &device) { return Session(model, device); },
          py::arg("device") = "auto",
          "A session on 'auto', 'cpu', 'gpu' or 'gpu:N' (GPU number N, as CUDA numbers them).");
  py::class_<DeviceArray>(m, "DeviceArray",
                          "An output in GPU memory: pass it to torch.from_dlpack (no copy).")
      .def("__dlpack__", &DeviceArray::dlpack, py::arg("stream") = py::none())
      .def("__dlpack_device__", &DeviceArray::device)
      .def_property_readonly("shape", &DeviceArray::shape)
      .def_property_readonly("dtype", &DeviceArray::dtype);
  py::class_<Session>(m, "Session")
      .def_property_readonly("device", &Session::device)
      .def("run", &Session::run, py::arg("feed"), py::arg("stream") = 0,
           "Runs on {name: array or DLPack tensor}; returns {name: NumPy array}, or for inputs "
           "in GPU memory {name: DeviceArray} (DLPack, no copy). stream: a CUstream (as an int, "
           "e.g. torch.cuda.current_stream().cuda_stream) to order a GPU-tensor run on.");
}
