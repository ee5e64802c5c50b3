// Where QuantizeLinear and DequantizeLinear find an element's scale and zero point, read from
// the static types of a node's inputs: one pair for the whole tensor, one pair per index along
// `axis` (1-D parameters, block_size 0), or one per block along `axis` (block_size > 0). The
// reference kernel (ir/eval/quant_eval.cc) applies the same rules to its tensors at run time;
// fusion (ir/annotations/fusion_roles.cc) and the GPU expressions (codegen/quant_expr.cc) read
// them from the types.
//
// Per-axis parameters are not numpy-broadcast: a scale [C] for x [N,C,H,W] with axis 1 pairs
// with x's dim 1, where numpy would align it with W. The IR keeps ONNX's form (1-D + axis); a
// reader that indexes operands by broadcasting reads a per-axis parameter as if it had the
// shape paramView() gives ([1,C,1,1] here), which broadcasts correctly against x and every
// shape x broadcasts to.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace dlc {

struct QdqLayout {
  enum class Kind : uint8_t { kTensor, kAxis, kBlocked } kind = Kind::kTensor;
  int64_t axis = 0;     // kAxis, kBlocked: normalized against x's rank
  int64_t channels = 1; // kAxis: the parameters' length (x's size along `axis`)
  int64_t rank = 0;     // x's rank

  /// kAxis: the shape a parameter is read as when broadcast against x (x's rank, `channels` at
  /// `axis`, 1 elsewhere). Empty (read as it is) for the other kinds.
  std::vector<int64_t> paramView() const;
};

/// Whether `n` is a quantize_linear or a dequantize_linear.
bool isQdqNode(const Node &n);

/// The layout of quantize_linear / dequantize_linear `n` from its inputs' types (x needs a known
/// rank, the scale and zero point static shapes; x's dims may be symbolic). An error says why
/// there is none: an unknown shape, a zero point whose shape is not the scale's, parameters
/// that fit no layout.
Expected<QdqLayout> qdqLayout(const Node &n);

} // namespace dlc
