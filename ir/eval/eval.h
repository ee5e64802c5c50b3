// The reference backend's kernel table: one reference (CPU) evaluator per op, keyed by op.
//
// The kernels live beside this file, one file or a few per family, and each family lists its
// rows once (families.h); eval.cc gathers them and checks that no op has two. An op without a
// row has no reference evaluation: fold-constants leaves its nodes alone and the reference
// executor refuses a graph that needs one. The op table (ir/op.h) knows nothing of this
// table: ir/eval includes ir/ops, never the other way round.
//
// Conventions every kernel follows are in eval_util.h: inputs in order (an absent optional
// input is an empty Tensor), errors that do not name the node (evaluate prefixes it), f16/bf16
// widened to f32 and rounded once.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "ir/status.h"
#include "ir/tensor.h"

namespace dlc::eval {

/// A reference kernel: the node's outputs from its inputs (one per node input, an absent
/// optional input an empty Tensor). Errors do not name the node.
using EvalFn = Expected<std::vector<Tensor>> (*)(const Node &, const std::vector<Tensor> &);

/// The reference kernel of `op`, nullptr when it has none.
EvalFn findEval(Op op);
/// Whether `op` has a reference kernel.
inline bool hasEval(Op op) { return findEval(op) != nullptr; }

/// Runs the reference kernel of `node` on `inputs` (one per node input): checks the node
/// against its op's schema first (ops::checkSchema, as inferNode does), then calls the kernel.
/// Errors, an op without a kernel included (kUnimplemented), are prefixed with the node's
/// description.
Expected<std::vector<Tensor>> evaluate(const Node &node, const std::vector<Tensor> &inputs);

/// For tests: while alive, findEval(op) answers `fn` (nullptr: no kernel) instead of the
/// table's row, so a pass can be tested with a made-up evaluation. Not thread-safe; scopes may
/// nest.
class ScopedEvalOverride {
public:
  ScopedEvalOverride(Op op, EvalFn fn);
  ~ScopedEvalOverride();
  ScopedEvalOverride(const ScopedEvalOverride &) = delete;
  ScopedEvalOverride &operator=(const ScopedEvalOverride &) = delete;

private:
  Op op_;
  EvalFn fn_;
  const EvalFn *previous_;
};

} // namespace dlc::eval
