#include <fstream>

#include "frontend/onnx/importer.h"
#include "ir/parser.h"
#include "tools/dlc/commands.h"

namespace dlc::tool {

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

Expected<std::unique_ptr<Graph>> loadGraph(const std::string &path, const LoadOptions &opts) {
  if (endsWith(path, ".dlc") ||
      (!endsWith(path, ".onnx") && !endsWith(path, ".pb") && looksLikeTextIr(path)))
    return parseGraphFile(path);
  onnx::ImportOptions io;
  io.keepInitializersAsInputs = opts.keepInitializersAsInputs;
  return onnx::importFile(path, io);
}

Expected<std::map<std::string, int64_t>> parseDims(const std::vector<std::string> &specs) {
  std::map<std::string, int64_t> out;
  for (const std::string &s : specs) {
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      return invalidArgument("--dim '{}': expected NAME=SIZE", s);
    char *end = nullptr;
    std::string num = s.substr(eq + 1);
    long long v = std::strtoll(num.c_str(), &end, 10);
    if (num.empty() || *end != '\0' || v < 0)
      return invalidArgument("--dim '{}': SIZE must be a non-negative integer", s);
    out[s.substr(0, eq)] = v;
  }
  return out;
}

int reportError(const Status &status) {
  std::fprintf(stderr, "dlc: error: %s\n", status.message().c_str());
  return 1;
}

} // namespace dlc::tool
