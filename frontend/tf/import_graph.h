// The importer's view of a GraphDef before anything is built: nodes indexed by name, inputs
// parsed, outputs chosen, the nodes they need, their order, which of them are live after
// constant-predicate control flow, and what is refused. importer.cc builds the IR from it;
// summary.cc reports from it.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "frontend/tf/graph_def.pb.h"
#include "frontend/tf/importer.h"

namespace dlc::tf::detail {

/// An input of a NodeDef: `node:index`, or a control input (`^node`).
struct InputRef {
  int node = -1;
  int index = 0;
  bool control = false;
};

class ImportGraph {
public:
  /// Indexes `gd` (kept by reference): errors for an unnamed or duplicate node, a malformed
  /// input, an input naming a node that does not exist.
  static Expected<ImportGraph> index(const tfproto::GraphDef &gd, std::string displayName,
                                     std::string graphName);

  Expected<std::unique_ptr<Graph>> build(const ImportOptions &opts);

  // Steps, public for the summary.
  /// The nodes the outputs come from: the requested ones, else the sinks.
  Expected<std::vector<int>> outputNodes(const std::vector<std::string> &requested) const;
  /// Marks the nodes `outputs` need (data and control inputs, transitively).
  Status selectNeeded(const std::vector<int> &outputs);
  /// The needed nodes in a topological order; a cycle is refused ops (loops) or an error.
  Expected<std::vector<int>> sortNeeded();
  /// Folds Switch/Merge on constant predicates: which nodes are live, which input each Merge
  /// forwards.
  Status computeLiveness(const std::vector<int> &order);
  /// What is refused among the `nodes`, grouped by op type.
  std::vector<GraphSummary::Refused> refused(const std::vector<int> &nodes) const;
  Status checkRefusals(const std::vector<int> &order);
  /// Placeholder shapes (attribute `shape`, or opts.inputShapes); unknown ranks are errors,
  /// all listed at once.
  Status checkPlaceholders(const std::vector<int> &order, const ImportOptions &opts);
  /// `name` or `name:k` naming an existing node (`flag` names the option in errors).
  Expected<InputRef> parseTensorName(const std::string &spec, const char *flag) const;
  /// Nodes nobody consumes other than Const/NoOp/Assert/Placeholders.
  std::vector<int> sinks() const;

  const tfproto::GraphDef &graphDef() const { return gd_; }
  size_t numNodes() const { return static_cast<size_t>(gd_.node_size()); }

private:
  ImportGraph(const tfproto::GraphDef &gd, std::string displayName, std::string graphName)
      : gd_(gd), displayName_(std::move(displayName)), graphName_(std::move(graphName)) {}

  /// The constant value of a Switch's predicate (through Identity), or nullopt.
  std::optional<bool> constantPredicate(int switchNode) const;
  Status addOutputs(Graph &g, const std::vector<int> &outputNodes,
                    const std::vector<std::string> &requested);
  static void warnAboutRandomOps(const Graph &g);

  const tfproto::GraphDef &gd_;
  std::string displayName_, graphName_;
  std::unordered_map<std::string, int> byName_;
  std::vector<std::vector<InputRef>> inputs_;
  std::vector<char> needed_;      // per node
  std::vector<char> isOutput_;    // per node: an output comes from it
  std::vector<char> live_;        // per node
  std::map<int, int> switchLive_; // Switch with a constant predicate -> its live output
  std::map<int, int> mergeInput_; // Merge -> the data input it forwards
  std::map<int, Shape> placeholderShapes_;
  std::vector<std::vector<Value *>> values_; // per node: its outputs, once built
  std::set<std::string> functions_;
};

} // namespace dlc::tf::detail
