#include "runtime/cuda_driver.h"

#include <dlfcn.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string_view>
#include <vector>

#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#error "the driver table names the legacy-stream entry points; do not build with per-thread streams"
#endif

namespace dlc::rt {
namespace {

std::string gib(uint64_t bytes) {
  return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
}

/// The driver's name and description of `r`, without a driver to ask (before cuInit).
std::string rawErrorText(const DriverApi &api, CUresult r) {
  const char *name = nullptr;
  const char *text = nullptr;
  if (api.getErrorName)
    api.getErrorName(r, &name);
  if (api.getErrorString)
    api.getErrorString(r, &text);
  std::string out = name ? name : fmt::format("CUDA error {}", static_cast<int>(r));
  if (text)
    out += fmt::format(" ({})", text);
  return out;
}

/// Resolves every entry point; the error lists the missing ones.
Status resolve(void *lib, const std::string &library, DriverApi &api) {
  std::vector<std::string> missing;
#define DLC_DRIVER_RESOLVE(member, symbol)                                                         \
  api.member = reinterpret_cast<decltype(api.member)>(dlsym(lib, #symbol));                        \
  if (!api.member)                                                                                 \
    missing.push_back(#symbol);
  DLC_CUDA_DRIVER_FUNCTIONS(DLC_DRIVER_RESOLVE)
#undef DLC_DRIVER_RESOLVE
  if (missing.empty())
    return Status::ok();
  std::string shown;
  for (size_t i = 0; i < missing.size() && i < 5; ++i)
    shown += (i ? ", " : "") + missing[i];
  if (missing.size() > 5)
    shown += fmt::format(", ... ({} more)", missing.size() - 5);
  std::string version;
  if (int v = 0; api.driverGetVersion && api.driverGetVersion(&v) == CUDA_SUCCESS)
    version = fmt::format(" (it supports CUDA {}.{})", v / 1000, (v % 1000) / 10);
  return unavailable("no usable CUDA driver: {}{} lacks {}; the GPU backend needs an NVIDIA "
                     "driver for CUDA 12.8 or newer",
                     library, version, shown);
}

// --- Fault injection (CudaDriver::injectFault) -------------------------------------------------
// While armed, every DriverApi member points at a trampoline that counts the call and either
// fails it or forwards it to the driver's own entry point (kept in `real`).

struct FaultState {
  std::mutex mutex; // guards the plan against concurrent arming; calls read atomics only
  DriverApi real;
  std::string function;
  int64_t nth = 0;
  CUresult error = CUDA_SUCCESS;
  std::atomic<int64_t> calls{0};
  std::atomic<int64_t> counted{0};
  std::atomic<bool> fired{false};
};

FaultState &faultState() {
  static FaultState state;
  return state;
}

/// Whether this call of `symbol` is the one to fail.
bool faultFires(const char *symbol) {
  FaultState &f = faultState();
  f.calls.fetch_add(1);
  if (!f.function.empty() && f.function != symbol)
    return false;
  return f.counted.fetch_add(1) + 1 == f.nth && !f.fired.exchange(true);
}

/// Calls that end or release something still take effect when they fail: the driver ends a
/// stream capture even when cuStreamEndCapture reports an error, and a handle given to a
/// destroy call is gone whatever it returns. A fault on them reaches the driver, then fails.
bool takesEffectWhenFailing(std::string_view symbol) {
  return symbol == "cuStreamEndCapture" || symbol.find("Destroy") != std::string_view::npos ||
         symbol.find("Free") != std::string_view::npos || symbol == "cuModuleUnload";
}

template <auto Member, const char *Symbol> struct Trampoline;
template <typename... A, CUresult (*DriverApi::*Member)(A...), const char *Symbol>
struct Trampoline<Member, Symbol> {
  static CUresult call(A... args) {
    if (!faultFires(Symbol))
      return (faultState().real.*Member)(args...);
    if (takesEffectWhenFailing(Symbol))
      (void)(faultState().real.*Member)(args...);
    return faultState().error;
  }
};

#define DLC_DRIVER_SYMBOL_NAME(member, symbol) constexpr char k_##member[] = #symbol;
DLC_CUDA_DRIVER_FUNCTIONS(DLC_DRIVER_SYMBOL_NAME)
#undef DLC_DRIVER_SYMBOL_NAME

} // namespace

void CudaDriver::injectFault(const DriverFault &fault) {
  FaultState &f = faultState();
  std::lock_guard<std::mutex> lock(f.mutex);
  if (!armed_)
    f.real = api_;
  f.function = fault.function;
  f.nth = fault.nth;
  f.error = fault.error;
  f.calls = 0;
  f.counted = 0;
  f.fired = false;
#define DLC_DRIVER_TRAMPOLINE(member, symbol)                                                      \
  api_.member = &Trampoline<&DriverApi::member, k_##member>::call;
  DLC_CUDA_DRIVER_FUNCTIONS(DLC_DRIVER_TRAMPOLINE)
#undef DLC_DRIVER_TRAMPOLINE
  api_.getErrorName = f.real.getErrorName; // errors are formatted with these: never counted
  api_.getErrorString = f.real.getErrorString;
  armed_ = true;
}

CudaDriver::FaultReport CudaDriver::clearFault() {
  FaultState &f = faultState();
  std::lock_guard<std::mutex> lock(f.mutex);
  if (!armed_)
    return {};
  api_ = f.real;
  armed_ = false;
  return {f.calls.load(), f.fired.load()};
}

std::string DeviceInfo::describe() const {
  return fmt::format("{}{} ({}, {} SMs, {}, driver CUDA {}.{})",
                     ordinal ? fmt::format("gpu:{} ", ordinal) : "", name, arch(), smCount,
                     gib(totalMemory), driverVersion / 1000, (driverVersion % 1000) / 10);
}

Expected<CudaDriver *> CudaDriver::get(int ordinal) {
  static std::mutex mu;
  static std::map<int, Expected<CudaDriver *>> drivers;
  std::lock_guard<std::mutex> lock(mu);
  auto it = drivers.find(ordinal);
  if (it == drivers.end()) {
    auto loaded = load("libcuda.so.1", ordinal);
    // Each lives as long as the process: sessions may outlive main().
    it = drivers
             .emplace(ordinal, loaded ? Expected<CudaDriver *>(loaded->release())
                                      : Expected<CudaDriver *>(loaded.takeStatus()))
             .first;
  }
  return it->second;
}

int CudaDriver::deviceCount() {
  auto d = get(0);
  if (!d)
    return 0;
  int count = 0;
  return (*d)->api().deviceGetCount(&count) == CUDA_SUCCESS ? count : 0;
}

Expected<DeviceInfo> CudaDriver::probe(int ordinal) {
  DLC_ASSIGN_OR_RETURN(std::unique_ptr<CudaDriver> d, open("libcuda.so.1", ordinal));
  return d->info_;
}

Expected<std::unique_ptr<CudaDriver>> CudaDriver::load(const std::string &library, int ordinal) {
  DLC_ASSIGN_OR_RETURN(std::unique_ptr<CudaDriver> d, open(library, ordinal));
  DLC_RETURN_IF_ERROR(d->check(d->api_.primaryCtxRetain(&d->context_, d->device_),
                               fmt::format("retaining the primary context of {}", d->info_.name)));
  DLC_RETURN_IF_ERROR(d->makeCurrent());
  return d;
}

Expected<std::unique_ptr<CudaDriver>> CudaDriver::open(const std::string &library, int ordinal) {
  void *lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    return unavailable("no CUDA driver: {} could not be loaded ({}); the GPU backend needs the "
                       "NVIDIA driver",
                       library, why ? why : "unknown reason");
  }
  std::unique_ptr<CudaDriver> d(new CudaDriver());
  DLC_RETURN_IF_ERROR(resolve(lib, library, d->api_));
  const DriverApi &api = d->api_;
  if (CUresult r = api.init(0); r != CUDA_SUCCESS)
    return unavailable("no CUDA device: cuInit failed: {}", rawErrorText(api, r));
  int count = 0;
  if (CUresult r = api.deviceGetCount(&count); r != CUDA_SUCCESS)
    return unavailable("no CUDA device: cuDeviceGetCount failed: {}", rawErrorText(api, r));
  if (count == 0)
    return unavailable("no CUDA device: the driver reports no GPU");
  if (ordinal < 0 || ordinal >= count)
    return unavailable("no CUDA device gpu:{}: the driver reports {} GPU{} (gpu:0{})", ordinal,
                       count, count == 1 ? "" : "s",
                       count == 1 ? "" : fmt::format(" to gpu:{}", count - 1));
  DLC_RETURN_IF_ERROR(
      d->check(api.deviceGet(&d->device_, ordinal), fmt::format("cuDeviceGet({})", ordinal)));
  d->info_.ordinal = ordinal;

  DeviceInfo &info = d->info_;
  char name[256] = {};
  DLC_RETURN_IF_ERROR(
      d->check(api.deviceGetName(name, sizeof(name) - 1, d->device_), "cuDeviceGetName"));
  info.name = name;
  size_t total = 0;
  DLC_RETURN_IF_ERROR(d->check(api.deviceTotalMem(&total, d->device_), "cuDeviceTotalMem"));
  info.totalMemory = total;
  const std::pair<CUdevice_attribute, int *> attrs[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &info.major},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &info.minor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info.smCount},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &info.sharedPerBlock},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &info.sharedPerBlockOptin},
  };
  for (const auto &[attr, out] : attrs)
    DLC_RETURN_IF_ERROR(d->check(api.deviceGetAttribute(out, attr, d->device_),
                                 fmt::format("cuDeviceGetAttribute({})", static_cast<int>(attr))));
  DLC_RETURN_IF_ERROR(d->check(api.driverGetVersion(&info.driverVersion), "cuDriverGetVersion"));
  return d;
}

