// Reduction family: Reduce* (axes as optional input 1), ArgMax/ArgMin, the softmax family,
// TopK and CumSum.
//
// Reduce* with axes that are not a constant: the output rank is known only with keepdims=1
// (then every dim is unknown, since any of them may have been reduced); otherwise the output
// is unranked.
#include <algorithm>
#include <optional>

#include "ir/ops/families.h"
#include "ir/ops/infer_checks.h"
#include "ir/ops/util.h"

namespace dlc::ops {

namespace {

using TC = TypeClass;

/// The reduced axes, normalised: nullopt when not known at inference time. An empty result
/// means "no axes given".
Expected<std::optional<std::vector<int64_t>>> reduceAxes(const InferContext &ctx, int64_t rank) {
  using Result = std::optional<std::vector<int64_t>>;
  if (!ctx.hasInput(1))
    return Result(std::vector<int64_t>{});
  DType t = ctx.inputType(1).dtype;
  if (t != DType::kUnknown && t != DType::kI64)
    return ctx.error("axes must be i64, got {}", dtypeName(t));
  auto values = constantInts(ctx, 1);
  if (!values) {
    const Shape &s = ctx.inputType(1).shape;
    if (s.isRanked() && s.rank() == 1 && s[0].isKnown() && s[0].value() == 0)
      return Result(std::vector<int64_t>{});
    return Result(std::nullopt);
  }
  std::vector<int64_t> axes;
  for (int64_t a : *values) {
    DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(a, rank));
    if (std::find(axes.begin(), axes.end(), axis) != axes.end())
      return ctx.error("axis {} appears more than once in axes", a);
    axes.push_back(axis);
  }
  return Result(std::move(axes));
}

template <TC C> Status inferReduce(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkInputDType(ctx, 0, C));
  const TensorType &in = ctx.inputType(0);
  bool keepdims = ctx.node().getInt("keepdims") != 0;
  bool noop = ctx.node().getInt("noop_with_empty_axes") != 0;
  if (!in.shape.isRanked()) {
    ctx.setOutputType(0, TensorType(in.dtype, Shape::unranked()));
    return Status::ok();
  }
  int64_t rank = in.shape.rank();
  DLC_ASSIGN_OR_RETURN(auto axes, reduceAxes(ctx, rank));
  if (!axes) {
    ctx.setOutputType(0, TensorType(in.dtype, keepdims ? unknownDims(rank) : Shape::unranked()));
    return Status::ok();
  }
  if (axes->empty()) {
    if (noop) {
      ctx.setOutputType(0, in);
      return Status::ok();
    }
    for (int64_t i = 0; i < rank; ++i)
      axes->push_back(i);
  }
  std::vector<Dim> dims;
  for (int64_t i = 0; i < rank; ++i) {
    bool reduced = std::find(axes->begin(), axes->end(), i) != axes->end();
    if (!reduced)
      dims.push_back(in.shape[i]);
    else if (keepdims)
      dims.emplace_back(1);
  }
  ctx.setOutputType(0, TensorType(in.dtype, Shape(std::move(dims))));
  return Status::ok();
}

Status inferArgReduce(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkInputDType(ctx, 0, TC::kNumeric));
  const Shape &in = ctx.inputType(0).shape;
  if (!in.isRanked()) {
    ctx.setOutputType(0, TensorType(DType::kI64, Shape::unranked()));
    return Status::ok();
  }
  DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(ctx.node().getInt("axis"), in.rank()));
  std::vector<Dim> dims = in.dims();
  if (ctx.node().getInt("keepdims") != 0)
    dims[static_cast<size_t>(axis)] = Dim(1);
  else
    dims.erase(dims.begin() + axis);
  ctx.setOutputType(0, TensorType(DType::kI64, Shape(std::move(dims))));
  return Status::ok();
}

/// Softmax, LogSoftmax, Hardmax: same type; the axis must be in range.
Status inferSoftmax(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkInputDType(ctx, 0, TC::kFloat));
  const Shape &in = ctx.inputType(0).shape;
  if (in.isRanked())
    DLC_RETURN_IF_ERROR(normalizeAxis(ctx.node().getInt("axis"), in.rank()));
  ctx.setOutputType(0, ctx.inputType(0));
  return Status::ok();
}

/// TopK's k: a known dim, or unknown. Errors for a malformed constant K.
Expected<Dim> topKValue(const InferContext &ctx) {
  DType t = ctx.inputType(1).dtype;
  if (t != DType::kUnknown && t != DType::kI64)
    return ctx.error("K must be i64, got {}", dtypeName(t));
  auto n = ctx.inputType(1).shape.numElements();
  if (n && *n != 1)
    return ctx.error("K must hold exactly one element, got shape {}", ctx.inputType(1).shape.str());
  if (auto values = constantInts(ctx, 1)) {
    if (values->size() != 1)
      return ctx.error("K must hold exactly one element, got {}", values->size());
    if ((*values)[0] < 0)
      return ctx.error("K must be >= 0, got {}", (*values)[0]);
    return Dim((*values)[0]);
  }
  if (auto dims = ctx.inputAsDims(1); dims && dims->size() == 1)
    return (*dims)[0];
  return Dim::unknown();
}

