#include "frontend/tf/refusals.h"

#include <string_view>

#include "frontend/tf/convert.h"

namespace dlc::tf::detail {

const char *const kFreezeHint =
    "the graph is not frozen: its weights are still variables. Freeze it first, turning the "
    "variables into Const nodes: TF1 `tf.compat.v1.graph_util.convert_variables_to_constants("
    "sess, graph_def, output_names)` (or the freeze_graph tool), TF2 "
    "`convert_variables_to_constants_v2(concrete_function)`";

namespace {

const std::set<std::string, std::less<>> kVariableOps = {
    "VariableV2",         "Variable",
    "VarHandleOp",        "ReadVariableOp",
    "TemporaryVariable",  "IsVariableInitialized",
    "VarIsInitializedOp", "DestroyTemporaryVariable"};

const std::set<std::string, std::less<>> kLoopOps = {
    "Enter",     "Exit",     "NextIteration", "LoopCond", "RefEnter", "RefExit", "RefNextIteration",
    "RefSwitch", "RefMerge", "ControlTrigger"};

const std::set<std::string, std::less<>> kFunctionOps = {"PartitionedCall",
                                                         "StatefulPartitionedCall",
                                                         "If",
                                                         "StatelessIf",
                                                         "While",
                                                         "StatelessWhile",
                                                         "Case",
                                                         "StatelessCase",
                                                         "SymbolicGradient",
                                                         "RemoteCall"};

/// Ops that update state or compute gradients.
bool isTrainingOp(std::string_view op) {
  return op.starts_with("Apply") || op.starts_with("SparseApply") ||
         op.starts_with("ResourceApply") || op.starts_with("ResourceSparseApply") ||
         op.starts_with("Assign") || op.starts_with("Scatter") ||
         op.starts_with("ResourceScatter") || op.ends_with("Grad") || op.ends_with("GradV2") ||
         op.ends_with("Gradient") || op.ends_with("Backprop") || op == "BroadcastGradientArgs" ||
         op == "CountUpTo";
}

/// A node whose type attributes (T, dtype, DstT, ...) include DT_STRING.
bool usesStrings(const tfproto::NodeDef &node) {
  for (const auto &[name, value] : node.attr()) {
    if (value.value_case() == tfproto::AttrValue::kType &&
        (value.type() == tfproto::DT_STRING || value.type() == tfproto::DT_STRING_REF))
      return true;
    if (value.value_case() == tfproto::AttrValue::kList)
      for (int t : value.list().type())
        if (t == tfproto::DT_STRING)
          return true;
  }
  return false;
}

} // namespace

std::string refusalReason(const tfproto::NodeDef &node, const std::set<std::string> &functions) {
  const std::string &op = node.op();
  if (kVariableOps.count(op))
    return "variable: the graph is not frozen";
  if (functions.count(op) || kFunctionOps.count(op))
    return "calls a function (the graph's `library`); dlc imports flat graphs only";
  if (kLoopOps.count(op))
    return "TF1 control flow (a while loop); only Switch/Merge on a constant predicate fold";
  // Conv2DBackpropInput is the forward op of a transposed convolution, not a gradient.
  if (op != "Conv2DBackpropInput" && isTrainingOp(op))
    return "training op (updates variables or computes gradients)";
  if (usesStrings(node))
    return "string op (dlc has no string type)";
  static const std::set<std::string, std::less<>> kHandledByImporter = {
      "Placeholder",     "PlaceholderWithDefault",
      "Const",           "NoOp",
      "Assert",          "Switch",
      "Merge",           "Identity",
      "StopGradient",    "Snapshot",
      "PreventGradient", "CheckNumerics",
      "EnsureShape",     "IdentityN",
      "RefIdentity"};
  if (kHandledByImporter.count(op))
    return "";
  if (findConverter(op))
    return "";
  return "not supported by dlc's TensorFlow importer";
}

} // namespace dlc::tf::detail
