// The graph IR: a Graph owns Nodes and Values in SSA form.
//
// Every Value has exactly one producer: a graph input, a constant (a host Tensor), or one
// output of a Node. Values keep their list of uses; nodes are kept in a valid topological
// order by the mutation API (create before a position, replaceAllUsesWith, erase, move).
// Value names are unique within a graph and trace back to the source model's names; node
// names are the source model's node names, used in every error message.
#pragma once

#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/attribute.h"
#include "ir/op.h"
#include "ir/shape.h"
#include "ir/tensor.h"

namespace dlc {

class Graph;
class Node;

/// Where a node runs. Unset until placement.
struct Device {
  enum class Kind : uint8_t { kUnset, kCpu, kGpu };
  Kind kind = Kind::kUnset;
  int index = 0;

  static Device cpu() { return {Kind::kCpu, 0}; }
  static Device gpu(int i) { return {Kind::kGpu, i}; }
  bool isSet() const { return kind != Kind::kUnset; }
  /// `cpu`, `gpu:0`; empty when unset.
  std::string str() const;
  /// Parses `cpu`, `gpu`, `gpu:N`.
  static std::optional<Device> parse(std::string_view text);
  bool operator==(const Device &o) const { return kind == o.kind && index == o.index; }
  bool operator!=(const Device &o) const { return !(*this == o); }
};

/// One use of a value: input `index` of `node`.
struct Use {
  Node *node;
  int index;
  bool operator==(const Use &o) const { return node == o.node && index == o.index; }
};

class Value {
public:
  enum class Kind : uint8_t { kInput, kConstant, kNodeOutput };

  Kind kind() const { return kind_; }
  bool isInput() const { return kind_ == Kind::kInput; }
  bool isConstant() const { return kind_ == Kind::kConstant; }
  bool isNodeOutput() const { return kind_ == Kind::kNodeOutput; }

  const std::string &name() const { return name_; }
  const TensorType &type() const { return type_; }
  void setType(TensorType t) { type_ = std::move(t); }
  DType dtype() const { return type_.dtype; }
  const Shape &shape() const { return type_.shape; }

  /// The producing node and output index (node outputs only; nullptr otherwise).
  Node *producer() const { return producer_; }
  int producerIndex() const { return producerIndex_; }
  /// The constant's data (constants only).
  const Tensor &constant() const { return constant_; }

  const std::vector<Use> &uses() const { return uses_; }
  bool hasUses() const { return !uses_.empty(); }
  Graph *graph() const { return graph_; }

private:
  friend class Graph;
  friend class Node;
  Value(Graph *g, Kind k, std::string name) : graph_(g), kind_(k), name_(std::move(name)) {}

  Graph *graph_;
  Kind kind_;
  std::string name_;
  TensorType type_;
  Node *producer_ = nullptr;
  int producerIndex_ = 0;
  Tensor constant_;
  std::vector<Use> uses_;
};

class Node {
public:
  Op op() const { return op_; }
  const OpDef &def() const { return opDef(op_); }
  /// Text name of the op ("conv").
  std::string_view opName() const { return dlc::opName(op_); }

  /// The source model's node name (may be empty).
  const std::string &name() const { return name_; }
  void setName(std::string n) { name_ = std::move(n); }
  /// `node 'conv1' (Conv)`: how error messages refer to this node.
  std::string describe() const;

  const Device &device() const { return device_; }
  void setDevice(Device d) { device_ = d; }

  // Inputs. An absent optional input is nullptr.
  int numInputs() const { return static_cast<int>(inputs_.size()); }
  const std::vector<Value *> &inputs() const { return inputs_; }
  Value *input(int i) const { return i < numInputs() ? inputs_[static_cast<size_t>(i)] : nullptr; }
  bool hasInput(int i) const { return input(i) != nullptr; }
  void setInput(int i, Value *v);
  void appendInput(Value *v);
  /// Drops inputs from index `n` on (n <= numInputs()).
  void truncateInputs(int n);

  // Outputs. An absent optional output is nullptr.
  int numOutputs() const { return static_cast<int>(outputs_.size()); }
  Value *output(int i) const {
    return i < numOutputs() ? outputs_[static_cast<size_t>(i)].get() : nullptr;
  }
  std::vector<Value *> outputs() const;
  /// Marks output i absent; it must have no uses.
  void removeOutput(int i);

  // Attributes. Getters fall back to the op schema's default; a getter for an attribute
  // that is neither set nor defaulted is an internal error (the verifier rules it out).
  const AttrMap &attrs() const { return attrs_; }
  bool hasAttr(std::string_view name) const { return attrs_.find(name) != attrs_.end(); }
  const Attribute *findAttr(std::string_view name) const;
  /// For passes that change an attribute in place (a body's types); nullptr when absent.
  Attribute *mutableAttr(std::string_view name);
  void setAttr(std::string name, Attribute a) { attrs_[std::move(name)] = std::move(a); }
  void removeAttr(std::string_view name);
  int64_t getInt(std::string_view name) const;
  float getFloat(std::string_view name) const;
  const std::string &getString(std::string_view name) const;
  /// Empty when neither set nor defaulted.
  std::vector<int64_t> getInts(std::string_view name) const;
  std::vector<float> getFloats(std::string_view name) const;
  const Tensor &getTensor(std::string_view name) const;
  DType getDType(std::string_view name) const;

