// Channels-last layout for 4-D convolution chains: the rewrites realize-int8 (int8 convs) and
// the layout pass (16-bit float convs) share. A rewritten conv reads NHWC and writes NHWC, with
// a transpose back to NCHW after it; moveElementwise then moves the nodes that read that
// transpose (relu, the residual add, per-tensor Q/DQ) into NHWC too, so that consecutive
// convolutions hand each other NHWC tensors and the transposes between them cancel. What
// still needs NCHW reads it through one transpose.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace dlc::nhwc {

inline const std::vector<int64_t> kToNhwc = {0, 2, 3, 1};
inline const std::vector<int64_t> kToNchw = {0, 3, 1, 2};

/// The NHWC value of which `v` is the transpose to NCHW, else nullptr.
Value *sourceOf(const Value *v);

/// An existing NHWC form of NCHW value `v`: the input of a transpose to NCHW, or a transpose
/// to NHWC already made of it; nullptr when there is none.
Value *existing(Value *v);

/// The NHWC form of NCHW value `v`: an existing one, else a new transpose in front of `before`.
Expected<Value *> of(Graph &g, Value *v, Node *before);

/// The attributes of a channels-last rewrite of conv `n`: n's own (annotations dropped) and
/// channels_last = 1.
std::vector<std::pair<std::string, Attribute>> channelsLastAttrs(const Node &n);

/// Moves elementwise (or quantize/dequantize_linear) node `n` into NHWC when its data input
/// (for Q/DQ), or any input (other ops), comes back from NHWC and every other input can follow
/// for free: an NHWC form that exists, one element, a constant (permuted), or a per-tensor
/// dequantize_linear of a value that has an NHWC form. Returns whether `n` was rewritten.
Expected<bool> moveElementwise(Graph &g, Node *n);

} // namespace dlc::nhwc
