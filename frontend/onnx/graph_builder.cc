#include "frontend/onnx/graph_builder.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "frontend/onnx/attributes.h"
#include "frontend/onnx/model_reader.h"
#include "frontend/onnx/normalize.h"
#include "frontend/onnx/tensor_proto.h"
#include "frontend/onnx/unsupported.h"

namespace dlc::onnx::detail {

namespace {

// Node outputs get this placeholder name until they are renamed to their ONNX names, so that
// they never take a name an ONNX value still needs.
constexpr const char *kPendingName = "\x01pending";

bool isConstantNode(const ::onnx::NodeProto &n) {
  return n.op_type() == "Constant" && isDefaultDomain(n.domain());
}

using AP = ::onnx::AttributeProto;

bool isGraphAttr(const AP &a) {
  return a.type() == AP::GRAPH || (a.type() == AP::UNDEFINED && a.has_g());
}

/// A value of an enclosing graph that a body uses: its name and its type there.
struct Capture {
  std::string name;
  TensorType type;
};

/// Sequence and optional values (Loop-carried ones, If results) are out of scope.
Status checkBodyValueType(const ::onnx::TypeProto &t, const std::string &what) {
  if (t.has_sequence_type() || t.has_optional_type())
    return unimplemented("{} has a {} type: sequence and optional values are out of scope", what,
                         t.has_sequence_type() ? "sequence" : "optional");
  return Status::ok();
}

class GraphBuilder {
public:
  /// The top-level graph (captures == nullptr), or a body with those captured values as its
  /// trailing inputs.
  GraphBuilder(::onnx::GraphProto &proto, int64_t opset, ExternalData &external,
               const ImportOptions &opts, const std::vector<Capture> *captures = nullptr,
               const std::string &bodyName = "")
      : proto_(proto), opts_(opts), captures_(captures),
        graph_(std::make_unique<Graph>(!proto.name().empty() ? proto.name()
                                       : captures            ? bodyName
                                                             : "main")),
        ctx_{*graph_, opset, &external} {}

  Expected<std::unique_ptr<Graph>> build() {
    DLC_RETURN_IF_ERROR(checkProducers());
    DLC_RETURN_IF_ERROR(addInputsAndInitializers());
    nodes_.assign(static_cast<size_t>(proto_.node_size()), nullptr);
    for (int i = 0; i < proto_.node_size(); ++i)
      DLC_RETURN_IF_ERROR(isConstantNode(proto_.node(i)) ? addConstantNode(i) : createNode(i));
    for (int i = 0; i < proto_.node_size(); ++i)
      DLC_RETURN_IF_ERROR(wireInputs(i));
    DLC_RETURN_IF_ERROR(applyValueInfo());
    for (int i = 0; i < proto_.node_size(); ++i)
      DLC_RETURN_IF_ERROR(normalize(i));
    DLC_RETURN_IF_ERROR(addOutputs());
    DLC_RETURN_IF_ERROR(graph_->topologicalSort());
    return std::move(graph_);
  }

private:
  // Every value name has one producer: a graph input (possibly with an initializer of the
  // same name), an initializer, or one node output.
  Status checkProducers() {
    if (proto_.sparse_initializer_size() > 0)
      return unimplemented("sparse initializer '{}' is not supported",
                           proto_.sparse_initializer(0).values().name());
    std::unordered_map<std::string, std::string> producer;
    auto claim = [&](const std::string &name, std::string who) -> Status {
      auto [it, fresh] = producer.emplace(name, who);
      if (!fresh)
        return invalidArgument("value '{}' has two producers: {} and {}", name, it->second, who);
      return Status::ok();
    };
    std::set<std::string> inputs;
    for (int i = 0; i < proto_.input_size(); ++i) {
      const std::string &name = proto_.input(i).name();
      if (name.empty())
        return invalidArgument("graph input #{} has no name", i);
      DLC_RETURN_IF_ERROR(claim(name, fmt::format("graph input '{}'", name)));
      inputs.insert(name);
    }
    if (captures_)
      for (const Capture &c : *captures_)
        DLC_RETURN_IF_ERROR(claim(c.name, fmt::format("captured value '{}'", c.name)));
    std::set<std::string> initializers;
    for (int i = 0; i < proto_.initializer_size(); ++i) {
      const std::string &name = proto_.initializer(i).name();
      if (name.empty())
        return invalidArgument("initializer #{} has no name", i);
      if (!initializers.insert(name).second)
        return invalidArgument("value '{}' has two producers: initializer '{}' and initializer "
                               "'{}'",
                               name, name, name);
      if (!inputs.count(name))
        DLC_RETURN_IF_ERROR(claim(name, fmt::format("initializer '{}'", name)));
    }
    for (int i = 0; i < proto_.node_size(); ++i)
      for (const std::string &out : proto_.node(i).output())
        if (!out.empty())
          DLC_RETURN_IF_ERROR(claim(out, describeNode(proto_.node(i), i)));
    return Status::ok();
  }

