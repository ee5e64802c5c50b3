// GpuProgram: an rt::Program made ready to run on the GPU, shared by all sessions of a model.
//
// Creating one (1) validates the Program without touching a device (every buffer inside its
// space, every module and kernel named, every host step's graph parsed and matched to its
// buffers: errors name the step), then (2) loads each module once (its cubin when the cubin's
// arch is the GPU's, else its PTX through the driver's JIT; an error naming both arches when
// neither fits), (3) resolves each launch's kernel, opting in to more than 48 KiB of dynamic
// shared memory where a launch asks for it, and (4) uploads the constant pool once.
//
// A GpuProgram is immutable after creation: any number of GpuSessions on any threads use it.
#pragma once

#include <cuda.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ir/tensor.h"
#include "runtime/cuda_driver.h"
#include "runtime/program.h"

namespace dlc {
class Graph;
class Node;
} // namespace dlc

namespace dlc::rt {

struct GpuProgramOptions {
  /// Load every module from its PTX through the driver's JIT, even when its cubin matches the
  /// GPU (to test the JIT path).
  bool forcePtx = false;
  /// The GPU to load the program on (CudaDriver::get(device)); each GPU that runs a program
  /// loads its own copy of the modules and the constant pool.
  int device = 0;
};

/// Checks `program` for consistency; needs no device. Errors name the step (its index, kernel
/// and origin), the module or the input/output at fault.
Status validateProgram(const Program &program);

/// Checks host inputs against the program's inputs: every input given exactly once, by name,
/// with its dtype and shape. Errors name the input.
/// `onDevice` names inputs given as device memory instead (a previous segment's outputs): each
/// must be an input, not also given from the host; their types are the program's.
Status checkInputs(const Program &program, const std::map<std::string, Tensor> &inputs,
                   const std::set<std::string> &onDevice = {});

/// "step 3 (kernel 'fused_add_relu_3', from add_1 + relu_2)": how errors refer to a step.
std::string describeStep(const Program &program, size_t index);

/// An input or output whose kernels may read or write the caller's memory in place of its
/// arena slot (GpuSession::runDevice): every launch argument that refers to it, as (step,
/// argument, byte offset into the tensor). An input holds its slot all run (plan-memory); an
/// output from ProgramTensor::firstStep on, so only those steps' arguments are its own.
struct DirectTensor {
  bool output = false;
  size_t index = 0; // into Program::inputs or outputs
  struct Arg {
    size_t step, arg;
    uint64_t offset;
  };
  std::vector<Arg> args;
  /// Tensor maps (LaunchStep::tensorMaps) over the tensor, as (step, map index, offset): the
  /// session encodes them again over the caller's memory.
  std::vector<Arg> maps;
};

/// The program tensor `d` stands for.
inline const ProgramTensor &tensorOf(const Program &p, const DirectTensor &d) {
  return d.output ? p.outputs[d.index] : p.inputs[d.index];
}

/// The program's inputs and outputs that can be bound in place: in the arena, not empty, not
/// sharing a buffer with another input or output (a value returned twice), not read or written
/// by a copy step, every argument and tensor map inside the tensor, an output's first step
/// known. None when the program has host steps (they stage their buffers through the host).
std::vector<DirectTensor> planDirectTensors(const Program &program);

/// A host step's one-node graph, parsed once.
struct HostStepGraph {
  std::unique_ptr<Graph> graph;
  const Node *node = nullptr;
  HostStepGraph();
  HostStepGraph(HostStepGraph &&) noexcept;
  HostStepGraph &operator=(HostStepGraph &&) noexcept;
  ~HostStepGraph();
};

class GpuProgram {
public:
  /// Validates `program`, then loads it on GPU opts.device (CudaDriver::get). Validation
  /// errors come first, so a broken program is reported even where there is no GPU.
  static Expected<std::shared_ptr<const GpuProgram>> create(std::shared_ptr<const Program> program,
                                                            const GpuProgramOptions &opts = {});
  ~GpuProgram();
  GpuProgram(const GpuProgram &) = delete;
  GpuProgram &operator=(const GpuProgram &) = delete;

  const Program &program() const { return *program_; }
  const CudaDriver &driver() const { return *driver_; }
  /// The constant pool's device address (0 when the pool is empty).
  CUdeviceptr constants() const { return constants_.get(); }
  /// The kernel launched by step `index` (a LaunchStep), or nullptr for other steps.
  CUfunction function(size_t index) const { return functions_[index]; }
  /// The parsed graph of step `index` (a HostStep), or nullptr for other steps.
  const HostStepGraph *hostStep(size_t index) const;
  bool hasHostSteps() const { return !hostSteps_.empty(); }
  /// How each module was loaded: "cubin sm_90" or "PTX sm_80, JIT-compiled for sm_90".
  const std::vector<std::string> &moduleLoads() const { return moduleLoads_; }

private:
  GpuProgram() = default;
  Status loadModules(const GpuProgramOptions &opts);
  Status resolveKernels();

  std::shared_ptr<const Program> program_;
  const CudaDriver *driver_ = nullptr;
  std::vector<CudaModule> modules_;
  std::vector<std::string> moduleLoads_;
  std::vector<CUfunction> functions_;         // one per step; nullptr for non-launch steps
  std::map<size_t, HostStepGraph> hostSteps_; // by step index
  DeviceMemory constants_;
};

} // namespace dlc::rt
