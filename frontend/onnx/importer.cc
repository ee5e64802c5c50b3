#include "frontend/onnx/importer.h"

#include <filesystem>

#include "frontend/onnx/graph_builder.h"
#include "frontend/onnx/model_reader.h"
#include "frontend/onnx/unsupported.h"
#include "ir/limits.h"

namespace dlc::onnx {

namespace {

using namespace detail;

/// Nodes of `graph` and of every graph in its nodes' attributes.
int64_t countNodes(const ::onnx::GraphProto &graph) {
  int64_t n = graph.node_size();
  for (const auto &node : graph.node())
    for (const auto &attr : node.attribute()) {
      if (attr.has_g())
        n += countNodes(attr.g());
      for (const auto &g : attr.graphs())
        n += countNodes(g);
    }
  return n;
}

// Everything after parsing; errors carry no file name (the callers add it).
Expected<std::unique_ptr<Graph>> importModel(::onnx::ModelProto &model, const std::string &modelDir,
                                             const ImportOptions &opts) {
  DLC_RETURN_IF_ERROR(checkNodeCount(countNodes(model.graph()), "the model"));
  Opsets opsets = opsetsOf(model);
  DLC_RETURN_IF_ERROR(checkModelVersions(model, opsets));
  // Every unsupported op, found before any conversion work, in one error.
  auto unsupported = findUnsupported(model.graph(), opsets);
  if (!unsupported.empty())
    return unsupportedOpsError(unsupported);
  int64_t opset = opsets.version("");
  if (opset == 0)
    for (const auto &node : model.graph().node())
      if (isDefaultDomain(node.domain()) && node.op_type() != "Constant")
        return invalidArgument("the model uses ai.onnx ops but imports no ai.onnx opset");
  ExternalData external(modelDir);
  return buildGraph(*model.mutable_graph(), opset, external, opts);
}

Expected<std::unique_ptr<Graph>> withFile(Expected<std::unique_ptr<Graph>> r,
                                          const std::string &name) {
  if (!r)
    return r.takeStatus().withContext(name);
  return r;
}

} // namespace

Expected<std::unique_ptr<Graph>> importFile(const std::string &path, const ImportOptions &opts) {
  auto model = readModelFile(path);
  if (!model)
    return model.takeStatus().withContext(path);
  std::string dir = std::filesystem::path(path).parent_path().string();
  return withFile(importModel(**model, dir.empty() ? "." : dir, opts), path);
}

Expected<std::unique_ptr<Graph>> importBytes(std::string_view bytes, const std::string &modelDir,
                                             const std::string &displayName,
                                             const ImportOptions &opts) {
  auto model = parseModel(bytes.data(), bytes.size());
  if (!model)
    return model.takeStatus().withContext(displayName);
  return withFile(importModel(**model, modelDir, opts), displayName);
}

} // namespace dlc::onnx