  // A value created under an ONNX name must get exactly that name.
  Status claimExact(Value *v, const std::string &name) {
    if (graph_->renameValue(v, name) != name)
      return invalidArgument("value name '{}' cannot be used", name);
    return Status::ok();
  }

  Status addInputsAndInitializers() {
    std::set<std::string> initNames;
    for (const auto &init : proto_.initializer())
      initNames.insert(init.name());
    std::set<std::string> kept; // inputs that stay inputs although they have an initializer
    for (const auto &in : proto_.input()) {
      if (initNames.count(in.name())) {
        if (!opts_.keepInitializersAsInputs)
          continue; // becomes the initializer's constant
        kept.insert(in.name());
      }
      if (captures_)
        DLC_RETURN_IF_ERROR(checkBodyValueType(in.type(), fmt::format("input '{}'", in.name())));
      DLC_ASSIGN_OR_RETURN(TensorType type,
                           typeFromProto(in.type(), fmt::format("graph input '{}'", in.name())));
      DLC_RETURN_IF_ERROR(claimExact(graph_->addInput(in.name(), type), in.name()));
    }
    if (captures_)
      for (const Capture &c : *captures_)
        DLC_RETURN_IF_ERROR(claimExact(graph_->addInput(c.name, c.type), c.name));
    for (auto &init : *proto_.mutable_initializer()) {
      if (kept.count(init.name()))
        continue; // the input keeps the name; the initializer is ignored
      DLC_ASSIGN_OR_RETURN(
          Tensor t,
          tensorFromProto(init, fmt::format("initializer '{}'", init.name()), ctx_.external));
      if (init.has_raw_data())
        std::string().swap(*init.mutable_raw_data()); // copied: free the proto's bytes now
      DLC_RETURN_IF_ERROR(claimExact(graph_->addConstant(init.name(), std::move(t)), init.name()));
    }
    return Status::ok();
  }

  Status addConstantNode(int i) {
    const auto &node = proto_.node(i);
    std::string desc = describeNode(node, i);
    if (node.output_size() != 1 || node.output(0).empty())
      return invalidArgument("{}: must have exactly one named output", desc);
    if (node.attribute_size() != 1)
      return invalidArgument("{}: must have exactly one value attribute, has {}", desc,
                             node.attribute_size());
    const auto &a = node.attribute(0);
    if (a.name() == "sparse_value")
      return unimplemented("{}: sparse constants are not supported", desc);
    if (a.name() == "value_string" || a.name() == "value_strings")
      return unimplemented("{}: string constants are not supported", desc);
    DLC_ASSIGN_OR_RETURN(Attribute v, attributeFromProto(a, desc, ctx_.external));
    static const std::unordered_map<std::string, AttrKind> kKinds = {
        {"value", AttrKind::kTensor},
        {"value_float", AttrKind::kFloat},
        {"value_floats", AttrKind::kFloats},
        {"value_int", AttrKind::kInt},
        {"value_ints", AttrKind::kInts}};
    auto kind = kKinds.find(a.name());
    if (kind == kKinds.end())
      return invalidArgument("{}: unknown attribute '{}'", desc, a.name());
    if (v.kind() != kind->second)
      return attrKindError(desc, a.name(), attrKindName(kind->second), v.kind());
    Tensor t;
    switch (v.kind()) {
    case AttrKind::kTensor:
      t = v.tensor();
      break;
    case AttrKind::kFloat:
      t = Tensor::scalarF32(v.f());
      break;
    case AttrKind::kInt:
      t = Tensor::scalarI64(v.i());
      break;
    case AttrKind::kInts:
      t = Tensor::vectorI64(v.ints());
      break;
    default:
      t = Tensor::fromVector<float>(DType::kF32, {static_cast<int64_t>(v.floats().size())},
                                    v.floats());
    }
    return claimExact(graph_->addConstant(node.output(0), std::move(t)), node.output(0));
  }

