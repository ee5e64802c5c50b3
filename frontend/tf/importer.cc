#include "frontend/tf/importer.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "frontend/tf/convert.h"
#include "frontend/tf/graph_def_io.h"
#include "frontend/tf/import_graph.h"
#include "frontend/tf/refusals.h"
#include "frontend/tf/tensor_proto.h"
#include "ir/annotations/placement.h"
#include "ir/limits.h"

namespace dlc::tf {

namespace detail {

namespace {

/// Ops that only pass their input on: they become no node at all.
const std::set<std::string, std::less<>> kForwardOps = {
    "Identity",      "StopGradient", "Snapshot",  "PreventGradient",
    "CheckNumerics", "EnsureShape",  "IdentityN", "RefIdentity"};

std::string tensorName(const std::string &node, int k) {
  return k == 0 ? node : fmt::format("{}:{}", node, k);
}

/// Sets the placement annotations (ir/annotations/placement.h) on the nodes built for `def`.
Status annotatePlacement(const tfproto::NodeDef &def, const std::vector<Node *> &built,
                         const std::unordered_set<const Value *> &refValues) {
  if (!def.device().empty()) {
    // Checked here too, so that every command (not only those that place) refuses it.
    auto spec = parseDeviceSpec(def.device());
    if (!spec)
      return invalidArgument("node '{}' ({}): {}", def.name(), def.op(), spec.status().message());
  }
  std::vector<std::string> colocate;
  auto cls = def.attr().find("_class");
  if (cls != def.attr().end() && cls->second.value_case() == tfproto::AttrValue::kList)
    for (const std::string &s : cls->second.list().s())
      if (s.rfind("loc:@", 0) == 0 && s.size() > 5)
        colocate.push_back(s.substr(5));
  for (Node *n : built) {
    if (!def.device().empty())
      n->setAttr(std::string(kPlaceRequestAttr), Attribute(def.device()));
    if (!colocate.empty())
      n->setAttr(std::string(kPlaceColocateAttr), Attribute(colocate));
    std::vector<int64_t> refs;
    for (int i = 0; i < n->numInputs(); ++i)
      if (n->input(i) && refValues.count(n->input(i)))
        refs.push_back(i);
    if (!refs.empty())
      n->setAttr(std::string(kPlaceRefInputsAttr), Attribute(refs));
  }
  return Status::ok();
}

/// Whether the node's element type attribute is a reference type (its outputs are refs).
bool hasRefOutputs(const tfproto::NodeDef &def) {
  for (const char *name : {"T", "dtype"}) {
    auto it = def.attr().find(name);
    if (it != def.attr().end() && it->second.value_case() == tfproto::AttrValue::kType &&
        fromTfType(it->second.type()).ref)
      return true;
  }
  return false;
}

} // namespace

Expected<std::unique_ptr<Graph>> ImportGraph::build(const ImportOptions &opts) {
  auto g = std::make_unique<Graph>(graphName_);
  DLC_ASSIGN_OR_RETURN(std::vector<int> outputNodes, outputNodes(opts.outputs));
  DLC_RETURN_IF_ERROR(selectNeeded(outputNodes));
  DLC_ASSIGN_OR_RETURN(std::vector<int> order, sortNeeded());
  DLC_RETURN_IF_ERROR(computeLiveness(order));
  DLC_RETURN_IF_ERROR(checkRefusals(order));
  DLC_RETURN_IF_ERROR(checkPlaceholders(order, opts));

  ShapeValues shapeValues;
  std::unordered_set<const Value *> refValues, renamed;
  std::vector<std::string> warnings;
  values_.assign(numNodes(), {});
  for (int i : order) {
    if (!live_[static_cast<size_t>(i)])
      continue;
    const tfproto::NodeDef &def = gd_.node(i);
    std::vector<Value *> in;
    const int forwarded = def.op() == "Merge" ? mergeInput_.at(i) : -1;
    int dataIndex = -1;
    for (const InputRef &r : inputs_[static_cast<size_t>(i)]) {
      if (r.control)
        continue;
      ++dataIndex;
      if (forwarded >= 0 && dataIndex != forwarded)
        continue; // a Merge reads only its live input
      const std::vector<Value *> &vals = values_[static_cast<size_t>(r.node)];
      if (r.index >= static_cast<int>(vals.size()) || !vals[static_cast<size_t>(r.index)])
        return invalidArgument("node '{}' ({}) reads '{}', but node '{}' ({}) has {} output{}",
                               def.name(), def.op(), tensorName(gd_.node(r.node).name(), r.index),
                               gd_.node(r.node).name(), gd_.node(r.node).op(), vals.size(),
                               vals.size() == 1 ? "" : "s");
      in.push_back(vals[static_cast<size_t>(r.index)]);
    }
    std::vector<Value *> out;
    const std::string &op = def.op();
    if (op == "Placeholder" || op == "PlaceholderWithDefault") {
      TfType t = fromTfType(def.attr().at("dtype").type());
      Value *v = g->addInput(def.name(), TensorType(t.dtype, placeholderShapes_.at(i)));
      if (t.ref)
        refValues.insert(v);
      out = {v};
    } else if (op == "Const") {
      auto it = def.attr().find("value");
      if (it == def.attr().end() || it->second.value_case() != tfproto::AttrValue::kTensor)
        return invalidArgument("node '{}' (Const): attribute 'value' is missing or not a tensor",
                               def.name());
      auto tensor = fromTfTensor(it->second.tensor());
      if (!tensor)
        return Status(tensor.status().code(),
                      fmt::format("node '{}' (Const): {}", def.name(), tensor.status().message()));
      out = {g->addConstant(def.name(), std::move(*tensor))};
    } else if (kForwardOps.count(op)) {
      out = in;
    } else if (op == "NoOp" || op == "Assert") {
      out = {};
    } else if (op == "Switch") {
      // A constant predicate (computeLiveness): both outputs are the data; the dead one has
      // no live consumer.
      out = {in.at(0), in.at(0)};
    } else if (op == "Merge") {
      const int k = mergeInput_.at(i);
      Value *index =
          g->addConstant(def.name() + ":1", Tensor::fromVector<int32_t>(DType::kI32, {}, {k}));
      out = {in.at(0), index};
    } else {
      const ConverterRow *row = findConverter(op);
      if (!row)
        return internalError("node '{}': no converter for op '{}'", def.name(), op);
      NodeConverter c(*g, def, std::move(in), shapeValues);
      DLC_RETURN_IF_ERROR(c.checkInputCount(row->minInputs, row->maxInputs));
      DLC_RETURN_IF_ERROR(row->convert(c));
      DLC_RETURN_IF_ERROR(annotatePlacement(def, c.built(), refValues));
      for (const std::string &w : c.warnings())
        warnings.push_back(w);
      std::unordered_set<const Node *> mine(c.built().begin(), c.built().end());
      out = c.outputs();
      for (size_t k = 0; k < out.size(); ++k) {
        Value *v = out[k];
        if (v && v->isNodeOutput() && mine.count(v->producer()) && renamed.insert(v).second)
          g->renameValue(v, tensorName(def.name(), static_cast<int>(k)));
      }
    }
    if (hasRefOutputs(def))
      for (Value *v : out)
        if (v)
          refValues.insert(v);
    values_[static_cast<size_t>(i)] = std::move(out);
  }
  DLC_RETURN_IF_ERROR(addOutputs(*g, outputNodes, opts.outputs));
  for (const std::string &w : warnings)
    spdlog::warn("{}", w);
  warnAboutRandomOps(*g);
  DLC_RETURN_IF_ERROR(g->topologicalSort());
  return g;
}

Status ImportGraph::addOutputs(Graph &g, const std::vector<int> &outputNodes,
                               const std::vector<std::string> &requested) {
  auto add = [&](int node, int k) -> Status {
    const std::vector<Value *> &vals = values_[static_cast<size_t>(node)];
    const std::string &name = gd_.node(node).name();
    if (k >= static_cast<int>(vals.size()) || !vals[static_cast<size_t>(k)])
      return invalidArgument("output '{}': node '{}' ({}) has {} output{}", tensorName(name, k),
                             name, gd_.node(node).op(), vals.size(), vals.size() == 1 ? "" : "s");
    g.addOutput(tensorName(name, k), vals[static_cast<size_t>(k)]);
    return Status::ok();
  };
  if (!requested.empty()) {
    for (const std::string &spec : requested) {
      DLC_ASSIGN_OR_RETURN(InputRef r, parseTensorName(spec, "--outputs"));
      DLC_RETURN_IF_ERROR(add(r.node, r.index));
    }
    return Status::ok();
  }
  for (int node : outputNodes)
    for (size_t k = 0; k < values_[static_cast<size_t>(node)].size(); ++k)
      DLC_RETURN_IF_ERROR(add(node, static_cast<int>(k)));
  if (g.outputs().empty())
    return invalidArgument("{}: the graph has no outputs (no node produces a value nobody "
                           "consumes); name them with --outputs NAME[:K]",
                           displayName_);
  return Status::ok();
}

void ImportGraph::warnAboutRandomOps(const Graph &g) {
  // Only random nodes the outputs depend on: a folded dropout mask leaves its RandomUniform
  // behind, unused, for dce.
  std::unordered_set<const Node *> used;
  std::vector<const Node *> work;
  for (const Graph::Output &o : g.outputs())
    if (o.value->isNodeOutput())
      work.push_back(o.value->producer());
  while (!work.empty()) {
    const Node *n = work.back();
    work.pop_back();
    if (!used.insert(n).second)
      continue;
    for (const Value *v : n->inputs())
      if (v && v->isNodeOutput())
        work.push_back(v->producer());
  }
  for (const Node *n : g.nodes())
    if (n->def().random && used.count(n))
      spdlog::warn("{}: a random op stays in the graph (a dropout whose keep_prob is not a "
                   "constant 1?): results differ from run to run",
                   n->describe());
}

} // namespace detail

Expected<std::unique_ptr<Graph>> importBytes(std::string_view bytes, const std::string &displayName,
                                             const ImportOptions &opts) {
  DLC_ASSIGN_OR_RETURN(tfproto::GraphDef gd, detail::parseGraphDef(bytes, opts.text, displayName));
  DLC_RETURN_IF_ERROR(checkNodeCount(gd.node_size(), "the graph").withContext(displayName));
  std::string stem = std::filesystem::path(displayName).stem().string();
  DLC_ASSIGN_OR_RETURN(auto graph, detail::ImportGraph::index(gd, displayName, stem));
  return graph.build(opts);
}

Expected<std::unique_ptr<Graph>> importFile(const std::string &path, const ImportOptions &opts) {
  DLC_ASSIGN_OR_RETURN(std::string bytes, detail::readFileBytes(path));
  return importBytes(bytes, path, opts);
}

} // namespace dlc::tf
