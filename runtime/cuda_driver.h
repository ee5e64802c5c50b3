// The CUDA driver, loaded at run time.
//
// dlc never links libcuda: every dlc binary must start on a machine without the NVIDIA driver
// (and then run on the CPU backend). CudaDriver::get() dlopens `libcuda.so.1` once per
// process, resolves the entry points of DLC_CUDA_DRIVER_FUNCTIONS by the versioned names the
// driver exports, initialises it and retains the primary context of the device asked for (0
// unless a session names another). <cuda.h> is used for
// types and prototypes only.
//
// Every call is checked; errors read `<what was being done>: CUDA_ERROR_X (description)`, and
// `what` names the kernel for launches. Handles are wrapped in DriverHandle (RAII).
#pragma once

#include <cuda.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "ir/status.h"

namespace dlc::rt {

/// X(member, exported symbol). The member's type is the symbol's prototype in <cuda.h>; the
/// symbol is the exact name libcuda exports (the `_v2` names the header's macros map to).
#define DLC_CUDA_DRIVER_FUNCTIONS(X)                                                               \
  X(init, cuInit)                                                                                  \
  X(driverGetVersion, cuDriverGetVersion)                                                          \
  X(getErrorName, cuGetErrorName)                                                                  \
  X(getErrorString, cuGetErrorString)                                                              \
  X(deviceGetCount, cuDeviceGetCount)                                                              \
  X(deviceGet, cuDeviceGet)                                                                        \
  X(deviceGetName, cuDeviceGetName)                                                                \
  X(deviceGetAttribute, cuDeviceGetAttribute)                                                      \
  X(deviceTotalMem, cuDeviceTotalMem_v2)                                                           \
  X(primaryCtxRetain, cuDevicePrimaryCtxRetain)                                                    \
  X(ctxSetCurrent, cuCtxSetCurrent)                                                                \
  X(memGetInfo, cuMemGetInfo_v2)                                                                   \
  X(moduleLoadDataEx, cuModuleLoadDataEx)                                                          \
  X(moduleUnload, cuModuleUnload)                                                                  \
  X(moduleGetFunction, cuModuleGetFunction)                                                        \
  X(funcGetAttribute, cuFuncGetAttribute)                                                          \
  X(funcSetAttribute, cuFuncSetAttribute)                                                          \
  X(memAlloc, cuMemAlloc_v2)                                                                       \
  X(memFree, cuMemFree_v2)                                                                         \
  X(memAllocHost, cuMemAllocHost_v2)                                                               \
  X(memFreeHost, cuMemFreeHost)                                                                    \
  X(memcpyHtoD, cuMemcpyHtoD_v2)                                                                   \
  X(memcpyDtoH, cuMemcpyDtoH_v2)                                                                   \
  X(memcpyHtoDAsync, cuMemcpyHtoDAsync_v2)                                                         \
  X(memcpyDtoHAsync, cuMemcpyDtoHAsync_v2)                                                         \
  X(memcpyDtoDAsync, cuMemcpyDtoDAsync_v2)                                                         \
  X(memsetD8Async, cuMemsetD8Async)                                                                \
  X(streamCreate, cuStreamCreate)                                                                  \
  X(streamDestroy, cuStreamDestroy_v2)                                                             \
  X(streamSynchronize, cuStreamSynchronize)                                                        \
  X(streamBeginCapture, cuStreamBeginCapture_v2)                                                   \
  X(streamEndCapture, cuStreamEndCapture)                                                          \
  X(graphInstantiate, cuGraphInstantiateWithFlags)                                                 \
  X(graphLaunch, cuGraphLaunch)                                                                    \
  X(graphExecDestroy, cuGraphExecDestroy)                                                          \
  X(graphExecKernelNodeSetParams, cuGraphExecKernelNodeSetParams_v2)                               \
  X(streamGetCaptureInfo, cuStreamGetCaptureInfo_v3)                                               \
  X(graphDestroy, cuGraphDestroy)                                                                  \
  X(launchKernel, cuLaunchKernel)                                                                  \
  X(launchKernelEx, cuLaunchKernelEx)                                                              \
  X(eventCreate, cuEventCreate)                                                                    \
  X(eventDestroy, cuEventDestroy_v2)                                                               \
  X(eventRecord, cuEventRecord)                                                                    \
  X(eventSynchronize, cuEventSynchronize)                                                          \
  X(eventElapsedTime, cuEventElapsedTime_v2)                                                       \
  X(streamWaitEvent, cuStreamWaitEvent)                                                            \
  X(tensorMapEncodeTiled, cuTensorMapEncodeTiled)

/// The driver's entry points, resolved with dlsym.
struct DriverApi {
#define DLC_DRIVER_MEMBER(member, symbol) decltype(&::symbol) member = nullptr;
  DLC_CUDA_DRIVER_FUNCTIONS(DLC_DRIVER_MEMBER)
#undef DLC_DRIVER_MEMBER
};

/// What dlc knows about the GPU it runs on.
struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int major = 0, minor = 0; // compute capability
  int smCount = 0;
  uint64_t totalMemory = 0;
  int sharedPerBlock = 0;      // bytes of shared memory a block gets by default (48 KiB)
  int sharedPerBlockOptin = 0; // the most a kernel may opt in to (cuFuncSetAttribute)
  int driverVersion = 0;       // CUDA version the driver supports, 1000*major + 10*minor

