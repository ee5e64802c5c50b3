// The CUDA source every NVRTC program of dlc starts with, and the dtype names emitters use.
//
// Storage types (what a buffer holds): float, __half, __nv_bfloat16, double, signed char,
// short, int, long long, unsigned char/short/int/long long, bool. Compute types (what
// expressions work in): float for f32/f16/bf16, the storage type otherwise. `dlc_load(x)`
// converts a stored element to its compute type, `dlc_store<S>(c)` converts back (round to
// nearest even). The prelude also defines the `dlc_*` helpers that the op table's CUDA
// expressions (ir/ops/elementwise_cuda.cc) name.
#pragma once

#include <string>
#include <string_view>

#include "ir/dtype.h"

namespace dlc::codegen {

/// The prelude's source text (includes cuda_fp16.h and cuda_bf16.h).
std::string_view cudaPrelude();

/// The storage type of `t` in generated code ("__half" for f16).
std::string cudaStorageType(DType t);
/// The compute type of `t` ("float" for f16).
std::string cudaComputeType(DType t);
/// A literal of `v` in the compute type of `t`, exact for floats.
std::string cudaLiteral(double v, DType t);

} // namespace dlc::codegen
