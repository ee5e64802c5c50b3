// Builds a dlc Graph from an ONNX GraphProto whose ops are all supported (see unsupported.h).
//
// Steps, in order: check that every value name has one producer; graph inputs; initializers
// (constants, or ignored for inputs under keepInitializersAsInputs); Constant nodes (constants);
// one dlc node per other ONNX node, its outputs renamed to the ONNX names; inputs wired by name
// (in any order: ONNX nodes need not be sorted); value_info types as hints on node outputs;
// normalisation and attribute checks per node; graph outputs with their declared types; and a
// topological sort. Errors name the node, value or initializer, not the file.
//
// Graph attributes (the bodies of If, Loop, Scan) become closed dlc graphs: the values of
// enclosing graphs an ONNX body uses by name (its free names, nested bodies included) become
// explicit trailing inputs of the node and of every body of the node, in order of first use
// (Loop and Scan record their count in `num_captures`).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "frontend/onnx/import_context.h"
#include "frontend/onnx/importer.h"
#include "onnx/onnx.pb.h"

namespace dlc::onnx::detail {

/// `proto` is mutable only so that initializers' raw bytes can be released once copied.
Expected<std::unique_ptr<Graph>> buildGraph(::onnx::GraphProto &proto, int64_t opset,
                                            ExternalData &external, const ImportOptions &opts);

/// The names `proto` uses (node inputs, graph outputs, free names of nested graphs) that it
/// does not define (inputs, initializers, node outputs), in order of first use.
std::vector<std::string> freeNames(const ::onnx::GraphProto &proto);

} // namespace dlc::onnx::detail
