#include "frontend/onnx/model_reader.h"

#include <climits>

#include <google/protobuf/io/coded_stream.h>

#include "frontend/onnx/mapped_file.h"

namespace dlc::onnx::detail {

namespace {
constexpr int kProtobufNesting = 100; // protobuf's default recursion limit
constexpr int kProbeNesting = 1000;   // bounded, so that a hostile file cannot exhaust the stack
} // namespace

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
  if (model->ParseFromArray(data, static_cast<int>(size)))
    return model;
  // Why: a second parse with a deeper (still bounded) nesting limit tells a model whose
  // subgraphs nest past protobuf's default limit from a damaged file.
  ::onnx::ModelProto probe;
  google::protobuf::io::CodedInputStream deep(static_cast<const uint8_t *>(data),
                                              static_cast<int>(size));
  deep.SetRecursionLimit(kProbeNesting);
  if (probe.ParseFromCodedStream(&deep) && deep.ConsumedEntireMessage())
    return invalidArgument("the model nests messages deeper than protobuf's limit of {} (subgraphs "
                           "of If/Loop/Scan nested about {} deep); dlc does not read past it",
                           kProtobufNesting, kProtobufNesting / 3);
  return invalidArgument("not a valid ONNX model (protobuf parsing failed)");
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
