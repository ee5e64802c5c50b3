// TensorFlow's window ops -> dlc IR: Slice, StridedSlice, Pad/PadV2/MirrorPad, ReverseV2,
// ReverseSequence, SpaceToBatchND, BatchToSpaceND (see ops_array.h).
//
// StridedSlice is the one with a story. Its sparse spec (begin/end/strides plus five bit masks)
// is expanded against the input's rank into one entry per input dim, TensorFlow's way: an
// ellipsis covers the dims no other entry consumes (an implicit one sits at the end), a new
// axis consumes none, a shrink axis takes the single index `begin`. The result is built as
//   Slice (the dims that are not taken whole) -> Squeeze (shrink axes) -> Unsqueeze (new axes)
// with each step left out when it has nothing to do. Open ends are INT64_MAX / INT64_MIN, which
// the IR's Slice clamps as TensorFlow does; the one clamping rule that differs (a negative
// stride whose begin lies before the first element is empty in TensorFlow, one element in ONNX)
// is resolved here when the dim is known.
#include <bit>

#include "frontend/tf/ops_array.h"

namespace dlc::tf::detail::array {

namespace {

/// TensorFlow's paddings [rank, 2] as the IR's pads [begin..., end...] (constant).
Expected<std::vector<int64_t>> constPads(NodeConverter &c, int i) {
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> p, c.constInts(i, "paddings"));
  if (p.size() % 2)
    return c.error("paddings must have shape [rank, 2], got {} values", p.size());
  const size_t r = p.size() / 2;
  std::vector<int64_t> pads(2 * r);
  for (size_t k = 0; k < r; ++k) {
    pads[k] = p[2 * k];
    pads[k + r] = p[2 * k + 1];
  }
  return pads;
}

/// The same for paddings computed at run time: transposed to [2, rank] and flattened.
Expected<Value *> pads(NodeConverter &c, int i) {
  if (c.constInts(i, "paddings").hasValue()) {
    DLC_ASSIGN_OR_RETURN(std::vector<int64_t> p, constPads(c, i));
    return c.constI64(p, "pads");
  }
  DLC_ASSIGN_OR_RETURN(Value * p, indexInput(c, i, "paddings"));
  DLC_ASSIGN_OR_RETURN(Value * t, c.transpose(p, {1, 0}, "pads_transposed"));
  return c.op(Op::kReshape, {t, c.constI64({-1}, "pads_shape")}, {}, "pads");
}

/// Pad with SYMMETRIC mirroring (the edge repeated), which the IR has no mode for: along each
/// padded axis, the mirrored head and tail are reversed Slices concatenated around the data.
Expected<Value *> padSymmetric(NodeConverter &c, Value *v, const std::vector<int64_t> &p) {
  const int64_t r = static_cast<int64_t>(p.size() / 2);
  const Shape &s = v->shape();
  if (s.isRanked() && s.rank() != r)
    return c.error("paddings must have shape [rank, 2] = [{}, 2], got [{}, 2]", s.rank(), r);
  for (int64_t a = 0; a < r; ++a) {
    const int64_t before = p[static_cast<size_t>(a)], after = p[static_cast<size_t>(a + r)];
    if (before < 0 || after < 0)
      return c.error("paddings must not be negative, got {} and {} for dim {}", before, after, a);
    if (s.isRanked() && s[a].isKnown() && std::max(before, after) > s[a].value())
      return c.error("SYMMETRIC paddings {} and {} exceed the size {} of dim {}", before, after,
                     s[a].value(), a);
    if (before == 0 && after == 0)
      continue;
    std::vector<Value *> parts;
    if (before > 0) {
      DLC_ASSIGN_OR_RETURN(
          Value * head, slice(c, v, {before - 1}, {kEndMin}, {a}, {-1}, fmt::format("head_{}", a)));
      parts.push_back(head);
    }
    parts.push_back(v);
    if (after > 0) {
      DLC_ASSIGN_OR_RETURN(Value * tail,
                           slice(c, v, {-1}, {-1 - after}, {a}, {-1}, fmt::format("tail_{}", a)));
      parts.push_back(tail);
    }
    DLC_ASSIGN_OR_RETURN(
        v, c.op(Op::kConcat, parts, {{"axis", Attribute(a)}}, fmt::format("concat_{}", a)));
  }
  return v;
}

/// The sparse spec of StridedSlice expanded against the input's rank (see the file comment).
struct DenseSlice {
  std::vector<int64_t> starts, ends, axes, steps; // the Slice, over input dims
  std::vector<int64_t> shrink;                    // input dims removed
  std::vector<int64_t> newAxes;                   // output positions of inserted dims
};

Expected<DenseSlice> denseSlice(NodeConverter &c, int64_t rank) {
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> begin, c.constInts(1, "begin"));
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> end, c.constInts(2, "end"));
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> strides, c.constInts(3, "strides"));
  if (begin.size() != end.size() || begin.size() != strides.size())
    return c.error("begin, end and strides differ in length ({}, {}, {})", begin.size(), end.size(),
                   strides.size());
  int64_t mask[5];
  const char *names[] = {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                         "shrink_axis_mask"};
  for (int k = 0; k < 5; ++k) {
    DLC_ASSIGN_OR_RETURN(mask[k], c.attrInt(names[k], 0));
  }
  const uint64_t beginMask = mask[0], endMask = mask[1], ellipsis = mask[2], newAxis = mask[3],
                 shrinkMask = mask[4];
  if (std::popcount(ellipsis) > 1)
    return c.error("ellipsis_mask {} has more than one bit set", ellipsis);
  const int64_t n = static_cast<int64_t>(begin.size());
  auto has = [](uint64_t m, int64_t i) { return i < 64 && ((m >> i) & 1); };
  int64_t consumed = 0;
  for (int64_t i = 0; i < n; ++i)
    consumed += !has(ellipsis, i) && !has(newAxis, i);
  if (consumed > rank)
    return c.error("{} indices for an input of rank {}", consumed, rank);

  DenseSlice d;
  const Shape &shape = c.input(0)->shape();
  int64_t dim = 0, out = 0;
  for (int64_t i = 0; i < n; ++i) {
    const size_t k = static_cast<size_t>(i);
    if (has(ellipsis, i)) {
      dim += rank - consumed;
      out += rank - consumed;
      continue;
    }
    if (has(newAxis, i)) {
      d.newAxes.push_back(out++);
      continue;
    }
    const Dim size = shape[dim];
    if (has(shrinkMask, i)) {
      int64_t b = begin[k];
      if (size.isKnown() && (b < -size.value() || b >= size.value()))
        return c.error("index {} is out of range for dim {} of size {}", b, dim, size.value());
      d.starts.push_back(b);
      d.ends.push_back(b == -1 ? kEndMax : b + 1);
      d.axes.push_back(dim);
      d.steps.push_back(1);
      d.shrink.push_back(dim++);
      continue;
    }
    const int64_t step = strides[k];
    if (step == 0)
      return c.error("strides[{}] is 0", i);
    const bool whole = has(beginMask, i) && has(endMask, i) && step == 1;
    if (!whole) {
      int64_t start = has(beginMask, i) ? (step > 0 ? 0 : kEndMax) : begin[k];
      int64_t stop = has(endMask, i) ? (step > 0 ? kEndMax : kEndMin) : end[k];
      if (step < 0 && !has(beginMask, i) && size.isKnown() && start < -size.value())
        start = stop = 0; // TensorFlow: empty; ONNX would clamp start to the first element
      d.starts.push_back(start);
      d.ends.push_back(stop);
      d.axes.push_back(dim);
      d.steps.push_back(step);
    }
    ++dim;
    ++out;
  }
  return d;
}

} // namespace

