#include "ir/dot.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "ir/annotations/fused_groups.h"

namespace dlc {

namespace {

constexpr const char *kGpuFill = "#c7e9c0";
constexpr const char *kCpuFill = "#c6dbef";
constexpr const char *kCopyFill = "#fdae6b";
constexpr const char *kUnsetFill = "#ffffff";

/// A DOT double-quoted string's contents: quotes and backslashes escaped, newlines as \n.
std::string escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

bool inScope(const Node &n, const DotOptions &opts) {
  return opts.scope.empty() || n.name().starts_with(opts.scope);
}

std::string fillOf(const Node &n) {
  if (n.op() == Op::kCopy)
    return kCopyFill;
  switch (n.device().kind) {
  case Device::Kind::kGpu:
    return kGpuFill;
  case Device::Kind::kCpu:
    return kCpuFill;
  default:
    return kUnsetFill;
  }
}

std::string nodeLabel(const Node &n) {
  std::string label = std::string(n.opName());
  if (!n.name().empty())
    label += "\n" + n.name();
  if (n.op() == Op::kCopy && n.input(0) && n.input(0)->producer())
    label += fmt::format("\n{} -> {}", n.input(0)->producer()->device().str(), n.device().str());
  else if (n.device().isSet())
    label += "\n@" + n.device().str();
  for (const Value *v : n.inputs())
    if (v && v->isConstant())
      label += fmt::format("\n{}: {}", v->name(), v->type().str());
  return label;
}

/// The DOT id of node i ("n12"), of a graph input ("in3") or output ("out0").
std::string nodeId(size_t i) { return fmt::format("n{}", i); }

} // namespace

int64_t dotNodeCount(const Graph &g, const DotOptions &opts) {
  int64_t count = 0;
  for (const Node *n : g.nodes())
    count += inScope(*n, opts);
  return count;
}

void writeDot(const Graph &g, std::ostream &os, const DotOptions &opts) {
  const std::vector<Node *> nodes = g.nodes();
  std::map<const Node *, size_t> index;
  for (size_t i = 0; i < nodes.size(); ++i)
    index[nodes[i]] = i;
  os << "digraph dlc {\n";
  os << "  rankdir=TB;\n";
  os << fmt::format("  label=\"{}\";\n  labelloc=t;\n  fontname=\"Helvetica\";\n",
                    escape(opts.title.empty() ? "@" + g.name() : opts.title));
  os << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n";
  os << "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\"];\n";

  // Legend: the colours, once.
  os << "  subgraph cluster_legend {\n    label=\"legend\";\n    style=dashed;\n";
  os << fmt::format("    legend_gpu [label=\"runs on the GPU\", fillcolor=\"{}\"];\n", kGpuFill);
  os << fmt::format("    legend_cpu [label=\"runs on the CPU\", fillcolor=\"{}\"];\n", kCpuFill);
  os << fmt::format("    legend_copy [label=\"copy between devices\", fillcolor=\"{}\"];\n",
                    kCopyFill);
  os << "    legend_group [label=\"fused group (one kernel)\", shape=box, style=dashed];\n";
  os << "  }\n";

  // Graph inputs used in scope.
  std::map<const Value *, std::string> source; // value -> DOT id drawing where it comes from
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value *v = g.inputs()[i];
    bool used = false;
    for (const Use &u : v->uses())
      used |= inScope(*u.node, opts);
    if (!used)
      continue;
    const std::string id = fmt::format("in{}", i);
    os << fmt::format("  {} [label=\"{}\\n{}\", shape=ellipse, style=filled, "
                      "fillcolor=\"#eeeeee\"];\n",
                      id, escape(v->name()), escape(v->type().str()));
    source[v] = id;
  }

  // Nodes, fused groups as clusters.
  std::map<int64_t, std::vector<const Node *>> groups;
  for (const Node *n : nodes) {
    if (!inScope(*n, opts))
      continue;
    if (auto id = fuseGroupOf(*n))
      groups[*id].push_back(n);
  }
  auto drawNode = [&](const Node &n, const std::string &indent) {
    os << fmt::format("{}{} [label=\"{}\", fillcolor=\"{}\"{}];\n", indent, nodeId(index[&n]),
                      escape(nodeLabel(n)), fillOf(n),
                      n.op() == Op::kCopy ? ", shape=hexagon" : "");
  };
  for (const auto &[id, members] : groups) {
    std::string ops;
    std::set<std::string_view> seen;
    for (const Node *n : members)
      if (seen.insert(n->opName()).second)
        ops += (ops.empty() ? "" : " + ") + std::string(n->opName());
    os << fmt::format("  subgraph cluster_g{} {{\n    label=\"group {}: {}\";\n    style=dashed;\n"
                      "    color=\"#444444\";\n",
                      id, id, escape(ops));
    for (const Node *n : members)
      drawNode(*n, "    ");
    os << "  }\n";
  }
  for (const Node *n : nodes)
    if (inScope(*n, opts) && !fuseGroupOf(*n))
      drawNode(*n, "  ");

  // Edges: every non-constant input of a node in scope, from its producer, a graph input, or a
  // stub for a producer outside the scope.
  std::set<const Value *> stubs;
  auto from = [&](const Value *v) -> std::string {
    if (auto it = source.find(v); it != source.end())
      return it->second;
    const Node *p = v->producer();
    if (p && inScope(*p, opts))
      return nodeId(index[p]);
    const std::string id = fmt::format("stub_{}", stubs.size());
    if (stubs.insert(v).second) {
      os << fmt::format("  {} [label=\"{}\", shape=plaintext, style=\"\"];\n", id,
                        escape("... " + v->name()));
      source[v] = id;
    }
    return source[v];
  };
  for (const Node *n : nodes) {
    if (!inScope(*n, opts))
      continue;
    for (const Value *v : n->inputs()) {
      if (!v || v->isConstant())
        continue;
      const std::string src = from(v);
      os << fmt::format("  {} -> {} [label=\"{}\"];\n", src, nodeId(index[n]),
                        escape(v->type().str()));
    }
  }

  // Graph outputs produced in scope; values read outside the scope end in stubs.
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const Graph::Output &o = g.outputs()[i];
    const Node *p = o.value->producer();
    if (!p || !inScope(*p, opts))
      continue;
    const std::string id = fmt::format("out{}", i);
    os << fmt::format("  {} [label=\"{}\", shape=ellipse, style=filled, fillcolor=\"#eeeeee\"];\n",
                      id, escape(o.name));
    os << fmt::format("  {} -> {} [label=\"{}\"];\n", nodeId(index[p]), id,
                      escape(o.value->type().str()));
  }
  if (!opts.scope.empty()) {
    size_t k = 0;
    for (const Node *n : nodes) {
      if (!inScope(*n, opts))
        continue;
      for (const Value *v : n->outputs()) {
        if (!v)
          continue;
        std::set<const Node *> outside;
        for (const Use &u : v->uses())
          if (!inScope(*u.node, opts))
            outside.insert(u.node);
        if (outside.empty())
          continue;
        const std::string id = fmt::format("exit_{}", k++);
        os << fmt::format(
            "  {} [label=\"{}\", shape=plaintext, style=\"\"];\n", id,
            escape(fmt::format("{} ... ({} readers outside)", v->name(), outside.size())));
        os << fmt::format("  {} -> {} [label=\"{}\", style=dashed];\n", nodeId(index[n]), id,
                          escape(v->type().str()));
      }
    }
  }
  os << "}\n";
}

} // namespace dlc
