#include "frontend/onnx/unsupported.h"

#include <map>
#include <set>

#include <fmt/ranges.h>

#include "frontend/onnx/normalize.h"

namespace dlc::onnx::detail {

namespace {

constexpr size_t kMaxNamesListed = 5;

const std::set<std::string, std::less<>> kSubgraphOps = {"If", "Loop", "Scan", "SequenceMap"};
const std::set<std::string, std::less<>> kSequenceOps = {
    "SequenceAt",     "SequenceConstruct",  "SequenceEmpty",     "SequenceErase",
    "SequenceInsert", "SequenceLength",     "SplitToSequence",   "ConcatFromSequence",
    "Optional",       "OptionalGetElement", "OptionalHasElement"};
const std::set<std::string, std::less<>> kStringOps = {"StringNormalizer", "RegexFullMatch",
                                                       "StringConcat", "StringSplit"};

// Why `opType` of `domain` cannot be imported, or "" when it can.
std::string reasonFor(const std::string &domain, const std::string &opType) {
  if (domain == kTrainingDomain)
    return "out of scope: training op";
  if (!isDefaultDomain(domain))
    return "unknown domain";
  if (kSubgraphOps.count(opType))
    return "subgraph ops are not supported yet";
  if (kSequenceOps.count(opType))
    return "out of scope: sequence/optional type";
  if (kStringOps.count(opType))
    return "out of scope: string op";
  if (opType == "Constant" || canonicalOp(opType))
    return "";
  return "not implemented";
}

std::string nodeLabel(const ::onnx::NodeProto &node, int index) {
  return node.name().empty() ? fmt::format("#{}", index) : node.name();
}

} // namespace

std::string describeNode(const ::onnx::NodeProto &node, int index) {
  if (node.name().empty())
    return fmt::format("node #{} ({})", index, node.op_type());
  return fmt::format("node '{}' ({})", node.name(), node.op_type());
}

std::vector<ModelSummary::Unsupported> findUnsupported(const ::onnx::GraphProto &graph,
                                                       const Opsets &opsets) {
  std::vector<ModelSummary::Unsupported> out;
  std::map<std::pair<std::string, std::string>, size_t> slot; // (domain, type) -> index in out
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto &node = graph.node(i);
    std::string domain = isDefaultDomain(node.domain()) ? "" : node.domain();
    std::string reason = reasonFor(domain, node.op_type());
    if (reason.empty())
      continue;
    auto [it, fresh] = slot.emplace(std::make_pair(domain, node.op_type()), out.size());
    if (fresh) {
      ModelSummary::Unsupported u;
      u.domain = domain;
      u.opType = node.op_type();
      u.opset = opsets.version(domain);
      u.reason = std::move(reason);
      out.push_back(std::move(u));
    }
    ModelSummary::Unsupported &u = out[it->second];
    ++u.count;
    if (u.nodes.size() < kMaxNamesListed)
      u.nodes.push_back(nodeLabel(node, i));
  }
  return out;
}

Status unsupportedOpsError(const std::vector<ModelSummary::Unsupported> &unsupported) {
  std::string msg = fmt::format("{} unsupported op type{}:", unsupported.size(),
                                unsupported.size() == 1 ? "" : "s");
  for (const auto &u : unsupported) {
    std::string where = u.opset > 0 ? fmt::format("{} opset {}", displayDomain(u.domain), u.opset)
                                    : std::string(displayDomain(u.domain));
    std::string names = fmt::format("{}", fmt::join(u.nodes, ", "));
    if (u.count > static_cast<int64_t>(u.nodes.size()))
      names += ", ...";
    msg += fmt::format("\n  {} ({}): {} node{}: {} -- {}", u.opType, where, u.count,
                       u.count == 1 ? "" : "s", names, u.reason);
  }
  return unimplemented("{}", msg);
}

} // namespace dlc::onnx::detail
