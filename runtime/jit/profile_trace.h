// A profile as a timeline: `dlc run --profile --trace FILE.json` writes the steps of one
// profiled GPU run in Chrome's Trace Event format (the JSON object form), which
// ui.perfetto.dev and chrome://tracing open.
//
// Each step is a complete event ("ph": "X") on a track of its own kind: kernels and copies on
// the GPU stream's track, CPU fallback steps on the host's; its arguments are the kernel's
// name, the nodes it came from and the kernel's summary (a GEMM's shape and tile). Steps are laid
// end to end in program order with their mean times (the profile runs them one at a time with an
// event around each), so the picture shows where the time goes, not the gaps a CUDA-graph replay
// would leave.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runtime/jit/model.h"

namespace dlc {

/// The trace of `steps` (as Session::profileGpu returns them), `runs` the number of runs their
/// times are the mean of, `title` names the process track (the model file).
std::string profileTraceJson(const std::vector<Session::StepProfile> &steps, int runs,
                             const std::string &title);

/// The summary kernel `kernel`'s CUDA source gives of itself: the text after `// kernel: ` on
/// its first such line (`i8 GEMM, batch 1 of 25088 x 128 x 512, tile 128x64x64/4x2s4k1`), or
/// "" when there is none. For the profile's steps (StepProfile::detail).
std::string kernelSummary(std::string_view source, std::string_view kernel);

} // namespace dlc