/// Slice(input, begin, size): size -1 runs to the end of the dim.
Status convertSlice(NodeConverter &c) {
  auto begin = c.constInts(1, "begin");
  auto size = c.constInts(2, "size");
  if (begin && size) {
    if (begin->size() != size->size())
      return c.error("begin has {} values and size {}", begin->size(), size->size());
    std::vector<int64_t> ends, axes, steps;
    for (size_t k = 0; k < begin->size(); ++k) {
      if ((*size)[k] < -1 || (*begin)[k] < 0)
        return c.error("begin {} and size {} of dim {} are invalid", (*begin)[k], (*size)[k], k);
      ends.push_back((*size)[k] == -1 ? kEndMax : (*begin)[k] + (*size)[k]);
      axes.push_back(static_cast<int64_t>(k));
      steps.push_back(1);
    }
    DLC_ASSIGN_OR_RETURN(Value * out, slice(c, c.input(0), *begin, ends, axes, steps, ""));
    c.setOutputs({out});
    return Status::ok();
  }
  // Computed at run time: ends = size == -1 ? INT64_MAX : begin + size.
  DLC_ASSIGN_OR_RETURN(Value * b, indexInput(c, 1, "begin"));
  DLC_ASSIGN_OR_RETURN(Value * s, indexInput(c, 2, "size"));
  DLC_ASSIGN_OR_RETURN(Value * sum, c.op(Op::kAdd, {b, s}, {}, "begin_plus_size"));
  DLC_ASSIGN_OR_RETURN(
      Value * open,
      c.op(Op::kEqual, {s, c.constant(Tensor::scalarI64(-1), "minus_one")}, {}, "size_is_open"));
  DLC_ASSIGN_OR_RETURN(
      Value * e,
      c.op(Op::kWhere, {open, c.constant(Tensor::scalarI64(kEndMax), "end_max"), sum}, {}, "ends"));
  DLC_ASSIGN_OR_RETURN(Value * out, c.op(Op::kSlice, {c.input(0), b, e}));
  c.setOutputs({out});
  return Status::ok();
}

