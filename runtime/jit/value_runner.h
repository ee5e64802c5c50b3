// Running a graph and looking at values inside it, on the GPU or on the reference backend:
// what calibration (`dlc quantize`) and the precision reports (`dlc quantize --report`,
// `dlc run --compare-precision`) measure.
//
//  * Reference backend: ReferenceExecutor's observer sees every value as it is computed; the
//    watched ones are passed on.
//  * GPU: a fused kernel keeps its intermediates in registers and the GPU pipeline renames and
//    folds values, so the watched values are made extra outputs of a clone of the graph (public
//    names `dlc.watch.K`), which the GPU program must then write; the clone becomes a Model at
//    -O0 (shape inference only: every value keeps its name) and runs in a GPU session. After
//    each run the extra outputs go to the observer, as the graph's own values. Graph inputs
//    are observed from the tensors given. A watched value the GPU pipeline removes anyway is
//    not observed (callers count what they saw).
//  * `precision` ("fp16", "bf16"): the graph runs in mixed precision (the mixed-precision pass,
//    runtime/jit/pipelines.h): on the GPU in the GPU pipeline, on the reference backend by
//    running the pass on the clone (the reference computes half types in float32 and rounds
//    each result, as a half kernel stores it). A watched value the pass moved to the low type
//    is observed in it.
//
// Observations come in the order of the reference backend: graph inputs, then node outputs in
// node order.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/jit/model.h"
#include "runtime/reference_executor.h"

namespace dlc::jit {

struct ValueRunnerOptions {
  /// kAuto: the GPU when there is one; kGpu: an error without one; kCpu: the reference backend.
  Backend backend = Backend::kAuto;
  /// "", "fp16" or "bf16"; `keepFp32` as SessionOptions::keepFp32.
  std::string precision;
  std::string keepFp32;
  /// GPU: nodes without a GPU kernel run on the CPU (off: an error naming them).
  bool cpuFallback = true;
};

class ValueRunner {
public:
  /// A runner of `graph` (which must outlive it) that reports the values in `watched` (values
  /// of `graph`; non-float values and constants are ignored). Fails as Model::createSession
  /// does (no GPU with kGpu, an op without a reference evaluation on the CPU), or when the
  /// mixed-precision pass refuses its options.
  static Expected<ValueRunner> create(const Graph &graph, const std::vector<const Value *> &watched,
                                      const ValueRunnerOptions &opts = {});

  /// Where it runs: kCpu or kGpu.
  Backend backend() const { return backend_; }

  /// Runs one set of inputs (by graph input name) and calls `observer` for every watched
  /// value with its tensor (valid only during the call). Errors are the session's.
  Status run(const std::map<std::string, Tensor> &inputs, const ValueObserver &observer) const;

private:
  ValueRunner() = default;

  const Graph *graph_ = nullptr;
  Backend backend_ = Backend::kCpu;
  std::vector<const Value *> watchedInputs_;
  // CPU: the (maybe mixed-precision) clone and its executor, and its watched values mapped to
  // the graph's; GPU: the model over the clone, its session and the watched outputs.
  std::shared_ptr<Graph> clone_;
  std::shared_ptr<ReferenceExecutor> executor_;
  std::map<const Value *, const Value *> original_;
  std::shared_ptr<Model> model_;
  std::shared_ptr<Session> session_;
  std::vector<std::pair<std::string, const Value *>> watchedOutputs_; // public name, value
};

} // namespace dlc::jit
