// The C++ API for host programs: load a model once, create sessions, run them.
//
//     auto model = dlc::Model::load("model.onnx");          // Expected<Model>
//     if (!model) { print(model.status().message()); ... }
//     auto session = model->createSession();               // Expected<Session>
//     auto outputs = session->run({{"x", x}});             // Expected<map<name, Tensor>>
//
// A Model holds the imported graph after the load pipeline of its -O level
// (runtime/jit/pipelines.h), immutable and shared by its sessions. Sessions are independent and
// keep no state between runs, so any number of them, on any threads, may run at once (so may one
// session). A session runs on the GPU (when asked, or by default when a GPU and driver are present)
// or on the CPU reference backend. On the GPU, the first run with a given set of input shapes
// compiles the model for those shapes (runtime/jit/compile.h; kernels cached on disk) and keeps the
// program for later runs with the same shapes.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "frontend/model_format.h"
#include "ir/graph.h"
#include "runtime/reference_executor.h"

namespace dlc::codegen {
struct KernelProgress; // codegen/lower.h
} // namespace dlc::codegen

namespace dlc {

/// Where a session runs.
enum class Backend : uint8_t {
  kAuto, // the GPU when there is one (driver and device), else the CPU
  kCpu,  // the reference backend
  kGpu,  // the GPU backend; an error when there is no GPU
};

/// Why the GPU cannot be used here ("no CUDA driver: libcuda.so.1 ..."), or empty when it can.
std::string gpuUnavailableReason();

/// How a model file is read (the flags every `dlc` command shares).
struct LoadOptions {
  /// The frontend; nullopt: decided by content (frontend/model_format.h).
  std::optional<ModelFormat> format;
  /// `--input-shape NAME=D0,D1,...`: shapes for the graph's inputs (-1: a symbolic dim). For
  /// a TensorFlow graph they are the Placeholders' shapes (needed when a rank is unknown); for
  /// ONNX and text IR they refine the declared input types.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// `--outputs NAME[:K]`: a TensorFlow GraphDef's outputs, by tensor name (a GraphDef
  /// declares none; by default they are its sinks). Other formats declare theirs.
  std::vector<std::string> outputs;
  /// ONNX: graph inputs with an initializer stay inputs.
  bool keepInitializersAsInputs = false;
};

/// Reads a model file into a graph through the frontend its format calls for: an ONNX
/// ModelProto, a TensorFlow GraphDef (binary or text) or dlc's text IR, decided by content
/// unless opts.format says. No passes run.
Expected<std::unique_ptr<Graph>> loadGraphFile(const std::string &path,
                                               const LoadOptions &opts = {});

/// Parses `NAME=D0,D1,...` (`--input-shape`; -1 is a symbolic dim) into `out`.
Status parseInputShape(const std::string &spec, std::map<std::string, std::vector<int64_t>> &out);

struct ModelOptions {
  /// The -O level of the load pipeline run after loading (runtime/jit/pipelines.h): 0 runs
  /// infer-shapes only, 1 the cleanup.
  int optLevel = 1;
  LoadOptions load;
};

struct SessionOptions {
  Backend backend = Backend::kAuto;
  /// GPU: which GPU runs the session (CUDA's ordinal, `gpu:N` on the command line). Sessions of
  /// one model on different GPUs each compile (kernels come from the disk cache after the
  /// first) and load their programs on their own GPU. Naming a GPU that does not exist is an
  /// error, also with kAuto.
  int device = 0;
  /// GPU: run nodes without a GPU kernel on the CPU (with a warning); off: an error naming them.
  bool cpuFallback = true;
  /// GPU: capture the launch list as a CUDA graph and replay it.
  bool cudaGraph = true;
  /// GPU: fill the device arena with NaN bytes before every run (tests, --verify).
  bool poison = false;
  /// GPU: how kernels are chosen and written (TF32 for fp32 products, the Hopper kernels and
  /// their split-K, the experimental choices; the flags `dlc run` and `dlc compile` share). The
  /// target's arch and SM count come from the device, whatever these say.
  codegen::EmitOptions kernels;
  /// GPU: attention runs as one fused kernel (the fuse-attention pass; `--no-fused-attention`
  /// turns it off).
  bool fusedAttention = true;
  /// GPU: "fp16" or "bf16" runs a float32 model in mixed precision (the mixed-precision pass);
  /// "" keeps its types. `keepFp32` names nodes or ops ('|'-separated) kept in float32.
  std::string precision;
  std::string keepFp32;
  /// GPU: hears how NVRTC's compile of a program goes (a progress display; optional).
  std::function<void(const codegen::KernelProgress &)> compileProgress;
};

class Session;

/// A tensor in GPU memory, for Session::runDevice: densely packed, row-major, allocated in the
/// primary context of the session's GPU (SessionOptions::device; the context the CUDA runtime API
/// uses, so `cudaMalloc` pointers work). `data` is the device address (a CUdeviceptr).
struct DeviceTensor {
  uint64_t data = 0;
  DType dtype = DType::kUnknown;
  std::vector<int64_t> shape;
};

/// A model input or output: its name and (inferred) type; symbolic dims stay symbolic.
struct TensorInfo {
  std::string name;
  TensorType type;
};

class Model {
public:
  /// Loads `.onnx`/`.pb` (ONNX) or `.dlc` (text IR; also any file that starts with `graph` or
  /// a `//` comment) and runs the load pipeline of `opts.optLevel`.
  static Expected<Model> load(const std::string &path, const ModelOptions &opts = {});
  /// A model over a graph built or loaded by the caller; runs the default pipeline on it.
  /// `displayName` prefixes pipeline errors.
  static Expected<Model> fromGraph(std::unique_ptr<Graph> graph, const ModelOptions &opts = {},
                                   const std::string &displayName = "");

