// State shared by the importer's steps while one ONNX graph becomes a dlc Graph.
#pragma once

#include <cstdint>
#include <string>

#include "frontend/onnx/external_data.h"
#include "ir/graph.h"

namespace dlc::onnx::detail {

struct ImportContext {
  Graph &graph;
  /// The model's ai.onnx opset: which older forms the normaliser rewrites.
  int64_t opset = 0;
  /// Resolves external tensor data; null when it is forbidden.
  ExternalData *external = nullptr;
};

} // namespace dlc::onnx::detail