  /// 90 for compute capability 9.0.
  int smVersion() const { return major * 10 + minor; }
  /// "sm_90".
  std::string arch() const { return "sm_" + std::to_string(smVersion()); }
  /// "NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB, driver CUDA 13.0)".
  std::string describe() const;
};

/// A test hook (CudaDriver::injectFault): one driver call that fails without reaching the
/// driver, as an allocation that runs out of memory, a failed launch or a lost context would.
/// Calls that end or release something (cuStreamEndCapture, the frees, destroys and unloads)
/// reach the driver and then report the error, as they do when they really fail.
struct DriverFault {
  /// The exported symbol whose calls are counted ("cuMemAlloc_v2"); empty: every call.
  /// cuGetErrorName and cuGetErrorString are never counted (errors are formatted with them).
  std::string function;
  /// The nth counted call from the arming fails (1: the next one), once.
  int64_t nth = 1;
  CUresult error = CUDA_ERROR_OUT_OF_MEMORY;
};

class CudaDriver {
public:
  /// The process's driver for GPU `ordinal` (as CUDA numbers them, after CUDA_VISIBLE_DEVICES):
  /// loaded, initialised and with that device's primary context retained on first use, then
  /// shared (never unloaded). Every object made through it (programs, sessions, memory) lives
  /// on that GPU: makeCurrent() makes its context current. Fails with kUnavailable when
  /// libcuda.so.1 cannot be loaded ("no CUDA driver: ...") or when there is no such device ("no
  /// CUDA device: ..."); the failure is remembered, so later calls fail the same way at no cost.
  static Expected<CudaDriver *> get(int ordinal = 0);

  /// How many GPUs the driver sees (0 when it cannot be loaded or sees none).
  static int deviceCount();

  /// What GPU `ordinal` is (name, arch, SMs, memory), asked of the driver without retaining its
  /// context: for tools that only target the GPU (`dlc compile` takes the arch from it), which
  /// need not create a context and tear it down at exit. Fails as get() does.
  static Expected<DeviceInfo> probe(int ordinal = 0);

  /// Loads `library` as the driver of GPU `ordinal` (get() uses "libcuda.so.1"); for tests of
  /// the failure paths. The library stays loaded for the life of the process.
  static Expected<std::unique_ptr<CudaDriver>> load(const std::string &library, int ordinal = 0);

  const DriverApi &api() const { return api_; }
  const DeviceInfo &device() const { return info_; }
  CUcontext context() const { return context_; }