Status CudaDriver::makeCurrent() const {
  CUresult r = api_.ctxSetCurrent(context_);
  return r == CUDA_SUCCESS ? Status::ok() : error(r, "cuCtxSetCurrent");
}

std::string CudaDriver::errorText(CUresult r) const { return rawErrorText(api_, r); }

Status CudaDriver::error(CUresult r, std::string_view what) const {
  return internalError("{}: {}", what, errorText(r));
}

Expected<DeviceMemory> allocateDevice(const CudaDriver &driver, size_t bytes,
                                      std::string_view what) {
  if (bytes == 0)
    return DeviceMemory();
  CUdeviceptr p = 0;
  CUresult r = driver.api().memAlloc(&p, bytes);
  if (r != CUDA_SUCCESS) {
    size_t freeBytes = 0, total = 0;
    std::string state;
    if (driver.api().memGetInfo(&freeBytes, &total) == CUDA_SUCCESS)
      state = fmt::format(" ({} of {} free)", gib(freeBytes), gib(total));
    return driver.error(
        r, fmt::format("allocating {} bytes of device memory for {}{}", bytes, what, state));
  }
  return DeviceMemory(&driver, p);
}

Expected<PinnedMemory> allocatePinned(const CudaDriver &driver, size_t bytes,
                                      std::string_view what) {
  if (bytes == 0)
    return PinnedMemory();
  void *p = nullptr;
  if (CUresult r = driver.api().memAllocHost(&p, bytes); r != CUDA_SUCCESS)
    return driver.error(
        r, fmt::format("allocating {} bytes of pinned host memory for {}", bytes, what));
  return PinnedMemory(&driver, p);
}

Expected<CudaStream> createStream(const CudaDriver &driver) {
  CUstream s = nullptr;
  DLC_RETURN_IF_ERROR(
      driver.check(driver.api().streamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate"));
  return CudaStream(&driver, s);
}

} // namespace dlc::rt
