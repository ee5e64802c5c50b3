#include "ir/graph.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <queue>

namespace dlc {

// --- Device ----------------------------------------------------------------------------------

std::string Device::str() const {
  switch (kind) {
  case Kind::kUnset:
    return "";
  case Kind::kCpu:
    return "cpu";
  case Kind::kGpu:
    return "gpu:" + std::to_string(index);
  }
  return "";
}

std::optional<Device> Device::parse(std::string_view text) {
  if (text == "cpu")
    return cpu();
  if (text == "gpu")
    return gpu(0);
  if (text.starts_with("gpu:")) {
    std::string_view num = text.substr(4);
    int idx = 0;
    auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), idx);
    if (ec == std::errc() && p == num.data() + num.size() && idx >= 0 && !num.empty())
      return gpu(idx);
  }
  return std::nullopt;
}

// --- Node ------------------------------------------------------------------------------------

std::string Node::describe() const {
  if (name_.empty())
    return fmt::format("node of op {}", opOnnxName(op_));
  return fmt::format("node '{}' ({})", name_, opOnnxName(op_));
}

void Node::setInput(int i, Value *v) {
  DLC_CHECK(i >= 0 && i < numInputs(), "input index {} out of range", i);
  Value *&slot = inputs_[static_cast<size_t>(i)];
  if (slot)
    graph_->removeUse(slot, this, i);
  slot = v;
  if (v)
    graph_->addUse(v, this, i);
}

void Node::appendInput(Value *v) {
  inputs_.push_back(nullptr);
  setInput(numInputs() - 1, v);
}

void Node::truncateInputs(int n) {
  DLC_CHECK(n >= 0 && n <= numInputs(), "truncateInputs({}) out of range", n);
  for (int i = numInputs() - 1; i >= n; --i) {
    setInput(i, nullptr);
    inputs_.pop_back();
  }
}

std::vector<Value *> Node::outputs() const {
  std::vector<Value *> out;
  out.reserve(outputs_.size());
  for (const auto &v : outputs_)
    out.push_back(v.get());
  return out;
}

void Node::removeOutput(int i) {
  DLC_CHECK(i >= 0 && i < numOutputs(), "output index {} out of range", i);
  auto &slot = outputs_[static_cast<size_t>(i)];
  if (!slot)
    return;
  DLC_CHECK(!slot->hasUses() && !graph_->isOutput(slot.get()), "removing a used output");
  graph_->byName_.erase(slot->name());
  slot.reset();
}

const Attribute *Node::findAttr(std::string_view name) const {
  auto it = attrs_.find(name);
  return it == attrs_.end() ? nullptr : &it->second;
}

Attribute *Node::mutableAttr(std::string_view name) {
  auto it = attrs_.find(name);
  return it == attrs_.end() ? nullptr : &it->second;
}

void Node::removeAttr(std::string_view name) {
  auto it = attrs_.find(name);
  if (it != attrs_.end())
    attrs_.erase(it);
}

const Attribute *Graph::findAnnotation(std::string_view name) const {
  auto it = annotations_.find(name);
  return it == annotations_.end() ? nullptr : &it->second;
}

void Graph::removeAnnotation(std::string_view name) {
  auto it = annotations_.find(name);
  if (it != annotations_.end())
    annotations_.erase(it);
}

const Attribute &Node::attrOrDefault(std::string_view name, AttrKind kind) const {
  if (const Attribute *a = findAttr(name)) {
    DLC_CHECK(a->kind() == kind, "{}: attribute '{}' is {}, not {}", describe(), name,
              attrKindName(a->kind()), attrKindName(kind));
    return *a;
  }
  const AttrSpec *spec = def().findAttr(name);
  DLC_CHECK(spec && spec->defaultValue, "{}: attribute '{}' is not set and has no default",
            describe(), name);
  return *spec->defaultValue;
}

int64_t Node::getInt(std::string_view name) const {
  return attrOrDefault(name, AttrKind::kInt).i();
}
float Node::getFloat(std::string_view name) const {
  return attrOrDefault(name, AttrKind::kFloat).f();
}
const std::string &Node::getString(std::string_view name) const {
  return attrOrDefault(name, AttrKind::kString).s();
}
std::vector<int64_t> Node::getInts(std::string_view name) const {
  const AttrSpec *spec = def().findAttr(name);
  if (!hasAttr(name) && !(spec && spec->defaultValue))
    return {};
  return attrOrDefault(name, AttrKind::kInts).ints();
}
std::vector<float> Node::getFloats(std::string_view name) const {
  const AttrSpec *spec = def().findAttr(name);
  if (!hasAttr(name) && !(spec && spec->defaultValue))
    return {};
  return attrOrDefault(name, AttrKind::kFloats).floats();
}
const Tensor &Node::getTensor(std::string_view name) const {
  return attrOrDefault(name, AttrKind::kTensor).tensor();
}
DType Node::getDType(std::string_view name) const {
  return attrOrDefault(name, AttrKind::kDType).dtype();
}

