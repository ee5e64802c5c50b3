// What fuse-attention does around an Attention node once it has formed it: reading Q, K and V
// in place (strided operands over the buffer that Reshapes, Transposes and one-index Gathers
// moved them out of), merging three projections of one input into one, and moving the
// transposes of torch's batch_first multi-head attention out of the way (see
// passes/fuse_attention.cc for the whole picture), plus the small questions the pass asks.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "passes/pass.h"

namespace dlc::attention {

/// Whether `reader` is the only reader of `v` (and `v` no graph output).
bool onlyReader(const Graph &g, const Value *v, const Node *reader);

/// The only node reading `v`, or nullptr.
Node *soleReader(const Graph &g, const Value *v);

/// The one-element constant operand of a Mul or Div whose other operand is input `data`, as
/// the factor it multiplies by; nullopt when `n` is not such a node.
std::optional<double> scalarFactor(const Node &n, int *data);

/// "node 'name' (Op) -> value" for the decision log (text IR nodes have no names).
std::string label(const Node &n);

/// Erases the nodes of `work` whose outputs nobody reads, then so the producers of the
/// erased nodes' inputs, up to the nodes still read. Of the softmaxes only `s` may go (the
/// pass holds the others).
void eraseDead(Graph &g, std::vector<Node *> work, const Node *s);

/// Reads Q, K and V of attention `a` from the buffers their data was moved out of; keeps `a`
/// when nothing moves or the GPU cannot read the result. Returns the attention node that
/// stands (the movers left dead are erased).
Expected<Node *> foldOperandViews(Graph &g, Node &a, const PassOptions &options);

/// Q, K and V read from one projection of a transposed input (torch's batch_first
/// multi-head attention): the projection reads the untransposed input and the attention
/// reads through the transpose. Returns the new attention node, or nullptr when `a` stays.
Node *sinkInputTranspose(Graph &g, Node &a, const PassOptions &options);

/// Q, K and V made by three projections of one input (BERT; float, or int8 as realize-int8
/// leaves them): one projection with the weights side by side, read through strided operands.
/// Returns the new attention node, or nullptr when `a` stays.
Node *mergeProjections(Graph &g, Node &a, const PassOptions &options);

/// Y of attention `a` reshaped to rows, projected, reshaped and transposed back (torch's
/// batch_first multi-head attention): Y is stored in the transposed order and the
/// transpose goes.
void hoistOutputTranspose(Graph &g, Node &a, const PassOptions &options);

} // namespace dlc::attention
