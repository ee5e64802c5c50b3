// NonZero, Compress, Unique and NonMaxSuppression as fixed-size work, a count and a Slice by
// it (see sized_by_data.h).
#include "passes/util/sized_by_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "ir/ops/util.h"
#include "passes/util/node_builder.h"

namespace dlc {

namespace {

/// The constant [0, 1, ..., n - 1] (i64).
Value *iota(NodeBuilder &b, int64_t n, const std::string &name) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), int64_t{0});
  return b.ints(name, v);
}

/// `into` with `into[where[i]] = what[i]` along axis 0 (the last write wins where slots repeat:
/// the spare slot every rewrite here sends its unselected elements to).
Expected<Value *> scatter(NodeBuilder &b, Value *into, Value *where, Value *what,
                          const std::string &name) {
  return b.op(Op::kScatterElements, {into, where, what}, name, {{"axis", Attribute(int64_t{0})}});
}

/// v[:count] along axis 0, `count` a [1] i64 computed on the device: the Slice whose shape is
/// known only after the shape point.
Expected<Value *> firstCount(NodeBuilder &b, Value *v, Value *count, const std::string &name) {
  return b.op(Op::kSlice, {v, b.ints(name + "_start", {0}), count, b.ints(name + "_axes", {0})},
              name);
}

/// The positions of `mask`'s (bool, [len]) true elements, in order: [count] i64, whose size is
/// known once `count` ([1] i64) is. A scan numbers the true elements, a ScatterElements puts
/// each position at its number in a buffer of len + 1 (the false ones all go to the last
/// slot), and the first `count` are taken.
struct Compacted {
  Value *positions = nullptr, *count = nullptr;
};

Expected<Compacted> compact(NodeBuilder &b, Value *mask, int64_t len, const std::string &tag) {
  DLC_ASSIGN_OR_RETURN(Value * m,
                       b.op(Op::kCast, {mask}, tag + "_ones", {{"to", Attribute(DType::kI64)}}));
  DLC_ASSIGN_OR_RETURN(
      Value * numbered,
      b.op(Op::kCumSum, {m, b.constant(tag + "_axis", Tensor::scalarI64(0))}, tag + "_scan"));
  DLC_ASSIGN_OR_RETURN(
      Value * slot,
      b.op(Op::kSub, {numbered, b.scalar(tag + "_one", 1, DType::kI64)}, tag + "_slot"));
  DLC_ASSIGN_OR_RETURN(
      Value * dst,
      b.op(Op::kWhere,
           {mask, slot, b.scalar(tag + "_spare", static_cast<double>(len), DType::kI64)},
           tag + "_dst"));
  DLC_ASSIGN_OR_RETURN(Value * buffer, scatter(b, b.zeros(tag + "_zeros", DType::kI64, {len + 1}),
                                               dst, iota(b, len, tag + "_iota"), tag + "_buffer"));
  Compacted c;
  DLC_ASSIGN_OR_RETURN(c.count, b.op(Op::kReduceSum, {m, b.ints(tag + "_sum_axes", {0})},
                                     tag + "_count", {{"keepdims", Attribute(int64_t{1})}}));
  DLC_ASSIGN_OR_RETURN(c.positions, firstCount(b, buffer, c.count, tag + "_positions"));
  return c;
}

Status checkNonZero(const Node &n) {
  const Value *x = n.input(0);
  if (!x->shape().isStatic() || x->shape().rank() == 0)
    return invalidArgument("its input's shape is not static and of rank 1 or more");
  if (!isNumeric(x->dtype()) && x->dtype() != DType::kBool)
    return invalidArgument("its input is {}", dtypeName(x->dtype()));
  return Status::ok();
}

