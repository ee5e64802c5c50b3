// A thin C++ wrapper over dlc's C API (dlc/dlc.h): RAII handles, and errors as exceptions.
//
//     dlc::api::Model model = dlc::api::Model::load("model.so");
//     dlc::api::Session session(model);                    // DLC_DEVICE_AUTO
//     session.setInput("x", x);                             // DLTensor
//     session.run();
//     const DLTensor &y = session.output("y");
//     dlc::api::writeNpy("y.npy", y);                       // .npy files: dlc::api::Array
//
// Every failure throws dlc::api::Error, which carries the dlc_status and dlc_last_error().
#ifndef DLC_DLC_HPP_
#define DLC_DLC_HPP_

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dlc/dlc.h"

namespace dlc::api {

class Error : public std::runtime_error {
public:
  Error(dlc_status status, const std::string &message)
      : std::runtime_error(message), status_(status) {}
  dlc_status status() const { return status_; }

private:
  dlc_status status_;
};

inline void check(dlc_status status) {
  if (status != DLC_OK)
    throw Error(status, std::string(dlc_status_name(status)) + ": " + dlc_last_error());
}

/// An input or output of a model, copied out of the C API's dlc_tensor_info.
struct TensorInfo {
  std::string name;
  DLDataType dtype;
  std::vector<int64_t> shape;        // -1 for a symbolic dim
  std::vector<std::string> dimNames; // "" for a fixed dim
};

class Model {
public:
  static Model load(const std::string &path) {
    dlc_model *m = nullptr;
    check(dlc_model_load(path.c_str(), &m));
    return Model(m);
  }
  static Model fromMemory(const void *data, size_t size, const std::string &name = "<memory>") {
    dlc_model *m = nullptr;
    check(dlc_model_load_memory(data, size, name.c_str(), &m));
    return Model(m);
  }
  /// The model inside the model library this code is linked into.
  static Model embedded() {
    dlc_model *m = nullptr;
    check(dlc_model_load_embedded(&m));
    return Model(m);
  }

  Model(Model &&o) noexcept : m_(std::exchange(o.m_, nullptr)) {}
  Model &operator=(Model &&o) noexcept {
    std::swap(m_, o.m_);
    return *this;
  }
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;
  ~Model() { dlc_model_free(m_); }

  const dlc_model *get() const { return m_; }

  std::string compilerVersion() const {
    const char *v = nullptr;
    check(dlc_model_compiler_version(m_, &v));
    return v;
  }
  std::vector<std::string> arches() const {
    int32_t n = 0;
    check(dlc_model_num_arches(m_, &n));
    std::vector<std::string> out;
    for (int32_t i = 0; i < n; ++i) {
      const char *a = nullptr;
      check(dlc_model_arch(m_, i, &a));
      out.emplace_back(a);
    }
    return out;
  }
  std::vector<TensorInfo> inputs() const { return infos(true); }
  std::vector<TensorInfo> outputs() const { return infos(false); }
  std::pair<int64_t, int64_t> dimRange(const std::string &dim) const {
    int64_t lo = 0, hi = 0;
    check(dlc_model_dim_range(m_, dim.c_str(), &lo, &hi));
    return {lo, hi};
  }

private:
  explicit Model(dlc_model *m) : m_(m) {}
  std::vector<TensorInfo> infos(bool in) const {
    int32_t n = 0;
    check(in ? dlc_model_num_inputs(m_, &n) : dlc_model_num_outputs(m_, &n));
    std::vector<TensorInfo> out;
    for (int32_t i = 0; i < n; ++i) {
      dlc_tensor_info t{};
      check(in ? dlc_model_input(m_, i, &t) : dlc_model_output(m_, i, &t));
      TensorInfo info{t.name, t.dtype, std::vector<int64_t>(t.shape, t.shape + t.ndim), {}};
      for (int32_t d = 0; d < t.ndim; ++d)
        info.dimNames.emplace_back(t.dim_names[d] ? t.dim_names[d] : "");
      out.push_back(std::move(info));
    }
    return out;
  }

  dlc_model *m_ = nullptr;
};

class Session {
public:
  explicit Session(const Model &model, dlc_device device = DLC_DEVICE_AUTO, int32_t gpu = 0) {
    check(dlc_session_create_on_gpu(model.get(), device, gpu, &s_));
  }
  Session(Session &&o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Session &operator=(Session &&o) noexcept {
    std::swap(s_, o.s_);
    return *this;
  }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  ~Session() { dlc_session_free(s_); }

  dlc_device device() const {
    dlc_device d = DLC_DEVICE_CPU;
    check(dlc_session_device(s_, &d));
    return d;
  }
  void setInput(const std::string &name, const DLTensor &t) {
    check(dlc_session_set_input(s_, name.c_str(), &t));
  }
  void setOutput(const std::string &name, const DLTensor &t) {
    check(dlc_session_set_output(s_, name.c_str(), &t));
  }
  void run() { check(dlc_session_run(s_)); }
  void runAsync(void *cudaStream) { check(dlc_session_run_async(s_, cudaStream)); }
  const DLTensor &output(const std::string &name) const {
    const DLTensor *t = nullptr;
    check(dlc_session_get_output(s_, name.c_str(), &t));
    return *t;
  }

private:
  dlc_session *s_ = nullptr;
};

/// A `.npy` file read by dlc's own reader (dlc_array_read_npy), so a host program accepts
/// exactly the files `dlc run` accepts.
class Array {
public:
  static Array readNpy(const std::string &path) {
    dlc_array *a = nullptr;
    check(dlc_array_read_npy(path.c_str(), &a));
    return Array(a);
  }
  Array(Array &&o) noexcept : a_(std::exchange(o.a_, nullptr)) {}
  Array &operator=(Array &&o) noexcept {
    std::swap(a_, o.a_);
    return *this;
  }
  Array(const Array &) = delete;
  Array &operator=(const Array &) = delete;
  ~Array() { dlc_array_free(a_); }

  /// A host DLTensor over the data (valid while the Array lives).
  const DLTensor &tensor() const { return *dlc_array_tensor(a_); }

private:
  explicit Array(dlc_array *a) : a_(a) {}
  dlc_array *a_ = nullptr;
};

/// Writes a host tensor as a `.npy` file (dlc_array_write_npy).
inline void writeNpy(const std::string &path, const DLTensor &t) {
  check(dlc_array_write_npy(path.c_str(), &t));
}

} // namespace dlc::api

#endif // DLC_DLC_HPP_