  Status createNode(int i) {
    const auto &node = proto_.node(i);
    std::optional<Op> op = canonicalOp(node.op_type());
    if (!op) // findUnsupported ruled this out
      return internalError("{}: op type has no dlc op", describeNode(node, i));
    Node *n = graph_->createNode(*op, {}, node.output_size(), kPendingName);
    n->setName(node.name());
    nodes_[static_cast<size_t>(i)] = n;
    for (int k = 0; k < node.output_size(); ++k)
      if (!node.output(k).empty())
        DLC_RETURN_IF_ERROR(claimExact(n->output(k), node.output(k)));
    for (int k = 0; k < node.output_size(); ++k)
      if (node.output(k).empty())
        n->removeOutput(k);
    return Status::ok();
  }

  Status wireInputs(int i) {
    Node *n = nodes_[static_cast<size_t>(i)];
    if (!n)
      return Status::ok();
    const auto &node = proto_.node(i);
    for (const std::string &name : node.input()) {
      Value *v = nullptr;
      if (!name.empty()) {
        v = graph_->findValue(name);
        if (!v)
          return invalidArgument("{} uses undefined value '{}'", describeNode(node, i), name);
      }
      n->appendInput(v);
    }
    return Status::ok();
  }

  Status applyValueInfo() {
    for (const auto &vi : proto_.value_info()) {
      Value *v = graph_->findValue(vi.name());
      if (!v || !v->isNodeOutput())
        continue; // inputs and constants have their own types; unknown names are harmless
      DLC_ASSIGN_OR_RETURN(TensorType t,
                           typeFromProto(vi.type(), fmt::format("value_info '{}'", vi.name())));
      v->setType(std::move(t));
    }
    return Status::ok();
  }

  Status normalize(int i) {
    Node *n = nodes_[static_cast<size_t>(i)];
    if (!n)
      return Status::ok();
    ::onnx::NodeProto &node = *proto_.mutable_node(i);
    std::string desc = describeNode(node, i);
    DLC_ASSIGN_OR_RETURN(std::vector<Value *> captured, capturedValues(node, desc));
    auto body = [&](const AP &a) -> Expected<Attribute> {
      for (AP &m : *node.mutable_attribute())
        if (&m == &a)
          return importBody(m, captured, desc);
      return internalError("{}: attribute '{}' not found", desc, a.name());
    };
    DLC_ASSIGN_OR_RETURN(AttrMap attrs, attributesFromNode(node, desc, ctx_.external, body));
    // Every body of the node takes the captured values as its trailing inputs.
    for (Value *v : captured)
      n->appendInput(v);
    if (!captured.empty() && (n->op() == Op::kLoop || n->op() == Op::kScan))
      attrs["num_captures"] = Attribute(static_cast<int64_t>(captured.size()));
    DLC_RETURN_IF_ERROR(normalizeNode(ctx_, n, node.op_type(), attrs, desc));
    DLC_RETURN_IF_ERROR(applyAttributes(*n, n->def(), std::move(attrs), desc));
    int used = n->numInputs();
    while (used > 0 && !n->hasInput(used - 1))
      --used;
    n->truncateInputs(used);
    DLC_RETURN_IF_ERROR(checkArity(*n, n->def(), desc));
    if (n->def().verify) {
      Status s = n->def().verify(*n);
      if (!s)
        return invalidArgument("{}: {}", desc, s.message());
    }
    return Status::ok();
  }

