#include "tools/dlc/placement_report.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/annotations/placement.h"
#include "ir/clone.h"
#include "passes/pass_manager.h"
#include "runtime/jit/compile.h"

namespace dlc::tool {

namespace {

struct Row {
  std::string name, op, requested, assigned, reason;
  std::optional<int64_t> group;
};

std::vector<Row> rows(const Graph &g) {
  std::vector<Row> out;
  for (const Node *n : g.nodes()) {
    Row r;
    r.name = n->name().empty() && n->numOutputs() && n->output(0) ? "%" + n->output(0)->name()
                                                                  : n->name();
    r.op = std::string(n->opName());
    r.requested = placeRequestOf(*n);
    r.assigned = n->device().str();
    const Attribute *group = n->findAttr(kPlaceGroupAttr);
    if (group && group->kind() == AttrKind::kInt)
      r.group = group->i();
    const Attribute *reason = n->findAttr(kPlaceReasonAttr);
    if (reason && reason->kind() == AttrKind::kString)
      r.reason = reason->s();
    out.push_back(std::move(r));
  }
  return out;
}

std::map<std::string, int> perDevice(const std::vector<Row> &rs) {
  std::map<std::string, int> counts;
  for (const Row &r : rs)
    ++counts[r.assigned.empty() ? "(unplaced)" : r.assigned];
  return counts;
}

std::string countsText(const std::map<std::string, int> &counts) {
  std::string s;
  for (const auto &[device, count] : counts)
    s += fmt::format("{}{} {}", s.empty() ? "" : ", ", device, count);
  return s.empty() ? "no nodes" : s;
}

} // namespace

std::string placementReportText(const Graph &g) {
  const std::vector<Row> rs = rows(g);
  std::vector<std::vector<std::string>> cells = {
      {"node", "op", "requested", "assigned", "group", "reason"}};
  for (const Row &r : rs)
    cells.push_back({r.name, r.op, r.requested.empty() ? "-" : r.requested,
                     r.assigned.empty() ? "-" : r.assigned,
                     r.group ? std::to_string(*r.group) : "-", r.reason.empty() ? "-" : r.reason});
  std::vector<size_t> width(cells[0].size(), 0);
  for (const auto &row : cells)
    for (size_t c = 0; c < row.size(); ++c)
      width[c] = std::max(width[c], row[c].size());
  std::string out = fmt::format("placement of graph @{}: {} nodes ({})\n", g.name(), rs.size(),
                                countsText(perDevice(rs)));
  for (const auto &row : cells) {
    std::string line = " ";
    for (size_t c = 0; c + 1 < row.size(); ++c)
      line += fmt::format(" {:<{}}", row[c], width[c]);
    out += line + " " + row.back() + "\n";
  }
  return out;
}

std::string placementReportJson(const Graph &g) {
  const std::vector<Row> rs = rows(g);
  nlohmann::ordered_json j;
  j["graph"] = g.name();
  j["devices"] = nlohmann::ordered_json::object();
  for (const auto &[device, count] : perDevice(rs))
    j["devices"][device] = count;
  j["nodes"] = nlohmann::ordered_json::array();
  auto orNull = [](const std::string &s) {
    return s.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(s);
  };
  for (const Row &r : rs)
    j["nodes"].push_back(
        {{"name", r.name},
         {"op", r.op},
         {"requested", orNull(r.requested)},
         {"assigned", orNull(r.assigned)},
         {"group", r.group ? nlohmann::ordered_json(*r.group) : nlohmann::ordered_json()},
         {"reason", orNull(r.reason)}});
  return j.dump(1) + "\n";
}

Status writePlacementReport(const Graph &g, const std::string &target, const std::string &title) {
  if (target == kReportToStderr) {
    std::cerr << title << "\n" << placementReportText(g);
    return Status::ok();
  }
  std::ofstream f(target);
  f << placementReportJson(g);
  if (!f)
    return invalidArgument("--placement-report={}: cannot write the file", target);
  return Status::ok();
}

Expected<std::unique_ptr<Graph>> placedGraphForReport(const Graph &model,
                                                      const std::map<std::string, int64_t> &dims,
                                                      bool gpu, bool strict) {
  std::ostringstream sink; // the run itself shows the pipeline's warnings
  if (!gpu) {
    std::unique_ptr<Graph> g = cloneGraph(model);
    DLC_ASSIGN_OR_RETURN(Pipeline p, parsePipeline("place-devices{gpu=false}"));
    PipelineOptions po;
    po.out = &sink;
    po.err = &sink;
    DLC_RETURN_IF_ERROR(runPipeline(*g, p, po));
    return g;
  }
  jit::JitOptions jo;
  jo.strictPlacement = strict;
  jo.pipeline.stopAfter = "insert-copies";
  jo.pipeline.out = &sink;
  jo.pipeline.err = &sink;
  return jit::prepareForGpu(model, dims, jo);
}

DeviceCounts countNodesPerDevice(const Graph &g) {
  DeviceCounts counts;
  for (const Node *n : g.nodes()) {
    std::string r = placeRequestOf(*n);
    ++counts.requested[r.empty() ? "(none)" : r];
  }
  std::unique_ptr<Graph> copy = cloneGraph(g);
  std::ostringstream sink;
  PipelineOptions po;
  po.out = &sink;
  po.err = &sink;
  Expected<Pipeline> p = parsePipeline("place-devices");
  Status st = p ? runPipeline(*copy, *p, po) : p.status();
  if (!st.isOk()) {
    counts.note = st.message();
    return counts;
  }
  for (const Node *n : copy->nodes())
    ++counts.assigned[n->device().str()];
  return counts;
}

nlohmann::ordered_json deviceCountsJson(const DeviceCounts &counts) {
  nlohmann::ordered_json j;
  j["requested"] = counts.requested;
  j["assigned"] = counts.assigned;
  if (!counts.note.empty())
    j["note"] = counts.note;
  return j;
}

std::string formatDeviceCounts(const DeviceCounts &counts) {
  auto join = [](const std::map<std::string, int> &m) {
    std::string line;
    for (const auto &[device, n] : m)
      line += fmt::format("{}{} {}", line.empty() ? "" : ", ", device, n);
    return line;
  };
  return fmt::format("  requested: {}\n  assigned (place-devices, a GPU that runs every op): {}\n",
                     join(counts.requested),
                     counts.note.empty() ? join(counts.assigned) : "unknown (" + counts.note + ")");
}

} // namespace dlc::tool
