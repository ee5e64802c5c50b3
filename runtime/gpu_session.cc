#include "runtime/gpu_session.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include <spdlog/spdlog.h>

#include "ir/eval/eval.h"
#include "ir/graph.h"
#include "runtime/tensor_map.h"

namespace dlc::rt {
namespace {

constexpr size_t kStagingAlign = 64;

size_t alignUp(size_t v, size_t a) { return (v + a - 1) / a * a; }

bool envSyncEachStep() {
  const char *v = std::getenv("DLC_CUDA_SYNC");
  return v && *v && std::string_view(v) != "0";
}

/// Errors after which the context cannot be used again.
bool isSticky(CUresult r) {
  switch (r) {
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_ASSERT:
  case CUDA_ERROR_LAUNCH_TIMEOUT:
    return true;
  default:
    return false;
  }
}

} // namespace

Expected<std::unique_ptr<GpuSession>> GpuSession::create(std::shared_ptr<const GpuProgram> program,
                                                         const GpuSessionOptions &opts) {
  if (!program)
    return invalidArgument("GpuSession::create: no program");
  std::unique_ptr<GpuSession> s(new GpuSession());
  s->program_ = std::move(program);
  s->driver_ = &s->program_->driver();
  s->opts_ = opts;
  if (envSyncEachStep())
    s->opts_.syncEachStep = true;
  const Program &p = s->program_->program();
  s->useGraph_ = s->opts_.cudaGraph && !s->opts_.syncEachStep && !s->program_->hasHostSteps() &&
                 !p.steps.empty();
  const CudaDriver &driver = *s->driver_;
  DLC_RETURN_IF_ERROR(driver.makeCurrent());
  DLC_ASSIGN_OR_RETURN(s->stream_, createStream(driver));
  DLC_ASSIGN_OR_RETURN(s->arena_, allocateDevice(driver, p.arenaBytes, "the session's arena"));
  if (p.zeroedBytes > 0) { // the kernels' state starts zeroed and they leave it so
    const DriverApi &api = driver.api();
    const CUdeviceptr state = s->arena_.get() + (p.arenaBytes - p.zeroedBytes);
    DLC_RETURN_IF_ERROR(driver.check(api.memsetD8Async(state, 0, p.zeroedBytes, s->stream_.get()),
                                     "zeroing the program's state"));
    DLC_RETURN_IF_ERROR(
        driver.check(api.streamSynchronize(s->stream_.get()), "zeroing the program's state"));
  }

  size_t staging = 0;
  for (const ProgramTensor &t : p.inputs) {
    s->inputStaging_.push_back(staging);
    staging += alignUp(t.buffer.bytes, kStagingAlign);
  }
  for (const ProgramTensor &t : p.outputs) {
    s->outputStaging_.push_back(staging);
    staging += alignUp(t.buffer.bytes, kStagingAlign);
  }
  DLC_ASSIGN_OR_RETURN(s->staging_,
                       allocatePinned(driver, staging, "staging the session's inputs and outputs"));

  // Kernel arguments never change: the arena and the constant pool stay put, so the tensor
  // maps over them are encoded once too.
  s->argValues_.resize(p.steps.size());
  s->argMaps_.resize(p.steps.size());
  s->argPointers_.resize(p.steps.size());
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const auto *l = std::get_if<LaunchStep>(&p.steps[i]);
    if (!l)
      continue;
    for (const BufferRef &ref : l->args)
      s->argValues_[i].push_back(s->address(ref));
    for (const TensorMapArg &m : l->tensorMaps) {
      auto map = s->encode(m);
      if (!map)
        return map.status().withContext(describeStep(p, i));
      s->argMaps_[i].push_back(*map);
    }
    for (CUdeviceptr &v : s->argValues_[i])
      s->argPointers_[i].push_back(&v);
    for (CUtensorMap &m : s->argMaps_[i])
      s->argPointers_[i].push_back(&m);
  }
  s->direct_ = planDirectTensors(p);
  for (const DirectTensor &d : s->direct_)
    s->bound_.push_back(s->address(tensorOf(p, d).buffer));
  s->nodes_.assign(p.steps.size(), nullptr);
  s->needsNode_.assign(p.steps.size(), false);
  for (const DirectTensor &d : s->direct_) {
    for (const DirectTensor::Arg &a : d.args)
      s->needsNode_[a.step] = true;
    for (const DirectTensor::Arg &a : d.maps)
      s->needsNode_[a.step] = true;
  }
  return s;
}

