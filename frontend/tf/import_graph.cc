#include "frontend/tf/import_graph.h"

#include <algorithm>
#include <deque>

#include <fmt/ranges.h>

#include "frontend/tf/refusals.h"
#include "frontend/tf/tensor_proto.h"

namespace dlc::tf::detail {

namespace {

constexpr size_t kMaxNamesListed = 5;

/// `name`, `name:k` or `^name` split into its parts (the node is not looked up).
bool splitInput(const std::string &s, std::string &node, int &index, bool &control) {
  control = !s.empty() && s[0] == '^';
  std::string rest = control ? s.substr(1) : s;
  index = 0;
  size_t colon = rest.rfind(':');
  if (colon != std::string::npos) {
    std::string k = rest.substr(colon + 1);
    if (k.empty() || k.size() > 6 || !std::all_of(k.begin(), k.end(), ::isdigit))
      return false;
    index = std::stoi(k);
    rest = rest.substr(0, colon);
  }
  node = rest;
  return !node.empty() && !(control && colon != std::string::npos);
}

std::string listNames(const std::vector<std::string> &names, size_t total) {
  std::string s = fmt::format("{}", fmt::join(names, "', '"));
  return "'" + s + "'" + (total > names.size() ? ", ..." : "");
}

} // namespace

Expected<ImportGraph> ImportGraph::index(const tfproto::GraphDef &gd, std::string displayName,
                                         std::string graphName) {
  ImportGraph g(gd, std::move(displayName), std::move(graphName));
  const int n = gd.node_size();
  for (int i = 0; i < n; ++i) {
    const tfproto::NodeDef &def = gd.node(i);
    if (def.name().empty())
      return invalidArgument("{}: node #{} ({}) has no name", g.displayName_, i, def.op());
    if (def.op().empty())
      return invalidArgument("{}: node '{}' has no op", g.displayName_, def.name());
    if (!g.byName_.emplace(def.name(), i).second)
      return invalidArgument("{}: two nodes are named '{}'", g.displayName_, def.name());
  }
  g.inputs_.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const tfproto::NodeDef &def = gd.node(i);
    for (const std::string &s : def.input()) {
      InputRef r;
      std::string node;
      if (!splitInput(s, node, r.index, r.control))
        return invalidArgument("{}: node '{}' ({}) has a malformed input '{}'", g.displayName_,
                               def.name(), def.op(), s);
      auto it = g.byName_.find(node);
      if (it == g.byName_.end())
        return invalidArgument("{}: node '{}' ({}) reads '{}', but no node is named '{}'",
                               g.displayName_, def.name(), def.op(), s, node);
      r.node = it->second;
      g.inputs_[static_cast<size_t>(i)].push_back(r);
    }
  }
  for (const tfproto::FunctionDef &f : gd.library().function())
    g.functions_.insert(f.signature().name());
  return g;
}

Expected<InputRef> ImportGraph::parseTensorName(const std::string &spec, const char *flag) const {
  InputRef r;
  std::string node;
  if (!splitInput(spec, node, r.index, r.control) || r.control)
    return invalidArgument("{} '{}': expected a tensor name, NAME or NAME:K", flag, spec);
  auto it = byName_.find(node);
  if (it == byName_.end())
    return invalidArgument("{} '{}': {} has no node named '{}'", flag, spec, displayName_, node);
  r.node = it->second;
  return r;
}

std::vector<int> ImportGraph::sinks() const {
  std::vector<char> consumed(numNodes(), 0);
  for (const auto &ins : inputs_)
    for (const InputRef &r : ins)
      consumed[static_cast<size_t>(r.node)] = 1;
  std::vector<int> out;
  for (int i = 0; i < gd_.node_size(); ++i) {
    const std::string &op = gd_.node(i).op();
    if (!consumed[static_cast<size_t>(i)] && op != "Const" && op != "NoOp" && op != "Assert" &&
        op != "Placeholder" && op != "PlaceholderWithDefault")
      out.push_back(i);
  }
  return out;
}

Expected<std::vector<int>>
ImportGraph::outputNodes(const std::vector<std::string> &requested) const {
  if (requested.empty())
    return sinks();
  std::vector<int> out;
  for (const std::string &spec : requested) {
    DLC_ASSIGN_OR_RETURN(InputRef r, parseTensorName(spec, "--outputs"));
    out.push_back(r.node);
  }
  return out;
}

Status ImportGraph::selectNeeded(const std::vector<int> &outputs) {
  needed_.assign(numNodes(), 0);
  isOutput_.assign(numNodes(), 0);
  for (int i : outputs)
    isOutput_[static_cast<size_t>(i)] = 1;
  std::deque<int> work(outputs.begin(), outputs.end());
  while (!work.empty()) {
    int i = work.front();
    work.pop_front();
    if (needed_[static_cast<size_t>(i)])
      continue;
    needed_[static_cast<size_t>(i)] = 1;
    for (const InputRef &r : inputs_[static_cast<size_t>(i)])
      work.push_back(r.node);
  }
  return Status::ok();
}

