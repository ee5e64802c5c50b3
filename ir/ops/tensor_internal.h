// Shared pieces of the tensor family (ir/ops/tensor*.cc): shape-value helpers, dim
// arithmetic, the shape rules that inference and reference evaluation (ir/eval/tensor_eval.h)
// both use, and the declarations of each op's infer function (rows are in tensor.cc).
//
// Shape values (see shapeValueDim in ir/op.h) keep Shape -> Gather -> Concat -> Reshape chains
// known with symbolic batch sizes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/op.h"
#include "ir/ops/util.h"

namespace dlc::ops::tensor {

// --- Shape values -----------------------------------------------------------------------------
/// The elements of integer input i (0-D or 1-D) when known: its shape value, or its constant
/// data (negatives kept as literals); nullopt otherwise.
std::optional<std::vector<Dim>> inputElements(const InferContext &ctx, int i);
/// The elements of input i as integers, when every one is known.
std::optional<std::vector<int64_t>> inputInts(const InferContext &ctx, int i);
/// The static length of 1-D input i (from its type), when known.
std::optional<int64_t> staticLength(const InferContext &ctx, int i);
/// `[a,b,...]` of shape-value elements / integers (for messages).
std::string elementsStr(const std::vector<Dim> &dims);
std::string intsStr(const std::vector<int64_t> &v);
/// A 1-D shape operand (Expand's shape, Tile's repeats, ...) as output dims, rejecting
/// negative values; when only its length is known, that many unknown dims; nullopt when not
/// even the length is known.
Expected<std::optional<std::vector<Dim>>> targetDims(const InferContext &ctx, int i,
                                                     const char *what);

// --- Dim arithmetic ---------------------------------------------------------------------------
/// a * b: known when both are; a when b is 1 (and vice versa); else unknown.
Dim dimMul(const Dim &a, const Dim &b);
/// Product of dims[begin, end).
Dim dimProduct(const std::vector<Dim> &dims, size_t begin, size_t end);
/// `count` unknown dims.
std::vector<Dim> unknownDims(int64_t count);

// --- Checks -----------------------------------------------------------------------------------
/// Input i, when its dtype is known, is i32 or i64.
Status checkIndexType(const InferContext &ctx, int i, const char *what);
/// A 0-D or 1-D input: error naming `what` if its known rank is higher.
Status checkRankAtMost(const InferContext &ctx, int i, int64_t maxRank, const char *what);
/// All axes normalised against `rank`; error on out-of-range or repeated axes.
Expected<std::vector<int64_t>> normalizeAxes(const std::vector<int64_t> &axes, int64_t rank);

// --- Shape rules shared by inference and evaluation -------------------------------------------
/// Reshape `in` to the target elements (0 copies, -1 inferred); see tensor_shape_infer.cc.
Expected<Shape> reshapeShape(const TensorType &in, const std::vector<Dim> &target, bool allowzero);

/// One sliced axis with spec-level (unclamped) bounds.
struct SliceAxis {
  int64_t axis, start, end, step;
};
/// Validates and pairs Slice's starts/ends/axes/steps for data of `rank`.
Expected<std::vector<SliceAxis>> sliceAxes(int64_t rank, const std::vector<int64_t> &starts,
                                           const std::vector<int64_t> &ends,
                                           const std::optional<std::vector<int64_t>> &axes,
                                           const std::optional<std::vector<int64_t>> &steps);
/// First index and element count of slicing a dim of known size (ONNX clamping rules).
struct SliceRange {
  int64_t first, count;
};
SliceRange sliceRange(int64_t dim, const SliceAxis &s);

/// Transpose's permutation for `rank` (default: reversed axes); error if not a permutation.
Expected<std::vector<int64_t>> transposePerm(const Node &node, int64_t rank);

/// Split's output sizes along an axis of size `dim`, given the split input's values.
Expected<std::vector<Dim>> splitSizes(const Node &node, const Dim &dim,
                                      const std::optional<std::vector<int64_t>> &split,
                                      bool hasSplitInput, int numOutputs);

/// Range's element count, max(ceil((limit - start) / delta), 0), from scalar tensors.
Expected<int64_t> rangeCount(const Tensor &start, const Tensor &limit, const Tensor &delta);

// --- Element strides ------------------------------------------------------------------------
/// Row-major element strides of `shape`.
std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape);

// --- Inference (one per op) -------------------------------------------------------------------
Status inferCompress(InferContext &ctx);
Status inferConcat(InferContext &ctx);
Status inferConstantOfShape(InferContext &ctx);
Status inferDepthToSpace(InferContext &ctx);
Status inferExpand(InferContext &ctx);
Status inferEyeLike(InferContext &ctx);
Status inferFlatten(InferContext &ctx);
Status inferGather(InferContext &ctx);
Status inferGatherElements(InferContext &ctx);
Status inferGatherND(InferContext &ctx);
Status inferIdentity(InferContext &ctx);
Status inferNonZero(InferContext &ctx);
Status inferOneHot(InferContext &ctx);
Status inferPad(InferContext &ctx);
Status inferRange(InferContext &ctx);
Status inferReshape(InferContext &ctx);
Status inferReverseSequence(InferContext &ctx);
Status inferScatterElements(InferContext &ctx);
Status inferScatterND(InferContext &ctx);
Status inferShape(InferContext &ctx);
Status inferSize(InferContext &ctx);
Status inferSlice(InferContext &ctx);
Status inferSpaceToDepth(InferContext &ctx);
Status inferSplit(InferContext &ctx);
Status inferSqueeze(InferContext &ctx);
Status inferTile(InferContext &ctx);
Status inferTranspose(InferContext &ctx);
Status inferTrilu(InferContext &ctx);
Status inferUnique(InferContext &ctx);
Status inferUnsqueeze(InferContext &ctx);
Status inferCenterCropPad(InferContext &ctx);

} // namespace dlc::ops::tensor