Status GpuSession::rebind(const std::vector<CUdeviceptr> &to) {
  const Program &p = program_->program();
  std::vector<size_t> changed;
  for (size_t i = 0; i < direct_.size(); ++i) {
    const DirectTensor &d = direct_[i];
    const CUdeviceptr want = to[i] ? to[i] : address(tensorOf(p, d).buffer);
    if (want == bound_[i])
      continue;
    for (const DirectTensor::Arg &a : d.args) {
      argValues_[a.step][a.arg] = want + a.offset;
      changed.push_back(a.step);
    }
    for (const DirectTensor::Arg &a : d.maps) { // a host call, no device work
      const auto &l = std::get<LaunchStep>(p.steps[a.step]);
      auto map = encode(l.tensorMaps[a.arg], want + a.offset);
      if (!map) { // nothing may run on half-moved arguments: bind again from scratch next time
        bound_[i] = 0;
        dropGraph();
        return map.status().withContext(describeStep(p, a.step));
      }
      argMaps_[a.step][a.arg] = *map;
      changed.push_back(a.step);
    }
    bound_[i] = want;
  }
  if (!graph_ || changed.empty())
    return Status::ok(); // step by step, or captured later: argValues_ is what launches read
  std::sort(changed.begin(), changed.end());
  changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
  const DriverApi &api = driver_->api();
  for (size_t i : changed) {
    const auto &l = std::get<LaunchStep>(p.steps[i]);
    CUDA_KERNEL_NODE_PARAMS kp{};
    kp.func = program_->function(i);
    kp.gridDimX = l.grid[0], kp.gridDimY = l.grid[1], kp.gridDimZ = l.grid[2];
    kp.blockDimX = l.block[0], kp.blockDimY = l.block[1], kp.blockDimZ = l.block[2];
    kp.sharedMemBytes = l.sharedBytes;
    kp.kernelParams = argPointers_[i].empty() ? nullptr : argPointers_[i].data();
    CUresult r = nodes_[i] ? api.graphExecKernelNodeSetParams(graph_.get(), nodes_[i], &kp)
                           : CUDA_ERROR_NOT_FOUND;
    if (r != CUDA_SUCCESS) { // captured again, with the new arguments, on the next launch
      spdlog::debug("GPU runtime: updating {} in the CUDA graph failed ({}); capturing again",
                    describeStep(p, i), driver_->errorText(r));
      dropGraph();
      return Status::ok();
    }
  }
  return Status::ok();
}

Expected<CUtensorMap> GpuSession::encode(const TensorMapArg &m, CUdeviceptr at) const {
  CUtensorMap map{};
  void *base = reinterpret_cast<void *>(static_cast<uintptr_t>(at ? at : address(m.buffer)));
  DLC_RETURN_IF_ERROR(
      driver_->check(encodeTensorMap(driver_->api().tensorMapEncodeTiled, m, base, &map),
                     fmt::format("encoding a {} x {} tensor map (box {} x {})", m.dims[0],
                                 m.dims[1], m.box[0], m.box[1])));
  return map;
}

GpuSession::~GpuSession() {
  // Nothing may still use the arena or the staging buffers when they are freed.
  if (stream_ && driver_ && driver_->makeCurrent().isOk()) {
    (void)driver_->api().streamSynchronize(stream_.get());
    if (orderPending_) // the last run on a caller's stream, which may be gone
      (void)driver_->api().eventSynchronize(order_.get());
  }
}