Status convertStridedSlice(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(int64_t rank, c.inputRank(0, "StridedSlice"));
  DLC_ASSIGN_OR_RETURN(DenseSlice d, denseSlice(c, rank));
  Value *v = c.input(0);
  if (!d.axes.empty()) {
    DLC_ASSIGN_OR_RETURN(v, slice(c, v, d.starts, d.ends, d.axes, d.steps, "slice"));
  }
  if (!d.shrink.empty()) {
    DLC_ASSIGN_OR_RETURN(v, squeeze(c, v, d.shrink, "shrink"));
  }
  if (!d.newAxes.empty()) {
    DLC_ASSIGN_OR_RETURN(v, unsqueeze(c, v, d.newAxes, "new_axes"));
  }
  c.setOutputs({v});
  return Status::ok();
}

/// Pad(input, paddings) and PadV2(input, paddings, constant_values).
Status convertPad(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(Value * p, pads(c, 1));
  std::vector<Value *> in = {c.input(0), p};
  if (c.numInputs() == 3)
    in.push_back(c.input(2));
  DLC_ASSIGN_OR_RETURN(Value * out, c.op(Op::kPad, in));
  c.setOutputs({out});
  return Status::ok();
}

/// MirrorPad: REFLECT is the IR's reflect mode; SYMMETRIC is built from reversed Slices.
Status convertMirrorPad(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(std::string mode, c.attrString("mode"));
  if (mode == "REFLECT") {
    DLC_ASSIGN_OR_RETURN(Value * p, pads(c, 1));
    DLC_ASSIGN_OR_RETURN(Value * out,
                         c.op(Op::kPad, {c.input(0), p}, {{"mode", Attribute("reflect")}}));
    c.setOutputs({out});
    return Status::ok();
  }
  if (mode != "SYMMETRIC")
    return c.error("mode '{}' is not REFLECT or SYMMETRIC", mode);
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> p, constPads(c, 1));
  DLC_ASSIGN_OR_RETURN(Value * out, padSymmetric(c, c.input(0), p));
  c.setOutputs({out});
  return Status::ok();
}

/// ReverseV2(tensor, axis): a Slice with step -1 over each axis.
Status convertReverseV2(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> axes, c.constInts(1, "axis"));
  if (axes.empty()) {
    c.setOutputs({c.input(0)});
    return Status::ok();
  }
  const std::vector<int64_t> starts(axes.size(), -1), ends(axes.size(), kEndMin),
      steps(axes.size(), -1);
  DLC_ASSIGN_OR_RETURN(Value * out, slice(c, c.input(0), starts, ends, axes, steps, ""));
  c.setOutputs({out});
  return Status::ok();
}

