// External tensor data: TensorProto.external_data (`location`, `offset`, `length`) resolved
// inside the model's directory and memory-mapped; tensors are views into the mapping.
//
// Safety rules: the location must be a relative path without `..` components, and after
// resolving symlinks (std::filesystem::weakly_canonical) it must still lie inside the model's
// directory. Offset and length are checked against the file's size. Each file is mapped once
// and the mapping is shared by every tensor that views into it; it lives as long as the last
// such tensor.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "frontend/onnx/mapped_file.h"
#include "frontend/onnx/tensor_proto.h"

namespace dlc::onnx::detail {

class ExternalData {
public:
  /// `modelDir` is the only directory data may come from; "" forbids external data.
  explicit ExternalData(std::string modelDir) : dir_(std::move(modelDir)) {}

  /// The tensor described by `proto` (its dtype and dims already checked in `h`): a view into
  /// the mapped file, never a copy. Error messages do not name the tensor; callers add it.
  Expected<Tensor> load(const ::onnx::TensorProto &proto, const TensorHeader &h);

private:
  /// The canonical path of `location` inside the model directory.
  Expected<std::string> resolve(const std::string &location) const;
  Expected<std::shared_ptr<MappedFile>> map(const std::string &path, const std::string &location);

  std::string dir_;
  std::map<std::string, std::shared_ptr<MappedFile>> files_; // by canonical path
};

} // namespace dlc::onnx::detail
