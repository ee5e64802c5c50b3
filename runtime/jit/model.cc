#include "runtime/jit/model.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "ir/verifier.h"
#include "passes/pass_manager.h"
#include "runtime/cuda_driver.h"
#include "runtime/gpu_session.h"
#include "runtime/jit/compile.h"
#include "runtime/jit/gpu_jit.h"
#include "runtime/jit/pipelines.h"
#include "runtime/jit/profile_trace.h"
#include "runtime/jit/segments.h"

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
  jo.lower.emit = opts.kernels;
  jo.lower.emit.smVersion = device.smVersion();
  jo.lower.emit.numSms = device.smCount;
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
/// of each, so that concurrent runs of one Session each get their own arena and stream. A model
/// with shape points (runtime/jit/segments.h) runs as a chain of segments: each segment's entry
/// keeps the next one per set of point values.
struct Session::GpuState {
  std::shared_ptr<const Graph> graph;
  SessionOptions opts;
  const rt::CudaDriver *driver = nullptr;

  struct Entry {
    std::shared_ptr<const rt::GpuProgram> program;
    std::vector<std::unique_ptr<rt::GpuSession>> idle;
    /// Program outputs that are model outputs; with a shape point, the rest after it and the
    /// next segments compiled so far, by jit::valuesKey of the point values.
    std::set<std::string> modelOutputs;
    std::optional<jit::ShapePoint> point;
    std::map<std::string, std::unique_ptr<Entry>> next;
    /// Per program output: its index by name, and whether a run copies it to the host (a
    /// model output or a point value; carried values stay on the device).
    std::map<std::string, size_t> outputIndex;
    std::vector<bool> download;
  };
  using Held = std::pair<Entry *, std::unique_ptr<rt::GpuSession>>;
  std::mutex mu;
  std::map<std::string, std::unique_ptr<Entry>> programs; // by "N=8,S=128" (and shape inputs')
  /// The shape inputs (jit::shapeInputs) of each set of dims, found at its first run.
  std::map<std::string, std::vector<std::string>> shapeInputsOf;

  Expected<std::map<std::string, int64_t>> bindDims(const std::map<std::string, Tensor> &inputs) {
    return bindInputDims(*graph, inputs);
  }

  /// Compiles a segment into `e` (called with `mu` held).
  Status fill(Entry &e, const Graph &g, const std::map<std::string, int64_t> &dims,
              jit::JitOptions jo, const std::vector<std::string> &mustBeStatic) {
    DLC_ASSIGN_OR_RETURN(jit::Segment seg, jit::compileSegment(g, dims, jo, mustBeStatic));
    rt::GpuProgramOptions po;
    po.device = opts.device;
    DLC_ASSIGN_OR_RETURN(
        e.program,
        rt::GpuProgram::create(std::make_shared<const rt::Program>(std::move(seg.program)), po));
    e.modelOutputs.insert(seg.modelOutputs.begin(), seg.modelOutputs.end());
    e.point = std::move(seg.point);
    const std::vector<rt::ProgramTensor> &outs = e.program->program().outputs;
    e.download.assign(outs.size(), false);
    for (size_t i = 0; i < outs.size(); ++i) {
      e.outputIndex[outs[i].name] = i;
      e.download[i] = e.modelOutputs.count(outs[i].name) > 0;
    }
    if (e.point)
      for (const auto &[out, in] : e.point->values)
        e.download[e.outputIndex.at(out)] = true;
    return Status::ok();
  }

  /// The entry in `slot`, compiled by `fill` on first use; a failed compile leaves the slot
  /// empty (erased from `map` by `key`), so a later run tries again (called with `mu` held).
  template <typename Fill>
  Expected<Held> takeOrCompile(std::map<std::string, std::unique_ptr<Entry>> &map,
                               const std::string &key, Fill fill) {
    std::unique_ptr<Entry> &slot = map[key];
    if (!slot) {
      auto fresh = std::make_unique<Entry>();
      if (Status st = fill(*fresh); !st.isOk()) {
        map.erase(key);
        return st;
      }
      slot = std::move(fresh);
    }
    return take(*slot);
  }

