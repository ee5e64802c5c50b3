// Shape inference of the indexing ops: Gather, GatherElements, GatherND, ScatterElements,
// ScatterND, OneHot, and the data-dependent Compress, NonZero and Unique (whose output sizes
// are unknown until run time unless their inputs are constants).
#include <algorithm>

#include "ir/ops/tensor_internal.h"

namespace dlc::ops::tensor {

namespace {
Status checkReduction(const InferContext &ctx) {
  const std::string &r = ctx.node().getString("reduction");
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
    return ctx.error("unknown reduction '{}' (expected none, add, mul, max or min)", r);
  return Status::ok();
}
} // namespace

Status inferGather(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkIndexType(ctx, 1, "indices"));
  const TensorType &data = ctx.inputType(0), &indices = ctx.inputType(1);
  if (!data.shape.isRanked()) {
    ctx.setOutputType(0, TensorType(data.dtype, Shape::unranked()));
    return Status::ok();
  }
  const int64_t r = data.shape.rank();
  if (r == 0)
    return ctx.error("data must have rank >= 1, got {}", data.str());
  DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(ctx.node().getInt("axis"), r));
  const Dim &axisDim = data.shape[axis];
  const Tensor *idx = ctx.inputConstant(1);
  if (idx && axisDim.isKnown()) {
    const int64_t d = axisDim.value();
    for (int64_t i = 0; i < idx->numElements(); ++i)
      if (int64_t v = idx->elementAsInt64(i); v < -d || v >= d)
        return ctx.error("index {} is out of range for axis {} of size {}", v, axis, d);
  }
  if (!indices.shape.isRanked()) {
    ctx.setOutputType(0, TensorType(data.dtype, Shape::unranked()));
    return Status::ok();
  }
  std::vector<Dim> dims(data.shape.dims().begin(), data.shape.dims().begin() + axis);
  dims.insert(dims.end(), indices.shape.dims().begin(), indices.shape.dims().end());
  dims.insert(dims.end(), data.shape.dims().begin() + axis + 1, data.shape.dims().end());
  ctx.setOutputType(0, TensorType(data.dtype, Shape(std::move(dims))));
  auto elems = inputElements(ctx, 0);
  if (r == 1 && elems && idx && idx->rank() <= 1 &&
      static_cast<int64_t>(elems->size()) == axisDim.value()) {
    std::vector<Dim> value;
    const int64_t d = axisDim.value();
    for (int64_t i = 0; i < idx->numElements(); ++i) {
      int64_t v = idx->elementAsInt64(i);
      value.push_back((*elems)[static_cast<size_t>(v < 0 ? v + d : v)]);
    }
    ctx.setOutputShapeValue(0, std::move(value));
  }
  return Status::ok();
}

Status inferGatherElements(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkIndexType(ctx, 1, "indices"));
  const TensorType &data = ctx.inputType(0), &indices = ctx.inputType(1);
  if (data.shape.isRanked()) {
    DLC_RETURN_IF_ERROR(normalizeAxis(ctx.node().getInt("axis"), data.shape.rank()));
    if (indices.shape.isRanked() && indices.shape.rank() != data.shape.rank())
      return ctx.error("indices {} and data {} differ in rank", indices.str(), data.str());
  }
  Shape out = indices.shape;
  if (!out.isRanked() && data.shape.isRanked())
    out = Shape(unknownDims(data.shape.rank()));
  ctx.setOutputType(0, TensorType(data.dtype, std::move(out)));
  return Status::ok();
}

