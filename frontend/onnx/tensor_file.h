// ONNX TensorProto files (`input_0.pb`, `output_0.pb` of the ONNX test data sets): one
// serialized TensorProto per file, read into a host Tensor. The runtime reads `.npy` itself;
// this lives here because it needs protobuf.
#pragma once

#include <string>
#include <string_view>

#include "ir/tensor.h"

namespace dlc::onnx {

/// Reads a serialized TensorProto. External data is resolved relative to the file's
/// directory. When `name` is given, it receives the proto's `name` field (may be empty).
/// Errors read `PATH: <what is wrong>`.
Expected<Tensor> readTensorProtoFile(const std::string &path, std::string *name = nullptr);

/// The same from a serialized TensorProto in memory; external data is refused. Errors read
/// `SOURCE: <what is wrong>`.
Expected<Tensor> parseTensorProto(std::string_view bytes, const std::string &source,
                                  std::string *name = nullptr);

} // namespace dlc::onnx
