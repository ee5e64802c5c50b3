// Tensor files: NumPy's `.npy` format (read and write), the way `dlc run` and host programs
// exchange inputs and outputs with Python.
//
// Reading accepts format versions 1.0, 2.0 and 3.0, little-endian (or byte-order-free)
// `f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1` arrays in C order. Everything else is refused with a
// message naming the file: Fortran order, big-endian data, object, complex, string and
// structured dtypes, a malformed header, data shorter or longer than the header says.
// Writing produces format 1.0 (2.0 when the header would not fit), with the header padded so
// the data starts at a multiple of 64 bytes, as NumPy does. ONNX TensorProto `.pb` files need
// protobuf and are read by frontend/onnx/tensor_file.h.
#pragma once

#include <string>
#include <string_view>

#include "ir/tensor.h"

namespace dlc {

/// Reads a `.npy` file. Errors read `PATH: <what is wrong>`.
Expected<Tensor> readNpy(const std::string &path);

/// The same from the file's bytes; errors read `SOURCE: <what is wrong>`. readNpy reads the
/// header into memory and the data straight into the tensor; both share one header parser.
Expected<Tensor> parseNpy(std::string_view bytes, std::string_view source);

/// Writes `t` as a `.npy` file. bf16 has no NumPy dtype and is refused (convert it first).
Status writeNpy(const std::string &path, const Tensor &t);

/// The NumPy dtype string of a dlc dtype (`<f4`, `|b1`), or "" when there is none (bf16).
std::string npyDescr(DType dtype);

} // namespace dlc
