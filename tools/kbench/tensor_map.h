// kbench's TMA descriptors: the Hopper GEMM's tensor-map parameters (codegen::KernelParam::map)
// over kbench's own buffers, encoded as the runtime's session encodes them.
#pragma once

#include <cuda.h>

#include "runtime/program.h"

namespace dlc::kbench {

/// Encodes `m` over `buffer` (rt::encodeTensorMap, through the driver's entry point). False
/// when the driver refuses it.
bool encodeTensorMap(const rt::TensorMapLayout &m, void *buffer, CUtensorMap *out);

} // namespace dlc::kbench
