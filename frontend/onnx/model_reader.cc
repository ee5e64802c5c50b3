#include "frontend/onnx/model_reader.h"

#include <climits>

#include "frontend/onnx/mapped_file.h"

namespace dlc::onnx::detail {

int64_t Opsets::version(std::string_view domain) const {
  auto it = versions.find(std::string(isDefaultDomain(domain) ? "" : domain));
  return it == versions.end() ? 0 : it->second;
}

Opsets opsetsOf(const ::onnx::ModelProto &model) {
  Opsets o;
  for (const auto &imp : model.opset_import()) {
    std::string domain = isDefaultDomain(imp.domain()) ? "" : imp.domain();
    auto [it, fresh] = o.versions.emplace(domain, imp.version());
    if (!fresh) // listed twice ("" and "ai.onnx"): the newer wins
      it->second = std::max(it->second, imp.version());
  }
  return o;
}

Expected<std::unique_ptr<::onnx::ModelProto>> parseModel(const void *data, size_t size) {
  if (size > static_cast<size_t>(INT_MAX))
    return invalidArgument("model is larger than 2 GiB; store its weights as external data");
  auto model = std::make_unique<::onnx::ModelProto>();
  if (!model->ParseFromArray(data, static_cast<int>(size)))
    return invalidArgument("not a valid ONNX model (protobuf parsing failed)");
  return model;
}

Expected<std::unique_ptr<::onnx::ModelProto>> readModelFile(const std::string &path) {
  auto file = MappedFile::open(path);
  if (!file)
    return Status(file.status().code(), "cannot open file: " + file.status().message());
  return parseModel((*file)->data(), (*file)->size());
}

Status checkModelVersions(const ::onnx::ModelProto &model, const Opsets &opsets) {
  int64_t ir = model.ir_version();
  if (ir < kMinIrVersion || ir > kMaxIrVersion)
    return unimplemented("IR version {} is not supported ({} to {} are)", ir, kMinIrVersion,
                         kMaxIrVersion);
  if (!model.has_graph())
    return invalidArgument("model has no graph");
  auto it = opsets.versions.find("");
  if (it != opsets.versions.end()) {
    if (it->second > kMaxOpset)
      return unimplemented("opset ai.onnx {} is newer than supported ({})", it->second, kMaxOpset);
    if (it->second < 1)
      return invalidArgument("opset ai.onnx {} is not a valid version", it->second);
  }
  return Status::ok();
}

} // namespace dlc::onnx::detail