/// ReverseSequence: the IR's op takes batch and time axes 0 and 1 only; other pairs are
/// transposed there and back.
Status convertReverseSequence(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(int64_t seq, c.attrInt("seq_dim"));
  DLC_ASSIGN_OR_RETURN(int64_t batch, c.attrInt("batch_dim", 0));
  DLC_ASSIGN_OR_RETURN(Value * lens, indexInput(c, 1, "seq_lengths"));
  if ((seq == 0 && batch == 1) || (seq == 1 && batch == 0)) {
    DLC_ASSIGN_OR_RETURN(Value * out,
                         c.op(Op::kReverseSequence, {c.input(0), lens},
                              {{"batch_axis", Attribute(batch)}, {"time_axis", Attribute(seq)}}));
    c.setOutputs({out});
    return Status::ok();
  }
  DLC_ASSIGN_OR_RETURN(int64_t rank, c.inputRank(0, "ReverseSequence on dims other than 0, 1"));
  DLC_ASSIGN_OR_RETURN(seq, normAxis(c, seq, rank, "seq_dim"));
  DLC_ASSIGN_OR_RETURN(batch, normAxis(c, batch, rank, "batch_dim"));
  if (seq == batch)
    return c.error("seq_dim and batch_dim are both {}", seq);
  std::vector<int64_t> perm = {batch, seq}, inverse(static_cast<size_t>(rank));
  for (int64_t a = 0; a < rank; ++a)
    if (a != batch && a != seq)
      perm.push_back(a);
  for (int64_t a = 0; a < rank; ++a)
    inverse[static_cast<size_t>(perm[static_cast<size_t>(a)])] = a;
  DLC_ASSIGN_OR_RETURN(Value * t, c.transpose(c.input(0), perm, "to_batch_time"));
  DLC_ASSIGN_OR_RETURN(Value * r, c.op(Op::kReverseSequence, {t, lens},
                                       {{"batch_axis", Attribute(0)}, {"time_axis", Attribute(1)}},
                                       "reverse"));
  DLC_ASSIGN_OR_RETURN(Value * out, c.transpose(r, inverse, ""));
  c.setOutputs({out});
  return Status::ok();
}

namespace {

/// The block shape of SpaceToBatchND / BatchToSpaceND and the input's dims after the batch,
/// which must all be known (the Reshapes between are built from them).
struct BlockSpec {
  std::vector<int64_t> block, dims; // dims: input dims 1..rank-1
};

Expected<BlockSpec> blockSpec(NodeConverter &c) {
  BlockSpec b;
  DLC_ASSIGN_OR_RETURN(b.block, c.constInts(1, "block_shape"));
  DLC_ASSIGN_OR_RETURN(int64_t rank, c.inputRank(0, c.opType()));
  const int64_t m = static_cast<int64_t>(b.block.size());
  if (m < 1 || m + 1 > rank)
    return c.error("block_shape has {} values for an input of rank {}", m, rank);
  for (int64_t v : b.block)
    if (v < 1)
      return c.error("block_shape values must be positive, got {}", v);
  const Shape &s = c.input(0)->shape();
  for (int64_t a = 1; a < rank; ++a) {
    if (!s[a].isKnown())
      return c.unsupported("needs every dim but the batch known, but dim {} of {} is symbolic", a,
                           s.str());
    b.dims.push_back(s[a].value());
  }
  return b;
}

Expected<Value *> reshapeTo(NodeConverter &c, Value *v, const std::vector<int64_t> &shape,
                            std::string_view role) {
  return c.op(Op::kReshape, {v, c.constI64(shape, fmt::format("{}_shape", role))}, {}, role);
}

} // namespace