Status GpuSession::enterStream(CUstream s) {
  if (cur_ == s) // the session's own stream again (a caller's stream is forgotten after its run)
    return Status::ok();
  const DriverApi &api = driver_->api();
  if (cur_ || orderPending_) { // the arena is the previous run's until it ends on its stream
    DLC_RETURN_IF_ERROR(makeOrderEvent());
    if (cur_) // the session's stream (valid as long as the session)
      DLC_RETURN_IF_ERROR(driver_->check(api.eventRecord(order_.get(), cur_),
                                         "recording an event after the previous run"));
    DLC_RETURN_IF_ERROR(driver_->check(api.streamWaitEvent(s, order_.get(), 0),
                                       "ordering this run after the previous one"));
    orderPending_ = false;
  }
  cur_ = s;
  return Status::ok();
}

Status GpuSession::makeOrderEvent() {
  if (order_)
    return Status::ok();
  CUevent raw = nullptr;
  DLC_RETURN_IF_ERROR(driver_->check(driver_->api().eventCreate(&raw, CU_EVENT_DISABLE_TIMING),
                                     "creating a stream-ordering event"));
  order_ = CudaEvent(driver_, raw);
  return Status::ok();
}

Status GpuSession::leaveCallerStream() {
  // The caller may destroy its stream once the run returns (its work still completes): the
  // next run waits for this event, never for the stream itself.
  const CUstream caller = cur_;
  cur_ = nullptr;
  Status st = makeOrderEvent();
  if (st.isOk())
    st = driver_->check(driver_->api().eventRecord(order_.get(), caller),
                        "recording an event after the run on the caller's stream");
  if (!st.isOk()) { // nothing to wait for later: wait for the run now
    (void)driver_->api().streamSynchronize(caller);
    return st;
  }
  orderPending_ = true;
  return Status::ok();
}

CUdeviceptr GpuSession::address(const BufferRef &ref) const {
  CUdeviceptr base = ref.space == Space::kArena ? arena_.get() : program_->constants();
  return base + ref.offset;
}

CUdeviceptr GpuSession::inputSlot(size_t i) const {
  return address(program_->program().inputs.at(i).buffer);
}

CUdeviceptr GpuSession::outputSlot(size_t i) const {
  return address(program_->program().outputs.at(i).buffer);
}

Expected<std::vector<NamedTensor>> GpuSession::run(const std::map<std::string, Tensor> &inputs) {
  return runSegment(inputs, {}, std::vector<bool>(program_->program().outputs.size(), true));
}

Expected<std::vector<NamedTensor>>
GpuSession::runSegment(const std::map<std::string, Tensor> &host,
                       const std::map<std::string, CUdeviceptr> &device,
                       const std::vector<bool> &download) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Program &p = program_->program();
  const DriverApi &api = driver_->api();
  if (download.size() != p.outputs.size())
    return invalidArgument("runSegment: {} download flags for {} outputs", download.size(),
                           p.outputs.size());
  std::set<std::string> onDevice;
  for (const auto &[name, address] : device) {
    if (!address)
      return invalidArgument("runSegment: device input '{}' has a null address", name);
    onDevice.insert(name);
  }
  DLC_RETURN_IF_ERROR(checkInputs(p, host, onDevice));
  DLC_RETURN_IF_ERROR(driver_->makeCurrent());
  DLC_RETURN_IF_ERROR(enterStream(stream_.get()));
  DLC_RETURN_IF_ERROR(rebind(std::vector<CUdeviceptr>(direct_.size())));
  auto *staging = static_cast<uint8_t *>(staging_.get());
  Status st = begin();
  for (size_t i = 0; i < p.inputs.size() && st.isOk(); ++i) {
    const ProgramTensor &t = p.inputs[i];
    if (t.buffer.bytes == 0)
      continue;
    CUresult r;
    if (auto d = device.find(t.name); d != device.end()) {
      r = api.memcpyDtoDAsync(address(t.buffer), d->second, t.buffer.bytes, stream_.get());
    } else {
      std::memcpy(staging + inputStaging_[i], host.at(t.name).raw(), t.buffer.bytes);
      r = api.memcpyHtoDAsync(address(t.buffer), staging + inputStaging_[i], t.buffer.bytes,
                              stream_.get());
    }
    if (r != CUDA_SUCCESS)
      st = failed(r, fmt::format("copying input '{}' to the GPU", t.name));
  }
  if (st.isOk())
    st = launchSteps();
  for (size_t i = 0; i < p.outputs.size() && st.isOk(); ++i) {
    const ProgramTensor &t = p.outputs[i];
    if (t.buffer.bytes == 0 || !download[i])
      continue;
    CUresult r = api.memcpyDtoHAsync(staging + outputStaging_[i], address(t.buffer), t.buffer.bytes,
                                     stream_.get());
    if (r != CUDA_SUCCESS)
      st = failed(r, fmt::format("copying output '{}' from the GPU", t.name));
  }
  if (st.isOk())
    st = synchronize();
  if (!st.isOk()) {
    // Copies already enqueued must not outlive the run that owns their staging bytes.
    (void)api.streamSynchronize(stream_.get());
    return st;
  }
  std::vector<NamedTensor> outputs;
  outputs.reserve(p.outputs.size());
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    const ProgramTensor &t = p.outputs[i];
    Tensor out;
    if (download[i]) {
      out = Tensor::zeros(t.dtype, t.shape);
      if (t.buffer.bytes)
        std::memcpy(out.mutableRaw(), staging + outputStaging_[i], t.buffer.bytes);
    }
    outputs.push_back({t.name, std::move(out)});
  }
  return outputs;
}

