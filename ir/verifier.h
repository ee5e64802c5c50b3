// The IR verifier: structural and type invariants every pass must preserve.
#pragma once

#include "ir/graph.h"

namespace dlc {

struct VerifyOptions {
  /// Re-run shape inference on each node and require the recorded output types to be
  /// compatible with what it infers.
  bool checkTypes = true;
};

/// Checks: single definition of every value name, use lists consistent, inputs defined before
/// use (acyclic, topological order), arity and attributes per the op schema, output types
/// consistent with inference, graph outputs defined. Returns the first problem found, as
/// `verifier: <where>: <what>`.
Status verifyGraph(const Graph &g, const VerifyOptions &opts = {});

} // namespace dlc
