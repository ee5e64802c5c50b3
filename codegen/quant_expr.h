// QuantizeLinear and DequantizeLinear as elementwise expressions, for the nodes whose scale and
// zero point apply per tensor or per axis (ir/quant_layout.h; blocked quantization stays on the
// CPU). The scale and zero point may be constants or computed values: the layout comes from
// the static shapes, not from the data.
//
// Per-axis parameters ([C] for x [N,C,H,W], axis 1) are not numpy-broadcast, so they are read
// per use: emitElementwiseNodes (elementwise_chain.h) asks operandView() for the shape each
// operand is read as and hands it to the emitter's load callback, which indexes with
// broadcastOffset(view, iteration shape) as for any operand ([1,C,1,1] here). The IR keeps
// ONNX's form (1-D + axis), so no pass, exporter or printer needs to know; and since the op
// table keeps both ops opaque, no pass that moves elementwise ops by fusion kind (transpose
// sinking) moves a per-axis Q/DQ away from its axis.
//
// Numerics are the reference's (ir/eval/quant_eval.cc) bit for bit:
//  * Q: saturate(round_half_even(x / scale) + zero_point), x / scale a correctly rounded float
//    division (__fdiv_rn, whatever the NVRTC options), f16/bf16 x widened, f64 x rounded to
//    float first; an int32 x divides in double. NaN gives the zero point. Outputs i8, u8, i16,
//    u16.
//  * DQ: (x - zero_point) * scale, one rounding (__fmul_rn, so never contracted into an FMA
//    with a following add): for 8- and 16-bit x the float product of the exact integer and the
//    scale is the reference's double product rounded to float; an int32 x multiplies in
//    double as the reference does. An f16/bf16 scale (and output) needs an 8-bit x, whose
//    product is exact in float before the one rounding to the output type.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace dlc::codegen {

/// Whether the GPU runs quantize_linear / dequantize_linear `n` as an elementwise op; else
/// `why` says what is missing (the layout, a dtype).
bool qdqSupported(const Node &n, std::string *why);

/// The CUDA expressions (CudaExprFn, elementwise_expr.h) of the two ops.
Expected<std::string> quantizeLinearExpr(const Node &n, const std::vector<std::string> &args);
Expected<std::string> dequantizeLinearExpr(const Node &n, const std::vector<std::string> &args);

/// The shape input `i` of `n` is read as when broadcast against n's output, where that is not
/// its own shape: the per-axis parameters of a Q/DQ (QdqLayout::paramView). nullopt for every
/// other operand (read by numpy broadcasting of its own shape).
std::optional<std::vector<int64_t>> operandView(const Node &n, int i);

/// Whether the expression of `n` never reads its input `i`: a quantize_linear's scale of
/// exactly 1 (realize-int8's fast-requantize form, dlc_quantize_unit). Such an operand is
/// neither hoisted nor loaded.
bool unreadOperand(const Node &n, int i);

} // namespace dlc::codegen