Status inferGatherND(InferContext &ctx) {
  if (DType t = ctx.inputType(1).dtype; t != DType::kUnknown && t != DType::kI64)
    return ctx.error("indices must be i64, got {}", dtypeName(t));
  const TensorType &data = ctx.inputType(0), &indices = ctx.inputType(1);
  const int64_t b = ctx.node().getInt("batch_dims");
  ctx.setOutputType(0, TensorType(data.dtype, Shape::unranked()));
  if (!data.shape.isRanked() || !indices.shape.isRanked())
    return Status::ok();
  const int64_t r = data.shape.rank(), q = indices.shape.rank();
  if (r < 1 || q < 1)
    return ctx.error("data {} and indices {} must have rank >= 1", data.str(), indices.str());
  if (b < 0 || b >= std::min(q, r))
    return ctx.error("batch_dims {} must be in [0, {})", b, std::min(q, r));
  const Dim &last = indices.shape[q - 1];
  if (!last.isKnown())
    return Status::ok();
  const int64_t k = last.value();
  if (k < 1 || k > r - b)
    return ctx.error("the last dim of indices {} must be in [1, {}]", indices.str(), r - b);
  std::vector<Dim> dims(indices.shape.dims().begin(), indices.shape.dims().end() - 1);
  dims.insert(dims.end(), data.shape.dims().begin() + b + k, data.shape.dims().end());
  ctx.setOutputType(0, TensorType(data.dtype, Shape(std::move(dims))));
  return Status::ok();
}

Status inferScatterElements(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkReduction(ctx));
  DLC_RETURN_IF_ERROR(checkIndexType(ctx, 1, "indices"));
  const TensorType &data = ctx.inputType(0), &indices = ctx.inputType(1),
                   &updates = ctx.inputType(2);
  if (data.shape.isRanked()) {
    DLC_RETURN_IF_ERROR(normalizeAxis(ctx.node().getInt("axis"), data.shape.rank()));
    if (indices.shape.isRanked() && indices.shape.rank() != data.shape.rank())
      return ctx.error("indices {} and data {} differ in rank", indices.str(), data.str());
  }
  if (!shapesCompatible(indices.shape, updates.shape))
    return ctx.error("updates {} and indices {} differ in shape", updates.str(), indices.str());
  ctx.setOutputType(0, data);
  return Status::ok();
}

Status inferScatterND(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkReduction(ctx));
  if (DType t = ctx.inputType(1).dtype; t != DType::kUnknown && t != DType::kI64)
    return ctx.error("indices must be i64, got {}", dtypeName(t));
  const TensorType &data = ctx.inputType(0), &indices = ctx.inputType(1),
                   &updates = ctx.inputType(2);
  if (data.shape.isRanked() && indices.shape.isRanked() && updates.shape.isRanked()) {
    const int64_t r = data.shape.rank(), q = indices.shape.rank();
    if (q < 1)
      return ctx.error("indices must have rank >= 1, got {}", indices.str());
    if (const Dim &k = indices.shape[q - 1]; k.isKnown()) {
      if (k.value() > r)
        return ctx.error("the last dim of indices {} exceeds the rank of data {}", indices.str(),
                         data.str());
      std::vector<Dim> expect(indices.shape.dims().begin(), indices.shape.dims().end() - 1);
      expect.insert(expect.end(), data.shape.dims().begin() + k.value(), data.shape.dims().end());
      if (!shapesCompatible(updates.shape, Shape(expect)))
        return ctx.error("updates {} should have shape {}", updates.str(), Shape(expect).str());
    }
  }
  ctx.setOutputType(0, data);
  return Status::ok();
}

Status inferOneHot(InferContext &ctx) {
  const TensorType &indices = ctx.inputType(0), &values = ctx.inputType(2);
  const Shape &depthShape = ctx.inputType(1).shape;
  if (depthShape.isRanked() &&
      (depthShape.rank() > 1 ||
       (depthShape.rank() == 1 && depthShape[0].isKnown() && depthShape[0].value() != 1)))
    return ctx.error("depth must hold one element, got {}", ctx.inputType(1).str());
  if (values.shape.isRanked() &&
      (values.shape.rank() != 1 || (values.shape[0].isKnown() && values.shape[0].value() != 2)))
    return ctx.error("values must be a 1-D tensor of two elements, got {}", values.str());
  Dim depth = Dim::unknown();
  if (const Tensor *t = ctx.inputConstant(1); t && t->numElements() == 1) {
    if (t->elementAsInt64(0) < 0)
      return ctx.error("depth must not be negative, got {}", t->elementAsInt64(0));
    depth = Dim(t->elementAsInt64(0));
  } else if (auto e = inputElements(ctx, 1); e && e->size() == 1) {
    if (auto v = shapeValueInt(e->front()); v && *v < 0)
      return ctx.error("depth must not be negative, got {}", *v);
    depth = e->front();
  }
  if (!indices.shape.isRanked()) {
    ctx.setOutputType(0, TensorType(values.dtype, Shape::unranked()));
    return Status::ok();
  }
  const int64_t q = indices.shape.rank();
  DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(ctx.node().getInt("axis"), q + 1));
  std::vector<Dim> dims = indices.shape.dims();
  dims.insert(dims.begin() + axis, depth);
  ctx.setOutputType(0, TensorType(values.dtype, Shape(std::move(dims))));
  return Status::ok();
}

