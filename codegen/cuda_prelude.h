// The CUDA source every NVRTC program of dlc starts with, and the dtype names emitters use.
//
// Storage types (what a buffer holds): float, __half, __nv_bfloat16, double, signed char,
// short, int, long long, unsigned char/short/int/long long, bool. Compute types (what
// expressions work in): float for f32/f16/bf16, the storage type otherwise. `dlc_load(x)`
// converts a stored element to its compute type, `dlc_store<S>(c)` converts back (round to
// nearest even). The prelude also defines the `dlc_*` helpers that the elementwise ops' CUDA
// expressions (codegen/elementwise_expr.cc) name.
#pragma once

#include <string>
#include <string_view>

#include "codegen/elementwise_expr.h"
#include "ir/dtype.h"

namespace dlc::codegen {

/// The prelude's source text (includes cuda_fp16.h and cuda_bf16.h).
std::string_view cudaPrelude();

/// The storage type of `t` in generated code ("__half" for f16).
std::string cudaStorageType(DType t);
// The compute type and literals (cudaComputeType, cudaLiteral): codegen/elementwise_expr.h.

} // namespace dlc::codegen
