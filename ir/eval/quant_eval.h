// Reference evaluation of the quantization family (the rows of ir/ops/quant.cc).
// Internal to ir/eval: the kernel table (families.h) refers to these.
//
// Quantization is y = saturate(round_half_even(x / scale) + zero_point), with x / scale
// computed in f32 for float inputs (f16/bf16 widened first) as the spec's reference and
// onnxruntime do; NaN quantizes to the zero point. Dequantization is (x - zero_point) * scale,
// computed exactly and rounded once to the scale's type.
//
//   quant_eval.cc        QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear
//   qlinear_conv_eval.cc QLinearConv
#pragma once

#include <vector>

#include "ir/eval/eval_util.h"
#include "ir/graph.h"

namespace dlc::eval {

EvalResult evalQuantizeLinear(const Node &node, const std::vector<Tensor> &in);
EvalResult evalDequantizeLinear(const Node &node, const std::vector<Tensor> &in);
EvalResult evalDynamicQuantizeLinear(const Node &node, const std::vector<Tensor> &in);
EvalResult evalQLinearConv(const Node &node, const std::vector<Tensor> &in);

} // namespace dlc::eval
