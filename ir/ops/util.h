// Helpers shared by the op family files: attribute-schema shorthands and shape rules used
// by more than one family.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/op.h"

namespace dlc::ops {

// --- Attribute schema shorthands -------------------------------------------------------------
inline AttrSpec intAttr(std::string name, int64_t dflt) {
  return {std::move(name), AttrKind::kInt, Attribute(dflt), false};
}
inline AttrSpec floatAttr(std::string name, float dflt) {
  return {std::move(name), AttrKind::kFloat, Attribute(dflt), false};
}
inline AttrSpec stringAttr(std::string name, std::string dflt) {
  return {std::move(name), AttrKind::kString, Attribute(std::move(dflt)), false};
}
inline AttrSpec intsAttr(std::string name, std::vector<int64_t> dflt) {
  return {std::move(name), AttrKind::kInts, Attribute(std::move(dflt)), false};
}
inline AttrSpec floatsAttr(std::string name, std::vector<float> dflt) {
  return {std::move(name), AttrKind::kFloats, Attribute(std::move(dflt)), false};
}
inline AttrSpec dtypeAttr(std::string name, DType dflt) {
  return {std::move(name), AttrKind::kDType, Attribute(dflt), false};
}
/// An attribute with no default that may be absent.
inline AttrSpec optionalAttr(std::string name, AttrKind kind) {
  return {std::move(name), kind, std::nullopt, false};
}
/// An attribute every node of the op must carry.
inline AttrSpec requiredAttr(std::string name, AttrKind kind) {
  return {std::move(name), kind, std::nullopt, true};
}

// --- Shape rules -------------------------------------------------------------------------------
/// Multidirectional (numpy) broadcasting of two shapes; error if incompatible.
Expected<Shape> broadcastShapes(const Shape &a, const Shape &b);
/// Broadcast of all of a node's present inputs.
Expected<Shape> broadcastInputs(const InferContext &ctx);

/// Output 0 has the type of input 0.
Status inferSameAsInput(InferContext &ctx);

/// Whether `perm` lists each of `rank` axes exactly once.
bool isPermutation(const std::vector<int64_t> &perm, int64_t rank);

/// MatMul's operand permutation `attr` ("perm_a", "perm_b" or, for the output, "perm_y": dlc's
/// own attributes; see linalg.cc) for an operand of rank `rank`: empty when the attribute is
/// absent or empty (the operand as it is), else checked to be a permutation of `rank` axes.
Expected<std::vector<int64_t>> matmulOperandPerm(const Node &node, std::string_view attr,
                                                 int64_t rank);

} // namespace dlc::ops
