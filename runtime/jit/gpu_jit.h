// What a GPU session and `dlc run --verify` share: binding symbolic dims from the inputs and
// the JIT options for the device at hand (runtime-internal; defined in model.cc).
#pragma once

#include <map>
#include <ostream>
#include <string>

#include "runtime/cuda_driver.h"
#include "runtime/jit/compile.h"
#include "runtime/jit/model.h"

namespace dlc {

/// Sizes of the graph inputs' symbolic dims, read from `inputs`. Errors name the input: a
/// missing or unknown one, a rank or fixed dim that differs, a symbol bound to two sizes.
Expected<std::map<std::string, int64_t>> bindInputDims(const Graph &graph,
                                                       const std::map<std::string, Tensor> &inputs);
/// (From the inputs' shapes alone: bindInputShapes in runtime/reference_executor.h.)

/// JIT options for `device` and the session's options; the GPU pipeline prints to `sink`.
jit::JitOptions gpuJitOptions(const rt::DeviceInfo &device, const SessionOptions &opts,
                              std::ostream &sink);

} // namespace dlc
