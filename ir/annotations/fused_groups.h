// Fused groups as the `fuse` pass leaves them, read back from the graph.
//
// A node annotated `fuse.group = K` belongs to group K with every other node of that
// annotation; a node without it is a group of one. fuse, plan-memory and codegen's lowering
// all need the same view of the graph as a sequence of groups, so it is computed here once.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/status.h"

namespace dlc {

/// The annotation that names a node's fused group.
inline constexpr std::string_view kFuseGroupAttr = "fuse.group";

/// The `fuse.group` id of `n`, or nullopt when it is a group of one (no annotation, or an
/// annotation that is not an int: orderedGroups reports that).
std::optional<int64_t> fuseGroupOf(const Node &n);

/// One step of execution: the nodes of one group, in graph order.
struct NodeGroup {
  /// The `fuse.group` id, or nullopt for a node alone.
  std::optional<int64_t> id;
  std::vector<Node *> nodes;
};

/// The graph's nodes cut into groups, in a topological order of the groups: every group comes
/// after the groups that produce its inputs. The order is stable: among groups that are ready,
/// the one whose first node comes first in graph order goes first, so a graph whose groups are
/// contiguous keeps its node order. Errors: a `fuse.group` that is not an int (naming the
/// node), groups that depend on each other in a cycle (naming two nodes on it).
Expected<std::vector<NodeGroup>> orderedGroups(const Graph &g);

} // namespace dlc
