// More of expand-ops' rewrites (passes/expand_ops.cc): ops without a GPU kernel written as
// elementwise ops and reductions that have one, with the math of the reference backend.
//
//  * MeanVarianceNormalization: (x - mean) / (sqrt(mean((x - mean)^2)) + 1e-9) over `axes`
//    (ir/eval/norm_eval.cc's form: the deviations' mean, not E[x^2] - E[x]^2).
//  * The ai.onnx.preview.training optimizers Adagrad, Adam and Momentum (standard and
//    nesterov), per optimized tensor, with R and T read at run time (ir/eval/training_eval.cc
//    gives the rules); T's branches (Adam's bias correction, Momentum's first step) are Where.
//  * ReverseSequence: a GatherElements along the time axis, its index computed from
//    sequence_lens with Less, Sub and Where.
//  * DFT with a constant axis and length: one MatMul of the signal (moved to rows, real and
//    imaginary parts interleaved) by a constant matrix of the reference's twiddles; STFT with
//    a constant frame step and length: the frames gathered by a constant index, windowed,
//    then the same product.
//  * GatherND: a Gather along the first axis of the data flattened over its batch and indexed
//    axes, each index tuple linearized (negative entries wrapped) plus its batch's offset.
//  * Det of 1 x 1 to 3 x 3 matrices by cofactors (Sarrus's rule).
//  * RoiAlign (avg, a fixed sampling_ratio): the samples' neighbours and bilinear weights
//    from the boxes, X channels-last, four Gathers weighted and summed, the grid averaged.
//  * MaxUnpool: a ScatterElements of the flattened X at the flattened indices into zeros of the
//    unpooled shape, padded at the axes' ends to output_shape when that is given (a constant).
#pragma once

#include <vector>

#include "ir/graph.h"
#include "ir/status.h"

namespace dlc {

/// How one op is rewritten: `check` says why a node cannot be (ok when it can), `expand`
/// builds, in front of it, one replacement per output (nullptr for an absent output).
struct OpExpansion {
  Op op;
  Status (*check)(const Node &n);
  Expected<std::vector<Value *>> (*expand)(Graph &g, Node *n);
};

/// The expansion of `op` among those above, or nullptr.
const OpExpansion *findOpExpansion(Op op);

} // namespace dlc
