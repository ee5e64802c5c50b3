// GpuSession: one executor of a GpuProgram, with its own arena, stream and pinned staging.
//
// A run: (poison the arena) -> copy inputs into their arena slots -> the launch list -> copy
// outputs out -> wait. A run on the caller's device memory (runDevice) skips the copies of the
// tensors it can bind in place: their kernel arguments point at the caller's buffers. The launch
// list is captured as a CUDA graph on the first run and replayed afterwards (arena, constants and
// kernel arguments never move, so the graph stays valid); programs with host steps run step by step
// instead, since a host step must wait for the device. Errors name the step: the kernel and the
// nodes it came from.
//
// Kernel faults are reported when the stream is synchronised, after the fact: the error lists
// the kernels that were in flight. With `syncEachStep` (or DLC_CUDA_SYNC=1 in the
// environment) every step is waited for, and the error names exactly the kernel that failed.
// A fault leaves the CUDA context unusable: every later call in the process fails.
//
// Use a session from one thread at a time (calls are serialised by a mutex); sessions of one
// GpuProgram may run concurrently on different threads.
#pragma once

#include <cuda.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/gpu_program.h"
#include "runtime/reference_executor.h"

namespace dlc::rt {

struct GpuSessionOptions {
  /// Capture the launch list as a CUDA graph on the first run and replay it. Ignored for
  /// programs with host steps and with syncEachStep.
  bool cudaGraph = true;
  /// Fill the whole arena with 0xFF bytes before each run (NaN for floats), so an output
  /// element a kernel forgot to write shows.
  bool poison = false;
  /// Wait for every step and check it (slow; names the kernel that faults). Also turned on by
  /// the environment variable DLC_CUDA_SYNC=1.
  bool syncEachStep = false;
};

class GpuSession {
public:
  static Expected<std::unique_ptr<GpuSession>> create(std::shared_ptr<const GpuProgram> program,
                                                      const GpuSessionOptions &opts = {});
  ~GpuSession();
  GpuSession(const GpuSession &) = delete;
  GpuSession &operator=(const GpuSession &) = delete;

  /// Runs the program on host tensors, given by input name (checked: names, dtypes, shapes).
  /// Returns the outputs in the program's order.
  Expected<std::vector<NamedTensor>> run(const std::map<std::string, Tensor> &inputs);
  /// The same, outputs by name.
  Expected<std::map<std::string, Tensor>> runByName(const std::map<std::string, Tensor> &inputs);

  /// One segment of a model that runs in several (runtime/jit/segments.h): each input comes
  /// either from the host (`host`, by name, checked) or from device memory of the current
  /// context (`device`, by name: densely packed, the input's size; a previous segment's
  /// outputSlot). Only the outputs with `download[i]` are copied back; the others stay in
  /// outputSlot(i) until this session runs again. Returns the outputs in the program's order
  /// (empty tensors where not downloaded). Waits for the run.
  Expected<std::vector<NamedTensor>> runSegment(const std::map<std::string, Tensor> &host,
                                                const std::map<std::string, CUdeviceptr> &device,
                                                const std::vector<bool> &download);

  /// Runs the program on device memory of the current context: `inputs[i]` holds
  /// program().inputs[i] and `outputs[i]` receives program().outputs[i], each densely packed.
  /// Returns when the outputs are written; with a `caller` stream, returns at once instead: the
  /// copies and the launch list (its CUDA graph) are enqueued on `caller` itself, so the run
  /// follows the work enqueued there so far and what the caller enqueues next follows it. A run
  /// on another stream than the last one waits for the last one first (the arena is shared);
  /// kernel faults surface at the caller's next synchronisation. Destroy the session before
  /// the caller's stream, or synchronise that stream first.
  ///
  /// The kernels read an input and write an output in the caller's memory directly, without
  /// a copy through the arena, when the pointer is 256-byte aligned (as the arena's slots are),
  /// an output's memory overlaps no other tensor of the call, and no copy step refers to the
  /// tensor (planDirectTensors; tensor maps over it are encoded again). The CUDA graph is then
  /// updated in place (cuGraphExecKernelNodeSetParams on the few kernels concerned) when the
  /// pointers differ from the last run's; runs with the same pointers change nothing.
  Status runDevice(const std::vector<CUdeviceptr> &inputs, const std::vector<CUdeviceptr> &outputs,
                   CUstream caller = nullptr);

  /// Runs the launch list alone on whatever the arena holds (inputs written through
  /// inputSlot()), and waits. For benchmarks: no copies, no checks.
  Status execute();

  /// Runs the launch list `runs` times step by step (no CUDA graph), with an event recorded
  /// around every step, on whatever the arena holds. Returns each step's mean GPU time in
  /// milliseconds, by step index (0 for host steps, which are timed on the host). For
  /// `dlc run --profile`: the per-kernel breakdown.
  Expected<std::vector<double>> profileSteps(int runs);