// --- Graph -----------------------------------------------------------------------------------

Graph::Graph(std::string name) : name_(std::move(name)) {}

Graph::~Graph() {
  // Nodes refer to values of other nodes; drop all uses before anything is freed.
  nodes_.clear();
}

const std::string &Graph::claimName(Value *v, std::string name) {
  if (name.empty())
    name = "v";
  if (byName_.count(name))
    name = uniqueName(name);
  v->name_ = std::move(name);
  byName_[v->name_] = v;
  return v->name_;
}

std::string Graph::uniqueName(std::string_view base) const {
  std::string b(base.empty() ? "v" : base);
  if (!byName_.count(b))
    return b;
  for (uint64_t k = 1;; ++k) {
    std::string cand = b + "." + std::to_string(k);
    if (!byName_.count(cand))
      return cand;
  }
}

Value *Graph::addInput(std::string name, TensorType type) {
  ownedValues_.emplace_back(new Value(this, Value::Kind::kInput, ""));
  Value *v = ownedValues_.back().get();
  claimName(v, std::move(name));
  v->type_ = std::move(type);
  inputs_.push_back(v);
  return v;
}

Value *Graph::addConstant(std::string name, Tensor data) {
  ownedValues_.emplace_back(new Value(this, Value::Kind::kConstant, ""));
  Value *v = ownedValues_.back().get();
  claimName(v, std::move(name));
  v->type_ = data.type();
  v->constant_ = std::move(data);
  constantOrder_.push_back(v);
  return v;
}

void Graph::eraseConstant(Value *c) {
  DLC_CHECK(c->isConstant() && !c->hasUses() && !isOutput(c), "erasing a used constant");
  byName_.erase(c->name());
  constantOrder_.erase(std::find(constantOrder_.begin(), constantOrder_.end(), c));
  auto it = std::find_if(ownedValues_.begin(), ownedValues_.end(),
                         [c](const auto &p) { return p.get() == c; });
  ownedValues_.erase(it);
}

void Graph::setConstantData(Value *c, Tensor data) {
  DLC_CHECK(c->isConstant(), "not a constant");
  c->type_ = data.type();
  c->constant_ = std::move(data);
}

void Graph::addOutput(std::string name, Value *value, TensorType declared) {
  outputs_.push_back({std::move(name), value, std::move(declared)});
}

bool Graph::isOutput(const Value *v) const {
  return std::any_of(outputs_.begin(), outputs_.end(),
                     [v](const Output &o) { return o.value == v; });
}

Node *Graph::createNode(Op op, std::vector<Value *> inputs, int numOutputs, std::string name,
                        Node *before) {
  auto owned = std::unique_ptr<Node>(new Node(this, op));
  Node *n = owned.get();
  n->name_ = std::move(name);
  auto pos = before ? before->self_ : nodes_.end();
  n->self_ = nodes_.insert(pos, std::move(owned));
  for (Value *v : inputs)
    n->appendInput(v);
  std::string base = n->name_.empty() ? std::string(opName(op)) : n->name_;
  for (int i = 0; i < numOutputs; ++i) {
    n->outputs_.emplace_back(new Value(this, Value::Kind::kNodeOutput, ""));
    Value *v = n->outputs_.back().get();
    v->producer_ = n;
    v->producerIndex_ = i;
    claimName(v, numOutputs == 1 ? base : base + "_" + std::to_string(i));
  }
  return n;
}

void Graph::eraseNode(Node *n) {
  for (const auto &o : n->outputs_)
    DLC_CHECK(!o || (!o->hasUses() && !isOutput(o.get())),
              "{}: erasing a node whose output {} is used", n->describe(), o->name());
  for (int i = 0; i < n->numInputs(); ++i)
    n->setInput(i, nullptr);
  for (const auto &o : n->outputs_)
    if (o)
      byName_.erase(o->name());
  nodes_.erase(n->self_);
}

void Graph::moveNode(Node *n, Node *pos) {
  nodes_.splice(pos ? pos->self_ : nodes_.end(), nodes_, n->self_);
}