Expected<std::vector<Value *>> expandNonZero(Graph &g, Node *n) {
  NodeBuilder b(g, n);
  Value *x = n->input(0);
  const std::vector<int64_t> dims = x->shape().sizes();
  const int64_t count = *x->shape().numElements();
  DLC_ASSIGN_OR_RETURN(Value * flat, b.reshape(x, {count}, "flat"));
  Value *mask = flat;
  if (x->dtype() != DType::kBool) {
    DLC_ASSIGN_OR_RETURN(Value * zero,
                         b.op(Op::kEqual, {flat, b.scalar("zero", 0, x->dtype())}, "is_zero"));
    DLC_ASSIGN_OR_RETURN(mask, b.op(Op::kNot, {zero}, "mask"));
  }
  DLC_ASSIGN_OR_RETURN(Compacted c, compact(b, mask, count, "nonzero"));
  // Flat positions back to coordinates, one row per axis.
  std::vector<Value *> rows;
  int64_t stride = count;
  for (size_t d = 0; d < dims.size(); ++d) {
    stride /= std::max<int64_t>(dims[d], 1);
    const std::string s = fmt::format("_{}", d);
    Value *coord = c.positions;
    if (stride != 1) {
      DLC_ASSIGN_OR_RETURN(coord,
                           b.op(Op::kDiv, {coord, b.ints("stride" + s, {stride})}, "div" + s));
    }
    if (d > 0) {
      DLC_ASSIGN_OR_RETURN(coord,
                           b.op(Op::kMod, {coord, b.ints("size" + s, {dims[d]})}, "mod" + s));
    }
    DLC_ASSIGN_OR_RETURN(Value * row, b.unsqueeze(coord, {0}, "row" + s));
    rows.push_back(row);
  }
  DLC_ASSIGN_OR_RETURN(Value * out, b.concat(rows, 0, "coordinates"));
  return std::vector<Value *>{out};
}

Status checkCompress(const Node &n) {
  const Value *x = n.input(0), *cond = n.input(1);
  if (!x->shape().isStatic() || !cond->shape().isStatic() || cond->shape().rank() != 1)
    return invalidArgument("its input's or condition's shape is not static, or the condition "
                           "is not 1-D");
  if (cond->dtype() != DType::kBool)
    return invalidArgument("its condition is {}", dtypeName(cond->dtype()));
  if (n.hasAttr("axis") && !normalizeAxis(n.getInt("axis"), x->shape().rank()))
    return invalidArgument("axis {} is out of range", n.getInt("axis"));
  return Status::ok();
}

Expected<std::vector<Value *>> expandCompress(Graph &g, Node *n) {
  NodeBuilder b(g, n);
  Value *data = n->input(0), *cond = n->input(1);
  int64_t axis = 0;
  if (n->hasAttr("axis")) {
    DLC_ASSIGN_OR_RETURN(axis, normalizeAxis(n->getInt("axis"), data->shape().rank()));
  } else {
    DLC_ASSIGN_OR_RETURN(data, b.reshape(data, {*data->shape().numElements()}, "flat"));
  }
  const int64_t size = data->shape().sizes()[static_cast<size_t>(axis)];
  const int64_t len = cond->shape().sizes()[0];
  if (len > size) { // the condition's extra entries select nothing
    DLC_ASSIGN_OR_RETURN(cond, b.slice(cond, 0, size, 0, "condition"));
  }
  if (len < size) { // slices past the condition are dropped
    DLC_ASSIGN_OR_RETURN(data, b.slice(data, 0, len, axis, "covered"));
  }
  DLC_ASSIGN_OR_RETURN(Compacted c, compact(b, cond, std::min(len, size), "compress"));
  DLC_ASSIGN_OR_RETURN(
      Value * out, b.op(Op::kGather, {data, c.positions}, "output", {{"axis", Attribute(axis)}}));
  return std::vector<Value *>{out};
}

Status checkUnique(const Node &n) {
  const Value *x = n.input(0);
  if (n.hasAttr("axis")) {
    if (!x->shape().isStatic() || !normalizeAxis(n.getInt("axis"), x->shape().rank()))
      return invalidArgument("its input's shape is not static or its axis is out of range");
    if (n.getInt("sorted") == 0)
      return invalidArgument("it has an axis and sorted=0 (only sorted slices are rewritten)");
  }
  if (!x->shape().isStatic() || *x->shape().numElements() == 0)
    return invalidArgument("its input's shape is not static, or it is empty");
  if (!isNumeric(x->dtype()))
    return invalidArgument("its input is {}", dtypeName(x->dtype()));
  return Status::ok();
}

