// The reference backend's execution path: a shape-inferred Graph run node by node on host
// tensors with each op's reference kernel (eval::evaluate), the correctness oracle of DESIGN.md.
//
// Before: the graph verifies and its types are inferred (symbolic dims such as `N` allowed);
// the executor never mutates it, so one graph serves any number of executors and threads.
//
//  1. Inputs bind by name. Each is checked against its graph input's type: dtype, rank, every
//     known dim; a symbolic dim is bound by the first input that has it, and every later use
//     must agree.
//  2. Nodes run in the graph's (topological) order. Each value is freed after its last use,
//     unless it is a graph output.
//  3. Every result is checked against the inferred type of its value (dtype, known dims, dims
//     bound in step 1): a difference is a bug in shape inference or in the op's evaluation, and
//     is reported naming the node.
//  4. Outputs come back under their public names (Graph::Output::name), in graph order.
//
// Ops without a reference evaluation are found when the executor is created, all at once.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace dlc {

/// A tensor and the name a model's users know it by.
struct NamedTensor {
  std::string name;
  Tensor tensor;
};

/// Sees every value a run produces (calibration, debugging): each graph input once its type
/// is checked, then each node output as soon as it is computed and checked, before any value
/// is freed. Constants are not observed (their data is in the graph). The tensor is valid only
/// during the call.
using ValueObserver = std::function<void(const Value *, const Tensor &)>;

/// Concrete sizes of symbolic dims (`N` -> 8).
using DimBindings = std::map<std::string, int64_t>;

class ReferenceExecutor {
public:
  /// An executor for `graph`, which must outlive it. Fails when a node's op has no reference
  /// evaluation: `node 'x' (Op): no reference implementation yet`, or one message listing
  /// every such op when there are several.
  static Expected<ReferenceExecutor> create(const Graph &graph);

  /// Runs the graph on `inputs` (by graph input name). Errors name the offending input (or
  /// node): unknown or missing inputs, a wrong dtype, rank or dim.
  Expected<std::vector<NamedTensor>> run(const std::map<std::string, Tensor> &inputs) const;
  /// The same, calling `observer` (when set) for every graph input and node output in the order
  /// they are produced: inputs in graph order, then node outputs in node order.
  Expected<std::vector<NamedTensor>> run(const std::map<std::string, Tensor> &inputs,
                                         const ValueObserver &observer) const;

  /// Step 1 alone: checks `inputs` against the graph's inputs and returns the sizes they give
  /// the symbolic dims.
  Expected<DimBindings> bindInputs(const std::map<std::string, Tensor> &inputs) const;

  const Graph &graph() const { return *graph_; }

private:
  explicit ReferenceExecutor(const Graph &graph) : graph_(&graph) {}
  Status bind(const std::map<std::string, Tensor> &inputs, DimBindings &bindings,
              std::map<std::string, std::string> &boundBy) const;

  const Graph *graph_;
  std::vector<Node *> nodes_;
  /// For each node, the values to free after it runs.
  std::vector<std::vector<const Value *>> freeAfter_;
};

/// Sizes of the graph inputs' symbolic dims, read from the inputs' shapes (by name). Errors
/// name the input: a missing or unknown one, a rank or fixed dim that differs, a symbol bound
/// to two sizes.
Expected<DimBindings> bindInputShapes(const Graph &graph,
                                      const std::map<std::string, std::vector<int64_t>> &shapes);

/// Checks a tensor against a declared type: `what: expected dtype f32, got i64`,
/// `what: expected rank 2 (f32[N,4]), got rank 3 ([2,3,4])`, `what: dim 1 expected 4, got 5
/// (...)`. Symbolic dims found in `bindings` must match; new ones are added to it, with
/// `what` recorded in `boundBy` (for `dim 0 is N = 3 (from input 'x'), got 4`).

Status checkTensorType(const Tensor &t, const TensorType &expected, const std::string &what,
                       DimBindings &bindings, std::map<std::string, std::string> &boundBy);

} // namespace dlc
