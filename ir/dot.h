// The graph as a Graphviz picture: what `dlc opt --dot` writes and `--svg` renders.
//
// Nodes are boxes labelled with their op and name (and the constants they read, by type);
// their fill is the device they run on (gpu green, cpu blue, unplaced white); the copies
// insert-copies adds between devices are orange and say which way they go. Each fused group
// (`fuse.group`) is a cluster titled with its id and ops, so what fused with what is seen at a
// glance. Edges carry the value's type; graph inputs and outputs are ellipses. A legend names
// the colours. `scope` draws only the nodes whose name starts with a prefix, with the values
// that cross its border as small stubs, so one block of a large model can be looked at.
#pragma once

#include <ostream>
#include <string>

#include "ir/graph.h"

namespace dlc {

struct DotOptions {
  /// Only nodes whose name starts with this prefix (empty: every node).
  std::string scope;
  /// Title drawn above the graph (empty: the graph's name).
  std::string title;
};

/// The number of nodes `writeDot` would draw (after `scope`).
int64_t dotNodeCount(const Graph &g, const DotOptions &opts = {});

void writeDot(const Graph &g, std::ostream &os, const DotOptions &opts = {});

} // namespace dlc