/// Unique along an axis (sorted): the slices compared pairwise. Slice i is X moved so the axis
/// comes first and flattened to a row; rows i and j are equal when every element is, and row j
/// is below row i when they first differ where j's element is smaller. A row's group is the
/// number of distinct rows below it; the first row of each group (no equal row before it) puts
/// its values, its index and its group's size in that group's slot. Quadratic in the slices:
/// meant for the small inputs Unique sees.
Expected<std::vector<Value *>> expandUniqueAxis(Graph &g, Node *n) {
  NodeBuilder b(g, n);
  Value *x = n->input(0);
  const std::vector<int64_t> dims = x->shape().sizes();
  const int64_t rank = static_cast<int64_t>(dims.size());
  DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(n->getInt("axis"), rank));
  const int64_t len = dims[static_cast<size_t>(axis)];
  const int64_t width = *x->shape().numElements() / std::max<int64_t>(len, 1);
  std::vector<int64_t> perm = {axis}, restDims;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis) {
      perm.push_back(d);
      restDims.push_back(dims[static_cast<size_t>(d)]);
    }
  DLC_ASSIGN_OR_RETURN(Value * moved, b.transpose(x, perm, "axis_first"));
  DLC_ASSIGN_OR_RETURN(Value * rows, b.reshape(moved, {len, width}, "rows"));
  DLC_ASSIGN_OR_RETURN(Value * ri, b.reshape(rows, {len, 1, width}, "rows_i"));
  DLC_ASSIGN_OR_RETURN(Value * rj, b.reshape(rows, {1, len, width}, "rows_j"));
  // [i, j, k]: where rows i and j differ; [i, j]: equal, and the first k where they differ.
  DLC_ASSIGN_OR_RETURN(Value * same, b.op(Op::kEqual, {ri, rj}, "same_elements"));
  DLC_ASSIGN_OR_RETURN(Value * differ, b.op(Op::kNot, {same}, "differ_elements"));
  DLC_ASSIGN_OR_RETURN(Value * differI,
                       b.op(Op::kCast, {differ}, "differ_ones", {{"to", Attribute(DType::kI64)}}));
  DLC_ASSIGN_OR_RETURN(Value * anyDiff, b.op(Op::kReduceMax, {differI, b.ints("k_axes", {2})},
                                             "rows_differ", {{"keepdims", Attribute(int64_t{0})}}));
  DLC_ASSIGN_OR_RETURN(Value * eqI,
                       b.op(Op::kSub, {b.scalar("one_i", 1, DType::kI64), anyDiff}, "rows_equal"));
  DLC_ASSIGN_OR_RETURN(
      Value * first, b.op(Op::kArgMax, {differI}, "first_difference",
                          {{"axis", Attribute(int64_t{2})}, {"keepdims", Attribute(int64_t{0})}}));
  // Row i's and row j's elements where they first differ (flat index row * width + k).
  Value *rowIndex = iota(b, len, "row_index");
  std::vector<int64_t> starts(static_cast<size_t>(len));
  for (int64_t i = 0; i < len; ++i)
    starts[static_cast<size_t>(i)] = i * width;
  DLC_ASSIGN_OR_RETURN(Value * iStart, b.reshape(b.ints("i_start", starts), {len, 1}, "i_col"));
  DLC_ASSIGN_OR_RETURN(Value * jStart, b.reshape(b.ints("j_start", starts), {1, len}, "j_row"));
  DLC_ASSIGN_OR_RETURN(Value * flat, b.reshape(rows, {len * width}, "flat"));
  DLC_ASSIGN_OR_RETURN(Value * iAt, b.op(Op::kAdd, {iStart, first}, "i_at"));
  DLC_ASSIGN_OR_RETURN(Value * jAt, b.op(Op::kAdd, {jStart, first}, "j_at"));
  auto take = [&](Value *at, const std::string &name) {
    return b.op(Op::kGather, {flat, at}, name, {{"axis", Attribute(int64_t{0})}});
  };
  DLC_ASSIGN_OR_RETURN(Value * xi, take(iAt, "i_value"));
  DLC_ASSIGN_OR_RETURN(Value * xj, take(jAt, "j_value"));
  // below[i, j]: row j sorts before row i.
  DLC_ASSIGN_OR_RETURN(Value * below, b.op(Op::kLess, {xj, xi}, "j_below_i"));
  DLC_ASSIGN_OR_RETURN(Value * belowI,
                       b.op(Op::kCast, {below}, "below_ones", {{"to", Attribute(DType::kI64)}}));
  DLC_ASSIGN_OR_RETURN(Value * strictly, b.op(Op::kMul, {belowI, anyDiff}, "strictly_below"));
  // A row is its group's first when no equal row comes before it.
  std::vector<int64_t> before(static_cast<size_t>(len * len), 0);
  for (int64_t i = 0; i < len; ++i)
    for (int64_t j = 0; j < i; ++j)
      before[static_cast<size_t>(i * len + j)] = 1;
  DLC_ASSIGN_OR_RETURN(Value * earlier,
                       b.reshape(b.ints("earlier", before), {len, len}, "j_before_i"));
  DLC_ASSIGN_OR_RETURN(Value * eqBefore, b.op(Op::kMul, {eqI, earlier}, "equal_before"));
  DLC_ASSIGN_OR_RETURN(Value * dupes,
                       b.op(Op::kReduceSum, {eqBefore, b.ints("j_axes", {1})}, "equal_rows_before",
                            {{"keepdims", Attribute(int64_t{0})}}));
  DLC_ASSIGN_OR_RETURN(Value * isFirst,
                       b.op(Op::kEqual, {dupes, b.scalar("none", 0, DType::kI64)}, "is_first"));
  DLC_ASSIGN_OR_RETURN(Value * firstI,
                       b.op(Op::kCast, {isFirst}, "first_ones", {{"to", Attribute(DType::kI64)}}));
  // Group of row i: the distinct rows (firsts) strictly below it.
  DLC_ASSIGN_OR_RETURN(Value * firstRow, b.reshape(firstI, {1, len}, "first_row"));
  DLC_ASSIGN_OR_RETURN(Value * belowFirst, b.op(Op::kMul, {strictly, firstRow}, "below_firsts"));
  DLC_ASSIGN_OR_RETURN(Value * group, b.op(Op::kReduceSum, {belowFirst, b.ints("g_axes", {1})},
                                           "group", {{"keepdims", Attribute(int64_t{0})}}));
  DLC_ASSIGN_OR_RETURN(Value * size, b.op(Op::kReduceSum, {eqI, b.ints("s_axes", {1})},
                                          "group_size", {{"keepdims", Attribute(int64_t{0})}}));
  DLC_ASSIGN_OR_RETURN(Value * count, b.op(Op::kReduceSum, {firstI, b.ints("c_axes", {0})}, "count",
                                           {{"keepdims", Attribute(int64_t{1})}}));
  DLC_ASSIGN_OR_RETURN(
      Value * slot,
      b.op(Op::kWhere, {isFirst, group, b.scalar("spare", static_cast<double>(len), DType::kI64)},
           "slot"));
  DLC_ASSIGN_OR_RETURN(Value * slotCol, b.reshape(slot, {len, 1}, "slot_col"));
  DLC_ASSIGN_OR_RETURN(
      Value * slotRows,
      b.op(Op::kExpand, {slotCol, b.ints("slot_shape", {len, width})}, "slot_rows"));
  DLC_ASSIGN_OR_RETURN(Value * valueBuf,
                       scatter(b, b.zeros("value_zeros", x->dtype(), {len + 1, width}), slotRows,
                               rows, "value_buffer"));
  DLC_ASSIGN_OR_RETURN(Value * indexBuf, scatter(b, b.zeros("index_zeros", DType::kI64, {len + 1}),
                                                 slot, rowIndex, "index_buffer"));
  DLC_ASSIGN_OR_RETURN(Value * sizeBuf, scatter(b, b.zeros("size_zeros", DType::kI64, {len + 1}),
                                                slot, size, "size_buffer"));
  DLC_ASSIGN_OR_RETURN(Value * yRows, firstCount(b, valueBuf, count, "unique_rows"));
  DLC_ASSIGN_OR_RETURN(Value * indices, firstCount(b, indexBuf, count, "first_indices"));
  DLC_ASSIGN_OR_RETURN(Value * counts, firstCount(b, sizeBuf, count, "counts"));
  // The rows back to slices along the axis: [count, rest...], then the axis moved home.
  std::vector<int64_t> shape = {-1};
  shape.insert(shape.end(), restDims.begin(), restDims.end());
  DLC_ASSIGN_OR_RETURN(Value * ySlices, b.reshape(yRows, shape, "unique_slices"));
  std::vector<int64_t> back(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d)
    back[static_cast<size_t>(perm[static_cast<size_t>(d)])] = d;
  DLC_ASSIGN_OR_RETURN(Value * y, b.transpose(ySlices, back, "output"));
  return std::vector<Value *>{y, indices, group, counts};
}