Status inferCompress(InferContext &ctx) {
  const TensorType &in = ctx.inputType(0), &cond = ctx.inputType(1);
  if (cond.shape.isRanked() && cond.shape.rank() != 1)
    return ctx.error("condition must be 1-D, got {}", cond.str());
  if (cond.dtype != DType::kUnknown && cond.dtype != DType::kBool)
    return ctx.error("condition must be bool, got {}", dtypeName(cond.dtype));
  Dim count = Dim::unknown();
  int64_t condLen = -1;
  if (const Tensor *c = ctx.inputConstant(1)) {
    int64_t n = 0;
    for (int64_t i = 0; i < c->numElements(); ++i)
      n += c->elementAsInt64(i) != 0;
    count = Dim(n);
    condLen = c->numElements();
  }
  if (!ctx.node().hasAttr("axis")) {
    Dim total = in.shape.isRanked() ? dimProduct(in.shape.dims(), 0, in.shape.dims().size())
                                    : Dim::unknown();
    if (condLen >= 0 && total.isKnown() && condLen > total.value())
      return ctx.error("condition has {} elements but the input {} has {}", condLen, in.str(),
                       total.value());
    ctx.setOutputType(0, TensorType(in.dtype, Shape({count})));
    return Status::ok();
  }
  if (!in.shape.isRanked()) {
    ctx.setOutputType(0, in);
    return Status::ok();
  }
  DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(ctx.node().getInt("axis"), in.shape.rank()));
  if (condLen >= 0 && in.shape[axis].isKnown() && condLen > in.shape[axis].value())
    return ctx.error("condition has {} elements but axis {} of {} has {}", condLen, axis, in.str(),
                     in.shape[axis].value());
  Shape out = in.shape;
  out[axis] = count;
  ctx.setOutputType(0, TensorType(in.dtype, std::move(out)));
  return Status::ok();
}

Status inferNonZero(InferContext &ctx) {
  const Shape &in = ctx.inputType(0).shape;
  Dim rank = in.isRanked() ? Dim(in.rank()) : Dim::unknown();
  ctx.setOutputType(0, TensorType(DType::kI64, Shape({rank, Dim::unknown()})));
  return Status::ok();
}

Status inferUnique(InferContext &ctx) {
  const TensorType &in = ctx.inputType(0);
  Shape y({Dim::unknown()});
  Dim inverseLen = Dim::unknown();
  if (ctx.node().hasAttr("axis")) {
    y = in.shape;
    if (in.shape.isRanked()) {
      DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(ctx.node().getInt("axis"), in.shape.rank()));
      inverseLen = in.shape[axis];
      y[axis] = Dim::unknown();
    }
  } else if (in.shape.isRanked()) {
    inverseLen = dimProduct(in.shape.dims(), 0, in.shape.dims().size());
  }
  ctx.setOutputType(0, TensorType(in.dtype, std::move(y)));
  ctx.setOutputType(1, TensorType(DType::kI64, Shape({Dim::unknown()})));
  ctx.setOutputType(2, TensorType(DType::kI64, Shape({inverseLen})));
  ctx.setOutputType(3, TensorType(DType::kI64, Shape({Dim::unknown()})));
  return Status::ok();
}

} // namespace dlc::ops::tensor
