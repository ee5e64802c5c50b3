// TensorFlow's shape and data-movement ops -> dlc IR (see convert.h; ops_array.h lists how
// the family is split over three files). This file holds the table, the shared helpers and the
// shape ops.
//
// TensorFlow passes indices, shapes and axes as i32 or i64 tensors where the IR wants i64:
// constants are rewritten as i64 constants, computed ones get a Cast. Values TensorFlow takes as
// inputs but the IR takes as attributes (Transpose's perm, Concat's and Split's axis) must be
// constant, or shape arithmetic that import-time inference resolved.
#include "frontend/tf/ops_array.h"

#include <algorithm>

namespace dlc::tf::detail {

namespace array {

Expected<Value *> indexInput(NodeConverter &c, int i, std::string_view role) {
  Value *v = c.input(i);
  if (v->dtype() == DType::kI64)
    return v;
  if (v->dtype() != DType::kI32 && v->dtype() != DType::kUnknown)
    return c.error("input {} ({}) must be int32 or int64, got {}", i, role, dtypeName(v->dtype()));
  if (const Tensor *t = c.constInput(i))
    return c.constant(t->castTo(DType::kI64), role);
  return c.cast(v, DType::kI64, role);
}

Expected<int64_t> constInt(NodeConverter &c, int i, std::string_view what) {
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> v, c.constInts(i, what));
  if (v.size() != 1)
    return c.error("input {} ({}) must hold one integer, got {}", i, what, v.size());
  return v[0];
}

Expected<int64_t> normAxis(const NodeConverter &c, int64_t axis, int64_t rank,
                           std::string_view what) {
  if (axis < -rank || axis >= rank)
    return c.error("{} {} is out of range for rank {}", what, axis, rank);
  return axis < 0 ? axis + rank : axis;
}

namespace {
/// The name of a helper constant of the node built with `role`.
std::string part(std::string_view role, std::string_view what) {
  return role.empty() ? std::string(what) : fmt::format("{}_{}", role, what);
}
} // namespace

Expected<Value *> unsqueeze(NodeConverter &c, Value *v, const std::vector<int64_t> &axes,
                            std::string_view role) {
  return c.op(Op::kUnsqueeze, {v, c.constI64(axes, part(role, "axes"))}, {}, role);
}

Expected<Value *> squeeze(NodeConverter &c, Value *v, const std::vector<int64_t> &axes,
                          std::string_view role) {
  return c.op(Op::kSqueeze, {v, c.constI64(axes, part(role, "axes"))}, {}, role);
}

Expected<Value *> slice(NodeConverter &c, Value *v, const std::vector<int64_t> &starts,
                        const std::vector<int64_t> &ends, const std::vector<int64_t> &axes,
                        const std::vector<int64_t> &steps, std::string_view role) {
  return c.op(Op::kSlice,
              {v, c.constI64(starts, part(role, "starts")), c.constI64(ends, part(role, "ends")),
               c.constI64(axes, part(role, "axes")), c.constI64(steps, part(role, "steps"))},
              {}, role);
}

} // namespace array

namespace {

using namespace array;

Status convertCast(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(DType to, c.attrType("DstT"));
  DLC_ASSIGN_OR_RETURN(bool truncate, c.attrBool("Truncate", false));
  if (truncate && isFloat(c.input(0)->dtype()) && isFloat(to) &&
      dtypeSize(to) < dtypeSize(c.input(0)->dtype()))
    c.warn("Truncate=true: dlc rounds {} to {} to nearest instead of truncating",
           dtypeName(c.input(0)->dtype()), dtypeName(to));
  if (c.input(0)->dtype() == to) {
    c.setOutputs({c.input(0)});
    return Status::ok();
  }
  DLC_ASSIGN_OR_RETURN(Value * out, c.op(Op::kCast, {c.input(0)}, {{"to", Attribute(to)}}));
  c.setOutputs({out});
  return Status::ok();
}

Status convertReshape(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(Value * shape, indexInput(c, 1, "shape"));
  // TensorFlow's 0 is a dim of size 0, never "copy the input's dim".
  DLC_ASSIGN_OR_RETURN(Value * out,
                       c.op(Op::kReshape, {c.input(0), shape}, {{"allowzero", Attribute(1)}}));
  c.setOutputs({out});
  return Status::ok();
}

Status convertSqueeze(NodeConverter &c) {
  const char *name = c.attr("squeeze_dims") ? "squeeze_dims" : "axis";
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> axes, c.attrInts(name, std::vector<int64_t>{}));
  if (axes.empty()) {
    // Every dim of size 1: which those are must be known now.
    DLC_ASSIGN_OR_RETURN(int64_t rank, c.inputRank(0, "Squeeze with no squeeze_dims"));
    const Shape &s = c.input(0)->shape();
    for (int64_t d = 0; d < rank; ++d) {
      if (!s[d].isKnown())
        return c.unsupported("Squeeze with no squeeze_dims needs every dim known, but dim {} of "
                             "{} is symbolic",
                             d, s.str());
      if (s[d].value() == 1)
        axes.push_back(d);
    }
    if (axes.empty()) {
      c.setOutputs({c.input(0)});
      return Status::ok();
    }
  }
  DLC_ASSIGN_OR_RETURN(Value * out, squeeze(c, c.input(0), axes, ""));
  c.setOutputs({out});
  return Status::ok();
}