Expected<std::vector<Value *>> expandUnique(Graph &g, Node *n) {
  if (n->hasAttr("axis"))
    return expandUniqueAxis(g, n);
  NodeBuilder b(g, n);
  Value *x = n->input(0);
  const DType t = x->dtype();
  const int64_t len = *x->shape().numElements();
  DLC_ASSIGN_OR_RETURN(Value * flat, b.reshape(x, {len}, "flat"));
  // Sorted ascending; equal values keep their order, so a run's first element has its
  // lowest index.
  const std::vector<std::pair<std::string, Attribute>> ascending = {
      {"axis", Attribute(int64_t{0})},
      {"largest", Attribute(int64_t{0})},
      {"sorted", Attribute(int64_t{1})}};
  DLC_ASSIGN_OR_RETURN(Node * sort,
                       b.node(Op::kTopK, {flat, b.ints("k", {len})}, 2, "sorted", ascending));
  Value *values = sort->output(0), *order = sort->output(1);
  // Where a run of equal values starts.
  Value *starts = nullptr;
  {
    Value *first = b.constant("first", Tensor::fromVector<uint8_t>(DType::kBool, {1}, {1}));
    if (len > 1) {
      DLC_ASSIGN_OR_RETURN(Value * prev, b.slice(values, 0, len - 1, 0, "prev"));
      DLC_ASSIGN_OR_RETURN(Value * next, b.slice(values, 1, len, 0, "next"));
      DLC_ASSIGN_OR_RETURN(Value * same, b.op(Op::kEqual, {next, prev}, "same"));
      DLC_ASSIGN_OR_RETURN(Value * differs, b.op(Op::kNot, {same}, "differs"));
      DLC_ASSIGN_OR_RETURN(starts, b.concat({first, differs}, 0, "starts"));
    } else {
      starts = first;
    }
  }
  DLC_ASSIGN_OR_RETURN(Value * ones,
                       b.op(Op::kCast, {starts}, "start_ones", {{"to", Attribute(DType::kI64)}}));
  DLC_ASSIGN_OR_RETURN(Value * numbered,
                       b.op(Op::kCumSum, {ones, b.constant("axis", Tensor::scalarI64(0))}, "scan"));
  DLC_ASSIGN_OR_RETURN(Value * group,
                       b.op(Op::kSub, {numbered, b.scalar("one", 1, DType::kI64)}, "group"));
  DLC_ASSIGN_OR_RETURN(Value * count, b.op(Op::kReduceSum, {ones, b.ints("sum_axes", {0})}, "count",
                                           {{"keepdims", Attribute(int64_t{1})}}));
  auto spare = [&](int64_t slot, const std::string &name) {
    return b.op(Op::kWhere, {starts, group, b.scalar(name + "_slot", slot, DType::kI64)}, name);
  };
  // Each group's value and first index go to its slot; the other elements to slot len.
  DLC_ASSIGN_OR_RETURN(Value * dst, spare(len, "group_slot"));
  DLC_ASSIGN_OR_RETURN(Value * valueBuf, scatter(b, b.zeros("value_zeros", t, {len + 1}), dst,
                                                 values, "value_buffer"));
  DLC_ASSIGN_OR_RETURN(Value * firstBuf, scatter(b, b.zeros("first_zeros", DType::kI64, {len + 1}),
                                                 dst, order, "first_buffer"));
  // Group g's length: where group g + 1 starts minus where g does (slots past the last
  // group hold len).
  DLC_ASSIGN_OR_RETURN(Value * dst2, spare(len + 1, "start_slot"));
  Tensor full = Tensor::zeros(DType::kI64, {len + 2});
  std::fill_n(full.mutableData<int64_t>(), len + 2, len);
  DLC_ASSIGN_OR_RETURN(Value * startBuf, scatter(b, b.constant("start_init", std::move(full)), dst2,
                                                 iota(b, len, "iota"), "start_buffer"));
  DLC_ASSIGN_OR_RETURN(Value * upper, b.slice(startBuf, 1, len + 1, 0, "next_start"));
  DLC_ASSIGN_OR_RETURN(Value * lower, b.slice(startBuf, 0, len, 0, "this_start"));
  DLC_ASSIGN_OR_RETURN(Value * lengths, b.op(Op::kSub, {upper, lower}, "lengths"));
  // Each element's group, at its place in the input.
  DLC_ASSIGN_OR_RETURN(Value * inverse, scatter(b, b.zeros("inverse_zeros", DType::kI64, {len}),
                                                order, group, "inverse_sorted"));
  DLC_ASSIGN_OR_RETURN(Value * y, firstCount(b, valueBuf, count, "values"));
  DLC_ASSIGN_OR_RETURN(Value * first, firstCount(b, firstBuf, count, "first_indices"));
  DLC_ASSIGN_OR_RETURN(Value * counts, firstCount(b, lengths, count, "counts"));
  if (n->getInt("sorted") != 0)
    return std::vector<Value *>{y, first, inverse, counts};
  // In the order of first occurrence: the groups sorted by their first index (k is the count,
  // known after the point), each group's new place given to the inverse.
  DLC_ASSIGN_OR_RETURN(Node * byFirst, b.node(Op::kTopK, {first, count}, 2, "by_first", ascending));
  Value *perm = byFirst->output(1);
  DLC_ASSIGN_OR_RETURN(Value * y2, b.op(Op::kGather, {y, perm}, "values_by_first",
                                        {{"axis", Attribute(int64_t{0})}}));
  DLC_ASSIGN_OR_RETURN(Value * counts2, b.op(Op::kGather, {counts, perm}, "counts_by_first",
                                             {{"axis", Attribute(int64_t{0})}}));
  DLC_ASSIGN_OR_RETURN(Value * n0, b.reshape(count, {}, "count_scalar"));
  DLC_ASSIGN_OR_RETURN(Value * places, b.op(Op::kRange,
                                            {b.constant("range_begin", Tensor::scalarI64(0)), n0,
                                             b.constant("range_step", Tensor::scalarI64(1))},
                                            "places"));
  DLC_ASSIGN_OR_RETURN(Value * none, b.op(Op::kSub, {places, places}, "rank_zeros"));
  DLC_ASSIGN_OR_RETURN(Value * rankOf, scatter(b, none, perm, places, "rank_of_group"));
  DLC_ASSIGN_OR_RETURN(Value * inverse2, b.op(Op::kGather, {rankOf, inverse}, "inverse",
                                              {{"axis", Attribute(int64_t{0})}}));
  return std::vector<Value *>{y2, byFirst->output(0), inverse2, counts2};
}

