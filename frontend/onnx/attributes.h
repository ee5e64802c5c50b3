// ONNX AttributeProto -> typed dlc Attribute, and the check of a node's attributes against its
// op's schema (OpDef::attrs).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "frontend/onnx/external_data.h"
#include "ir/graph.h"
#include "onnx/onnx.pb.h"

namespace dlc::onnx::detail {

/// The attribute by its ONNX type alone (INT, FLOAT, STRING, INTS, FLOATS, STRINGS, TENSOR;
/// an UNDEFINED type is inferred from the field that is set). Graph, sparse-tensor and
/// type-proto attributes are errors. `desc` names the node.
Expected<Attribute> attributeFromProto(const ::onnx::AttributeProto &attr, const std::string &desc,
                                       ExternalData *external);

/// Converts a graph attribute (the caller builds the body graph).
using GraphAttrFn = std::function<Expected<Attribute>(const ::onnx::AttributeProto &)>;

/// All attributes of `node`; a name given twice is an error. Graph attributes go to
/// `graphAttr`; without one they are errors, like in attributeFromProto.
Expected<AttrMap> attributesFromNode(const ::onnx::NodeProto &node, const std::string &desc,
                                     ExternalData *external, const GraphAttrFn &graphAttr = {});

/// A table row that holds no schema yet (declared in ops.def but not defined): its attributes
/// cannot be checked and are taken as they are.
bool isPlaceholderDef(const OpDef &def);

/// `attribute 'perm' must be ints, got float`.
Status attrKindError(const std::string &desc, const std::string &name, std::string_view expected,
                     AttrKind got);

/// Removes attribute `name` from `attrs` and returns it, or nullopt if absent; an error if it
/// has another kind than `kind`.
Expected<std::optional<Attribute>> takeAttr(AttrMap &attrs, const std::string &name, AttrKind kind,
                                            const std::string &desc);

/// Checks `attrs` against `def` and sets them on `node`: every attribute must be in the schema
/// with the schema's kind (an int becomes a dtype where the schema asks for one), and every
/// required attribute must be present.
Status applyAttributes(Node &node, const OpDef &def, AttrMap attrs, const std::string &desc);

/// The node's input and output counts are within `def`'s arity (absent trailing inputs already
/// dropped).
Status checkArity(const Node &node, const OpDef &def, const std::string &desc);

} // namespace dlc::onnx::detail
