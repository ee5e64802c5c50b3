// The ONNX importer: ModelProto (.onnx / .pb) -> ir::Graph in dlc's canonical op forms.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace dlc::onnx {

struct ImportOptions {
  /// Graph inputs that also have an initializer (IR version < 4 style) stay inputs, with the
  /// initializer ignored, instead of becoming constants.
  bool keepInitializersAsInputs = false;
};

/// Imports a model file. External data is resolved relative to the file's directory.
Expected<std::unique_ptr<Graph>> importFile(const std::string &path,
                                            const ImportOptions &opts = {});
/// Imports a serialized ModelProto; `modelDir` resolves external data ("" forbids it);
/// `displayName` names the model in errors.
Expected<std::unique_ptr<Graph>> importBytes(std::string_view bytes, const std::string &modelDir,
                                             const std::string &displayName,
                                             const ImportOptions &opts = {});

/// What `dlc inspect` reports about a model before (and whether or not) it imports.
struct ModelSummary {
  int64_t irVersion = 0;
  std::string producer;                  // producer_name and version
  std::map<std::string, int64_t> opsets; // domain ("" = ai.onnx) -> version
  struct Io {
    std::string name;
    TensorType type;
  };
  std::vector<Io> inputs; // graph inputs that are not initializers
  std::vector<Io> outputs;
  std::map<std::string, int64_t> opHistogram; // op type ("domain::Type" outside ai.onnx) -> count
  struct Params {
    int64_t count = 0; // elements
    int64_t bytes = 0;
  };
  std::map<DType, Params> params; // initializers and Constant nodes, by dtype
  struct Unsupported {
    std::string domain;
    std::string opType;
    int64_t opset = 0;
    int64_t count = 0;
    std::vector<std::string> nodes; // up to five node names
    std::string reason;             // "not implemented", "out of scope: training op", ...
  };
  std::vector<Unsupported> unsupported;
};

Expected<ModelSummary> summarizeFile(const std::string &path);

} // namespace dlc::onnx
