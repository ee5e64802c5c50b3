// A deep copy of a graph: same names, types, attributes (bodies copied in turn), devices and
// node order. Constants share their buffers with the original (tensors are immutable once in
// a graph).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace dlc {

std::unique_ptr<Graph> cloneGraph(const Graph &g);

/// A part of `g` as a graph of its own: the nodes `keep` selects, copied in order (names,
/// types, attributes, devices kept). `inputs` lists, in order, the values of `g` that become
/// the part's inputs and their names there; constants the part uses are copied. `outputs`
/// lists what it returns: a public name and a value of `g` (a kept node's output, an input,
/// or a constant). Every value a kept node reads must be an input, a constant or another
/// kept node's output: the error names the node and the value.
Expected<std::unique_ptr<Graph>>
extractGraph(const Graph &g, const std::function<bool(const Node &)> &keep,
             const std::vector<std::pair<const Value *, std::string>> &inputs,
             const std::vector<std::pair<std::string, const Value *>> &outputs);

/// Copies the nodes of `body` into `g` in front of `before` (a body of If, Loop or Scan
/// inlined): body input k reads `args[k]`, the body's constants become constants of `g`, and
/// every copied value is named `prefix/<its name in the body>` (made unique). Nodes keep their
/// attributes (nested bodies copied) and the body's recorded types (the caller types them for
/// their new inputs), and take `before`'s device. Returns the values of the body's outputs in
/// order (an argument or a constant where the body returns one) and, in `created`, the nodes
/// made, in order. Errors name the body's node.
Expected<std::vector<Value *>> inlineGraph(Graph &g, const Graph &body,
                                           const std::vector<Value *> &args, Node *before,
                                           const std::string &prefix,
                                           std::vector<Node *> *created = nullptr);

} // namespace dlc
