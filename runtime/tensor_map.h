// Encoding a TMA descriptor (rt::TensorMapLayout) with the driver: the GPU session encodes its
// programs' maps through it once per session, kbench its kernels' maps.
#pragma once

#include <cuda.h>

#include "runtime/program.h"

namespace dlc::rt {

/// Encodes `m` over the buffer at `base` with the driver's cuTensorMapEncodeTiled (`encode`,
/// however it was resolved): 2-D, 128-byte swizzle, 256-byte L2 promotion, zeros out of bounds.
inline CUresult encodeTensorMap(decltype(&::cuTensorMapEncodeTiled) encode,
                                const TensorMapLayout &m, void *base, CUtensorMap *out) {
  const CUtensorMapDataType type = m.dtype == DType::kBF16  ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                   : m.dtype == DType::kF16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                                            : CU_TENSOR_MAP_DATA_TYPE_UINT8;
  const cuuint64_t dims[2] = {m.dims[0], m.dims[1]}, strides[1] = {m.pitchBytes};
  const cuuint32_t box[2] = {m.box[0], m.box[1]}, unit[2] = {1, 1};
  return encode(out, type, 2, base, dims, strides, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE,
                CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

} // namespace dlc::rt