Expected<std::vector<int>> ImportGraph::sortNeeded() {
  std::vector<int> pending(numNodes(), 0);
  std::vector<std::vector<int>> consumers(numNodes());
  for (int i = 0; i < gd_.node_size(); ++i) {
    if (!needed_[static_cast<size_t>(i)])
      continue;
    for (const InputRef &r : inputs_[static_cast<size_t>(i)]) {
      ++pending[static_cast<size_t>(i)];
      consumers[static_cast<size_t>(r.node)].push_back(i);
    }
  }
  std::vector<int> order;
  std::deque<int> ready;
  for (int i = 0; i < gd_.node_size(); ++i)
    if (needed_[static_cast<size_t>(i)] && pending[static_cast<size_t>(i)] == 0)
      ready.push_back(i);
  while (!ready.empty()) {
    int i = ready.front();
    ready.pop_front();
    order.push_back(i);
    for (int c : consumers[static_cast<size_t>(i)])
      if (--pending[static_cast<size_t>(c)] == 0)
        ready.push_back(c);
  }
  size_t total = static_cast<size_t>(std::count(needed_.begin(), needed_.end(), 1));
  if (order.size() == total)
    return order;
  // A cycle: TF1 loops make them (refused with their reason); anything else is malformed.
  std::vector<int> stuck;
  for (int i = 0; i < gd_.node_size(); ++i)
    if (needed_[static_cast<size_t>(i)] && pending[static_cast<size_t>(i)] > 0)
      stuck.push_back(i);
  DLC_RETURN_IF_ERROR(checkRefusals(stuck));
  std::vector<std::string> names;
  for (size_t k = 0; k < stuck.size() && k < kMaxNamesListed; ++k)
    names.push_back(gd_.node(stuck[k]).name());
  return invalidArgument("{}: the graph has a cycle through {} node{}: {}", displayName_,
                         stuck.size(), stuck.size() == 1 ? "" : "s",
                         listNames(names, stuck.size()));
}

std::optional<bool> ImportGraph::constantPredicate(int switchNode) const {
  const auto &ins = inputs_[static_cast<size_t>(switchNode)];
  int data = 0;
  for (const InputRef &r : ins) {
    if (r.control)
      continue;
    if (data++ != 1)
      continue;
    int p = r.node;
    for (int hops = 0; hops < 64 && gd_.node(p).op() == "Identity"; ++hops) {
      const auto &pin = inputs_[static_cast<size_t>(p)];
      auto it = std::find_if(pin.begin(), pin.end(), [](const InputRef &x) { return !x.control; });
      if (it == pin.end())
        return std::nullopt;
      p = it->node;
    }
    const tfproto::NodeDef &def = gd_.node(p);
    auto v = def.attr().find("value");
    if (def.op() != "Const" || v == def.attr().end())
      return std::nullopt;
    auto t = fromTfTensor(v->second.tensor());
    if (!t || t->dtype() != DType::kBool || t->numElements() != 1)
      return std::nullopt;
    return t->data<bool>()[0];
  }
  return std::nullopt;
}

Status ImportGraph::computeLiveness(const std::vector<int> &order) {
  live_.assign(numNodes(), 0);
  auto inputLive = [&](const InputRef &r) {
    if (!live_[static_cast<size_t>(r.node)])
      return false;
    auto sw = switchLive_.find(r.node);
    return r.control || sw == switchLive_.end() || sw->second == r.index;
  };
  for (int i : order) {
    const tfproto::NodeDef &def = gd_.node(i);
    const auto &ins = inputs_[static_cast<size_t>(i)];
    if (def.op() == "Merge") {
      int k = 0;
      for (const InputRef &r : ins) {
        if (r.control)
          continue;
        if (inputLive(r)) {
          mergeInput_[i] = k;
          live_[static_cast<size_t>(i)] = 1;
          break;
        }
        ++k;
      }
      continue;
    }
    live_[static_cast<size_t>(i)] =
        std::all_of(ins.begin(), ins.end(), [&](const InputRef &r) { return inputLive(r); });
    if (def.op() == "Switch" && live_[static_cast<size_t>(i)])
      if (std::optional<bool> p = constantPredicate(i))
        switchLive_[i] = *p ? 1 : 0;
  }
  // A live node only a dead branch reads (a variable feeding the untaken side) is not needed:
  // keep what the outputs reach through live edges (a Merge through its forwarded input).
  std::vector<char> reached(numNodes(), 0);
  std::deque<int> work;
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    if (live_[static_cast<size_t>(*it)] && isOutput_[static_cast<size_t>(*it)])
      work.push_back(*it);
  while (!work.empty()) {
    int i = work.front();
    work.pop_front();
    if (reached[static_cast<size_t>(i)])
      continue;
    reached[static_cast<size_t>(i)] = 1;
    auto merge = mergeInput_.find(i);
    int data = 0;
    for (const InputRef &r : inputs_[static_cast<size_t>(i)]) {
      if (merge != mergeInput_.end() && !r.control && data++ != merge->second)
        continue;
      if (inputLive(r))
        work.push_back(r.node);
    }
  }
  for (int i : order)
    live_[static_cast<size_t>(i)] =
        live_[static_cast<size_t>(i)] && reached[static_cast<size_t>(i)];
  return Status::ok();
}

