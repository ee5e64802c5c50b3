// The normalisation rules that rewrite more than attributes (see normalize.h).
#pragma once

#include "frontend/onnx/rewriter.h"

namespace dlc::onnx::detail {

/// Upsample (1: height/width_scale, 7: `scales` attribute, 9: input) -> Resize.
Status upsampleToResize(Rewriter &r);
/// Resize-10 `(X, scales)` -> canonical Resize `(X, _, scales)`.
Status resize(Rewriter &r);
/// Softmax / LogSoftmax / Hardmax < 13: 2-D coercion at `axis` made explicit.
Status softmaxFamily(Rewriter &r);
/// GroupNormalization < 21: per-group scale and bias expanded per channel.
Status groupNorm(Rewriter &r);
/// Binary ops < 7: `broadcast` dropped, the legacy `axis` turned into an Unsqueeze.
Status legacyBroadcast(Rewriter &r);
/// Scan-8 (a batch axis in front, `sequence_lens`, `directions`) -> a Scan over the batch
/// whose body runs the canonical Scan on one batch element.
Status scan8(Rewriter &r);

} // namespace dlc::onnx::detail
