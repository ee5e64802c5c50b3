// Small questions about values and nodes that passes and codegen ask (is this output used,
// is that input a constant), and the steps of a rewrite several passes share: typing a node
// just built (inferNewNode) and replacing one (replaceNode).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace dlc {

/// Neither an input of any node nor a graph output (true for an absent value, nullptr).
bool isUnused(const Value *v);

/// The data behind input `i` of `n` if that input is a constant, else nullptr.
const Tensor *constantInput(const Node &n, int i);

/// The elements of a 0-D or 1-D integer constant, else nullopt.
std::optional<std::vector<int64_t>> constantInts(const Value *v);

/// The value of a one-element constant, else nullopt.
std::optional<double> scalarConstant(const Value *v);

/// A scalar (or one-element) constant whose value is zero / false, else false.
bool isConstantFalse(const Value *v);

/// An attribute of kind ints, when present with that kind.
std::optional<std::vector<int64_t>> intsAttr(const Node &n, std::string_view name);

/// Runs shape inference on a node a rewrite has just built, from its inputs' types and
/// constant values, and sets its outputs' types.
Status inferNewNode(Node *n);

/// `n`'s attributes without its annotations (the dotted names passes leave: `fuse.group`...),
/// for a rewrite that builds a node like it.
std::vector<std::pair<std::string, Attribute>> ownAttributes(const Node &n);

/// Builds a one-output node for a rewrite: `op` on `inputs` with `attrs`, its output named
/// uniquely after `name`, in front of `before`, on `like`'s device, typed by inferNewNode.
/// When inference fails the node is erased again and the error returned.
Expected<Value *> addTypedNode(Graph &g, Op op, std::vector<Value *> inputs,
                               const std::string &name, Node *before, const Node &like,
                               const std::vector<std::pair<std::string, Attribute>> &attrs = {});

/// Redirects every use of `n`'s outputs (and graph outputs) to `replacements` (one per
/// output; nullptr for an output that must be unused) and erases `n`.
void replaceNode(Graph &g, Node *n, const std::vector<Value *> &replacements);

/// replaceNode for a one-output node whose replacement `y` also takes the output's name (so
/// printed IR and profiles keep the model's names).
void replaceOutputNamed(Graph &g, Node *n, Value *y);

} // namespace dlc
