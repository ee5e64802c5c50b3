// Opset normalisation: every ONNX form of an op becomes the ONE canonical form documented in
// ir/ops/README.md, so nothing after the importer knows about opsets.
//
// Attributes that later opsets turned into inputs become constant inputs (Reshape `shape` < 5,
// Squeeze/Unsqueeze `axes` < 13, ReduceSum `axes` < 13 and other Reduce* < 18, Split `split`
// < 13, Slice < 10, Clip `min`/`max` < 11, Pad < 11, TopK `k` < 10, Dropout `ratio` < 12, DFT
// `axis` < 20); Upsample and Resize-10 become Resize; Scatter becomes ScatterElements; Softmax,
// LogSoftmax and Hardmax < 13 over a non-last axis become Flatten -> op(axis=1) -> Reshape;
// element-type ints (Cast `to`, `dtype`) become dtype attributes; opset-18 GroupNormalization's
// per-group scale and bias are expanded per channel.
//
// Deliberately dropped ONNX-deprecated attributes (never an error): `consumed_inputs` (an
// in-place hint, removed in opset 6), `is_test` (BatchNormalization/Dropout < 7), `spatial=1`
// (BatchNormalization < 9; spatial=0 is rejected), `broadcast` (binary ops and Gemm < 7; the
// legacy `axis` is turned into an Unsqueeze when the ranks are known), `output_sequence`
// (RNN/GRU/LSTM-1). LpPool-1's float `p` becomes an int.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "frontend/onnx/import_context.h"

namespace dlc::onnx::detail {

/// The dlc op an ai.onnx op type becomes (Upsample -> Resize, Scatter -> ScatterElements), or
/// nullopt if dlc has none. `Constant` has none: it becomes a constant value.
std::optional<Op> canonicalOp(std::string_view onnxType);

/// Rewrites `node`, built from an ONNX node of type `onnxType` with its inputs wired and its
/// output type hints set, into the canonical form for `ctx.opset`. `attrs` holds the node's
/// ONNX attributes converted by their ONNX type; the rewrite consumes those it handles, and
/// the caller checks what is left against the op's schema. `desc` names the node in errors.
Status normalizeNode(ImportContext &ctx, Node *node, std::string_view onnxType, AttrMap &attrs,
                     const std::string &desc);

} // namespace dlc::onnx::detail
