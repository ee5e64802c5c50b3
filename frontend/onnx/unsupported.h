// Finding every op a model uses that dlc cannot import, before any conversion work, so that
// one error lists them all (op type, domain and opset, count, a few node names, and why).
#pragma once

#include <string>
#include <vector>

#include "frontend/onnx/importer.h"
#include "frontend/onnx/model_reader.h"

namespace dlc::onnx::detail {

/// `node 'conv1' (Conv)`, or `node #3 (Conv)` for an unnamed node (its index in the graph).
std::string describeNode(const ::onnx::NodeProto &node, int index);

/// Every unsupported op type of `graph`, in order of first appearance. `Constant` and the ops
/// the normaliser renames (Upsample, Scatter) count as supported.
std::vector<ModelSummary::Unsupported> findUnsupported(const ::onnx::GraphProto &graph,
                                                       const Opsets &opsets);

/// The one error that lists them (`3 unsupported op types:\n  Loop (ai.onnx opset 13): ...`).
Status unsupportedOpsError(const std::vector<ModelSummary::Unsupported> &unsupported);

} // namespace dlc::onnx::detail