Expected<std::map<std::string, Tensor>>
GpuSession::runByName(const std::map<std::string, Tensor> &inputs) {
  DLC_ASSIGN_OR_RETURN(std::vector<NamedTensor> ordered, run(inputs));
  std::map<std::string, Tensor> out;
  for (NamedTensor &t : ordered)
    out.emplace(std::move(t.name), std::move(t.tensor));
  return out;
}

Status GpuSession::runDevice(const std::vector<CUdeviceptr> &inputs,
                             const std::vector<CUdeviceptr> &outputs, CUstream caller) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Program &p = program_->program();
  const DriverApi &api = driver_->api();
  if (inputs.size() != p.inputs.size() || outputs.size() != p.outputs.size())
    return invalidArgument("runDevice: got {} input and {} output pointers; the program has {} "
                           "inputs and {} outputs",
                           inputs.size(), outputs.size(), p.inputs.size(), p.outputs.size());
  for (size_t i = 0; i < p.inputs.size(); ++i)
    if (!inputs[i] && p.inputs[i].buffer.bytes)
      return invalidArgument("runDevice: input '{}' has a null device pointer", p.inputs[i].name);
  for (size_t i = 0; i < p.outputs.size(); ++i)
    if (!outputs[i] && p.outputs[i].buffer.bytes)
      return invalidArgument("runDevice: output '{}' has a null device pointer", p.outputs[i].name);
  if (caller && program_->hasHostSteps())
    return invalidArgument("runDevice: the program has CPU steps, which wait for the GPU: it "
                           "cannot run asynchronously on the caller's stream");
  DLC_RETURN_IF_ERROR(driver_->makeCurrent());
  // On the caller's stream itself: the run starts after what the caller enqueued before and
  // the caller's later work follows it, with no events between (a switch of stream orders
  // the new one after the previous run once).
  DLC_RETURN_IF_ERROR(enterStream(caller ? caller : stream_.get()));
  // Which tensors the kernels use in the caller's memory (0: through the arena).
  std::vector<bool> inDirect(p.inputs.size()), outDirect(p.outputs.size());
  std::vector<CUdeviceptr> to(direct_.size());
  directLast_ = 0;
  for (size_t i = 0; i < direct_.size(); ++i) {
    const DirectTensor &d = direct_[i];
    const CUdeviceptr ptr = d.output ? outputs[d.index] : inputs[d.index];
    const uint64_t bytes = tensorOf(p, d).buffer.bytes;
    bool ok = ptr % 256 == 0;
    // A kernel writes an output while others still read the inputs: it may share no memory.
    auto apart = [&](CUdeviceptr q, uint64_t n, bool self) {
      return self || n == 0 || q + n <= ptr || ptr + bytes <= q;
    };
    for (size_t j = 0; d.output && ok && j < p.inputs.size(); ++j)
      ok = apart(inputs[j], p.inputs[j].buffer.bytes, false);
    for (size_t j = 0; d.output && ok && j < p.outputs.size(); ++j)
      ok = apart(outputs[j], p.outputs[j].buffer.bytes, j == d.index);
    if (!ok)
      continue;
    to[i] = ptr;
    (d.output ? outDirect : inDirect)[d.index] = true;
    ++directLast_;
  }
  Status st = rebind(to);
  if (st.isOk())
    st = begin();
  for (size_t i = 0; i < p.outputs.size() && st.isOk() && opts_.poison; ++i)
    if (outDirect[i])
      st = driver_->check(api.memsetD8Async(outputs[i], 0xFF, p.outputs[i].buffer.bytes, cur_),
                          fmt::format("poisoning output '{}'", p.outputs[i].name));
  for (size_t i = 0; i < p.inputs.size() && st.isOk(); ++i) {
    const ProgramTensor &t = p.inputs[i];
    if (t.buffer.bytes == 0 || inDirect[i])
      continue;
    CUresult r = api.memcpyDtoDAsync(address(t.buffer), inputs[i], t.buffer.bytes, cur_);
    if (r != CUDA_SUCCESS)
      st = failed(r, fmt::format("copying input '{}' into the arena", t.name));
  }
  if (st.isOk())
    st = launchSteps();
  for (size_t i = 0; i < p.outputs.size() && st.isOk(); ++i) {
    const ProgramTensor &t = p.outputs[i];
    if (t.buffer.bytes == 0 || outDirect[i])
      continue;
    CUresult r = api.memcpyDtoDAsync(outputs[i], address(t.buffer), t.buffer.bytes, cur_);
    if (r != CUDA_SUCCESS)
      st = failed(r, fmt::format("copying output '{}' out of the arena", t.name));
  }
  if (st.isOk() && caller)
    return leaveCallerStream();
  if (st.isOk())
    st = synchronize();
  // A failure leaves nothing behind: the stream (which already waits for the previous run, so
  // the previous run's ordering is not lost either) is drained before a caller's is forgotten.
  if (!st.isOk())
    (void)api.streamSynchronize(cur_);
  if (caller)
    cur_ = nullptr;
  return st;
}

