// Reading a ModelProto: the file (memory-mapped), protobuf parsing, and the model-level checks
// (IR version, opset versions) that come before anything else.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "ir/status.h"
#include "onnx/onnx.pb.h"

namespace dlc::onnx::detail {

inline constexpr int64_t kMinIrVersion = 3;
inline constexpr int64_t kMaxIrVersion = 10;
inline constexpr int64_t kMaxOpset = 23;
inline constexpr std::string_view kTrainingDomain = "ai.onnx.preview.training";

/// "" and "ai.onnx" both name the default domain.
inline bool isDefaultDomain(std::string_view d) { return d.empty() || d == "ai.onnx"; }
/// "ai.onnx" for the default domain, else the domain itself.
inline std::string_view displayDomain(std::string_view d) {
  return isDefaultDomain(d) ? std::string_view("ai.onnx") : d;
}

/// The opsets a model imports, by domain ("" for ai.onnx).
struct Opsets {
  std::map<std::string, int64_t> versions;
  /// The imported version of `domain`, 0 if it is not imported.
  int64_t version(std::string_view domain) const;
};
Opsets opsetsOf(const ::onnx::ModelProto &model);

/// Parses a serialized ModelProto. Errors carry no file name.
Expected<std::unique_ptr<::onnx::ModelProto>> parseModel(const void *data, size_t size);
/// Maps and parses a model file. Errors carry no file name.
Expected<std::unique_ptr<::onnx::ModelProto>> readModelFile(const std::string &path);

/// IR version within [kMinIrVersion, kMaxIrVersion], a graph present, and an ai.onnx opset
/// within [1, kMaxOpset] when the model imports one.
Status checkModelVersions(const ::onnx::ModelProto &model, const Opsets &opsets);

} // namespace dlc::onnx::detail