std::vector<Node *> Graph::nodes() const {
  std::vector<Node *> out;
  out.reserve(nodes_.size());
  for (const auto &n : nodes_)
    out.push_back(n.get());
  return out;
}

void Graph::replaceAllUsesWith(Value *from, Value *to) {
  if (from == to)
    return;
  std::vector<Use> uses = from->uses_;
  for (const Use &u : uses)
    u.node->setInput(u.index, to);
  for (Output &o : outputs_)
    if (o.value == from)
      o.value = to;
}

Value *Graph::findValue(std::string_view name) const {
  auto it = byName_.find(std::string(name));
  return it == byName_.end() ? nullptr : it->second;
}

const std::string &Graph::renameValue(Value *v, std::string name) {
  if (v->name_ == name)
    return v->name_;
  byName_.erase(v->name_);
  return claimName(v, std::move(name));
}

void Graph::addUse(Value *v, Node *n, int index) { v->uses_.push_back({n, index}); }

void Graph::removeUse(Value *v, Node *n, int index) {
  auto &uses = v->uses_;
  auto it = std::find(uses.begin(), uses.end(), Use{n, index});
  DLC_CHECK(it != uses.end(), "use list out of sync");
  uses.erase(it);
}

Status Graph::topologicalSort() {
  // Kahn's algorithm, stable: among ready nodes, the earliest in the current order first.
  std::vector<Node *> order = nodes();
  std::unordered_map<Node *, size_t> position;
  for (size_t i = 0; i < order.size(); ++i)
    position[order[i]] = i;
  std::vector<int> pending(order.size(), 0);
  for (size_t i = 0; i < order.size(); ++i)
    for (Value *in : order[i]->inputs_)
      if (in && in->producer_)
        ++pending[i];
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < order.size(); ++i)
    if (pending[i] == 0)
      ready.push(i);
  std::vector<Node *> sorted;
  sorted.reserve(order.size());
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    sorted.push_back(order[i]);
    for (const auto &out : order[i]->outputs_) {
      if (!out)
        continue;
      for (const Use &u : out->uses_) {
        size_t j = position[u.node];
        if (--pending[j] == 0)
          ready.push(j);
      }
    }
  }
  if (sorted.size() != order.size()) {
    for (size_t i = 0; i < order.size(); ++i)
      if (pending[i] > 0)
        return invalidArgument("graph has a cycle through {}", order[i]->describe());
  }
  for (Node *n : sorted)
    moveNode(n, nullptr);
  return Status::ok();
}

bool Graph::structurallyEqual(const Graph &o) const {
  if (inputs_.size() != o.inputs_.size() || constantOrder_.size() != o.constantOrder_.size() ||
      nodes_.size() != o.nodes_.size() || outputs_.size() != o.outputs_.size() ||
      annotations_ != o.annotations_)
    return false;
  std::unordered_map<const Value *, const Value *> map; // this graph's value -> o's
  for (size_t i = 0; i < inputs_.size(); ++i)
    map[inputs_[i]] = o.inputs_[i];
  for (size_t i = 0; i < constantOrder_.size(); ++i) {
    if (!constantOrder_[i]->constant().identical(o.constantOrder_[i]->constant()))
      return false;
    map[constantOrder_[i]] = o.constantOrder_[i];
  }
  for (auto a = nodes_.begin(), b = o.nodes_.begin(); a != nodes_.end(); ++a, ++b) {
    const Node &x = **a, &y = **b;
    if (x.op_ != y.op_ || x.device_ != y.device_ || x.numInputs() != y.numInputs() ||
        x.numOutputs() != y.numOutputs() || x.attrs_ != y.attrs_)
      return false;
    for (int i = 0; i < x.numInputs(); ++i) {
      const Value *u = x.input(i), *w = y.input(i);
      auto it = u ? map.find(u) : map.end();
      if ((u == nullptr) != (w == nullptr) || (u && (it == map.end() || it->second != w)))
        return false;
    }
    for (int i = 0; i < x.numOutputs(); ++i) {
      if ((x.output(i) == nullptr) != (y.output(i) == nullptr))
        return false;
      if (x.output(i))
        map[x.output(i)] = y.output(i);
    }
  }
  for (size_t i = 0; i < outputs_.size(); ++i) {
    auto it = map.find(outputs_[i].value);
    if (it == map.end() || it->second != o.outputs_[i].value)
      return false;
  }
  return true;
}

} // namespace dlc
