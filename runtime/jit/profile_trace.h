// A profile as a timeline: `dlc run --profile --trace FILE.json` writes the steps of one
// profiled GPU run in Chrome's Trace Event format (the JSON object form), which
// ui.perfetto.dev and chrome://tracing open.
//
// Each step is a complete event ("ph": "X") on a track of its own kind: kernels and copies on
// the GPU stream's track, CPU fallback steps on the host's; its arguments are the kernel's
// name and the nodes it came from. Steps are laid end to end in program order with their mean
// times (the profile runs them one at a time with an event around each), so the picture shows
// where the time goes, not the gaps a CUDA-graph replay would leave.
#pragma once

#include <string>
#include <vector>

#include "runtime/jit/model.h"

namespace dlc {

/// The trace of `steps` (as Session::profileGpu returns them), `runs` the number of runs their
/// times are the mean of, `title` names the process track (the model file).
std::string profileTraceJson(const std::vector<Session::StepProfile> &steps, int runs,
                             const std::string &title);

} // namespace dlc