Status convertExpandDims(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(int64_t axis, constInt(c, 1, "axis"));
  // TensorFlow's axis counts in the output's rank, as Unsqueeze's does.
  DLC_ASSIGN_OR_RETURN(Value * out, unsqueeze(c, c.input(0), {axis}, ""));
  c.setOutputs({out});
  return Status::ok();
}

Status convertTranspose(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> perm, c.constInts(1, "perm"));
  DLC_ASSIGN_OR_RETURN(Value * out, c.transpose(c.input(0), perm, ""));
  c.setOutputs({out});
  return Status::ok();
}

Status concat(NodeConverter &c, std::vector<Value *> values, int axisInput) {
  DLC_ASSIGN_OR_RETURN(int64_t axis, constInt(c, axisInput, "axis"));
  DLC_ASSIGN_OR_RETURN(Value * out,
                       c.op(Op::kConcat, std::move(values), {{"axis", Attribute(axis)}}));
  c.setOutputs({out});
  return Status::ok();
}

/// ConcatV2(values..., axis).
Status convertConcatV2(NodeConverter &c) {
  std::vector<Value *> values;
  for (int i = 0; i + 1 < c.numInputs(); ++i)
    values.push_back(c.input(i));
  return concat(c, std::move(values), c.numInputs() - 1);
}

/// Concat(axis, values...): the TF1 form.
Status convertConcat(NodeConverter &c) {
  std::vector<Value *> values;
  for (int i = 1; i < c.numInputs(); ++i)
    values.push_back(c.input(i));
  return concat(c, std::move(values), 0);
}

/// Pack: every input gets a new axis, then they are concatenated along it (a negative axis
/// counts in the output's rank for both).
Status convertPack(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(int64_t axis, c.attrInt("axis", 0));
  if (c.numInputs() == 1) {
    DLC_ASSIGN_OR_RETURN(Value * out, unsqueeze(c, c.input(0), {axis}, ""));
    c.setOutputs({out});
    return Status::ok();
  }
  std::vector<Value *> parts;
  for (int i = 0; i < c.numInputs(); ++i) {
    DLC_ASSIGN_OR_RETURN(Value * p,
                         unsqueeze(c, c.input(i), {axis}, fmt::format("unsqueeze_{}", i)));
    parts.push_back(p);
  }
  DLC_ASSIGN_OR_RETURN(Value * out, c.op(Op::kConcat, parts, {{"axis", Attribute(axis)}}));
  c.setOutputs({out});
  return Status::ok();
}

/// Unpack: Split into `num` pieces along the axis, each squeezed.
Status convertUnpack(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(int64_t num, c.attrInt("num"));
  DLC_ASSIGN_OR_RETURN(int64_t axis, c.attrInt("axis", 0));
  if (num < 1)
    return c.error("num must be positive, got {}", num);
  std::vector<Value *> pieces = {c.input(0)};
  if (num > 1) {
    DLC_ASSIGN_OR_RETURN(Node * split,
                         c.node(Op::kSplit, {c.input(0)},
                                {{"axis", Attribute(axis)}, {"num_outputs", Attribute(num)}},
                                static_cast<int>(num), "split"));
    pieces = split->outputs();
  }
  std::vector<Value *> outs;
  for (size_t k = 0; k < pieces.size(); ++k) {
    DLC_ASSIGN_OR_RETURN(Value * o, squeeze(c, pieces[k], {axis}, fmt::format("squeeze_{}", k)));
    outs.push_back(o);
  }
  c.setOutputs(outs);
  return Status::ok();
}

/// Split(axis, value): num_split equal pieces.
Status convertSplit(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(int64_t axis, constInt(c, 0, "axis"));
  DLC_ASSIGN_OR_RETURN(int64_t num, c.attrInt("num_split"));
  if (num < 1)
    return c.error("num_split must be positive, got {}", num);
  DLC_ASSIGN_OR_RETURN(Node * n,
                       c.node(Op::kSplit, {c.input(1)},
                              {{"axis", Attribute(axis)}, {"num_outputs", Attribute(num)}},
                              static_cast<int>(num)));
  c.setOutputs(n->outputs());
  return Status::ok();
}

