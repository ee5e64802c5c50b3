#include "runtime/jit/model.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <mutex>
#include <sstream>

#include "ir/verifier.h"
#include "passes/pass_manager.h"
#include "runtime/cuda_driver.h"
#include "runtime/gpu_session.h"
#include "runtime/jit/compile.h"
#include "runtime/jit/gpu_jit.h"
#include "runtime/jit/pipelines.h"

namespace dlc {

std::string gpuUnavailableReason() {
  auto driver = rt::CudaDriver::get();
  return driver ? std::string() : driver.status().message();
}

Expected<std::map<std::string, int64_t>>
bindInputDims(const Graph &graph, const std::map<std::string, Tensor> &inputs) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto &[name, t] : inputs)
    shapes.emplace(name, t.shape());
  return bindInputShapes(graph, shapes);
}

jit::JitOptions gpuJitOptions(const rt::DeviceInfo &device, const SessionOptions &opts,
                              std::ostream &sink) {
  jit::JitOptions jo;
  jo.lower.nvrtc.smVersion = device.smVersion();
  jo.lower.emit.smVersion = device.smVersion();
  jo.lower.emit.numSms = device.smCount;
  jo.lower.emit.allowTf32 = opts.allowTf32;
  jo.lower.emit.sm90a = opts.hopperKernels;
  jo.fuseAttention = opts.fusedAttention;
  jo.strictPlacement = !opts.cpuFallback;
  jo.precision = opts.precision;
  jo.keepFp32 = opts.keepFp32;
  jo.lower.progress = opts.compileProgress;
  jo.pipeline.out = &sink;
  jo.pipeline.err = &sink;
  return jo;
}

/// The GPU side of a session: programs compiled per set of input shapes, and idle executors
/// of each, so that concurrent runs of one Session each get their own arena and stream.
struct Session::GpuState {
  std::shared_ptr<const Graph> graph;
  SessionOptions opts;
  const rt::CudaDriver *driver = nullptr;

  struct Entry {
    std::shared_ptr<const rt::GpuProgram> program;
    std::vector<std::unique_ptr<rt::GpuSession>> idle;
  };
  std::mutex mu;
  std::map<std::string, Entry> programs; // by "N=8,S=128" (and shape inputs' bytes: ";k=0100...")
  /// The shape inputs (jit::shapeInputs) of each set of dims, found at its first run.
  std::map<std::string, std::vector<std::string>> shapeInputsOf;

  Expected<std::map<std::string, int64_t>> bindDims(const std::map<std::string, Tensor> &inputs) {
    return bindInputDims(*graph, inputs);
  }

  /// An executor for these shapes: an idle one, or a new one (compiling the program first).
  /// With the run's host inputs, the model's shape inputs are bound to their values (a program
  /// per set of values); without (device tensors) they stay data.
  Expected<std::pair<Entry *, std::unique_ptr<rt::GpuSession>>>
  acquire(const std::map<std::string, int64_t> &dims,
          const std::map<std::string, Tensor> *host = nullptr) {
    std::string key;
    for (const auto &[k, v] : dims)
      key += fmt::format("{}{}={}", key.empty() ? "" : ",", k, v);
    std::lock_guard<std::mutex> lock(mu);
    std::map<std::string, Tensor> shapeValues;
    if (host) {
      auto known = shapeInputsOf.find(key);
      if (known == shapeInputsOf.end()) {
        DLC_ASSIGN_OR_RETURN(auto names, jit::shapeInputs(*graph, dims, *host));
        known = shapeInputsOf.emplace(key, std::move(names)).first;
      }
      for (const std::string &name : known->second) {
        const Tensor &t = host->at(name);
        shapeValues.emplace(name, t);
        // The exact value (its bytes): a float shape input (a Range's limits) must not share a
        // program with another value that rounds to the same integer.
        key += ";" + name + "=";
        const auto *bytes = static_cast<const unsigned char *>(t.raw());
        for (int64_t b = 0; b < t.byteSize(); ++b)
          key += fmt::format("{:02x}", bytes[b]);
      }
    }
    Entry &e = programs[key];
    if (!e.program) {
      std::ostringstream sink;
      jit::JitOptions jo = gpuJitOptions(driver->device(), opts, sink);
      jo.shapeValues = std::move(shapeValues);
      auto program = jit::compileForGpu(*graph, dims, jo);
      if (!program) {
        programs.erase(key);
        return program.status();
      }
      auto loaded =
          rt::GpuProgram::create(std::make_shared<const rt::Program>(std::move(*program)));
      if (!loaded) {
        programs.erase(key);
        return loaded.status();
      }
      e.program = *loaded;
    }
    if (!e.idle.empty()) {
      auto s = std::move(e.idle.back());
      e.idle.pop_back();
      return std::make_pair(&e, std::move(s));
    }
    rt::GpuSessionOptions so;
    so.cudaGraph = opts.cudaGraph;
    so.poison = opts.poison;
    DLC_ASSIGN_OR_RETURN(auto s, rt::GpuSession::create(e.program, so));
    return std::make_pair(&e, std::move(s));
  }

