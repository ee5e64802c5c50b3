// Body graphs (the graph attributes of If, Loop and Scan) seen from the op that owns them:
// their types for given input types. Bodies are closed graphs (every value they use is theirs:
// captured outer values are explicit inputs), so inference walks the body alone, node by node,
// with the op table's inferNode (their reference evaluation is ir/eval/control_flow_eval.cc).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace dlc::ops {

/// The body that graph attribute `name` of `node` owns (the schema makes it present).
const Graph &bodyOf(const Node &node, std::string_view name);

/// The types of a body's outputs when its inputs have `inputTypes` (one per body input) and,
/// where not null, the data `inputConstants`. Nodes are inferred in order; a node whose op has
/// no inference or that has an input of unknown dtype keeps its recorded output types, and
/// recorded types refine inferred ones (refineType), as infer-shapes does, and so do the types
/// the body declares for its outputs. Errors name the body's node or output.
Expected<std::vector<TensorType>>
inferBodyOutputs(const Graph &body, const std::vector<TensorType> &inputTypes,
                 const std::vector<const Tensor *> &inputConstants);

} // namespace dlc::ops
