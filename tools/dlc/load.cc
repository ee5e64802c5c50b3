#include "runtime/model.h"
#include "tools/dlc/commands.h"

namespace dlc::tool {

Expected<std::unique_ptr<Graph>> loadGraph(const std::string &path, const LoadOptions &opts) {
  return loadGraphFile(path, opts.keepInitializersAsInputs);
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
