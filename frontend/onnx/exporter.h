// dlc IR -> ONNX ModelProto: a graph as an ONNX model other tools load (ONNX Runtime runs the
// QDQ models `dlc quantize -o model.onnx` writes).
//
// The IR's ops are ONNX's newest forms (ir/ops/README.md), so a node becomes the ONNX node of
// its op type (opset 21) with its attributes; annotations (`quant.ranges`, `place.*`: names
// with a `.`) are dlc's and stay out as attributes: a node's fused group and device go to its
// doc string ("dlc: fused group 3 (Conv + Add + Relu); dlc: runs on gpu:0"), which viewers
// such as Netron show, and the model's metadata counts the groups (`dlc.fused_groups`). Constants
// become initializers (raw_data), graph inputs and outputs keep their names and types (symbolic
// dims as dim_param). `copy` becomes Identity. Refused, naming the node: `fake_quant` (run
// canonicalize-quant first: ONNX has no such op), ops with body graphs (If, Loop, Scan: their
// closed bodies would need re-opening).
#pragma once

#include <string>

#include "ir/graph.h"

namespace dlc::onnx {

/// The ONNX opset the exporter writes.
inline constexpr int64_t kExportOpset = 21;

/// Serializes `g` as an ONNX ModelProto (bytes).
Expected<std::string> exportModel(const Graph &g, const std::string &producer = "dlc");

/// exportModel, written to `path` (errors name it).
Status exportModelFile(const Graph &g, const std::string &path,
                       const std::string &producer = "dlc");

} // namespace dlc::onnx
