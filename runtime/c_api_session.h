// The C API's handles and what its entry points (c_api.cc) call: the model and session
// structs, DLPack dtype mapping, tensor binding and the run on the reference backend or the
// GPU (c_api_session.cc). Errors are Statuses; c_api.cc turns them into dlc_status codes.
// Runtime-internal: not installed.
#pragma once

#include <cuda.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "dlc/dlc.h"
#include "runtime/gpu_program.h"
#include "runtime/gpu_session.h"
#include "runtime/package.h"
#include "runtime/reference_executor.h"

struct dlc_model {
  dlc::rt::Package package;
  std::string name;
  std::vector<std::string> arches;
  /// What dlc_model_input/output hand out: shapes (-1 for symbolic dims) and dim names.
  struct Info {
    std::vector<int64_t> shape;
    std::vector<std::string> dimNames;
    std::vector<const char *> dimNamePtrs;
  };
  std::vector<Info> inputInfo, outputInfo;
  /// GPU programs loaded on first use, by index into package.programs and GPU ordinal (each
  /// GPU a session runs on loads its own).
  mutable std::mutex mu;
  mutable std::map<std::pair<size_t, int>, std::shared_ptr<const dlc::rt::GpuProgram>> loaded;
  /// The caller's handle and every session hold one: dlc_model_free drops the caller's, and
  /// the model goes with the last of them, so a session may outlive dlc_model_free.
  mutable std::atomic<int> refs{1};
};

struct dlc_session {
  const dlc_model *model = nullptr;
  dlc_device device = DLC_DEVICE_CPU;
  int gpuOrdinal = 0; // the GPU the session runs on when device is DLC_DEVICE_GPU
  std::unique_ptr<dlc::ReferenceExecutor> executor; // built on first CPU run
  std::map<size_t, std::unique_ptr<dlc::rt::GpuSession>> gpu;
  struct Bound {
    DLTensor tensor;
    std::vector<int64_t> shape;
  };
  std::map<std::string, Bound> inputs, outputs;
  /// Outputs of the last run the session keeps (unbound outputs), and their DLTensor views.
  std::map<std::string, dlc::Tensor> kept;
  /// Unbound outputs of a run on device tensors: GPU memory the session allocated for them.
  std::map<std::string, dlc::rt::DeviceMemory> keptDevice;
  std::map<std::string, std::pair<DLTensor, std::vector<int64_t>>> keptViews;
  std::set<std::string> warned; // dims without a GPU program, warned about once
};

namespace dlc::capi {

/// The DLPack type of a dtype (bool as uint1, TVM's convention).
DLDataType toDl(DType t);
/// The dtype of a DLPack type (bool as uint1 or DLPack 0.8's kDLBool); an error naming it when
/// dlc has none.
Expected<DType> fromDl(const DLDataType &t);

/// A model over a package read from `name`: fills the interface dlc_model_input/output give.
Expected<std::unique_ptr<dlc_model>> makeModel(rt::Package package, const std::string &name);

/// `input ? inputs : outputs` of the package, and the one named `name` (null when none).
const rt::PackageTensor *findTensor(const std::vector<rt::PackageTensor> &ts,
                                    const std::string &name);
/// "'x', 'y'": the names, for errors.
std::string names(const std::vector<rt::PackageTensor> &ts);

/// Where a session of `model` runs when `requested` is asked for: the GPU when one is usable
/// and the model has a program that suits it, else the CPU (DLC_DEVICE_AUTO; with a one-line
/// warning) or an error (DLC_DEVICE_GPU: kUnavailable, or kUnimplemented for a GPU arch the
/// model lacks).
/// Hands a kept output (host or GPU memory) to the caller as a DLManagedTensor: the session
/// forgets it, and the tensor's deleter frees it.
Expected<DLManagedTensor *> takeOutput(dlc_session &s, const std::string &name);

Expected<dlc_device> chooseDevice(const dlc_model &model, dlc_device requested, int gpu = 0);

/// Checks `t` (layout, device, dtype, rank, fixed dims) and binds it as input or output
/// `name`; `fn` names the entry point in errors.
Status bindTensor(dlc_session &s, const char *fn, const char *name, const DLTensor &t, bool input);

/// Runs the session on its bindings: on the GPU when it is a GPU session and the model has a
/// program for the bound dims (`stream` non-null: asynchronously on it), else on the
/// reference backend.
Status runSession(dlc_session &s, CUstream stream, const char *fn);

} // namespace dlc::capi
