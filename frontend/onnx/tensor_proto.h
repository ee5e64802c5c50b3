// ONNX TensorProto / TypeProto -> dlc Tensor / TensorType.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/shape.h"
#include "ir/tensor.h"
#include "onnx/onnx.pb.h"

namespace dlc::onnx::detail {

class ExternalData;

/// The DType of an ONNX TensorProto::DataType. Errors name `what`: "unsupported data type
/// string" for ONNX types dlc does not hold (string, complex, float8, int4, ...), "unknown data
/// type 99" for numbers ONNX does not define, "data type is undefined" for 0.
Expected<DType> dtypeFromOnnx(int64_t onnxType, const std::string &what);

/// The ONNX TensorProto::DataType of a dlc dtype (UNDEFINED for kUnknown).
int onnxDTypeOf(DType dtype);

/// ONNX's lower-case name of a data type ("float", "string", "float8e4m3fn"), or "" if unknown.
std::string onnxDTypeName(int64_t onnxType);

/// A TypeProto of tensor type as a TensorType: elem_type 0 gives an unknown dtype, a missing
/// shape an unranked one, dim_param a symbol, a dim with neither value nor param (or a negative
/// value) an unknown dim. Non-tensor types (sequence, map, optional, sparse) are errors.
Expected<TensorType> typeFromProto(const ::onnx::TypeProto &type, const std::string &what);

/// Dtype and dims of a TensorProto, checked: supported dtype, non-negative dims whose
/// element count and byte size fit in int64.
struct TensorHeader {
  DType dtype = DType::kUnknown;
  std::vector<int64_t> dims;
  int64_t numElements = 0;
  int64_t bytes = 0;
  /// "f32[2,2]" for error messages.
  std::string typeStr() const;
};
Expected<TensorHeader> tensorHeader(const ::onnx::TensorProto &proto, const std::string &what);

/// The tensor's data: from raw_data or the typed field (copied into owned, aligned storage), or
/// from external data (a view into a memory-mapped file; `external` may be null when external
/// data is forbidden). Errors are prefixed with `what` ("initializer 'w'").
Expected<Tensor> tensorFromProto(const ::onnx::TensorProto &proto, const std::string &what,
                                 ExternalData *external);

} // namespace dlc::onnx::detail
