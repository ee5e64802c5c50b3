// The shape and data-movement converters (ops_array*.cc): the helpers they share and the
// conversion functions that ops_array.cc's table lists from its two sibling files.
//
//   ops_array.cc        shapes: Cast, Reshape, Squeeze, ExpandDims, Transpose, Concat, Pack,
//                       Unpack, Split, Tile, Fill, *Like, Shape, Size, Rank, Range, BroadcastTo,
//                       Einsum
//   ops_array_slice.cc  windows: Slice, StridedSlice, Pad, MirrorPad, ReverseV2,
//                       ReverseSequence, SpaceToBatchND, BatchToSpaceND
//   ops_array_index.cc  indexing: Gather, GatherNd, OneHot, Select, Where, TopKV2, Unique,
//                       UnsortedSegmentSum
#pragma once

#include <limits>

#include "frontend/tf/convert.h"

namespace dlc::tf::detail::array {

/// An open end of a Slice: past the last element (step > 0) or before the first (step < 0).
inline constexpr int64_t kEndMax = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kEndMin = std::numeric_limits<int64_t>::min();

/// Input i as i64, the IR's index type: a fresh i64 constant when it is constant, else a Cast.
Expected<Value *> indexInput(NodeConverter &c, int i, std::string_view role);
/// The one integer constant input i holds (a scalar or a one-element vector).
Expected<int64_t> constInt(NodeConverter &c, int i, std::string_view what);
/// `axis` in [-rank, rank) made non-negative; an error naming `what` otherwise.
Expected<int64_t> normAxis(const NodeConverter &c, int64_t axis, int64_t rank,
                           std::string_view what);
/// Unsqueeze / Squeeze with constant axes.
Expected<Value *> unsqueeze(NodeConverter &c, Value *v, const std::vector<int64_t> &axes,
                            std::string_view role);
Expected<Value *> squeeze(NodeConverter &c, Value *v, const std::vector<int64_t> &axes,
                          std::string_view role);
/// Slice with constant starts, ends, axes and steps.
Expected<Value *> slice(NodeConverter &c, Value *v, const std::vector<int64_t> &starts,
                        const std::vector<int64_t> &ends, const std::vector<int64_t> &axes,
                        const std::vector<int64_t> &steps, std::string_view role);

// ops_array_slice.cc
Status convertSlice(NodeConverter &c);
Status convertStridedSlice(NodeConverter &c);
Status convertPad(NodeConverter &c);
Status convertMirrorPad(NodeConverter &c);
Status convertReverseV2(NodeConverter &c);
Status convertReverseSequence(NodeConverter &c);
Status convertSpaceToBatchND(NodeConverter &c);
Status convertBatchToSpaceND(NodeConverter &c);

// ops_array_index.cc
Status convertGatherV2(NodeConverter &c);
Status convertGather(NodeConverter &c);
Status convertGatherNd(NodeConverter &c);
Status convertOneHot(NodeConverter &c);
Status convertSelect(NodeConverter &c);
Status convertSelectV2(NodeConverter &c);
Status convertWhere(NodeConverter &c);
Status convertTopKV2(NodeConverter &c);
Status convertUnique(NodeConverter &c);
Status convertUnsortedSegmentSum(NodeConverter &c);

} // namespace dlc::tf::detail::array
