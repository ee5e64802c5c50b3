// Calibration (`dlc quantize`): the float model runs on sample inputs and every float value it
// takes (graph inputs and node outputs) is accumulated per value by a range method
// (range_methods.h). The result is a RangeMap, which writeRanges (ir/annotations/quant_ranges.h)
// puts into the graph for insert-fake-quant, and which a range table saves and reloads:
//
//     {"graph_hash": "9f3c...", "method": "entropy", "samples": 16,
//      "ranges": {"x": [-1.0, 0.99], "h": [0, 4.25], ...}}
//
// A table is keyed by graphHash: the 16-hex-digit FNV-1a of the graph's printed text IR (large
// constants as their data hashes), taken after the load pipeline and before any quantization
// pass. Reusing a table on another graph is refused.
//
// Samples run through a ValueRunner (value_runner.h) that watches every float graph input and
// node output: on the GPU when there is one (every such value an extra output of the GPU
// program, so fusion cannot hide it), else on the reference backend (its observer). Both give
// the same ranges within float rounding (tests/unit/gpu/calibration_gpu_test.cc).
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/annotations/quant_ranges.h"
#include "runtime/jit/range_methods.h"
#include "runtime/jit/value_runner.h"

namespace dlc {

class Calibrator {
public:
  /// A calibrator for `graph` (which must outlive it) running on `backend` (kAuto: the GPU
  /// when there is one); fails as jit::ValueRunner::create does.
  static Expected<Calibrator> create(const Graph &graph, const RangeMethod &method,
                                     Backend backend = Backend::kCpu);

  /// Where the samples run: kCpu or kGpu.
  Backend backend() const { return runner_.backend(); }

  /// Runs one sample and accumulates every float value it produces. Errors are the
  /// session's (a missing input, a wrong dtype or shape, naming the input).
  Status addSample(const std::map<std::string, Tensor> &inputs);
  /// Accumulates one value's tensor (the observer addSample uses; also for values computed
  /// elsewhere). Non-float values are ignored.
  void observe(const Value *v, const Tensor &t);

  int samples() const { return samples_; }
  /// The range of every float value that took a finite value.
  RangeMap ranges() const;
  /// Values that took NaN or Inf, in graph order, with how many such elements were skipped.
  std::vector<std::pair<const Value *, int64_t>> nonFinite() const;

private:
  Calibrator(const Graph &graph, jit::ValueRunner runner, const RangeMethod &method)
      : graph_(&graph), runner_(std::move(runner)), method_(method) {}
  /// Graph inputs, then node outputs, in graph order.
  std::vector<const Value *> valuesInOrder() const;

  const Graph *graph_;
  jit::ValueRunner runner_;
  RangeMethod method_;
  std::unordered_map<const Value *, RangeCollector> collectors_;
  int samples_ = 0;
};

/// The graph's identity in a range table (see above).
std::string graphHash(const Graph &g);

/// A saved calibration (`--save-ranges`, `--ranges`).
struct RangeTable {
  std::string graphHash;
  std::string method;
  int samples = 0;
  /// By value name, in graph order.
  std::vector<std::pair<std::string, ValueRange>> ranges;
};

/// The table of `ranges` over `g`'s values, in graph order.
RangeTable makeRangeTable(const Graph &g, const RangeMap &ranges, const std::string &method,
                          int samples);
/// The JSON text of a table (floats in their shortest exact form).
std::string rangeTableJson(const RangeTable &table);
/// Parses a table; errors name `what` (the file) and the field at fault.
Expected<RangeTable> parseRangeTable(const std::string &json, const std::string &what);
/// The table's ranges as `g`'s values. Refuses a table made for another graph (its graph_hash
/// differs from graphHash(g)) and a range for a value `g` does not have; errors name `what`.
Expected<RangeMap> rangesForGraph(const RangeTable &table, const Graph &g, const std::string &what);

} // namespace dlc