std::vector<GraphSummary::Refused> ImportGraph::refused(const std::vector<int> &nodes) const {
  std::vector<GraphSummary::Refused> out;
  std::map<std::string, size_t> slot;
  for (int i : nodes) {
    const tfproto::NodeDef &def = gd_.node(i);
    std::string reason = refusalReason(def, functions_);
    if (reason.empty() && def.op() == "Switch" && !constantPredicate(i))
      reason = "TF1 control flow on a predicate computed at run time (only constant "
               "predicates fold)";
    if (reason.empty())
      continue;
    auto [it, fresh] = slot.emplace(def.op(), out.size());
    if (fresh)
      out.push_back({def.op(), reason, 0, {}});
    GraphSummary::Refused &r = out[it->second];
    ++r.count;
    if (r.nodes.size() < kMaxNamesListed)
      r.nodes.push_back(def.name());
  }
  return out;
}

Status ImportGraph::checkRefusals(const std::vector<int> &order) {
  std::vector<int> nodes;
  for (int i : order)
    if (live_.empty() || live_[static_cast<size_t>(i)])
      nodes.push_back(i);
  std::vector<GraphSummary::Refused> refusedOps = refused(nodes);
  if (refusedOps.empty())
    return Status::ok();
  bool variables = false;
  std::string msg = fmt::format("{}: {} op type{} cannot be imported:", displayName_,
                                refusedOps.size(), refusedOps.size() == 1 ? "" : "s");
  for (const GraphSummary::Refused &r : refusedOps) {
    msg += fmt::format("\n  {}: {} node{}: {} -- {}", r.opType, r.count, r.count == 1 ? "" : "s",
                       listNames(r.nodes, static_cast<size_t>(r.count)), r.reason);
    variables = variables || r.reason.rfind("variable", 0) == 0;
  }
  if (variables)
    msg += fmt::format("\n{}", kFreezeHint);
  return unimplemented("{}", msg);
}

Status ImportGraph::checkPlaceholders(const std::vector<int> &order, const ImportOptions &opts) {
  std::vector<std::string> unknown;
  std::set<std::string> used;
  for (int i : order) {
    const tfproto::NodeDef &def = gd_.node(i);
    if (!live_[static_cast<size_t>(i)] ||
        (def.op() != "Placeholder" && def.op() != "PlaceholderWithDefault"))
      continue;
    auto dt = def.attr().find("dtype");
    if (dt == def.attr().end() || dt->second.value_case() != tfproto::AttrValue::kType)
      return invalidArgument("node '{}' ({}): attribute 'dtype' is missing", def.name(), def.op());
    if (fromTfType(dt->second.type()).dtype == DType::kUnknown)
      return unimplemented("node '{}' ({}): dtype {} has no dlc equivalent", def.name(), def.op(),
                           tfTypeName(dt->second.type()));
    Shape shape = Shape::unranked();
    auto sh = def.attr().find("shape");
    if (sh != def.attr().end() && sh->second.value_case() == tfproto::AttrValue::kShape) {
      auto s = fromTfShape(sh->second.shape(), def.name());
      if (!s)
        return invalidArgument("node '{}' ({}): attribute 'shape': {}", def.name(), def.op(),
                               s.status().message());
      shape = *s;
    }
    auto given = opts.inputShapes.find(def.name());
    if (given != opts.inputShapes.end()) {
      used.insert(def.name());
      tfproto::TensorShapeProto proto;
      for (int64_t v : given->second)
        proto.add_dim()->set_size(v < 0 ? -1 : v);
      DLC_ASSIGN_OR_RETURN(Shape over, fromTfShape(proto, def.name()));
      if (shape.isRanked()) {
        if (shape.rank() != over.rank())
          return invalidArgument("--input-shape {}: rank {} does not match the Placeholder's "
                                 "shape {}",
                                 def.name(), over.rank(), shape.str());
        for (int64_t d = 0; d < shape.rank(); ++d)
          if (shape[d].isKnown() && over[d].isKnown() && shape[d].value() != over[d].value())
            return invalidArgument("--input-shape {}: dim {} is {} but the Placeholder says {}",
                                   def.name(), d, over[d].value(), shape[d].value());
      }
      shape = over;
    }
    if (!shape.isRanked())
      unknown.push_back(def.name());
    placeholderShapes_[i] = shape;
  }
  for (const auto &[name, dims] : opts.inputShapes)
    if (!used.count(name))
      return invalidArgument("--input-shape {}: the graph has no Placeholder named '{}' that the "
                             "outputs need",
                             name, name);
  if (!unknown.empty())
    return invalidArgument("{}: {} Placeholder{} of unknown rank: {}; give {} shape with "
                           "--input-shape NAME=D0,D1,... (-1 for a dim left symbolic)",
                           displayName_, unknown.size(), unknown.size() == 1 ? " is" : "s are",
                           listNames(unknown, unknown.size()),
                           unknown.size() == 1 ? "its" : "their");
  return Status::ok();
}

} // namespace dlc::tf::detail
