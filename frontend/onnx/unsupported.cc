#include "frontend/onnx/unsupported.h"

#include <map>
#include <set>

#include <fmt/ranges.h>

#include "frontend/onnx/normalize.h"

namespace dlc::onnx::detail {

namespace {

constexpr size_t kMaxNamesListed = 5;

const std::set<std::string, std::less<>> kSequenceOps = {
    "SequenceAt",     "SequenceConstruct", "SequenceEmpty",      "SequenceErase",
    "SequenceInsert", "SequenceLength",    "SplitToSequence",    "ConcatFromSequence",
    "SequenceMap",    "Optional",          "OptionalGetElement", "OptionalHasElement"};
const std::set<std::string, std::less<>> kStringOps = {"StringNormalizer", "RegexFullMatch",
                                                       "StringConcat", "StringSplit"};
// The optimizers of ai.onnx.preview.training that the reference backend runs; the domain's
// gradient ops (Gradient, ...) stay out of scope.
const std::set<std::string, std::less<>> kTrainingOps = {"Adagrad", "Adam", "Momentum"};

// Why `opType` of `domain` cannot be imported, or "" when it can.
std::string reasonFor(const std::string &domain, const std::string &opType) {
  if (domain == kTrainingDomain)
    return kTrainingOps.count(opType) ? "" : "out of scope: training op";
  if (!isDefaultDomain(domain))
    return "unknown domain";
  if (kTrainingOps.count(opType))
    return fmt::format("not an ai.onnx op: {} is in {}", opType, kTrainingDomain);
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

namespace {

using Slots = std::map<std::pair<std::string, std::string>, size_t>; // (domain, type) -> index

void addUnsupported(const ::onnx::NodeProto &node, std::string label, const std::string &domain,
                    std::string reason, const Opsets &opsets,
                    std::vector<ModelSummary::Unsupported> &out, Slots &slot) {
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
    u.nodes.push_back(std::move(label));
}

// Adds the unsupported ops of `graph` and of its bodies (graph attributes) to `out`; the
// nodes of a body are labelled `<node>/<attribute>/<node in the body>`.
void collectUnsupported(const ::onnx::GraphProto &graph, const Opsets &opsets,
                        const std::string &prefix, std::vector<ModelSummary::Unsupported> &out,
                        Slots &slot) {
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto &node = graph.node(i);
    std::string domain = isDefaultDomain(node.domain()) ? "" : node.domain();
    std::string reason = reasonFor(domain, node.op_type());
    if (!reason.empty())
      addUnsupported(node, prefix + nodeLabel(node, i), domain, std::move(reason), opsets, out,
                     slot);
    for (const auto &a : node.attribute())
      if (a.has_g())
        collectUnsupported(a.g(), opsets, prefix + nodeLabel(node, i) + "/" + a.name() + "/", out,
                           slot);
  }
}

} // namespace

std::vector<ModelSummary::Unsupported> findUnsupported(const ::onnx::GraphProto &graph,
                                                       const Opsets &opsets) {
  std::vector<ModelSummary::Unsupported> out;
  Slots slot;
  collectUnsupported(graph, opsets, "", out, slot);
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
