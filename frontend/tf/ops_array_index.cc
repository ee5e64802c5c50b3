// TensorFlow's indexing ops -> dlc IR: GatherV2/Gather, GatherNd, OneHot, Select/SelectV2,
// Where, TopKV2, Unique, UnsortedSegmentSum (see ops_array.h).
//
// Where TensorFlow and the IR (ONNX semantics) part ways, the difference is built here:
// OneHot's negative indices select nothing in TensorFlow but wrap in ONNX; TF1 Select's rank-1
// condition picks rows; TopKV2 and Unique return int32 indices by default; a one-input Where is
// NonZero transposed.
#include "frontend/tf/ops_array.h"

namespace dlc::tf::detail::array {

/// GatherV2(params, indices, axis): batch_dims 0 only.
Status convertGatherV2(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(int64_t batchDims, c.attrInt("batch_dims", 0));
  if (batchDims != 0)
    return c.unsupported("batch_dims {} is not supported (only 0)", batchDims);
  DLC_ASSIGN_OR_RETURN(int64_t axis, constInt(c, 2, "axis"));
  DLC_ASSIGN_OR_RETURN(Value * out,
                       c.op(Op::kGather, {c.input(0), c.input(1)}, {{"axis", Attribute(axis)}}));
  c.setOutputs({out});
  return Status::ok();
}

/// Gather(params, indices): the TF1 form, axis 0.
Status convertGather(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(Value * out, c.op(Op::kGather, {c.input(0), c.input(1)}));
  c.setOutputs({out});
  return Status::ok();
}

Status convertGatherNd(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(int64_t batchDims, c.attrInt("batch_dims", 0));
  if (batchDims != 0)
    return c.unsupported("batch_dims {} is not supported (only 0)", batchDims);
  DLC_ASSIGN_OR_RETURN(Value * indices, indexInput(c, 1, "indices"));
  DLC_ASSIGN_OR_RETURN(Value * out, c.op(Op::kGatherND, {c.input(0), indices}));
  c.setOutputs({out});
  return Status::ok();
}

/// OneHot(indices, depth, on_value, off_value) -> the IR's OneHot with values [off, on].
Status convertOneHot(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(int64_t axis, c.attrInt("axis", -1));
  Value *indices = c.input(0);
  DType it = indices->dtype();
  DLC_ASSIGN_OR_RETURN(Value * depth, indexInput(c, 1, "depth"));
  // A negative index is a row of off_values in TensorFlow but counts from the end in the IR:
  // move negatives to `depth`, which is out of range there too.
  bool maybeNegative = isSignedInt(it);
  if (const Tensor *t = c.constInput(0)) {
    maybeNegative = false;
    for (int64_t i = 0; i < t->numElements(); ++i)
      maybeNegative = maybeNegative || t->elementAsInt64(i) < 0;
  }
  if (maybeNegative) {
    DLC_ASSIGN_OR_RETURN(Value * negative,
                         c.op(Op::kLess, {indices, c.scalar(it, 0, "zero")}, {}, "negative"));
    DLC_ASSIGN_OR_RETURN(Value * d, c.cast(depth, it, "depth_cast"));
    DLC_ASSIGN_OR_RETURN(indices, c.op(Op::kWhere, {negative, d, indices}, {}, "indices"));
  }
  DLC_ASSIGN_OR_RETURN(Value * off, unsqueeze(c, c.input(3), {0}, "off"));
  DLC_ASSIGN_OR_RETURN(Value * on, unsqueeze(c, c.input(2), {0}, "on"));
  DLC_ASSIGN_OR_RETURN(Value * values,
                       c.op(Op::kConcat, {off, on}, {{"axis", Attribute(0)}}, "values"));
  DLC_ASSIGN_OR_RETURN(Value * out,
                       c.op(Op::kOneHot, {indices, depth, values}, {{"axis", Attribute(axis)}}));
  c.setOutputs({out});
  return Status::ok();
}

/// Select(condition, x, y), TF1: a rank-1 condition with higher-rank x picks whole rows, so it
/// gets trailing unit dims; otherwise it has x's shape (or is a scalar).
Status convertSelect(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(int64_t condRank, c.inputRank(0, "Select"));
  DLC_ASSIGN_OR_RETURN(int64_t rank, c.inputRank(1, "Select"));
  Value *cond = c.input(0);
  if (condRank == 1 && rank > 1) {
    std::vector<int64_t> axes;
    for (int64_t a = 1; a < rank; ++a)
      axes.push_back(a);
    DLC_ASSIGN_OR_RETURN(cond, unsqueeze(c, cond, axes, "rows"));
  } else if (condRank != 0 && condRank != rank) {
    return c.error("condition of rank {} for x of rank {} (expected the same rank, or rank 1)",
                   condRank, rank);
  }
  DLC_ASSIGN_OR_RETURN(Value * out, c.op(Op::kWhere, {cond, c.input(1), c.input(2)}));
  c.setOutputs({out});
  return Status::ok();
}

/// SelectV2: NumPy broadcasting, the IR's Where.
Status convertSelectV2(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(Value * out, c.op(Op::kWhere, {c.input(0), c.input(1), c.input(2)}));
  c.setOutputs({out});
  return Status::ok();
}

/// Where(condition): the coordinates of the true (non-zero) elements, int64 [N, rank].
Status convertWhere(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(Value * nz, c.op(Op::kNonZero, {c.input(0)}, {}, "non_zero"));
  DLC_ASSIGN_OR_RETURN(Value * out, c.transpose(nz, {1, 0}, ""));
  c.setOutputs({out});
  return Status::ok();
}

/// TopKV2(input, k): the largest k along the last axis, sorted; indices as `index_type`
/// (int32 unless the attribute says otherwise).
Status convertTopKV2(NodeConverter &c) {
  Value *k = nullptr;
  if (auto v = c.constInts(1, "k")) {
    if (v->size() != 1)
      return c.error("k must hold one integer, got {}", v->size());
    k = c.constI64(*v, "k");
  } else {
    DLC_ASSIGN_OR_RETURN(Value * k64, indexInput(c, 1, "k"));
    DLC_ASSIGN_OR_RETURN(k, c.op(Op::kReshape, {k64, c.constI64({1}, "k_shape")}, {}, "k"));
  }
  DLC_ASSIGN_OR_RETURN(Node * n, c.node(Op::kTopK, {c.input(0), k}, {}, 2));
  DLC_ASSIGN_OR_RETURN(DType it, c.attrType("index_type", DType::kI32));
  DLC_ASSIGN_OR_RETURN(Value * indices, c.cast(n->output(1), it, "indices"));
  c.setOutputs({n->output(0), indices});
  return Status::ok();
}

/// Unique(x): y in order of first occurrence and, for each x, its index in y (`out_idx`).
Status convertUnique(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(DType it, c.attrType("out_idx", DType::kI32));
  DLC_ASSIGN_OR_RETURN(Node * n, c.node(Op::kUnique, {c.input(0)}, {{"sorted", Attribute(0)}}, 3));
  DLC_ASSIGN_OR_RETURN(Value * idx, c.cast(n->output(2), it, "idx"));
  c.setOutputs({n->output(0), idx});
  return Status::ok();
}

/// UnsortedSegmentSum(data, segment_ids, num_segments): ScatterND with reduction add into
/// zeros of shape [num_segments] + data.shape[rank(segment_ids):].
Status convertUnsortedSegmentSum(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(int64_t idsRank, c.inputRank(1, "UnsortedSegmentSum"));
  Value *data = c.input(0);
  DLC_ASSIGN_OR_RETURN(Value * ids, indexInput(c, 1, "segment_ids"));
  DLC_ASSIGN_OR_RETURN(Value * num, indexInput(c, 2, "num_segments"));
  DLC_ASSIGN_OR_RETURN(num,
                       c.op(Op::kReshape, {num, c.constI64({1}, "num_shape")}, {}, "num_segments"));
  DLC_ASSIGN_OR_RETURN(Value * inner,
                       c.op(Op::kShape, {data}, {{"start", Attribute(idsRank)}}, "inner_shape"));
  DLC_ASSIGN_OR_RETURN(Value * shape,
                       c.op(Op::kConcat, {num, inner}, {{"axis", Attribute(0)}}, "sum_shape"));
  Tensor zero = Tensor::zeros(data->dtype(), {1});
  DLC_ASSIGN_OR_RETURN(Value * zeros,
                       c.op(Op::kConstantOfShape, {shape}, {{"value", Attribute(zero)}}, "zeros"));
  DLC_ASSIGN_OR_RETURN(Value * indices, unsqueeze(c, ids, {-1}, "indices"));
  DLC_ASSIGN_OR_RETURN(
      Value * out, c.op(Op::kScatterND, {zeros, indices, data}, {{"reduction", Attribute("add")}}));
  c.setOutputs({out});
  return Status::ok();
}

} // namespace dlc::tf::detail::array
