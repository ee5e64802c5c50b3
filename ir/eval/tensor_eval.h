// The tensor family's reference kernels (the ops of ir/ops/tensor.cc; listed in tensor_eval.cc).
// They share the shape rules of inference (ir/ops/tensor_internal.h), so evaluation and
// inference agree on output shapes and on every error message.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "ir/status.h"
#include "ir/tensor.h"

namespace dlc::eval::tensor {

/// Index `v` into an axis of size `dim` (negative counts from the end); an out-of-range error
/// naming the index and the axis otherwise.
Expected<int64_t> normalizeIndex(int64_t v, int64_t dim, int64_t axis);

using Tensors = std::vector<Tensor>;
Expected<Tensors> evalShape(const Node &node, const Tensors &inputs);
Expected<Tensors> evalSize(const Node &node, const Tensors &inputs);
/// Reshape, Squeeze, Unsqueeze, Flatten, Identity: same bytes, inferred shape.
Expected<Tensors> evalReshapeLike(const Node &node, const Tensors &inputs);
Expected<Tensors> evalConstantOfShape(const Node &node, const Tensors &inputs);
Expected<Tensors> evalRange(const Node &node, const Tensors &inputs);
Expected<Tensors> evalExpand(const Node &node, const Tensors &inputs);
Expected<Tensors> evalTile(const Node &node, const Tensors &inputs);
Expected<Tensors> evalGather(const Node &node, const Tensors &inputs);
Expected<Tensors> evalConcat(const Node &node, const Tensors &inputs);
Expected<Tensors> evalSlice(const Node &node, const Tensors &inputs);
Expected<Tensors> evalTranspose(const Node &node, const Tensors &inputs);
Expected<Tensors> evalSplit(const Node &node, const Tensors &inputs);
// tensor_eval_index.cc
Expected<Tensors> evalGatherElements(const Node &node, const Tensors &inputs);
Expected<Tensors> evalGatherND(const Node &node, const Tensors &inputs);
Expected<Tensors> evalScatterElements(const Node &node, const Tensors &inputs);
Expected<Tensors> evalScatterND(const Node &node, const Tensors &inputs);
Expected<Tensors> evalOneHot(const Node &node, const Tensors &inputs);
// tensor_eval_layout.cc
Expected<Tensors> evalPad(const Node &node, const Tensors &inputs);
Expected<Tensors> evalCenterCropPad(const Node &node, const Tensors &inputs);
Expected<Tensors> evalDepthToSpace(const Node &node, const Tensors &inputs);
Expected<Tensors> evalSpaceToDepth(const Node &node, const Tensors &inputs);
Expected<Tensors> evalTrilu(const Node &node, const Tensors &inputs);
Expected<Tensors> evalEyeLike(const Node &node, const Tensors &inputs);
Expected<Tensors> evalReverseSequence(const Node &node, const Tensors &inputs);
// tensor_eval_select.cc
Expected<Tensors> evalCompress(const Node &node, const Tensors &inputs);
Expected<Tensors> evalNonZero(const Node &node, const Tensors &inputs);
Expected<Tensors> evalUnique(const Node &node, const Tensors &inputs);

} // namespace dlc::eval::tensor