/// SpaceToBatchND(input, block_shape, paddings): pad, split each spatial dim into
/// [dim / block, block], move the blocks in front of the batch, merge them into it.
Status convertSpaceToBatchND(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(BlockSpec b, blockSpec(c));
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> p, c.constInts(2, "paddings"));
  const size_t m = b.block.size(), rank = b.dims.size() + 1;
  if (p.size() != 2 * m)
    return c.error("paddings has {} values for {} block dims", p.size(), m);
  std::vector<int64_t> padsIr(2 * rank, 0);
  std::vector<int64_t> split = {0}, perm, merged = {-1};
  for (size_t k = 0; k < m; ++k) {
    padsIr[k + 1] = p[2 * k];
    padsIr[k + 1 + rank] = p[2 * k + 1];
    const int64_t padded = b.dims[k] + p[2 * k] + p[2 * k + 1];
    if (padded % b.block[k])
      return c.error("padded dim {} of size {} is not a multiple of the block size {}", k + 1,
                     padded, b.block[k]);
    split.push_back(padded / b.block[k]);
    split.push_back(b.block[k]);
    perm.push_back(static_cast<int64_t>(2 * k + 2));
    merged.push_back(padded / b.block[k]);
  }
  perm.push_back(0);
  for (size_t k = 0; k < m; ++k)
    perm.push_back(static_cast<int64_t>(2 * k + 1));
  for (size_t a = m; a < b.dims.size(); ++a) {
    split.push_back(b.dims[a]);
    perm.push_back(static_cast<int64_t>(split.size() - 1));
    merged.push_back(b.dims[a]);
  }
  DLC_ASSIGN_OR_RETURN(Value * v,
                       c.op(Op::kPad, {c.input(0), c.constI64(padsIr, "pads")}, {}, "pad"));
  DLC_ASSIGN_OR_RETURN(v, reshapeTo(c, v, split, "split_blocks"));
  DLC_ASSIGN_OR_RETURN(v, c.transpose(v, perm, "blocks_first"));
  DLC_ASSIGN_OR_RETURN(v, reshapeTo(c, v, merged, ""));
  c.setOutputs({v});
  return Status::ok();
}

/// BatchToSpaceND(input, block_shape, crops): the inverse, then the crops sliced off.
Status convertBatchToSpaceND(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(BlockSpec b, blockSpec(c));
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> crops, c.constInts(2, "crops"));
  const size_t m = b.block.size();
  if (crops.size() != 2 * m)
    return c.error("crops has {} values for {} block dims", crops.size(), m);
  // [b1..bm, batch, s1..sm, rest] -> [batch, s1, b1, ..., sm, bm, rest] -> [batch, s1*b1, ...].
  std::vector<int64_t> split = b.block, perm = {static_cast<int64_t>(m)}, merged = {-1};
  split.push_back(-1);
  for (size_t k = 0; k < m; ++k) {
    split.push_back(b.dims[k]);
    perm.push_back(static_cast<int64_t>(m + 1 + k));
    perm.push_back(static_cast<int64_t>(k));
    merged.push_back(b.dims[k] * b.block[k]);
  }
  for (size_t a = m; a < b.dims.size(); ++a) {
    split.push_back(b.dims[a]);
    perm.push_back(static_cast<int64_t>(split.size() - 1));
    merged.push_back(b.dims[a]);
  }
  DLC_ASSIGN_OR_RETURN(Value * v, reshapeTo(c, c.input(0), split, "split_blocks"));
  DLC_ASSIGN_OR_RETURN(v, c.transpose(v, perm, "blocks_inside"));
  DLC_ASSIGN_OR_RETURN(v, reshapeTo(c, v, merged, "merge_blocks"));
  std::vector<int64_t> starts, ends, axes, steps;
  for (size_t k = 0; k < m; ++k) {
    if (crops[2 * k] == 0 && crops[2 * k + 1] == 0)
      continue;
    starts.push_back(crops[2 * k]);
    ends.push_back(merged[k + 1] - crops[2 * k + 1]);
    axes.push_back(static_cast<int64_t>(k + 1));
    steps.push_back(1);
  }
  if (!axes.empty()) {
    DLC_ASSIGN_OR_RETURN(v, slice(c, v, starts, ends, axes, steps, "crop"));
  }
  c.setOutputs({v});
  return Status::ok();
}

} // namespace dlc::tf::detail::array
