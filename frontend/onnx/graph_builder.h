// Builds a dlc Graph from an ONNX GraphProto whose ops are all supported (see unsupported.h).
//
// Steps, in order: check that every value name has one producer; graph inputs; initializers
// (constants, or ignored for inputs under keepInitializersAsInputs); Constant nodes (constants);
// one dlc node per other ONNX node, its outputs renamed to the ONNX names; inputs wired by name
// (in any order: ONNX nodes need not be sorted); value_info types as hints on node outputs;
// normalisation and attribute checks per node; graph outputs with their declared types; and a
// topological sort. Errors name the node, value or initializer, not the file.
#pragma once

#include <memory>

#include "frontend/onnx/import_context.h"
#include "frontend/onnx/importer.h"
#include "onnx/onnx.pb.h"

namespace dlc::onnx::detail {

/// `proto` is mutable only so that initializers' raw bytes can be released once copied.
Expected<std::unique_ptr<Graph>> buildGraph(::onnx::GraphProto &proto, int64_t opset,
                                            ExternalData &external, const ImportOptions &opts);

} // namespace dlc::onnx::detail
