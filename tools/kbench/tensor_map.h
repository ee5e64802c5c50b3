// kbench's TMA descriptors: the Hopper GEMM's tensor-map parameters (codegen::TensorMapParam),
// encoded over kbench's own buffers the way the runtime's session encodes them.
#pragma once

#include <cuda.h>

#include "codegen/kernel.h"

namespace dlc::kbench {

/// Encodes `m` over `buffer` (as runtime/gpu_session.cc does, through the driver's entry
/// point): 2-D, 128-byte swizzle, zeros out of bounds. False when the driver refuses it.
bool encodeTensorMap(const codegen::TensorMapParam &m, void *buffer, CUtensorMap *out);

} // namespace dlc::kbench
