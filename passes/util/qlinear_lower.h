// QLinearMatMul, QLinearConv and DynamicQuantizeLinear written as ops that have GPU kernels,
// computing exactly what the reference backend computes for them (ir/eval/matmul_eval.cc,
// ir/eval/qlinear_conv_eval.cc, ir/eval/quant_eval.cc), so that a model (or an ONNX node test)
// with them runs on the GPU without a CPU step:
//
//   qlinear_matmul(a, as, az, b, bs, bz, ys, yz)
//     => acc = matmul_integer(a, b, az, bz)                  exact int32 sums
//        m   = mul(as', bs) / ys                             float32, as the reference
//        r   = round(cast(acc, f64) * cast(m, f64))          the reference's double product,
//                                                            rounded half to even (NaN -> 0)
//        y   = cast(clip(r + yz, qmin, qmax), y's dtype)
//   (as' is a per-row scale [M] reshaped to [M, 1].)
//
//   qlinear_conv(x, xs, xz, w, ws, wz, ys, yz[, B])
//     => acc = conv_integer(x, w, xz, wz) {the same attributes} [+ B per channel, int32]
//        m   = xs * ws / ys                                   ws per channel: [M, 1, ...]
//        y   = the same requantization as above
//   (The reference sums in int64 from the bias; int32 differs only past 2^31.)
//
//   dynamic_quantize_linear(x)
//     => lo = min(reduce_min(x), 0), hi = max(reduce_max(x), 0)
//        scale = hi == lo ? 1 : (hi - lo) / 255
//        zp    = cast(round(clip(0 - lo / scale, 0, 255)), u8)   (NaN -> 0)
//        y     = quantize_linear(x, scale, zp)
//
// Not lowered (left to the reference): a non-float32 DynamicQuantizeLinear input, and
// QLinearMatMul whose scales or zero points are not 0-D or 1-D, or are per row
// of a batched a. NaN inputs of
// DynamicQuantizeLinear: the reference ignores them in the range, reduce_min/max may not.
#pragma once

#include "ir/graph.h"
#include "passes/pass.h"

namespace dlc {

/// Rewrites every QLinearMatMul, QLinearConv and DynamicQuantizeLinear of `g` as above; returns
/// whether anything changed. Each decision is logged under the pass's --debug-only name.
Expected<bool> lowerQLinearOps(Graph &g, const PassOptions &options);

} // namespace dlc
