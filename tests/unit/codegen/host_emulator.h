// Runs generated CUDA kernels on the host, so emitter tests can compare real kernel output with
// the reference backend on machines without a GPU.
//
// The kernels' source (after the dlc prelude) is compiled by the host C++ compiler into a
// shared library. A shim in front of it provides what device code expects: the CUDA headers'
// host versions of __half and __nv_bfloat16, threadIdx/blockIdx/blockDim/gridDim, __syncthreads
// and __shfl_xor_sync, __shared__ as storage shared by a block's threads, and the few device
// intrinsics the prelude names. A launch runs the blocks one after another, each with one
// std::thread per CUDA thread; barriers stand in for __syncthreads and for the warp's lockstep
// around a shuffle. This checks indexing, control flow and arithmetic; it says nothing about
// speed, memory coalescing or races that real hardware would expose.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "ir/status.h"
#include "runtime/program.h"
#include "runtime/reference_executor.h"

namespace dlc::codegen::testing {

class HostModule {
public:
  /// Compiles the prelude followed by `source`. The error carries the compiler's output.
  static Expected<std::unique_ptr<HostModule>> build(const std::string &source);
  ~HostModule();
  HostModule(const HostModule &) = delete;
  HostModule &operator=(const HostModule &) = delete;

  /// Launches `k` with one buffer per entry of k.params, in order, over k.launch.
  Status run(const Kernel &k, const std::vector<void *> &buffers);

private:
  HostModule() = default;
  void *handle_ = nullptr;
  std::string dir_;
};

/// Runs a whole GPU program on the host: its kernels (Program::sources, built into one host
/// module), copies, host steps (the reference backend, as rt::GpuSession runs them), the arena
/// (poisoned with 0xA5 bytes first) and the constant pool, as rt::GpuSession would on a GPU.
/// Outputs come back in the program's order, by their public names. A launch of more than
/// `maxThreads` threads in all is refused (the emulator runs one std::thread per CUDA thread).
Expected<std::vector<NamedTensor>> runProgramOnHost(const rt::Program &p,
                                                    const std::map<std::string, Tensor> &inputs,
                                                    int64_t maxThreads = 1 << 20);

} // namespace dlc::codegen::testing
