// `dlc inspect graph.pb`: a TensorFlow GraphDef's placeholders, default outputs (the sinks),
// op histogram, requested devices, parameters and the ops dlc would refuse.
#include <iostream>

#include <nlohmann/json.hpp>

#include "frontend/tf/importer.h"
#include "tools/dlc/commands.h"
#include "tools/dlc/placement_report.h"

namespace dlc::tool {

int inspectTfGraph(const std::string &path, bool text, bool json) {
  auto sumOr = tf::summarizeFile(path, text);
  if (!sumOr)
    return reportError(sumOr.status());
  const tf::GraphSummary &s = *sumOr;
  // Nodes per device after import (dlc's nodes, not TensorFlow's): requested, and as
  // place-devices assigns them with the fake GPU, when the graph imports.
  std::optional<DeviceCounts> devices;
  std::string devicesNote;
  if (s.refused.empty()) {
    tf::ImportOptions io;
    io.text = text;
    auto graph = tf::importFile(path, io);
    if (graph)
      devices = countNodesPerDevice(**graph);
    else
      devicesNote = graph.status().message();
  } else {
    devicesNote = "the graph has refused ops";
  }
  int64_t paramCount = 0, paramBytes = 0;
  for (const auto &[dt, p] : s.params) {
    paramCount += p.count;
    paramBytes += p.bytes;
  }
  if (json) {
    nlohmann::ordered_json j;
    j["model"] = path;
    j["format"] = text ? "tf-text" : "tf";
    j["producer"] = s.producer;
    j["nodes"] = s.numNodes;
    j["placeholders"] = nlohmann::json::array();
    for (const auto &io : s.placeholders)
      j["placeholders"].push_back({{"name", io.name}, {"type", io.type}});
    j["sinks"] = s.sinks;
    j["ops"] = s.opHistogram;
    j["requested_devices"] = nlohmann::json::object();
    for (const auto &[d, n] : s.requestedDevices)
      j["requested_devices"][d.empty() ? "(none)" : d] = n;
    j["colocated_nodes"] = s.colocatedNodes;
    for (const auto &[dt, p] : s.params)
      j["parameters"][std::string(dtypeName(dt))] = {{"count", p.count}, {"bytes", p.bytes}};
    j["refused"] = nlohmann::json::array();
    for (const auto &r : s.refused)
      j["refused"].push_back(
          {{"op", r.opType}, {"count", r.count}, {"nodes", r.nodes}, {"reason", r.reason}});
    if (devices) {
      j["placement"] = deviceCountsJson(*devices);
    } else {
      j["placement"] = nullptr;
      j["placement_note"] = devicesNote;
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "model: " << path << "\n";
  std::cout << fmt::format("  TensorFlow GraphDef{}, producer {}, {} nodes\n",
                           text ? " (text)" : "", s.producer, s.numNodes);
  std::cout << "placeholders (inputs):\n";
  for (const auto &io : s.placeholders)
    std::cout << fmt::format("  {}  {}\n", io.name, io.type);
  std::cout << "sinks (the default outputs; pick others with --outputs NAME[:K]):\n";
  for (const auto &name : s.sinks)
    std::cout << "  " << name << "\n";
  std::cout << fmt::format("ops: {} nodes, {} types\n", s.numNodes, s.opHistogram.size());
  for (const auto &[op, n] : s.opHistogram)
    std::cout << fmt::format("  {:<28} {:>6}\n", op, n);
  std::cout << "requested devices (NodeDef.device):\n";
  for (const auto &[d, n] : s.requestedDevices)
    std::cout << fmt::format("  {:<44} {:>6} node{}\n", d.empty() ? "(none)" : d, n,
                             n == 1 ? "" : "s");
  if (s.colocatedNodes > 0)
    std::cout << fmt::format("  {} node{} with a colocation constraint (_class: loc:@...)\n",
                             s.colocatedNodes, s.colocatedNodes == 1 ? "" : "s");
  std::cout << fmt::format("parameters: {} elements ({})\n", paramCount, humanBytes(paramBytes));
  for (const auto &[dt, p] : s.params)
    std::cout << fmt::format("  {:<6} {:>12} {:>12}\n", dtypeName(dt), p.count,
                             humanBytes(p.bytes));
  std::cout << "nodes per device (dlc's nodes after import):\n";
  if (devices) {
    std::cout << formatDeviceCounts(*devices);
  } else {
    std::cout << "  unknown (" << devicesNote << ")\n";
  }
  if (s.refused.empty()) {
    std::cout << "refused ops: none\n";
  } else {
    std::cout << "refused ops: " << s.refused.size() << "\n";
    for (const auto &r : s.refused) {
      std::string names;
      for (const auto &n : r.nodes)
        names += (names.empty() ? "" : ", ") + n;
      std::cout << fmt::format(
          "  {}: {} node{}: {}{} -- {}\n", r.opType, r.count, r.count == 1 ? "" : "s", names,
          r.count > static_cast<int64_t>(r.nodes.size()) ? ", ..." : "", r.reason);
    }
  }
  return 0;
}

} // namespace dlc::tool
