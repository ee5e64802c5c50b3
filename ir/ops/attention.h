// Attention: ONNX's scaled dot-product attention (ai.onnx opset 23), as the reference backend,
// fuse-attention and the GPU kernel read it.
//
//     Y[b, h] = softmax(Q[b, h] K[b, h/g]ᵀ * scale + mask[b, h] (+ causal)) V[b, h/g]
//
// over logical 4-D operands Q [B, Hq, Sq, D], K [B, Hkv, Sk, D], V [B, Hkv, Sk, Dv] and Y
// [B, Hq, Sq, Dv], with g = Hq / Hkv query heads per key/value head (grouped-query attention).
// scale defaults to 1/sqrt(D); softcap > 0 puts scores through softcap * tanh(s / softcap)
// before the mask; is_causal masks key j > query i (ONNX's upper-left alignment). attn_mask
// broadcasts to [B, Hq, Sq, Sk]: a bool mask keeps the true entries, a float one (of any float
// dtype: ONNX asks for Q's) is added.
// A row with every key masked comes out NaN, as the unfused graph's softmax gives it.
//
// How each stored operand is read as its logical tensor (AttentionOperand):
//  * ONNX's 3-D form: Q [B, Sq, Hq * D] with q_num_heads and kv_num_heads set, read as
//    [B, Sq, Hq, D] with the middle axes swapped; Y is stored the same way.
//  * dlc's perm_q / perm_k / perm_v (4-D only): the operand is read through that transpose, and
//    perm_y stores Y through one, as MatMul's perm_a / perm_y (fuse-attention folds the head
//    split and merge transposes of exported attention into them; the ONNX exporter writes
//    them back as Transposes).
//  * dlc's strided operands: sizes_q = [B, H, S, D], strides_q (element strides of those axes
//    in the stored buffer, any rank) and offset_q (the element where [0, 0, 0, 0] is), and so
//    for k and v. fuse-attention reads Q, K and V this way straight out of a packed QKV
//    projection (the Gathers, Transposes and Reshapes between go); a strided operand takes no
//    perm, and the node is then of the 4-D form (Y through perm_y). The ONNX exporter writes
//    one as a Gather from the flattened buffer.
#pragma once

#include <array>
#include <vector>

#include "ir/graph.h"
#include "ir/status.h"

namespace dlc::ops {

/// A stored operand as its logical [batch, heads, seq, head_size] tensor: the buffer viewed as
/// the 4-D shape `view` (row-major), logical axis j being view axis perm[j]; or, when
/// `strided`, the logical sizes `view` at `explicitStrides` from element `offset`.
struct AttentionOperand {
  std::array<int64_t, 4> view{};
  std::array<int64_t, 4> perm{0, 1, 2, 3};
  bool strided = false;
  std::array<int64_t, 4> explicitStrides{};
  int64_t offset = 0;

  std::array<int64_t, 4> logical() const;
  /// Element strides of the logical axes in the buffer.
  std::array<int64_t, 4> strides() const;
};

/// The attribute names of operand `i` (0 Q, 1 K, 2 V) of the strided form.
struct StridedAttrNames {
  const char *sizes, *strides, *offset;
};
StridedAttrNames stridedAttrNames(int i);

/// Sizes and views of an Attention node with static operand shapes.
struct AttentionLayout {
  AttentionOperand q, k, v, y;
  int64_t batch = 0, qHeads = 0, kvHeads = 0, qSeq = 0, kvSeq = 0, headSize = 0, vHeadSize = 0;
  float scale = 1.0f;
  float softcap = 0.0f;
  bool causal = false;
};

/// The element strides of an attn_mask of shape `mask` over the scores [B, Hq, Sq, Sk] it
/// broadcasts to (right-aligned; 0 where it broadcasts).
std::array<int64_t, 4> attentionMaskStrides(const std::vector<int64_t> &mask);

/// The layout of `node` (an Attention) given the stored shapes of Q, K and V; errors say what
/// does not fit ("K has 64 elements per head, Q has 32").
Expected<AttentionLayout> attentionLayout(const Node &node, const std::vector<int64_t> &q,
                                          const std::vector<int64_t> &k,
                                          const std::vector<int64_t> &v);

} // namespace dlc::ops