Status GpuSession::execute() {
  std::lock_guard<std::mutex> lock(mutex_);
  DLC_RETURN_IF_ERROR(driver_->makeCurrent());
  DLC_RETURN_IF_ERROR(enterStream(stream_.get()));
  DLC_RETURN_IF_ERROR(rebind(std::vector<CUdeviceptr>(direct_.size())));
  pendingFirst_ = pendingLast_ = 0;
  Status st = launchSteps();
  if (st.isOk())
    st = synchronize();
  if (!st.isOk())
    (void)driver_->api().streamSynchronize(stream_.get());
  return st;
}

Expected<std::vector<double>> GpuSession::profileSteps(int runs) {
  std::lock_guard<std::mutex> lock(mutex_);
  DLC_RETURN_IF_ERROR(driver_->makeCurrent());
  DLC_RETURN_IF_ERROR(enterStream(stream_.get()));
  DLC_RETURN_IF_ERROR(rebind(std::vector<CUdeviceptr>(direct_.size())));
  const DriverApi &api = driver_->api();
  const size_t n = program_->program().steps.size();
  std::vector<CudaEvent> events;
  events.reserve(n + 1);
  for (size_t i = 0; i <= n; ++i) {
    CUevent e = nullptr;
    DLC_RETURN_IF_ERROR(
        driver_->check(api.eventCreate(&e, CU_EVENT_DEFAULT), "creating a profiling event"));
    events.emplace_back(driver_, e);
  }
  std::vector<double> total(n, 0.0);
  for (int run = 0; run < runs; ++run) {
    pendingFirst_ = pendingLast_ = 0;
    std::vector<double> hostMs(n, 0.0);
    DLC_RETURN_IF_ERROR(driver_->check(api.eventRecord(events[0].get(), stream_.get()),
                                       "recording a profiling event"));
    for (size_t i = 0; i < n; ++i) {
      if (program_->hostStep(i)) {
        auto start = std::chrono::steady_clock::now();
        DLC_RETURN_IF_ERROR(runHostStep(i));
        hostMs[i] =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
      } else {
        DLC_RETURN_IF_ERROR(enqueueStep(i));
      }
      DLC_RETURN_IF_ERROR(driver_->check(api.eventRecord(events[i + 1].get(), stream_.get()),
                                         "recording a profiling event"));
    }
    DLC_RETURN_IF_ERROR(synchronize());
    for (size_t i = 0; i < n; ++i) {
      float ms = 0;
      if (program_->hostStep(i)) {
        total[i] += hostMs[i];
        continue;
      }
      DLC_RETURN_IF_ERROR(
          driver_->check(api.eventElapsedTime(&ms, events[i].get(), events[i + 1].get()),
                         "reading a profiling event"));
      total[i] += ms;
    }
  }
  for (double &t : total)
    t /= std::max(runs, 1);
  return total;
}

