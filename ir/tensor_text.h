// Tensor literals of the text IR (`f32[2] dense<[0.5, 1.0]>`), shared by the printer and the
// parser: element values, hex bytes, and the hash reference of an elided constant.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/printer.h"
#include "ir/tensor.h"

namespace dlc::text {

/// `dense<[...]>` when the tensor has at most opts.inlineLimit elements, else `dense<0x...>`
/// (little-endian bytes) with opts.printConstants, else `dense<hash:"%016x">`.
std::string formatDense(const Tensor &t, const PrintOptions &opts);
/// The type, a space, and formatDense: `f32[2] dense<[0.5, 1.0]>`.
std::string formatTensor(const Tensor &t, const PrintOptions &opts);
/// The hash of an elided constant as printed: 16 lowercase hex digits.
std::string formatHash(const Tensor &t);

/// Appends the bytes of one element of type `dtype` written as `word` (a number, or
/// `true`/`false` for bool). The error message carries no position.
Status appendElement(DType dtype, std::string_view word, std::vector<uint8_t> &out);
/// Decodes `0x` followed by an even number of hex digits.
Status decodeHexBytes(std::string_view word, std::vector<uint8_t> &out);

} // namespace dlc::text
