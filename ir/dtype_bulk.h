// Bulk IEEE half / bfloat16 conversions: the scalar conversions of ir/dtype.h over arrays,
// compiled beside them so that the loops inline them (constant folding and fold-batchnorm
// convert whole weights).
#pragma once

#include <cstddef>
#include <cstdint>

namespace dlc {

void halfToFloat(const uint16_t *src, float *dst, size_t n);
void floatToHalf(const float *src, uint16_t *dst, size_t n);
void bf16ToFloat(const uint16_t *src, float *dst, size_t n);
void floatToBf16(const float *src, uint16_t *dst, size_t n);

} // namespace dlc
