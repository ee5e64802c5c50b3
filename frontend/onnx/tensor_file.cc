#include "frontend/onnx/tensor_file.h"

#include <climits>
#include <filesystem>

#include "frontend/onnx/external_data.h"
#include "frontend/onnx/mapped_file.h"
#include "frontend/onnx/tensor_proto.h"

namespace dlc::onnx {

Expected<Tensor> readTensorProtoFile(const std::string &path, std::string *name) {
  auto file = detail::MappedFile::open(path);
  if (!file)
    return Status(file.status().code(),
                  fmt::format("{}: cannot open file: {}", path, file.status().message()));
  if ((*file)->size() > static_cast<size_t>(INT_MAX))
    return invalidArgument("{}: a TensorProto file larger than 2 GiB is not supported", path);
  ::onnx::TensorProto proto;
  if (!proto.ParseFromArray((*file)->data(), static_cast<int>((*file)->size())))
    return invalidArgument("{}: not a valid ONNX TensorProto (protobuf parsing failed)", path);
  if (name)
    *name = proto.name();
  std::string dir = std::filesystem::path(path).parent_path().string();
  detail::ExternalData external(dir.empty() ? "." : dir);
  return detail::tensorFromProto(proto, path, &external);
}

} // namespace dlc::onnx
