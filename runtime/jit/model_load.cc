// Model::load: reading a model file through the frontend that reads it (ONNX, or dlc's text
// IR).
#include <fstream>

#include "frontend/onnx/importer.h"
#include "ir/parser.h"
#include "runtime/jit/model.h"

namespace dlc {

namespace {

bool endsWith(const std::string &s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Text IR starts (after whitespace) with `graph` or a `//` comment.
bool looksLikeTextIr(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  char buf[64] = {};
  in.read(buf, sizeof(buf) - 1);
  std::string_view head(buf, static_cast<size_t>(in.gcount()));
  size_t i = head.find_first_not_of(" \t\r\n");
  if (i == std::string_view::npos)
    return false;
  head.remove_prefix(i);
  return head.starts_with("graph") || head.starts_with("//");
}

} // namespace

Expected<std::unique_ptr<Graph>> loadGraphFile(const std::string &path,
                                               bool keepInitializersAsInputs) {
  if (endsWith(path, ".dlc") ||
      (!endsWith(path, ".onnx") && !endsWith(path, ".pb") && looksLikeTextIr(path)))
    return parseGraphFile(path);
  onnx::ImportOptions io;
  io.keepInitializersAsInputs = keepInitializersAsInputs;
  return onnx::importFile(path, io);
}

Expected<Model> Model::load(const std::string &path, const ModelOptions &opts) {
  DLC_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, loadGraphFile(path));
  return fromGraph(std::move(graph), opts, path);
}

} // namespace dlc
