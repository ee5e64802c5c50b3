// `--placement-report` of `dlc opt`, `dlc run` and `dlc compile`, and the "nodes per device"
// lines of `dlc inspect`: where place-devices put each node and why, read back from the
// annotations it leaves (ir/annotations/placement.h) and the nodes' devices. Nothing here
// decides a placement.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "ir/graph.h"
#include "ir/status.h"

namespace dlc::tool {

/// The CLI value of `--placement-report` given without `=FILE`: the text table to stderr.
inline constexpr const char *kReportToStderr = "-";

/// Every node of `g` (name, op, requested device, assigned device, colocation group, reason)
/// as a table, after a line counting nodes per device.
std::string placementReportText(const Graph &g);

/// The same as JSON: {"graph", "devices": {device: count}, "nodes": [{"name", "op",
/// "requested", "assigned", "group", "reason"}]} (absent values are null).
std::string placementReportJson(const Graph &g);

/// `target` "-": the text table to stderr, under `title`; any other target is the JSON file
/// to write.
Status writePlacementReport(const Graph &g, const std::string &target, const std::string &title);

/// What `dlc run` and `dlc compile` report on: with `gpu`, the model specialised to `dims` and
/// run through the GPU pipeline up to insert-copies (codegen's answer on GPU kernels,
/// `strict` as --no-cpu-fallback); without, a copy placed with place-devices{gpu=false} (the
/// CPU reference backend runs every node). Pipeline warnings are not repeated.
Expected<std::unique_ptr<Graph>> placedGraphForReport(const Graph &model,
                                                      const std::map<std::string, int64_t> &dims,
                                                      bool gpu, bool strict);

/// Node counts per requested device (`place.request` as the model wrote it, "(none)" when
/// absent) and per assigned device after place-devices with the fake GPU of `dlc opt` on a
/// copy of `g`: for `dlc inspect`.
struct DeviceCounts {
  std::map<std::string, int> requested;
  std::map<std::string, int> assigned;
  std::string note; // why `assigned` is empty, when placement failed
};
DeviceCounts countNodesPerDevice(const Graph &g);
/// The same as `dlc inspect --json` writes it: {"requested": {...}, "assigned": {...}, "note"}.
nlohmann::ordered_json deviceCountsJson(const DeviceCounts &counts);
/// `dlc inspect`'s lines for them: "  requested: ..." and "  assigned (...): ...".
std::string formatDeviceCounts(const DeviceCounts &counts);

} // namespace dlc::tool
