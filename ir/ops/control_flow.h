// Shared pieces of the control-flow family (rows and inference in control_flow.cc, reference
// evaluation in ir/eval/control_flow_eval.cc): how a node's inputs and outputs split into the parts
// its body sees.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "ir/status.h"
#include "ir/tensor.h"

namespace dlc::ops::control_flow {

/// Loop(M?, cond?, v_initial..., captures...) -> (v_final..., scan_outputs...).
struct LoopParts {
  int carried = 0;     // N loop-carried values
  int scanOutputs = 0; // K
  int captures = 0;    // C
};
LoopParts loopParts(const Node &n);

/// Scan(state..., scan_inputs..., captures...) -> (final_state..., scan_outputs...).
struct ScanParts {
  int states = 0;      // N
  int scanInputs = 0;  // M (num_scan_inputs)
  int scanOutputs = 0; // K
  int captures = 0;    // C
};
ScanParts scanParts(const Node &n);

/// Attribute `name` (ints) of length `count`, or `count` zeros when absent.
std::vector<int64_t> intsOrZeros(const Node &n, const char *name, int count);

} // namespace dlc::ops::control_flow