Status checkNms(const Node &n) {
  if (n.getInt("slots") > 0)
    return invalidArgument("it is already in the fixed-size form");
  for (int i = 0; i < 2; ++i)
    if (!n.input(i)->shape().isStatic() || !isFloat(n.input(i)->dtype()))
      return invalidArgument("its boxes or scores are not floats of a static shape");
  const Value *limit = n.input(2);
  if (!limit || !isInteger(limit->dtype()) || limit->shape().numElements() != 1)
    return invalidArgument("max_output_boxes_per_class is absent or not one integer");
  if (limit->isConstant() && limit->constant().elementAsInt64(0) <= 0)
    return invalidArgument("max_output_boxes_per_class is {}: it selects nothing",
                           limit->constant().elementAsInt64(0));
  return Status::ok();
}

Expected<std::vector<Value *>> expandNms(Graph &g, Node *n) {
  NodeBuilder b(g, n);
  const std::vector<int64_t> scores = n->input(1)->shape().sizes();
  const int64_t batches = scores[0], classes = scores[1], boxes = scores[2];
  // As many slots as a class can fill: the limit when it is a constant, else the boxes (the
  // kernel reads the limit).
  const Value *limit = n->input(2);
  const int64_t slots = limit->isConstant()
                            ? std::clamp<int64_t>(limit->constant().elementAsInt64(0), 0, boxes)
                            : boxes;
  std::vector<Value *> inputs = n->inputs();
  DLC_ASSIGN_OR_RETURN(Node * perClass,
                       b.node(Op::kNonMaxSuppression, inputs, 2, "per_class",
                              {{"center_point_box", Attribute(n->getInt("center_point_box"))},
                               {"slots", Attribute(slots)}}));
  // The filled slots of every batch and class, in (batch, class, slot) order: the output's
  // row order.
  DLC_ASSIGN_OR_RETURN(Value * count, b.unsqueeze(perClass->output(1), {2}, "count_col"));
  DLC_ASSIGN_OR_RETURN(Value * filled,
                       b.op(Op::kLess, {iota(b, slots, "slot_index"), count}, "filled"));
  const int64_t rows = batches * classes * slots;
  DLC_ASSIGN_OR_RETURN(Value * flat, b.reshape(filled, {rows}, "filled_flat"));
  DLC_ASSIGN_OR_RETURN(Compacted c, compact(b, flat, rows, "selected"));
  // One [batch, class, box] row per slot, then the filled ones taken.
  Tensor bc = Tensor::zeros(DType::kI64, {rows, 2});
  for (int64_t r = 0; r < rows; ++r) {
    bc.mutableData<int64_t>()[2 * r] = r / (classes * slots);
    bc.mutableData<int64_t>()[2 * r + 1] = (r / slots) % classes;
  }
  DLC_ASSIGN_OR_RETURN(Value * box, b.reshape(perClass->output(0), {rows, 1}, "box_col"));
  DLC_ASSIGN_OR_RETURN(Value * table,
                       b.concat({b.constant("batch_class", std::move(bc)), box}, 1, "triples"));
  DLC_ASSIGN_OR_RETURN(Value * out, b.op(Op::kGather, {table, c.positions}, "selected_indices",
                                         {{"axis", Attribute(int64_t{0})}}));
  return std::vector<Value *>{out};
}

constexpr OpExpansion kExpansions[] = {
    {Op::kNonMaxSuppression, checkNms, expandNms},
    {Op::kNonZero, checkNonZero, expandNonZero},
    {Op::kCompress, checkCompress, expandCompress},
    {Op::kUnique, checkUnique, expandUnique},
};

} // namespace

const OpExpansion *findSizedByDataExpansion(Op op) {
  for (const OpExpansion &e : kExpansions)
    if (e.op == op)
      return &e;
  return nullptr;
}

} // namespace dlc