  /// Makes the primary context current on the calling thread. Cheap; every entry point of the
  /// GPU runtime calls it, so any thread may use any object.
  Status makeCurrent() const;

  /// Ok for CUDA_SUCCESS, else an error `what: CUDA_ERROR_X (description)`.
  Status check(CUresult r, std::string_view what) const {
    return r == CUDA_SUCCESS ? Status::ok() : error(r, what);
  }
  /// The error for a failed call (for hot paths that format `what` only on failure).
  Status error(CUresult r, std::string_view what) const;
  /// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
  std::string errorText(CUresult r) const;

  /// Test hook: arms `fault`, replacing one armed before; until disarmed, every call through
  /// api() (from any thread) is counted and the fault's call fails. Not for use while other
  /// threads make driver calls: arming and disarming swap the entry points.
  void injectFault(const DriverFault &fault);
  /// Disarms the hook. Returns the counted calls since arming and whether the fault fired.
  struct FaultReport {
    int64_t calls = 0;
    bool fired = false;
  };
  FaultReport clearFault();

private:
  CudaDriver() = default;
  /// load() without the context: the library resolved, the driver initialised, the device
  /// found and described.
  static Expected<std::unique_ptr<CudaDriver>> open(const std::string &library, int ordinal);

  DriverApi api_;
  bool armed_ = false; // api_ holds injectFault's trampolines (the real entry points: FaultState)
  DeviceInfo info_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
};

/// An owned driver handle, released with `DriverApi::*Release` (errors on release ignored: they
/// can only repeat an error already reported).
template <typename T, auto DriverApi::*Release> class DriverHandle {
public:
  DriverHandle() = default;
  DriverHandle(const CudaDriver *driver, T handle) : driver_(driver), handle_(handle) {}
  DriverHandle(DriverHandle &&o) noexcept
      : driver_(o.driver_), handle_(std::exchange(o.handle_, T{})) {}
  DriverHandle &operator=(DriverHandle &&o) noexcept {
    if (this != &o) {
      reset();
      driver_ = o.driver_;
      handle_ = std::exchange(o.handle_, T{});
    }
    return *this;
  }
  DriverHandle(const DriverHandle &) = delete;
  DriverHandle &operator=(const DriverHandle &) = delete;
  ~DriverHandle() { reset(); }

  T get() const { return handle_; }
  explicit operator bool() const { return handle_ != T{}; }
  void reset() {
    if (handle_ != T{} && driver_) {
      (void)driver_->makeCurrent();
      (void)(driver_->api().*Release)(handle_);
    }
    handle_ = T{};
  }

private:
  const CudaDriver *driver_ = nullptr;
  T handle_{};
};

using DeviceMemory = DriverHandle<CUdeviceptr, &DriverApi::memFree>;
using PinnedMemory = DriverHandle<void *, &DriverApi::memFreeHost>;
using CudaStream = DriverHandle<CUstream, &DriverApi::streamDestroy>;
using CudaModule = DriverHandle<CUmodule, &DriverApi::moduleUnload>;
using CudaGraph = DriverHandle<CUgraph, &DriverApi::graphDestroy>;
using CudaGraphExec = DriverHandle<CUgraphExec, &DriverApi::graphExecDestroy>;
using CudaEvent = DriverHandle<CUevent, &DriverApi::eventDestroy>;

/// `bytes` of device memory (none for 0 bytes). `what` names the allocation in errors.
Expected<DeviceMemory> allocateDevice(const CudaDriver &driver, size_t bytes,
                                      std::string_view what);
/// `bytes` of page-locked host memory (none for 0 bytes).
Expected<PinnedMemory> allocatePinned(const CudaDriver &driver, size_t bytes,
                                      std::string_view what);
/// A non-blocking stream (it does not synchronise with the legacy default stream).
Expected<CudaStream> createStream(const CudaDriver &driver);

} // namespace dlc::rt
