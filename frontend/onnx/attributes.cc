#include "frontend/onnx/attributes.h"

#include "frontend/onnx/tensor_proto.h"

namespace dlc::onnx::detail {

namespace {

using AP = ::onnx::AttributeProto;

// Old exporters leave `type` unset; the field that holds a value says what it is.
AP::AttributeType inferType(const AP &a) {
  if (a.has_f())
    return AP::FLOAT;
  if (a.has_i())
    return AP::INT;
  if (a.has_s())
    return AP::STRING;
  if (a.has_t())
    return AP::TENSOR;
  if (a.has_g())
    return AP::GRAPH;
  if (a.floats_size())
    return AP::FLOATS;
  if (a.ints_size())
    return AP::INTS;
  if (a.strings_size())
    return AP::STRINGS;
  if (a.tensors_size())
    return AP::TENSORS;
  if (a.graphs_size())
    return AP::GRAPHS;
  return AP::UNDEFINED;
}

const char *onnxAttrTypeName(AP::AttributeType t) {
  switch (t) {
  case AP::GRAPH:
    return "graph";
  case AP::GRAPHS:
    return "graphs";
  case AP::SPARSE_TENSOR:
    return "sparse tensor";
  case AP::SPARSE_TENSORS:
    return "sparse tensors";
  case AP::TYPE_PROTO:
    return "type proto";
  case AP::TYPE_PROTOS:
    return "type protos";
  case AP::TENSORS:
    return "tensors";
  default:
    return "unknown";
  }
}

} // namespace

Expected<Attribute> attributeFromProto(const AP &a, const std::string &desc,
                                       ExternalData *external) {
  if (!a.ref_attr_name().empty())
    return unimplemented("{}: attribute '{}' refers to a function attribute", desc, a.name());
  AP::AttributeType type = a.type() == AP::UNDEFINED ? inferType(a) : a.type();
  switch (type) {
  case AP::INT:
    return Attribute(static_cast<int64_t>(a.i()));
  case AP::FLOAT:
    return Attribute(a.f());
  case AP::STRING:
    return Attribute(a.s());
  case AP::INTS:
    return Attribute(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
  case AP::FLOATS:
    return Attribute(std::vector<float>(a.floats().begin(), a.floats().end()));
  case AP::STRINGS:
    return Attribute(std::vector<std::string>(a.strings().begin(), a.strings().end()));
  case AP::TENSOR: {
    DLC_ASSIGN_OR_RETURN(
        Tensor t,
        tensorFromProto(a.t(), fmt::format("{}: attribute '{}'", desc, a.name()), external));
    return Attribute(std::move(t));
  }
  case AP::UNDEFINED:
    return invalidArgument("{}: attribute '{}' has no type and no value", desc, a.name());
  default:
    break;
  }
  return unimplemented("{}: attribute '{}' is of type {}, which dlc does not support", desc,
                       a.name(), onnxAttrTypeName(type));
}

Expected<AttrMap> attributesFromNode(const ::onnx::NodeProto &node, const std::string &desc,
                                     ExternalData *external, const GraphAttrFn &graphAttr) {
  AttrMap attrs;
  for (const AP &a : node.attribute()) {
    if (a.name().empty())
      return invalidArgument("{}: an attribute has no name", desc);
    bool graph = a.type() == AP::GRAPH || (a.type() == AP::UNDEFINED && inferType(a) == AP::GRAPH);
    DLC_ASSIGN_OR_RETURN(Attribute v,
                         graph && graphAttr ? graphAttr(a) : attributeFromProto(a, desc, external));
    if (!attrs.emplace(a.name(), std::move(v)).second)
      return invalidArgument("{}: attribute '{}' is given twice", desc, a.name());
  }
  return attrs;
}

bool isPlaceholderDef(const OpDef &def) {
  return def.attrs.empty() && def.infer == nullptr && def.minOutputs == 0 && def.maxOutputs == -1;
}

Status attrKindError(const std::string &desc, const std::string &name, std::string_view expected,
                     AttrKind got) {
  return invalidArgument("{}: attribute '{}' must be {}, got {}", desc, name, expected,
                         attrKindName(got));
}

Expected<std::optional<Attribute>> takeAttr(AttrMap &attrs, const std::string &name, AttrKind kind,
                                            const std::string &desc) {
  auto it = attrs.find(name);
  if (it == attrs.end())
    return std::optional<Attribute>();
  if (it->second.kind() != kind)
    return attrKindError(desc, name, attrKindName(kind), it->second.kind());
  std::optional<Attribute> out(std::move(it->second));
  attrs.erase(it);
  return out;
}

Status applyAttributes(Node &node, const OpDef &def, AttrMap attrs, const std::string &desc) {
  bool placeholder = isPlaceholderDef(def);
  for (auto &[name, value] : attrs) {
    const AttrSpec *spec = def.findAttr(name);
    if (!spec) {
      if (!placeholder)
        return invalidArgument("{}: unknown attribute '{}'", desc, name);
    } else if (spec->kind == AttrKind::kDType && value.kind() == AttrKind::kInt) {
      DLC_ASSIGN_OR_RETURN(DType dt,
                           dtypeFromOnnx(value.i(), fmt::format("{}: attribute '{}'", desc, name)));
      value = Attribute(dt);
    } else if (spec->kind != value.kind()) {
      return attrKindError(desc, name, attrKindName(spec->kind), value.kind());
    }
  }
  for (const AttrSpec &spec : def.attrs)
    if (spec.required && !attrs.count(spec.name))
      return invalidArgument("{}: missing required attribute '{}'", desc, spec.name);
  for (auto &[name, value] : attrs)
    node.setAttr(name, std::move(value));
  return Status::ok();
}

Status checkArity(const Node &node, const OpDef &def, const std::string &desc) {
  auto range = [](int lo, int hi) {
    if (hi < 0)
      return fmt::format("at least {}", lo);
    return lo == hi ? fmt::format("{}", lo) : fmt::format("{} to {}", lo, hi);
  };
  int in = node.numInputs(), out = node.numOutputs();
  if (in < def.minInputs || (def.maxInputs >= 0 && in > def.maxInputs))
    return invalidArgument("{}: takes {} inputs, got {}", desc, range(def.minInputs, def.maxInputs),
                           in);
  for (int i = 0; i < def.minInputs && i < in; ++i)
    if (!node.hasInput(i))
      return invalidArgument("{}: required input {} is missing", desc, i);
  if (out < def.minOutputs || (def.maxOutputs >= 0 && out > def.maxOutputs))
    return invalidArgument("{}: has {} outputs, got {}", desc,
                           range(def.minOutputs, def.maxOutputs), out);
  return Status::ok();
}

} // namespace dlc::onnx::detail