Status GpuSession::begin() {
  pendingFirst_ = pendingLast_ = 0;
  if (!opts_.poison || !arena_)
    return Status::ok();
  // The zeroed state at the arena's end is not the run's to poison (Program::zeroedBytes).
  const uint64_t bytes = program_->program().arenaBytes - program_->program().zeroedBytes;
  return driver_->check(driver_->api().memsetD8Async(arena_.get(), 0xFF, bytes, cur_),
                        fmt::format("poisoning the arena ({} bytes)", bytes));
}

Status GpuSession::launchSteps() {
  const size_t n = program_->program().steps.size();
  if (useGraph_ && !graph_) {
    if (Status st = capture(); !st.isOk()) {
      spdlog::warn("GPU runtime: CUDA graph capture failed, running the steps one by one: {}",
                   st.message());
      useGraph_ = false;
    }
  }
  if (graph_) {
    pendingFirst_ = 0;
    pendingLast_ = n;
    CUresult r = driver_->api().graphLaunch(graph_.get(), cur_);
    if (r != CUDA_SUCCESS)
      return failed(r, fmt::format("launching the CUDA graph of {} steps", n));
    return Status::ok();
  }
  return enqueueSteps(0, n);
}

Status GpuSession::capture() {
  const DriverApi &api = driver_->api();
  const size_t n = program_->program().steps.size();
  // Thread-local mode: other threads' sessions may allocate while this one captures.
  DLC_RETURN_IF_ERROR(
      driver_->check(api.streamBeginCapture(stream_.get(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                     "starting CUDA graph capture"));
  const CUstream run = cur_;
  cur_ = stream_.get(); // the steps are captured from the session's own stream
  std::fill(nodes_.begin(), nodes_.end(), nullptr);
  capturing_ = true;
  Status enqueued = enqueueSteps(0, n);
  capturing_ = false;
  cur_ = run;
  CUgraph raw = nullptr;
  CUresult ended = api.streamEndCapture(stream_.get(), &raw);
  CudaGraph graph(driver_, raw);
  pendingFirst_ = pendingLast_ = 0; // capturing runs nothing
  DLC_RETURN_IF_ERROR(enqueued);
  DLC_RETURN_IF_ERROR(
      driver_->check(ended, fmt::format("ending CUDA graph capture of {} steps", n)));
  CUgraphExec exec = nullptr;
  DLC_RETURN_IF_ERROR(driver_->check(api.graphInstantiate(&exec, graph.get(), 0),
                                     fmt::format("instantiating the CUDA graph of {} steps", n)));
  graph_ = CudaGraphExec(driver_, exec);
  captured_ = std::move(graph); // its nodes_ name kernels that rebind() updates
  return Status::ok();
}

Status GpuSession::enqueueSteps(size_t first, size_t last) {
  for (size_t i = first; i < last; ++i) {
    if (program_->hostStep(i)) {
      DLC_RETURN_IF_ERROR(runHostStep(i));
      continue;
    }
    DLC_RETURN_IF_ERROR(enqueueStep(i));
    if (opts_.syncEachStep)
      DLC_RETURN_IF_ERROR(synchronize());
  }
  return Status::ok();
}

Status GpuSession::enqueueStep(size_t index) {
  const Program &p = program_->program();
  const DriverApi &api = driver_->api();
  if (pendingFirst_ == pendingLast_)
    pendingFirst_ = index;
  pendingLast_ = index + 1;
  if (const auto *l = std::get_if<LaunchStep>(&p.steps[index])) {
    void **params = argPointers_[index].empty() ? nullptr : argPointers_[index].data();
    CUresult r;
    if (l->waitsForGrid) { // an sm_90+ module: griddepcontrol loads nowhere older
      // The kernel waits for the grids before it itself (griddepcontrol.wait): it may be
      // launched while the previous one runs (programmatic dependent launch).
      CUlaunchAttribute attr{};
      attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      attr.value.programmaticStreamSerializationAllowed = 1;
      CUlaunchConfig config{};
      config.gridDimX = l->grid[0], config.gridDimY = l->grid[1], config.gridDimZ = l->grid[2];
      config.blockDimX = l->block[0], config.blockDimY = l->block[1],
      config.blockDimZ = l->block[2];
      config.sharedMemBytes = l->sharedBytes;
      config.hStream = cur_;
      config.attrs = &attr;
      config.numAttrs = 1;
      r = api.launchKernelEx(&config, program_->function(index), params, nullptr);
    } else {
      r = api.launchKernel(program_->function(index), l->grid[0], l->grid[1], l->grid[2],
                           l->block[0], l->block[1], l->block[2], l->sharedBytes, cur_, params,
                           nullptr);
    }
    if (r != CUDA_SUCCESS)
      return failed(r, fmt::format("launching {} with grid {}x{}x{}, block {}x{}x{} and "
                                   "{} bytes of dynamic shared memory",
                                   describeStep(p, index), l->grid[0], l->grid[1], l->grid[2],
                                   l->block[0], l->block[1], l->block[2], l->sharedBytes));
    if (capturing_ && needsNode_[index]) { // the node just captured: the stream's last
      CUstreamCaptureStatus status{};
      const CUgraphNode *last = nullptr;
      // The edge data too: without it the query of a programmatic launch's node (its edge is
      // not a plain one) fails as lossy, and every rebind would capture again.
      const CUgraphEdgeData *edges = nullptr;
      size_t count = 0;
      if (api.streamGetCaptureInfo(cur_, &status, nullptr, nullptr, &last, &edges, &count) ==
              CUDA_SUCCESS &&
          count == 1)
        nodes_[index] = last[0];
    }
    return Status::ok();
  }
  const auto &c = std::get<CopyStep>(p.steps[index]);
  if (c.src.bytes == 0)
    return Status::ok();
  CUresult r = api.memcpyDtoDAsync(address(c.dst), address(c.src), c.src.bytes, cur_);
  if (r != CUDA_SUCCESS)
    return failed(r, "enqueueing " + describeStep(p, index));
  return Status::ok();
}

Status GpuSession::runHostStep(size_t index) {
  const Program &p = program_->program();
  const DriverApi &api = driver_->api();
  const auto &step = std::get<HostStep>(p.steps[index]);
  const HostStepGraph &hs = *program_->hostStep(index);
  const Graph &g = *hs.graph;
  const std::string what = describeStep(p, index);
  // The step reads what earlier steps wrote: wait for them (and report their faults).
  DLC_RETURN_IF_ERROR(synchronize());

  std::vector<Tensor> graphInputs;
  for (size_t i = 0; i < step.inputs.size(); ++i) {
    const TensorType &t = g.inputs()[i]->type();
    Tensor x = Tensor::zeros(t.dtype, t.shape.sizes());
    if (step.inputs[i].bytes) {
      CUresult r = api.memcpyDtoHAsync(x.mutableRaw(), address(step.inputs[i]),
                                       step.inputs[i].bytes, stream_.get());
      if (r != CUDA_SUCCESS)
        return failed(
            r, fmt::format("{}: copying input '{}' to the host", what, g.inputs()[i]->name()));
    }
    graphInputs.push_back(std::move(x));
  }
  DLC_RETURN_IF_ERROR(
      driver_->check(api.streamSynchronize(stream_.get()), what + ": copying inputs to the host"));

  std::vector<Tensor> nodeInputs;
  for (const Value *v : hs.node->inputs()) {
    if (!v) {
      nodeInputs.emplace_back();
    } else if (v->isConstant()) {
      nodeInputs.push_back(v->constant());
    } else {
      size_t k = 0;
      while (k < g.inputs().size() && g.inputs()[k] != v)
        ++k;
      nodeInputs.push_back(graphInputs.at(k)); // validated: node inputs are graph inputs
    }
  }
  auto results = eval::evaluate(*hs.node, nodeInputs);
  if (!results)
    return results.status().withContext(what);

  for (size_t i = 0; i < step.outputs.size(); ++i) {
    const Graph::Output &o = g.outputs()[i];
    const Tensor &y = results->at(static_cast<size_t>(o.value->producerIndex()));
    const TensorType &t = o.value->type();
    if (y.dtype() != t.dtype || y.shape() != t.shape.sizes())
      return internalError("{}: output '{}' should be {} but the node computed {}", what, o.name,
                           t.str(), y.type().str());
    if (step.outputs[i].bytes == 0)
      continue;
    CUresult r = api.memcpyHtoDAsync(address(step.outputs[i]), y.raw(), step.outputs[i].bytes,
                                     stream_.get());
    if (r != CUDA_SUCCESS)
      return failed(r, fmt::format("{}: copying output '{}' to the GPU", what, o.name));
  }
  // `results` must outlive the copies.
  return driver_->check(api.streamSynchronize(stream_.get()),
                        what + ": copying outputs to the GPU");
}

Status GpuSession::failed(CUresult r, std::string_view what) const {
  // A fault of an earlier kernel surfaces at whatever call comes next: name the kernels.
  return isSticky(r) ? kernelFault(r) : driver_->error(r, what);
}

Status GpuSession::synchronize() {
  CUresult r = driver_->api().streamSynchronize(cur_);
  if (r != CUDA_SUCCESS)
    return kernelFault(r);
  pendingFirst_ = pendingLast_;
  return Status::ok();
}

Status GpuSession::kernelFault(CUresult r) const {
  const Program &p = program_->program();
  std::vector<size_t> kernels;
  for (size_t i = pendingFirst_; i < pendingLast_; ++i)
    if (std::holds_alternative<LaunchStep>(p.steps[i]))
      kernels.push_back(i);
  std::string msg;
  if (kernels.empty()) {
    msg = fmt::format("waiting for the GPU: {}", driver_->errorText(r));
  } else if (kernels.size() == 1) {
    msg = fmt::format("{} failed: {}", describeStep(p, kernels[0]), driver_->errorText(r));
  } else {
    std::string list;
    for (size_t k = 0; k < kernels.size() && k < 8; ++k)
      list += "\n  " + describeStep(p, kernels[k]);
    if (kernels.size() > 8)
      list += fmt::format("\n  ... ({} more)", kernels.size() - 8);
    msg = fmt::format("a kernel failed: {}; it is one of the {} kernels in flight (set "
                      "DLC_CUDA_SYNC=1 to name it):{}",
                      driver_->errorText(r), kernels.size(), list);
  }
  if (isSticky(r))
    msg += "\nthe CUDA context is unusable after this error; restart the process";
  return internalError("{}", msg);
}

} // namespace dlc::rt