  /// The values of this graph that the node's bodies use without defining them, in order of
  /// first use (in a body being built, a value of an outer graph is already one of its
  /// captured inputs).
  Expected<std::vector<Value *>> capturedValues(const ::onnx::NodeProto &node,
                                                const std::string &desc) {
    std::vector<Value *> out;
    for (const AP &a : node.attribute()) {
      if (!isGraphAttr(a))
        continue;
      for (const std::string &name : freeNames(a.g())) {
        Value *v = graph_->findValue(name);
        if (!v)
          return invalidArgument("{}: body '{}' uses undefined value '{}'", desc, a.name(), name);
        if (std::find(out.begin(), out.end(), v) == out.end())
          out.push_back(v);
      }
    }
    return out;
  }

  Expected<Attribute> importBody(AP &a, const std::vector<Value *> &captured,
                                 const std::string &desc) {
    std::vector<Capture> captures;
    for (const Value *v : captured)
      captures.push_back({v->name(), v->type()});
    std::string where = fmt::format("{}: body '{}'", desc, a.name());
    for (const auto &out : a.g().output())
      DLC_RETURN_IF_ERROR(
          checkBodyValueType(out.type(), fmt::format("{}: output '{}'", where, out.name())));
    auto g = GraphBuilder(*a.mutable_g(), ctx_.opset, *ctx_.external, opts_, &captures, a.name())
                 .build();
    if (!g)
      return g.takeStatus().withContext(where);
    return Attribute(std::move(*g));
  }

  Status addOutputs() {
    for (int i = 0; i < proto_.output_size(); ++i) {
      const auto &out = proto_.output(i);
      if (out.name().empty())
        return invalidArgument("graph output #{} has no name", i);
      Value *v = graph_->findValue(out.name());
      if (!v)
        return invalidArgument("graph output '{}' is not defined", out.name());
      DLC_ASSIGN_OR_RETURN(TensorType declared,
                           typeFromProto(out.type(), fmt::format("graph output '{}'", out.name())));
      graph_->addOutput(out.name(), v, std::move(declared));
    }
    return Status::ok();
  }

  ::onnx::GraphProto &proto_;
  const ImportOptions &opts_;
  const std::vector<Capture> *captures_; // null for the top-level graph
  std::unique_ptr<Graph> graph_;
  ImportContext ctx_;
  std::vector<Node *> nodes_; // by ONNX node index; null for Constant nodes
};

} // namespace

std::vector<std::string> freeNames(const ::onnx::GraphProto &proto) {
  std::set<std::string> defined;
  for (const auto &in : proto.input())
    defined.insert(in.name());
  for (const auto &init : proto.initializer())
    defined.insert(init.name());
  for (const auto &node : proto.node())
    for (const std::string &out : node.output())
      defined.insert(out);
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto use = [&](const std::string &name) {
    if (!name.empty() && !defined.count(name) && seen.insert(name).second)
      out.push_back(name);
  };
  for (const auto &node : proto.node()) {
    for (const std::string &in : node.input())
      use(in);
    for (const AP &a : node.attribute())
      if (isGraphAttr(a))
        for (const std::string &name : freeNames(a.g()))
          use(name);
  }
  for (const auto &o : proto.output())
    use(o.name());
  return out;
}

Expected<std::unique_ptr<Graph>> buildGraph(::onnx::GraphProto &proto, int64_t opset,
                                            ExternalData &external, const ImportOptions &opts) {
  return GraphBuilder(proto, opset, external, opts).build();
}

} // namespace dlc::onnx::detail