Status inferTopK(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkInputDType(ctx, 0, TC::kNumeric));
  const TensorType &in = ctx.inputType(0);
  DLC_ASSIGN_OR_RETURN(Dim k, topKValue(ctx));
  Shape shape = Shape::unranked();
  if (in.shape.isRanked()) {
    DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(ctx.node().getInt("axis"), in.shape.rank()));
    shape = in.shape;
    const Dim &d = in.shape[axis];
    if (k.isKnown() && d.isKnown() && k.value() > d.value())
      return ctx.error("K = {} exceeds the size {} of axis {}", k.value(), d.value(), axis);
    shape[axis] = k;
  }
  ctx.setOutputType(0, TensorType(in.dtype, shape));
  ctx.setOutputType(1, TensorType(DType::kI64, std::move(shape)));
  return Status::ok();
}

Status inferCumSum(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkInputDType(ctx, 0, TC::kNumeric));
  DType t = ctx.inputType(1).dtype;
  if (t != DType::kUnknown && t != DType::kI32 && t != DType::kI64)
    return ctx.error("axis must be i32 or i64, got {}", dtypeName(t));
  const Shape &axisShape = ctx.inputType(1).shape;
  if (axisShape.isRanked() && axisShape.rank() > 1)
    return ctx.error("axis must be 0-D or 1-D, got shape {}", axisShape.str());
  const Shape &in = ctx.inputType(0).shape;
  if (auto values = constantInts(ctx, 1)) {
    if (values->size() != 1)
      return ctx.error("axis must hold exactly one element, got {}", values->size());
    if (in.isRanked())
      DLC_RETURN_IF_ERROR(normalizeAxis((*values)[0], in.rank()));
  }
  ctx.setOutputType(0, ctx.inputType(0));
  return Status::ok();
}

// --- Rows -------------------------------------------------------------------------------------

OpDef row(Op op, int minIn, int maxIn, FusionKind fusion, InferFn infer,
          std::vector<AttrSpec> attrs, int numOutputs = 1) {
  OpDef d;
  d.op = op;
  d.minInputs = minIn;
  d.maxInputs = maxIn;
  d.minOutputs = d.maxOutputs = numOutputs;
  d.fusion = fusion;
  d.attrs = std::move(attrs);
  d.infer = infer;
  return d;
}

OpDef reduce(Op op, InferFn infer) {
  return row(op, 1, 2, FusionKind::kReduction, infer,
             {intAttr("keepdims", 1), intAttr("noop_with_empty_axes", 0)});
}

OpDef argReduce(Op op) {
  return row(op, 1, 1, FusionKind::kReduction, inferArgReduce,
             {intAttr("axis", 0), intAttr("keepdims", 1), intAttr("select_last_index", 0)});
}

OpDef softmaxLike(Op op) {
  return row(op, 1, 1, FusionKind::kReduction, inferSoftmax, {intAttr("axis", -1)});
}

} // namespace

std::vector<OpDef> reductionOps() {
  constexpr auto kNumeric = inferReduce<TC::kNumeric>;
  constexpr auto kAny = inferReduce<TC::kAny>; // ReduceMax/Min also take bool
  return {
      argReduce(Op::kArgMax),
      argReduce(Op::kArgMin),
      reduce(Op::kReduceL1, kNumeric),
      reduce(Op::kReduceL2, kNumeric),
      reduce(Op::kReduceLogSum, kNumeric),
      reduce(Op::kReduceLogSumExp, kNumeric),
      reduce(Op::kReduceMax, kAny),
      reduce(Op::kReduceMean, kNumeric),
      reduce(Op::kReduceMin, kAny),
      reduce(Op::kReduceProd, kNumeric),
      reduce(Op::kReduceSum, kNumeric),
      reduce(Op::kReduceSumSquare, kNumeric),
      softmaxLike(Op::kSoftmax),
      softmaxLike(Op::kLogSoftmax),
      softmaxLike(Op::kHardmax),
      row(Op::kTopK, 2, 2, FusionKind::kOpaque, inferTopK,
          {intAttr("axis", -1), intAttr("largest", 1), intAttr("sorted", 1)}, 2),
      row(Op::kCumSum, 2, 2, FusionKind::kOpaque, inferCumSum,
          {intAttr("exclusive", 0), intAttr("reverse", 0)}),
  };
}

} // namespace dlc::ops