  Graph *graph() const { return graph_; }

private:
  friend class Graph;
  Node(Graph *g, Op op) : graph_(g), op_(op) {}
  const Attribute &attrOrDefault(std::string_view name, AttrKind kind) const;

  Graph *graph_;
  Op op_;
  std::string name_;
  Device device_;
  std::vector<Value *> inputs_;
  std::vector<std::unique_ptr<Value>> outputs_;
  AttrMap attrs_;
  std::list<std::unique_ptr<Node>>::iterator self_;
};

class Graph {
public:
  explicit Graph(std::string name = "main");
  ~Graph();
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;

  const std::string &name() const { return name_; }
  void setName(std::string n) { name_ = std::move(n); }

  // --- Annotations ------------------------------------------------------------------------
  /// What a pass leaves about the whole graph (`mem.arena`, `mem.inputs`): names with a `.`,
  /// printed after the signature as `attributes {...}`. Node annotations live on the nodes.
  const AttrMap &annotations() const { return annotations_; }
  const Attribute *findAnnotation(std::string_view name) const;
  void setAnnotation(std::string name, Attribute a) {
    annotations_[std::move(name)] = std::move(a);
  }
  void removeAnnotation(std::string_view name);

  // --- Values without a producing node -------------------------------------------------
  /// A graph input. The name is made unique if taken.
  Value *addInput(std::string name, TensorType type);
  const std::vector<Value *> &inputs() const { return inputs_; }
  /// A constant holding `data` (shared, not copied). Its type is the tensor's type.
  Value *addConstant(std::string name, Tensor data);
  /// Constants in creation order.
  const std::vector<Value *> &constants() const { return constantOrder_; }
  /// Removes an unused constant.
  void eraseConstant(Value *c);
  /// Replaces a constant's data (type follows the new data).
  void setConstantData(Value *c, Tensor data);

  // --- Outputs ----------------------------------------------------------------------------
  struct Output {
    std::string name;    // the name the model's users know this output by
    Value *value;        // the value returned
    TensorType declared; // the type the source model declared (may be unknown)
  };
  void addOutput(std::string name, Value *value, TensorType declared = {});
  const std::vector<Output> &outputs() const { return outputs_; }
  void setOutputValue(size_t i, Value *v) { outputs_[i].value = v; }
  void setOutputDeclared(size_t i, TensorType t) { outputs_[i].declared = std::move(t); }
  bool isOutput(const Value *v) const;

  // --- Nodes ------------------------------------------------------------------------------
  /// Creates a node with `numOutputs` fresh outputs (unknown type), inserted before
  /// `before` (or at the end). Output names derive from `name` (or the op name).
  Node *createNode(Op op, std::vector<Value *> inputs, int numOutputs, std::string name = "",
                   Node *before = nullptr);
  /// Erases a node whose outputs have no uses.
  void eraseNode(Node *n);
  /// Moves `n` to just before `pos` (or to the end). Caller keeps the order valid.
  void moveNode(Node *n, Node *pos);
  /// Nodes in order, as a snapshot that stays valid while the graph is mutated (erased
  /// nodes must not be dereferenced).
  std::vector<Node *> nodes() const;
  size_t numNodes() const { return nodes_.size(); }

  /// Points every use of `from` (including graph outputs) at `to`.
  void replaceAllUsesWith(Value *from, Value *to);

  // --- Names and order -------------------------------------------------------------------
  /// The value named `name`, or nullptr.
  Value *findValue(std::string_view name) const;
  /// Renames a value; the name is made unique if taken. Returns the name given.
  const std::string &renameValue(Value *v, std::string name);
  /// `base` if free, else `base.1`, `base.2`, ...
  std::string uniqueName(std::string_view base) const;
  /// Reorders nodes topologically (stable). Error naming a node on a cycle if there is one.
  Status topologicalSort();

  // --- Comparison (copies: cloneGraph, ir/clone.h) ---------------------------------------
  /// The same computation: inputs, constants (by data), nodes (op, attributes, device, wiring,
  /// which outputs are present), graph annotations and returned values correspond one to one,
  /// in order. Value names, types, node names and the graph's name are not compared.
  bool structurallyEqual(const Graph &o) const;

private:
  friend class Node;
  void addUse(Value *v, Node *n, int index);
  void removeUse(Value *v, Node *n, int index);
  const std::string &claimName(Value *v, std::string name);

  std::string name_;
  AttrMap annotations_;
  std::vector<Value *> inputs_;
  std::vector<std::unique_ptr<Value>> ownedValues_; // inputs and constants
  std::vector<Value *> constantOrder_;
  std::vector<Output> outputs_;
  std::list<std::unique_ptr<Node>> nodes_;
  std::unordered_map<std::string, Value *> byName_;
  uint64_t nameCounter_ = 0;
};

} // namespace dlc