  /// An executor of `e`: an idle one, or a new one (called with `mu` held).
  Expected<Held> take(Entry &e) {
    if (!e.idle.empty()) {
      auto s = std::move(e.idle.back());
      e.idle.pop_back();
      return Held(&e, std::move(s));
    }
    rt::GpuSessionOptions so;
    so.cudaGraph = opts.cudaGraph;
    so.poison = opts.poison;
    DLC_ASSIGN_OR_RETURN(auto s, rt::GpuSession::create(e.program, so));
    return Held(&e, std::move(s));
  }

  /// An executor for these shapes: an idle one, or a new one (compiling the program first).
  /// With the run's host inputs, the model's shape inputs are bound to their values (a program
  /// per set of values); without (device tensors) they stay data.
  Expected<Held> acquire(const std::map<std::string, int64_t> &dims,
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
      for (const std::string &name : known->second)
        shapeValues.emplace(name, host->at(name));
      // The exact values (their bytes): a float shape input (a Range's limits) must not share
      // a program with another value that rounds to the same integer.
      key += jit::valuesKey(shapeValues);
    }
    return takeOrCompile(programs, key, [&](Entry &e) {
      std::ostringstream sink;
      jit::JitOptions jo = gpuJitOptions(driver->device(), opts, sink);
      jo.shapeValues = std::move(shapeValues);
      return fill(e, *graph, dims, std::move(jo), {});
    });
  }

  /// The segment after `e`'s shape point for these point values, compiled on first use.
  Expected<Held> acquireNext(Entry &e, const std::map<std::string, Tensor> &values) {
    std::lock_guard<std::mutex> lock(mu);
    return takeOrCompile(e.next, jit::valuesKey(values), [&](Entry &fresh) {
      std::ostringstream sink;
      jit::JitOptions jo =
          jit::restOptions(gpuJitOptions(driver->device(), opts, sink), *e.point, values);
      return fill(fresh, *e.point->rest, {}, std::move(jo), e.point->waitingOutputs);
    });
  }

  void release(Held h) {
    std::lock_guard<std::mutex> lock(mu);
    h.first->idle.push_back(std::move(h.second));
  }

  /// Runs the segments from `first` on: each downloads its model outputs and point values,
  /// leaves the carried values in its arena for the next, which starts once the point values
  /// chose (or compiled) it. The sessions used end in `held` (the caller releases them);
  /// `pointMs` gets the host time of each shape point (read-back to the next launch).
  Expected<std::vector<NamedTensor>> runChain(Held first,
                                              const std::map<std::string, Tensor> &inputs,
                                              std::vector<Held> &held,
                                              std::vector<double> *pointMs = nullptr) {
    std::map<std::string, Tensor> results, nextHost;
    const std::map<std::string, Tensor> *host = &inputs; // the first segment's: the caller's
    std::map<std::string, CUdeviceptr> device;
    held.push_back(std::move(first));
    for (;;) {
      Entry &e = *held.back().first;
      rt::GpuSession &s = *held.back().second;
      DLC_ASSIGN_OR_RETURN(std::vector<NamedTensor> outs, s.runSegment(*host, device, e.download));
      auto start = std::chrono::steady_clock::now();
      for (NamedTensor &o : outs)
        if (e.modelOutputs.count(o.name))
          results[o.name] = o.tensor;
      if (!e.point)
        break;
      // The point values choose (or compile) the next segment and are its host inputs; the
      // carried values go from this segment's output slots to its arena.
      std::map<std::string, Tensor> values;
      nextHost.clear();
      for (const auto &[out, in] : e.point->values) {
        values.emplace(out, outs[e.outputIndex.at(out)].tensor);
        nextHost.emplace(in, outs[e.outputIndex.at(out)].tensor);
      }
      device.clear();
      for (const auto &[out, in] : e.point->carried)
        device.emplace(in, s.outputSlot(e.outputIndex.at(out)));
      host = &nextHost;
      DLC_ASSIGN_OR_RETURN(Held next, acquireNext(e, values));
      held.push_back(std::move(next));
      if (pointMs)
        pointMs->push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
    }
    std::vector<NamedTensor> ordered;
    for (const Graph::Output &o : graph->outputs())
      ordered.push_back({o.name, results.at(o.name)});
    return ordered;
  }

  Expected<std::vector<NamedTensor>> run(const std::map<std::string, Tensor> &inputs) {
    DLC_ASSIGN_OR_RETURN(auto dims, bindDims(inputs));
    DLC_ASSIGN_OR_RETURN(Held first, acquire(dims, &inputs));
    std::vector<Held> held;
    auto out = runChain(std::move(first), inputs, held);
    for (Held &h : held)
      release(std::move(h));
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
    auto driver = rt::CudaDriver::get(opts.device);
    if (!driver && opts.device != 0)
      return driver.status();
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
  std::vector<double> ms;
  if (acquired.first->point) { // segments: whole runs, copies and shape points included
    gpu_->release(std::move(acquired));
    for (int i = 0; i <= runs; ++i) {
      auto start = std::chrono::steady_clock::now();
      DLC_RETURN_IF_ERROR(gpu_->run(inputs).status());
      if (i > 0) // the first run compiles the segments after the shape points
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
    }
    return ms;
  }
  rt::GpuSession &s = *acquired.second;
  Status st = s.run(inputs).status(); // stages the inputs into the arena (and captures)
  for (int i = 0; st.isOk() && i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    st = s.execute();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  gpu_->release(std::move(acquired));
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
  if (acquired.first->point) {
    std::string waiting = acquired.first->point->waiting;
    gpu_->release(std::move(acquired));
    return unimplemented("runDevice: the model's shapes after {} depend on values it computes "
                         "(a shape point), so its output shapes are not known before it runs; "
                         "run it with host tensors (Session::run)",
                         waiting);
  }
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
  gpu_->release(std::move(acquired));
  return st;
}

Expected<std::vector<Session::StepProfile>>
Session::profileGpu(const std::map<std::string, Tensor> &inputs, int runs) const {
  if (!gpu_)
    return invalidArgument("profileGpu: the session runs on the CPU");
  DLC_ASSIGN_OR_RETURN(auto dims, gpu_->bindDims(inputs));
  // The whole chain of segments runs `runs` times (the first run compiles the segments after
  // shape points); the last run's sessions stay held, their arenas staged, and each is then
  // profiled step by step. A shape point is a step of its own, timed on the host.
  std::vector<GpuState::Held> held;
  std::vector<double> pointMs;
  Status st = Status::ok();
  for (int r = 0; st.isOk() && r <= runs; ++r) {
    for (GpuState::Held &h : held)
      gpu_->release(std::move(h));
    held.clear();
    auto first = gpu_->acquire(dims, &inputs);
    if (!first)
      return first.status();
    std::vector<double> *timing = r > 0 ? &pointMs : nullptr;
    st = gpu_->runChain(std::move(*first), inputs, held, timing).status();
    if (held.size() == 1) // no shape point: one staged run is enough
      break;
  }
  std::vector<StepProfile> steps;
  const size_t points = held.empty() ? 0 : held.size() - 1;
  for (size_t k = 0; st.isOk() && k < held.size(); ++k) {
    rt::GpuSession &s = *held[k].second;
    (void)s.profileSteps(1); // warm-up: first launches load the modules' code
    auto timed = s.profileSteps(runs);
    if (!timed) {
      st = timed.status();
      break;
    }
    const rt::Program &p = s.program().program();
    std::map<std::string_view, std::string_view> sources;
    for (const auto &[name, source] : p.sources)
      sources.emplace(name, source);
    for (size_t i = 0; i < p.steps.size(); ++i) {
      StepProfile sp;
      sp.ms = timed->at(i);
      if (const auto *l = std::get_if<rt::LaunchStep>(&p.steps[i])) {
        sp.kind = "kernel";
        sp.name = l->kernel;
        sp.origin = l->origin;
        if (auto it = sources.find(l->kernel); it != sources.end())
          sp.detail = kernelSummary(it->second, l->kernel);
      } else if (const auto *c = std::get_if<rt::CopyStep>(&p.steps[i])) {
        sp.kind = "copy";
        sp.origin = c->origin;
      } else {
        sp.kind = "host";
        sp.origin = std::get<rt::HostStep>(p.steps[i]).origin;
      }
      steps.push_back(std::move(sp));
    }
    if (k < points) {
      StepProfile sp;
      sp.kind = "shape point";
      sp.origin = held[k].first->point->waiting;
      double sum = 0;
      int n = 0;
      for (size_t i = k; i < pointMs.size(); i += points, ++n)
        sum += pointMs[i];
      sp.ms = n ? sum / n : 0;
      steps.push_back(std::move(sp));
    }
  }
  for (GpuState::Held &h : held)
    gpu_->release(std::move(h));
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