  const std::vector<TensorInfo> &inputs() const { return inputs_; }
  const std::vector<TensorInfo> &outputs() const { return outputs_; }
  /// The graph after the pipeline (read-only: sessions share it).
  const Graph &graph() const { return *graph_; }

  /// A session on the chosen backend. CPU: fails when a node's op has no reference evaluation
  /// (naming every such op). GPU: fails when there is no GPU (saying why); compilation happens
  /// at the first run with each set of input shapes.
  Expected<Session> createSession(const SessionOptions &opts = {}) const;

private:
  explicit Model(std::shared_ptr<const Graph> graph);

  std::shared_ptr<const Graph> graph_;
  std::vector<TensorInfo> inputs_;
  std::vector<TensorInfo> outputs_;
};

class Session {
public:
  /// Runs the model. Inputs by name; outputs by their public names. Errors name the input or
  /// node at fault (see ReferenceExecutor::run).
  Expected<std::map<std::string, Tensor>> run(const std::map<std::string, Tensor> &inputs) const;
  /// The same, with outputs in the model's order.
  Expected<std::vector<NamedTensor>> runOrdered(const std::map<std::string, Tensor> &inputs) const;

  /// GPU only: runs the model on tensors already in GPU memory; every output is written into
  /// the caller's buffer given for it. Symbolic dims are bound from the inputs' shapes. Errors
  /// name the tensor: a missing or unknown name, a null address, a dtype or shape that differs
  /// from the model's (outputs: from the shapes the inputs imply). Returns when the outputs
  /// are written.
  Status runDevice(const std::map<std::string, DeviceTensor> &inputs,
                   const std::map<std::string, DeviceTensor> &outputs) const;

  /// kCpu or kGpu: where this session runs.
  Backend backend() const { return gpu_ ? Backend::kGpu : Backend::kCpu; }

  /// GPU only: runs the program for these inputs' shapes (compiling it if needed) `runs` times
  /// with the inputs already on the device and returns the time of each run in milliseconds:
  /// host clock around one launch of the whole list (a CUDA graph replay) and the wait for it;
  /// no host copies. For benchmarks.
  Expected<std::vector<double>> benchmarkGpu(const std::map<std::string, Tensor> &inputs,
                                             int runs) const;

  /// One step of a GPU program and its mean time over the profiled runs.
  struct StepProfile {
    std::string kind;   // "kernel", "copy", "host" (a CPU fallback node) or "shape point"
    std::string name;   // the kernel's name; empty for copies and host steps
    std::string origin; // the source nodes ("conv_1 + relu_2")
    double ms = 0;      // GPU time between events around the step (host steps: host clock)
    /// The kernel's own summary, where its source gives one: the `// name: ...` line codegen
    /// writes first (a GEMM's dtype, shape and tile; a stem or depthwise conv's window).
    std::string detail;
  };
  /// GPU only: runs the program `runs` times step by step with events around every step (no
  /// CUDA graph, so the sum exceeds a benchmark run by the launch gaps) and returns the steps
  /// in program order. For `dlc run --profile`.
  Expected<std::vector<StepProfile>> profileGpu(const std::map<std::string, Tensor> &inputs,
                                                int runs) const;

  struct GpuState; // model.cc

private:
  friend class Model;
  Session(std::shared_ptr<const Graph> graph, ReferenceExecutor executor)
      : graph_(std::move(graph)), executor_(std::move(executor)) {}
  Session(std::shared_ptr<const Graph> graph, std::shared_ptr<GpuState> gpu)
      : graph_(std::move(graph)), gpu_(std::move(gpu)) {}

  std::shared_ptr<const Graph> graph_; // keeps the executor's graph alive
  std::optional<ReferenceExecutor> executor_;
  std::shared_ptr<GpuState> gpu_;
};

} // namespace dlc