  /// Where input/output i lives in this session's arena.
  CUdeviceptr inputSlot(size_t i) const;
  CUdeviceptr outputSlot(size_t i) const;
  CUstream stream() const { return stream_.get(); }
  const GpuProgram &program() const { return *program_; }
  /// Whether runs replay a captured CUDA graph (true after the first run when capture applies).
  bool usesCudaGraph() const { return static_cast<bool>(graph_); }
  /// How many inputs and outputs the last run read or wrote in the caller's memory directly
  /// (runDevice), not through a copy; and how many the program would allow at most.
  size_t directTensors() const { return directLast_; }
  size_t directCandidates() const { return direct_.size(); }

private:
  GpuSession() = default;
  CUdeviceptr address(const BufferRef &ref) const;
  /// The TMA descriptor of `m` over its buffer in this session's memory, or over `base` (the
  /// buffer's first byte) when given.
  Expected<CUtensorMap> encode(const TensorMapArg &m, CUdeviceptr base = 0) const;
  /// Poisons the arena when asked to.
  Status begin();
  /// The launch list: replays (capturing first) or enqueues step by step.
  Status launchSteps();
  Status enqueueSteps(size_t first, size_t last);
  Status enqueueStep(size_t index);
  Status runHostStep(size_t index);
  Status capture();
  /// Points each direct_ tensor's kernel arguments at `to[i]`, or at its arena slot where
  /// `to[i]` is 0, updating the CUDA graph's kernel nodes whose arguments change.
  Status rebind(const std::vector<CUdeviceptr> &to);
  /// Forgets the captured graph: the next launch captures the steps again.
  void dropGraph() {
    graph_ = CudaGraphExec();
    captured_ = CudaGraph();
  }
  /// Makes `s` the stream of the run that begins: when the last run went to another stream,
  /// `s` waits for its work first (the arena is shared by every run), through order_.
  Status enterStream(CUstream s);
  /// Waits for the stream; on failure names the steps enqueued since the last wait.
  Status synchronize();
  Status kernelFault(CUresult r) const;
  /// The error for a failed enqueue: a kernel fault (see kernelFault) or `what` failed.
  Status failed(CUresult r, std::string_view what) const;

  std::shared_ptr<const GpuProgram> program_;
  const CudaDriver *driver_ = nullptr;
  GpuSessionOptions opts_;
  bool useGraph_ = false;
  CudaStream stream_;
  DeviceMemory arena_;
  PinnedMemory staging_;
  std::vector<size_t> inputStaging_, outputStaging_; // byte offsets into staging_
  /// Kernel parameters, one entry per step (empty for non-launch steps): pointer values and
  /// the array of their addresses that cuLaunchKernel takes.
  std::vector<std::vector<CUdeviceptr>> argValues_;
  /// The steps' tensor maps (LaunchStep::tensorMaps), encoded once: the buffers stay put.
  std::vector<std::vector<CUtensorMap>> argMaps_;
  std::vector<std::vector<void *>> argPointers_;
  /// The inputs and outputs whose kernel arguments may point at the caller's memory
  /// (planDirectTensors), and where each one's arguments point now.
  std::vector<DirectTensor> direct_;
  std::vector<CUdeviceptr> bound_;
  size_t directLast_ = 0;
  /// The captured graph (kept: its nodes name the kernels to update) and, per step, its node
  /// where a direct_ tensor's argument is in the step (null otherwise).
  CudaGraph captured_;
  std::vector<CUgraphNode> nodes_;
  std::vector<bool> needsNode_; // steps with a direct_ tensor's argument
  bool capturing_ = false;
  CudaGraphExec graph_;
  /// The stream the steps are enqueued on: stream_, or during runDevice the caller's stream
  /// (runs and the graph launch go there directly). A caller's stream is the caller's again
  /// once runDevice returns (it may be destroyed then): null after such a run, as before the
  /// first one.
  CUstream cur_ = nullptr;
  /// Recorded after the last run where the next one may be enqueued on another stream (the end
  /// of a run on the caller's stream, or the session's stream when a caller's run follows);
  /// the next run's stream waits for it (enterStream). `orderPending_`: recorded and not yet
  /// waited for.
  CudaEvent order_;
  bool orderPending_ = false;
  /// After a run on the caller's stream: order_ recorded there, the stream forgotten.
  Status leaveCallerStream();
  /// Creates order_ once.
  Status makeOrderEvent();
  /// Steps [pendingFirst_, pendingLast_) were enqueued since the stream was last waited for.
  size_t pendingFirst_ = 0, pendingLast_ = 0;
  std::mutex mutex_;
};

} // namespace dlc::rt
