// TensorFlow's element types, shapes and TensorProtos, turned into dlc's.
#pragma once

#include <string>

#include "frontend/tf/graph_def.pb.h"
#include "ir/graph.h"

namespace dlc::tf {

/// A TensorFlow DataType as dlc sees it: the base dtype (DT_FLOAT_REF reads as f32) and
/// whether it was a reference type.
struct TfType {
  DType dtype = DType::kUnknown; // kUnknown: dlc has no such dtype
  bool ref = false;
};

TfType fromTfType(int tfType);
/// "DT_FLOAT", "DT_STRING_REF", or the number for a value TensorFlow does not define.
std::string tfTypeName(int tfType);

/// A shape from a TensorShapeProto: -1 dims become symbols named `<symbolPrefix>_d<i>`
/// (readable, unique per placeholder); unknown_rank gives an unranked shape. Errors for
/// dims below -1.
Expected<Shape> fromTfShape(const tfproto::TensorShapeProto &shape,
                            const std::string &symbolPrefix);

/// The tensor a Const node holds: from tensor_content (little-endian bytes, size checked
/// against the shape) or from the typed *_val field, where fewer values than elements repeat
/// the last one (TensorFlow's rule) and none at all means zeros. Errors say what is wrong but
/// not where: the caller prefixes the node.
Expected<Tensor> fromTfTensor(const tfproto::TensorProto &proto);

} // namespace dlc::tf