  void release(Entry *e, std::unique_ptr<rt::GpuSession> s) {
    std::lock_guard<std::mutex> lock(mu);
    e->idle.push_back(std::move(s));
  }

  Expected<std::vector<NamedTensor>> run(const std::map<std::string, Tensor> &inputs) {
    DLC_ASSIGN_OR_RETURN(auto dims, bindDims(inputs));
    DLC_ASSIGN_OR_RETURN(auto acquired, acquire(dims, &inputs));
    auto out = acquired.second->run(inputs);
    release(acquired.first, std::move(acquired.second));
    return out;
  }
};

Model::Model(std::shared_ptr<const Graph> graph) : graph_(std::move(graph)) {
  for (const Value *v : graph_->inputs())
    inputs_.push_back({v->name(), v->type()});
  for (const Graph::Output &o : graph_->outputs())
    outputs_.push_back({o.name, o.value->type()});
}

Expected<Model> Model::fromGraph(std::unique_ptr<Graph> graph, const ModelOptions &opts,
                                 const std::string &displayName) {
  DLC_ASSIGN_OR_RETURN(std::string text, jit::loadPipeline(opts.optLevel));
  DLC_ASSIGN_OR_RETURN(Pipeline pipeline, parsePipeline(text));
  std::ostringstream sink; // the default options print nothing; keep stray output off stdout
  PipelineOptions po;
  po.out = &sink;
  po.err = &sink;
  auto start = std::chrono::steady_clock::now();
  Status st = runPipeline(*graph, pipeline, po);
  if (st.isOk()) // the executor relies on what the verifier checks (topological order, arity)
    st = verifyGraph(*graph);
  if (!st.isOk())
    return displayName.empty() ? st : st.withContext(displayName);
  spdlog::info(
      "load pipeline -O{}: {} nodes after it ({:.1f} ms)", opts.optLevel, graph->nodes().size(),
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  return Model(std::shared_ptr<const Graph>(std::move(graph)));
}

Expected<Session> Model::createSession(const SessionOptions &opts) const {
  if (opts.backend != Backend::kCpu) {
    auto driver = rt::CudaDriver::get();
    if (driver) {
      auto state = std::make_shared<Session::GpuState>();
      state->graph = graph_;
      state->opts = opts;
      state->driver = *driver;
      return Session(graph_, std::move(state));
    }
    if (opts.backend == Backend::kGpu)
      return driver.status();
  }
  DLC_ASSIGN_OR_RETURN(ReferenceExecutor ex, ReferenceExecutor::create(*graph_));
  return Session(graph_, std::move(ex));
}

Expected<std::vector<NamedTensor>>
Session::runOrdered(const std::map<std::string, Tensor> &inputs) const {
  if (gpu_)
    return gpu_->run(inputs);
  return executor_->run(inputs);
}

Expected<std::vector<double>> Session::benchmarkGpu(const std::map<std::string, Tensor> &inputs,
                                                    int runs) const {
  if (!gpu_)
    return invalidArgument("benchmarkGpu: the session runs on the CPU");
  DLC_ASSIGN_OR_RETURN(auto dims, gpu_->bindDims(inputs));
  DLC_ASSIGN_OR_RETURN(auto acquired, gpu_->acquire(dims, &inputs));
  rt::GpuSession &s = *acquired.second;
  std::vector<double> ms;
  Status st = s.run(inputs).status(); // stages the inputs into the arena (and captures)
  for (int i = 0; st.isOk() && i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    st = s.execute();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  gpu_->release(acquired.first, std::move(acquired.second));
  if (!st.isOk())
    return st;
  return ms;
}

namespace {

std::string typeText(DType dtype, const std::vector<int64_t> &shape) {
  return TensorType(dtype, Shape::fromSizes(shape)).str();
}

/// The device address of program tensor `t` in `given` (inputs or outputs), checked.
Expected<CUdeviceptr> deviceAddress(const rt::ProgramTensor &t,
                                    const std::map<std::string, DeviceTensor> &given,
                                    std::string_view role) {
  auto it = given.find(t.name);
  if (it == given.end())
    return invalidArgument("runDevice: missing {} '{}' ({})", role, t.name,
                           typeText(t.dtype, t.shape));
  const DeviceTensor &d = it->second;
  if (d.dtype != t.dtype || d.shape != t.shape)
    return invalidArgument("runDevice: {} '{}' must be {}, got {}", role, t.name,
                           typeText(t.dtype, t.shape), typeText(d.dtype, d.shape));
  if (d.data == 0 && t.buffer.bytes != 0)
    return invalidArgument("runDevice: {} '{}' has a null device address", role, t.name);
  return static_cast<CUdeviceptr>(d.data);
}

} // namespace

Status Session::runDevice(const std::map<std::string, DeviceTensor> &inputs,
                          const std::map<std::string, DeviceTensor> &outputs) const {
  if (!gpu_)
    return invalidArgument("runDevice: the session runs on the CPU; device tensors need a GPU "
                           "session");
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto &[name, t] : inputs)
    shapes.emplace(name, t.shape);
  DLC_ASSIGN_OR_RETURN(auto dims, bindInputShapes(*graph_, shapes));
  DLC_ASSIGN_OR_RETURN(auto acquired, gpu_->acquire(dims));
  rt::GpuSession &s = *acquired.second;
  const rt::Program &p = s.program().program();
  Status st = Status::ok();
  std::vector<CUdeviceptr> in, out;
  for (const rt::ProgramTensor &t : p.inputs) {
    auto a = deviceAddress(t, inputs, "input");
    if (!a) {
      st = a.status();
      break;
    }
    in.push_back(*a);
  }
  for (const rt::ProgramTensor &t : p.outputs) {
    if (!st.isOk())
      break;
    auto a = deviceAddress(t, outputs, "output");
    if (!a) {
      st = a.status();
      break;
    }
    out.push_back(*a);
  }
  for (const auto &[name, t] : outputs) {
    (void)t;
    bool known = false;
    for (const rt::ProgramTensor &o : p.outputs)
      known |= o.name == name;
    if (st.isOk() && !known)
      st = invalidArgument("runDevice: unknown output '{}'", name);
  }
  if (st.isOk())
    st = s.runDevice(in, out);
  gpu_->release(acquired.first, std::move(acquired.second));
  return st;
}

Expected<std::vector<Session::StepProfile>>
Session::profileGpu(const std::map<std::string, Tensor> &inputs, int runs) const {
  if (!gpu_)
    return invalidArgument("profileGpu: the session runs on the CPU");
  DLC_ASSIGN_OR_RETURN(auto dims, gpu_->bindDims(inputs));
  DLC_ASSIGN_OR_RETURN(auto acquired, gpu_->acquire(dims, &inputs));
  rt::GpuSession &s = *acquired.second;
  Status st = s.run(inputs).status(); // stages the inputs into the arena
  std::vector<double> ms;
  if (st.isOk()) {
    (void)s.profileSteps(1); // warm-up: first launches load the modules' code
    auto timed = s.profileSteps(runs);
    if (timed)
      ms = std::move(*timed);
    else
      st = timed.status();
  }
  std::vector<StepProfile> steps;
  const rt::Program &p = s.program().program();
  for (size_t i = 0; st.isOk() && i < p.steps.size(); ++i) {
    StepProfile sp;
    sp.ms = ms.at(i);
    if (const auto *l = std::get_if<rt::LaunchStep>(&p.steps[i])) {
      sp.kind = "kernel";
      sp.name = l->kernel;
      sp.origin = l->origin;
    } else if (const auto *c = std::get_if<rt::CopyStep>(&p.steps[i])) {
      sp.kind = "copy";
      sp.origin = c->origin;
    } else {
      sp.kind = "host";
      sp.origin = std::get<rt::HostStep>(p.steps[i]).origin;
    }
    steps.push_back(std::move(sp));
  }
  gpu_->release(acquired.first, std::move(acquired.second));
  if (!st.isOk())
    return st;
  return steps;
}

Expected<std::map<std::string, Tensor>>
Session::run(const std::map<std::string, Tensor> &inputs) const {
  DLC_ASSIGN_OR_RETURN(std::vector<NamedTensor> outs, runOrdered(inputs));
  std::map<std::string, Tensor> byName;
  for (NamedTensor &o : outs)
    byName.emplace(o.name, std::move(o.tensor));
  return byName;
}

} // namespace dlc
