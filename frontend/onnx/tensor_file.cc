#include "frontend/onnx/tensor_file.h"

#include <climits>
#include <filesystem>

#include "frontend/onnx/external_data.h"
#include "frontend/onnx/mapped_file.h"
#include "frontend/onnx/tensor_proto.h"

namespace dlc::onnx {

namespace {

/// `bytes` as a TensorProto, its external data (if any) read from `dir` ("" forbids it).
Expected<Tensor> tensorFromBytes(const void *bytes, size_t size, const std::string &source,
                                 const std::string &dir, std::string *name) {
  if (size > static_cast<size_t>(INT_MAX))
    return invalidArgument("{}: a TensorProto file larger than 2 GiB is not supported", source);
  ::onnx::TensorProto proto;
  if (!proto.ParseFromArray(bytes, static_cast<int>(size)))
    return invalidArgument("{}: not a valid ONNX TensorProto (protobuf parsing failed)", source);
  if (name)
    *name = proto.name();
  detail::ExternalData external(dir);
  return detail::tensorFromProto(proto, source, &external);
}

} // namespace

Expected<Tensor> readTensorProtoFile(const std::string &path, std::string *name) {
  auto file = detail::MappedFile::open(path);
  if (!file)
    return Status(file.status().code(),
                  fmt::format("{}: cannot open file: {}", path, file.status().message()));
  std::string dir = std::filesystem::path(path).parent_path().string();
  return tensorFromBytes((*file)->data(), (*file)->size(), path, dir.empty() ? "." : dir, name);
}

Expected<Tensor> parseTensorProto(std::string_view bytes, const std::string &source,
                                  std::string *name) {
  return tensorFromBytes(bytes.data(), bytes.size(), source, "", name);
}

} // namespace dlc::onnx