/// SplitV(value, size_splits, axis): one size may be -1, the rest of the dim.
Status convertSplitV(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, c.constInts(1, "size_splits"));
  DLC_ASSIGN_OR_RETURN(int64_t axis, constInt(c, 2, "axis"));
  if (sizes.empty())
    return c.error("size_splits is empty");
  auto infer = std::find(sizes.begin(), sizes.end(), -1);
  if (std::count(sizes.begin(), sizes.end(), -1) > 1)
    return c.error("size_splits may hold one -1, got [{}]", fmt::join(sizes, ", "));
  for (int64_t s : sizes)
    if (s < -1)
      return c.error("size_splits must not be negative, got [{}]", fmt::join(sizes, ", "));
  if (infer != sizes.end()) {
    DLC_ASSIGN_OR_RETURN(int64_t rank, c.inputRank(0, "SplitV with a -1 size"));
    DLC_ASSIGN_OR_RETURN(int64_t a, normAxis(c, axis, rank, "axis"));
    const Dim &d = c.input(0)->shape()[a];
    if (!d.isKnown())
      return c.unsupported("a -1 in size_splits needs the size of axis {}, which is symbolic in {}",
                           a, c.input(0)->shape().str());
    int64_t rest = d.value();
    for (int64_t s : sizes)
      rest -= s == -1 ? 0 : s;
    if (rest < 0)
      return c.error("size_splits [{}] exceed the size {} of axis {}", fmt::join(sizes, ", "),
                     d.value(), a);
    *infer = rest;
  }
  DLC_ASSIGN_OR_RETURN(Node * n,
                       c.node(Op::kSplit, {c.input(0), c.constI64(sizes, "sizes")},
                              {{"axis", Attribute(axis)}}, static_cast<int>(sizes.size())));
  c.setOutputs(n->outputs());
  return Status::ok();
}

Status convertTile(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(Value * reps, indexInput(c, 1, "multiples"));
  DLC_ASSIGN_OR_RETURN(Value * out, c.op(Op::kTile, {c.input(0), reps}));
  c.setOutputs({out});
  return Status::ok();
}

/// Fill(dims, value) and BroadcastTo(input, shape): Expand.
Status convertFill(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(Value * dims, indexInput(c, 0, "dims"));
  DLC_ASSIGN_OR_RETURN(Value * out, c.op(Op::kExpand, {c.input(1), dims}));
  c.setOutputs({out});
  return Status::ok();
}

Status convertBroadcastTo(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(Value * shape, indexInput(c, 1, "shape"));
  DLC_ASSIGN_OR_RETURN(Value * out, c.op(Op::kExpand, {c.input(0), shape}));
  c.setOutputs({out});
  return Status::ok();
}

/// ZerosLike / OnesLike: ConstantOfShape of the input's shape.
Status filledLike(NodeConverter &c, double v) {
  DType t = c.input(0)->dtype();
  DLC_ASSIGN_OR_RETURN(Value * shape, c.op(Op::kShape, {c.input(0)}, {}, "shape"));
  Tensor value = Tensor::fromVector<double>(DType::kF64, {1}, {v}).castTo(t);
  DLC_ASSIGN_OR_RETURN(Value * out,
                       c.op(Op::kConstantOfShape, {shape}, {{"value", Attribute(value)}}));
  c.setOutputs({out});
  return Status::ok();
}
Status convertZerosLike(NodeConverter &c) { return filledLike(c, 0); }
Status convertOnesLike(NodeConverter &c) { return filledLike(c, 1); }

/// An i64 result of Shape/Size cast to `out_type` (TensorFlow's default: int32).
Expected<Value *> asOutType(NodeConverter &c, Value *v, std::string_view role) {
  DLC_ASSIGN_OR_RETURN(DType t, c.attrType("out_type", DType::kI32));
  if (t != DType::kI32 && t != DType::kI64)
    return c.error("out_type must be int32 or int64, got {}", dtypeName(t));
  return c.cast(v, t, role);
}

Status convertShape(NodeConverter &c) {
  std::vector<Value *> outs;
  for (int i = 0; i < c.numInputs(); ++i) {
    DLC_ASSIGN_OR_RETURN(Value * s, c.op(Op::kShape, {c.input(i)}, {}, fmt::format("shape_{}", i)));
    DLC_ASSIGN_OR_RETURN(Value * o, asOutType(c, s, fmt::format("cast_{}", i)));
    outs.push_back(o);
  }
  c.setOutputs(outs);
  return Status::ok();
}

