#include "runtime/jit/profile_trace.h"

#include <nlohmann/json.hpp>

namespace dlc {

namespace {

constexpr int kPid = 1;
constexpr int kStreamTid = 1, kHostTid = 2;

nlohmann::ordered_json metadata(const char *name, int tid, const nlohmann::json &args) {
  nlohmann::ordered_json e;
  e["name"] = name;
  e["ph"] = "M";
  e["pid"] = kPid;
  if (tid)
    e["tid"] = tid;
  e["args"] = args;
  return e;
}

} // namespace

std::string profileTraceJson(const std::vector<Session::StepProfile> &steps, int runs,
                             const std::string &title) {
  nlohmann::ordered_json events = nlohmann::json::array();
  events.push_back(metadata("process_name", 0, {{"name", "dlc: " + title}}));
  events.push_back(metadata("thread_name", kStreamTid, {{"name", "GPU stream"}}));
  events.push_back(
      metadata("thread_name", kHostTid, {{"name", "host (CPU fallback, shape points)"}}));
  double us = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Session::StepProfile &s = steps[i];
    nlohmann::ordered_json e;
    e["name"] = s.name.empty() ? s.kind : s.name;
    e["cat"] = s.kind;
    e["ph"] = "X";
    e["ts"] = us;
    e["dur"] = s.ms * 1000.0;
    e["pid"] = kPid;
    e["tid"] = s.kind == "host" || s.kind == "shape point" ? kHostTid : kStreamTid;
    e["args"] = {{"step", i}, {"nodes", s.origin}, {"ms", s.ms}};
    if (!s.detail.empty())
      e["args"]["kernel"] = s.detail;
    events.push_back(std::move(e));
    us += s.ms * 1000.0;
  }
  nlohmann::ordered_json trace;
  trace["traceEvents"] = std::move(events);
  trace["displayTimeUnit"] = "ms";
  trace["otherData"] = {{"dlc", "steps laid end to end with their mean time over " +
                                    std::to_string(runs) + " step-by-step run(s)"}};
  return trace.dump(1) + "\n";
}

std::string kernelSummary(std::string_view source, std::string_view kernel) {
  if (kernel.empty())
    return "";
  const std::string head = "// " + std::string(kernel) + ": ";
  for (size_t at = 0; at < source.size();) {
    const size_t end = std::min(source.find('\n', at), source.size());
    const std::string_view line = source.substr(at, end - at);
    if (line.substr(0, head.size()) == head)
      return std::string(line.substr(head.size()));
    at = end + 1;
  }
  return "";
}

} // namespace dlc
