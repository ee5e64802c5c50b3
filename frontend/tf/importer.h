// The TensorFlow importer: a frozen GraphDef (binary `.pb` or text `.pbtxt`) -> ir::Graph.
//
// What it does, in order: parse the GraphDef; index the nodes (a duplicate name, or an input
// naming a node that does not exist, is an error naming the node); pick the outputs (the
// user's `name[:k]` list, else the sinks: nodes nobody consumes, other than Const, NoOp and
// Assert) and keep only the nodes they need; fold TF1 control flow whose predicate is a
// constant (the dead branch of a Switch goes, a Merge forwards its live input); refuse, all
// at once, what an inference compiler cannot run (training ops, variables of an unfrozen
// graph, control flow on run-time predicates, function calls, strings), each with op, count
// and node names; order the rest (a cycle is an error naming its nodes); then build the IR:
// Placeholders are the graph's inputs (PlaceholderWithDefault too), Consts are constants,
// every other node goes through its op's converter (convert.h, ops_*.cc).
//
// Names are TensorFlow's: node names with their scopes, values `name` (output 0) and
// `name:k`. Devices (`device`), colocation (`_class: loc:@X`) and reference edges
// (`DT_*_REF`) are kept on the nodes as placement annotations (ir/annotations/placement.h)
// for place-devices; nothing is placed here.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace dlc::tf {

struct ImportOptions {
  /// Shapes for Placeholders, by node name (`--input-shape X=1,784`); -1 is a dim left
  /// symbolic. Needed when a Placeholder's rank is unknown; otherwise it must agree with the
  /// Placeholder's known dims.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// The graph's outputs as TensorFlow tensor names (`name` = `name:0`, or `name:k`); empty:
  /// every output of every sink.
  std::vector<std::string> outputs;
  /// The file is a text GraphDef (`.pbtxt`).
  bool text = false;
};

Expected<std::unique_ptr<Graph>> importFile(const std::string &path, const ImportOptions &opts);
/// `bytes` is the serialized (or, with opts.text, the text) GraphDef; `displayName` names it
/// in errors.
Expected<std::unique_ptr<Graph>> importBytes(std::string_view bytes, const std::string &displayName,
                                             const ImportOptions &opts);

/// What `dlc inspect` reports about a GraphDef, whether or not it imports.
struct GraphSummary {
  int64_t producer = 0; // versions.producer (GraphDef version of the writer)
  int64_t numNodes = 0;
  std::map<std::string, int64_t> opHistogram; // TensorFlow op type -> count
  struct Io {
    std::string name;
    std::string type; // "f32[?,784]", "DT_STRING"
  };
  std::vector<Io> placeholders;
  std::vector<std::string> sinks;                  // the default outputs, as tensor names
  std::map<std::string, int64_t> requestedDevices; // device string ("" = none) -> node count
  int64_t colocatedNodes = 0;                      // nodes with a `_class: loc:@` attribute
  struct Params {
    int64_t count = 0; // elements
    int64_t bytes = 0;
  };
  std::map<DType, Params> params; // Const nodes, by dtype
  struct Refused {
    std::string opType;
    std::string reason;
    int64_t count = 0;
    std::vector<std::string> nodes; // up to five
  };
  std::vector<Refused> refused; // among the nodes the default outputs need
};

Expected<GraphSummary> summarizeFile(const std::string &path, bool text);

} // namespace dlc::tf