Status convertSize(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(Value * s, c.op(Op::kSize, {c.input(0)}, {}, "size"));
  DLC_ASSIGN_OR_RETURN(Value * out, asOutType(c, s, "cast"));
  c.setOutputs({out});
  return Status::ok();
}

/// Rank: an int32 scalar; a constant when the rank is known.
Status convertRank(NodeConverter &c) {
  const Shape &s = c.input(0)->shape();
  if (s.isRanked()) {
    c.setOutputs({c.constant(
        Tensor::fromVector<int32_t>(DType::kI32, {}, {static_cast<int32_t>(s.rank())}), "rank")});
    return Status::ok();
  }
  DLC_ASSIGN_OR_RETURN(Value * shape, c.op(Op::kShape, {c.input(0)}, {}, "shape"));
  DLC_ASSIGN_OR_RETURN(Value * n, c.op(Op::kSize, {shape}, {}, "size"));
  DLC_ASSIGN_OR_RETURN(Value * out, c.cast(n, DType::kI32));
  c.setOutputs({out});
  return Status::ok();
}

/// Range(start, limit, delta), one dtype (Tidx) for all three.
Status convertRange(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(DType t, c.attrType("Tidx", c.input(0)->dtype()));
  std::vector<Value *> in;
  for (int i = 0; i < 3; ++i) {
    DLC_ASSIGN_OR_RETURN(Value * v, c.cast(c.input(i), t, fmt::format("cast_{}", i)));
    in.push_back(v);
  }
  DLC_ASSIGN_OR_RETURN(Value * out, c.op(Op::kRange, in));
  c.setOutputs({out});
  return Status::ok();
}

Status convertEinsum(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(std::string eq, c.attrString("equation"));
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  std::vector<Value *> in;
  for (int i = 0; i < c.numInputs(); ++i)
    in.push_back(c.input(i));
  DLC_ASSIGN_OR_RETURN(Value * out, c.op(Op::kEinsum, in, {{"equation", Attribute(eq)}}));
  c.setOutputs({out});
  return Status::ok();
}

} // namespace

std::vector<ConverterRow> arrayConverters() {
  constexpr int kAny = -1;
  return {
      // op                  inputs       conversion
      {"BatchToSpaceND", 3, 3, convertBatchToSpaceND},
      {"BroadcastTo", 2, 2, convertBroadcastTo},
      {"Cast", 1, 1, convertCast},
      {"Concat", 2, kAny, convertConcat},
      {"ConcatV2", 2, kAny, convertConcatV2},
      {"Einsum", 1, kAny, convertEinsum},
      {"ExpandDims", 2, 2, convertExpandDims},
      {"Fill", 2, 2, convertFill},
      {"Gather", 2, 2, convertGather},
      {"GatherNd", 2, 2, convertGatherNd},
      {"GatherV2", 3, 3, convertGatherV2},
      {"MirrorPad", 2, 2, convertMirrorPad},
      {"OneHot", 4, 4, convertOneHot},
      {"OnesLike", 1, 1, convertOnesLike},
      {"Pack", 1, kAny, convertPack},
      {"Pad", 2, 2, convertPad},
      {"PadV2", 3, 3, convertPad},
      {"Range", 3, 3, convertRange},
      {"Rank", 1, 1, convertRank},
      {"Reshape", 2, 2, convertReshape},
      {"ReverseSequence", 2, 2, convertReverseSequence},
      {"ReverseV2", 2, 2, convertReverseV2},
      {"Select", 3, 3, convertSelect},
      {"SelectV2", 3, 3, convertSelectV2},
      {"Shape", 1, 1, convertShape},
      {"ShapeN", 1, kAny, convertShape},
      {"Size", 1, 1, convertSize},
      {"Slice", 3, 3, convertSlice},
      {"SpaceToBatchND", 3, 3, convertSpaceToBatchND},
      {"Split", 2, 2, convertSplit},
      {"SplitV", 3, 3, convertSplitV},
      {"Squeeze", 1, 1, convertSqueeze},
      {"StridedSlice", 4, 4, convertStridedSlice},
      {"Tile", 2, 2, convertTile},
      {"TopKV2", 2, 2, convertTopKV2},
      {"Transpose", 2, 2, convertTranspose},
      {"Unique", 1, 1, convertUnique},
      {"UnsortedSegmentSum", 3, 3, convertUnsortedSegmentSum},
      {"Unpack", 1, 1, convertUnpack},
      {"Where", 1, 1, convertWhere},
      {"ZerosLike", 1, 1, convertZerosLike},
  };
}

} // namespace dlc::tf::detail
