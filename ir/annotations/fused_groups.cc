#include "ir/annotations/fused_groups.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>

namespace dlc {

std::optional<int64_t> fuseGroupOf(const Node &n) {
  const Attribute *a = n.findAttr(kFuseGroupAttr);
  if (!a || a->kind() != AttrKind::kInt)
    return std::nullopt;
  return a->i();
}

namespace {

std::string unitName(const NodeGroup &u) {
  if (u.id)
    return fmt::format("group {} ({})", *u.id, u.nodes.front()->describe());
  return u.nodes.front()->describe();
}

/// Units still waiting after Kahn's algorithm contain a cycle; walk predecessors to find it.
Status cycleError(const std::vector<NodeGroup> &units, const std::vector<std::set<size_t>> &preds,
                  const std::vector<int> &indegree) {
  size_t u = 0;
  while (indegree[u] == 0)
    ++u;
  std::vector<size_t> path;
  std::map<size_t, size_t> seenAt;
  while (!seenAt.count(u)) {
    seenAt[u] = path.size();
    path.push_back(u);
    for (size_t p : preds[u])
      if (indegree[p] > 0) {
        u = p;
        break;
      }
  }
  // path[i + 1] feeds path[i]; the cycle closes at u.
  std::string text = unitName(units[u]);
  for (size_t i = path.size(); i-- > seenAt[u];)
    text += " -> " + unitName(units[path[i]]);
  return invalidArgument("fused groups depend on each other in a cycle: {}", text);
}

} // namespace

Expected<std::vector<NodeGroup>> orderedGroups(const Graph &g) {
  std::vector<NodeGroup> units;
  std::unordered_map<const Node *, size_t> unitOf;
  std::map<int64_t, size_t> byId;
  for (Node *n : g.nodes()) {
    const Attribute *a = n->findAttr(kFuseGroupAttr);
    if (a && a->kind() != AttrKind::kInt)
      return invalidArgument("{}: annotation '{}' must be an int, got a {}", n->describe(),
                             kFuseGroupAttr, attrKindName(a->kind()));
    std::optional<int64_t> id = fuseGroupOf(*n);
    size_t u = units.size();
    if (id) {
      auto [it, inserted] = byId.emplace(*id, units.size());
      u = it->second;
      if (inserted)
        units.push_back({id, {}});
    } else {
      units.push_back({std::nullopt, {}});
    }
    units[u].nodes.push_back(n);
    unitOf[n] = u;
  }

  // Units are numbered by their first node, so a smaller index means "earlier in the graph".
  std::vector<std::set<size_t>> succs(units.size()), preds(units.size());
  for (size_t u = 0; u < units.size(); ++u)
    for (const Node *n : units[u].nodes)
      for (const Value *in : n->inputs())
        if (in && in->producer()) {
          size_t p = unitOf.at(in->producer());
          if (p != u && succs[p].insert(u).second)
            preds[u].insert(p);
        }
  std::vector<int> indegree(units.size());
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t u = 0; u < units.size(); ++u) {
    indegree[u] = static_cast<int>(preds[u].size());
    if (indegree[u] == 0)
      ready.push(u);
  }
  std::vector<NodeGroup> ordered;
  ordered.reserve(units.size());
  while (!ready.empty()) {
    size_t u = ready.top();
    ready.pop();
    ordered.push_back(units[u]);
    for (size_t s : succs[u])
      if (--indegree[s] == 0)
        ready.push(s);
  }
  if (ordered.size() != units.size())
    return cycleError(units, preds, indegree);
  return ordered;
}

} // namespace dlc
