// Shape inference of the shape-arithmetic ops: Shape, Size, Reshape, Flatten, Squeeze,
// Unsqueeze, Expand, ConstantOfShape, Range, Identity, EyeLike, Tile.
//
// These ops both produce and consume shape values (see tensor_internal.h): Shape and Size
// record their result as dims, the reshaping ops forward a 0-D/1-D input's value, and Reshape,
// Expand, ConstantOfShape and Tile read their shape operand through it, so a target built at
// run time from symbolic dims still gives a known output type.
#include <algorithm>
#include <cmath>
#include <map>

#include "ir/ops/tensor_internal.h"

namespace dlc::ops::tensor {

namespace {

/// Passes input 0's shape value to output 0 when output 0 is 0-D/1-D with as many elements.
void forwardValue(InferContext &ctx) {
  const Shape &s = ctx.outputType(0).shape;
  if (!s.isRanked() || s.rank() > 1)
    return;
  auto elems = inputElements(ctx, 0);
  if (!elems)
    return;
  int64_t n = static_cast<int64_t>(elems->size());
  if ((s.rank() == 0 && n != 1) || (s.rank() == 1 && s[0].isKnown() && s[0].value() != n))
    return;
  ctx.setOutputShapeValue(0, *elems);
}

/// Known product and symbol multiset of a list of dims (for Reshape's -1).
struct Factors {
  int64_t known = 1;
  std::map<std::string, int> symbols;
  bool opaque = false; // an unknown dim, or an overflowing product
  void add(const Dim &d) {
    if (d.isKnown()) {
      if (__builtin_mul_overflow(known, d.value(), &known))
        opaque = true;
    } else if (d.isSymbol()) {
      ++symbols[d.symbolName()];
    } else {
      opaque = true;
    }
  }
};

/// The dim that -1 stands for: in / out, cancelling shared symbols; error when both sides
/// are static and do not divide.
Expected<Dim> inferredDim(const TensorType &in, const std::vector<Dim> &target, Factors inF,
                          Factors outF) {
  if (inF.opaque || outF.opaque)
    return Dim::unknown();
  for (auto &[sym, count] : outF.symbols) {
    auto it = inF.symbols.find(sym);
    int shared = it == inF.symbols.end() ? 0 : std::min(it->second, count);
    if (shared < count)
      return Dim::unknown(); // the output has a symbol the input lacks
    it->second -= shared;
  }
  std::vector<std::string> rest;
  for (auto &[sym, count] : inF.symbols)
    for (int k = 0; k < count; ++k)
      rest.push_back(sym);
  if (outF.known == 0) { // 0 * x: x cannot be recovered
    if (rest.empty() && inF.symbols.empty() && outF.symbols.empty())
      return invalidArgument("cannot reshape {} to {}: the other dims hold no elements, so the "
                             "-1 could be any size (an input with a 0 dim?)",
                             in.str(), elementsStr(target));
    return Dim::unknown();
  }
  if (inF.known % outF.known != 0) {
    if (!rest.empty())
      return Dim::unknown();
    return invalidArgument("cannot reshape {} ({} elements) to {}: {} is not a multiple of {}",
                           in.str(), inF.known, elementsStr(target), inF.known, outF.known);
  }
  int64_t q = inF.known / outF.known;
  if (rest.empty())
    return Dim(q);
  if (rest.size() == 1 && q == 1)
    return Dim::symbol(rest[0]);
  return Dim::unknown();
}

} // namespace

Expected<Shape> reshapeShape(const TensorType &in, const std::vector<Dim> &target, bool allowzero) {
  const Shape &s = in.shape;
  std::vector<Dim> out;
  int64_t inferIdx = -1;
  bool hasZero = false;
  for (size_t i = 0; i < target.size(); ++i) {
    const Dim &t = target[i];
    std::optional<int64_t> v = shapeValueInt(t);
    if (v && *v == -1) {
      if (inferIdx >= 0)
        return invalidArgument("reshape target {} has more than one -1", elementsStr(target));
      inferIdx = static_cast<int64_t>(i);
      out.push_back(Dim::unknown());
    } else if (v && *v < -1) {
      return invalidArgument("reshape target {} has an invalid value {}", elementsStr(target), *v);
    } else if (v && *v == 0 && !allowzero) {
      if (s.isRanked() && static_cast<int64_t>(i) >= s.rank())
        return invalidArgument("reshape target {} copies dim {} of {}, which has rank {}",
                               elementsStr(target), i, in.str(), s.rank());
      out.push_back(s.isRanked() ? s[static_cast<int64_t>(i)] : Dim::unknown());
    } else {
      hasZero |= v && *v == 0;
      out.push_back(t);
    }
  }
  if (allowzero && hasZero && inferIdx >= 0)
    return invalidArgument("reshape target {} has both 0 and -1 with allowzero=1",
                           elementsStr(target));
  if (!s.isRanked())
    return Shape(std::move(out));
  Factors inF, outF;
  for (const Dim &d : s.dims())
    inF.add(d);
  for (size_t i = 0; i < out.size(); ++i)
    if (static_cast<int64_t>(i) != inferIdx)
      outF.add(out[i]);
  if (inferIdx >= 0) {
    DLC_ASSIGN_OR_RETURN(out[static_cast<size_t>(inferIdx)], inferredDim(in, target, inF, outF));
  } else if (!inF.opaque && !outF.opaque && inF.symbols.empty() && outF.symbols.empty() &&
             inF.known != outF.known) {
    return invalidArgument("cannot reshape {} ({} elements) to {} ({} elements)", in.str(),
                           inF.known, elementsStr(target), outF.known);
  }
  return Shape(std::move(out));
}

Status inferShape(InferContext &ctx) {
  const Shape &in = ctx.inputType(0).shape;
  if (!in.isRanked()) {
    ctx.setOutputType(0, TensorType(DType::kI64, Shape({Dim::unknown()})));
    return Status::ok();
  }
  const int64_t r = in.rank();
  auto clampIndex = [r](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + r : v, 0, r); };
  int64_t start = clampIndex(ctx.node().getInt("start"));
  int64_t end = ctx.node().hasAttr("end") ? clampIndex(ctx.node().getInt("end")) : r;
  end = std::max(start, end);
  std::vector<Dim> dims(in.dims().begin() + start, in.dims().begin() + end);
  ctx.setOutputType(0, TensorType(DType::kI64, Shape({Dim(end - start)})));
  ctx.setOutputShapeValue(0, std::move(dims));
  return Status::ok();
}

Status inferSize(InferContext &ctx) {
  const Shape &in = ctx.inputType(0).shape;
  ctx.setOutputType(0, TensorType(DType::kI64, Shape()));
  if (!in.isRanked())
    return Status::ok();
  Dim n = dimProduct(in.dims(), 0, in.dims().size());
  if (!n.isUnknown())
    ctx.setOutputShapeValue(0, {n});
  return Status::ok();
}

Status inferReshape(InferContext &ctx) {
  const TensorType &in = ctx.inputType(0);
  DLC_RETURN_IF_ERROR(checkRankAtMost(ctx, 1, 1, "shape"));
  if (DType t = ctx.inputType(1).dtype; t != DType::kUnknown && t != DType::kI64)
    return ctx.error("shape must be i64, got {}", dtypeName(t));
  Shape out = Shape::unranked();
  if (auto target = inputElements(ctx, 1)) {
    DLC_ASSIGN_OR_RETURN(out, reshapeShape(in, *target, ctx.node().getInt("allowzero") != 0));
  } else if (auto n = staticLength(ctx, 1)) {
    out = Shape(unknownDims(*n));
  }
  ctx.setOutputType(0, TensorType(in.dtype, std::move(out)));
  forwardValue(ctx);
  return Status::ok();
}

Status inferFlatten(InferContext &ctx) {
  const TensorType &in = ctx.inputType(0);
  if (!in.shape.isRanked()) {
    ctx.setOutputType(0, TensorType(in.dtype, Shape(unknownDims(2))));
    return Status::ok();
  }
  const int64_t r = in.shape.rank();
  int64_t axis = ctx.node().getInt("axis");
  if (axis < -r || axis > r)
    return ctx.error("axis {} is out of range for rank {}", axis, r);
  size_t a = static_cast<size_t>(axis < 0 ? axis + r : axis);
  const std::vector<Dim> &d = in.shape.dims();
  ctx.setOutputType(0,
                    TensorType(in.dtype, Shape({dimProduct(d, 0, a), dimProduct(d, a, d.size())})));
  return Status::ok();
}

Status inferSqueeze(InferContext &ctx) {
  const TensorType &in = ctx.inputType(0);
  DLC_RETURN_IF_ERROR(checkRankAtMost(ctx, 1, 1, "axes"));
  Shape out = Shape::unranked();
  if (!ctx.hasInput(1)) {
    if (in.shape.isStatic()) {
      std::vector<Dim> dims;
      for (const Dim &d : in.shape.dims())
        if (d.value() != 1)
          dims.push_back(d);
      out = Shape(std::move(dims));
    } // else a symbolic dim may be 1: the rank is unknown
  } else if (auto axes = inputInts(ctx, 1); axes && in.shape.isRanked()) {
    DLC_ASSIGN_OR_RETURN(auto norm, normalizeAxes(*axes, in.shape.rank()));
    std::vector<Dim> dims;
    for (int64_t i = 0; i < in.shape.rank(); ++i) {
      const Dim &d = in.shape[i];
      bool squeezed = std::find(norm.begin(), norm.end(), i) != norm.end();
      if (squeezed && d.isKnown() && d.value() != 1)
        return ctx.error("cannot squeeze axis {} of size {} in {}", i, d.value(), in.str());
      if (!squeezed)
        dims.push_back(d);
    }
    out = Shape(std::move(dims));
  } else if (auto n = staticLength(ctx, 1); n && in.shape.isRanked()) {
    out = Shape(unknownDims(in.shape.rank() - *n));
  }
  ctx.setOutputType(0, TensorType(in.dtype, std::move(out)));
  forwardValue(ctx);
  return Status::ok();
}

Status inferUnsqueeze(InferContext &ctx) {
  const TensorType &in = ctx.inputType(0);
  DLC_RETURN_IF_ERROR(checkRankAtMost(ctx, 1, 1, "axes"));
  Shape out = Shape::unranked();
  if (auto axes = inputInts(ctx, 1); axes && in.shape.isRanked()) {
    const int64_t rank = in.shape.rank() + static_cast<int64_t>(axes->size());
    DLC_ASSIGN_OR_RETURN(auto norm, normalizeAxes(*axes, rank));
    std::vector<Dim> dims;
    int64_t next = 0;
    for (int64_t i = 0; i < rank; ++i)
      dims.push_back(std::find(norm.begin(), norm.end(), i) != norm.end() ? Dim(1)
                                                                          : in.shape[next++]);
    out = Shape(std::move(dims));
  } else if (auto n = staticLength(ctx, 1); n && in.shape.isRanked()) {
    out = Shape(unknownDims(in.shape.rank() + *n));
  }
  ctx.setOutputType(0, TensorType(in.dtype, std::move(out)));
  forwardValue(ctx);
  return Status::ok();
}

Status inferIdentity(InferContext &ctx) {
  ctx.setOutputType(0, ctx.inputType(0));
  forwardValue(ctx);
  return Status::ok();
}

Status inferExpand(InferContext &ctx) {
  const TensorType &in = ctx.inputType(0);
  DLC_ASSIGN_OR_RETURN(auto target, targetDims(ctx, 1, "shape"));
  if (!target) {
    ctx.setOutputType(0, TensorType(in.dtype, Shape::unranked()));
    return Status::ok();
  }
  auto out = broadcastShapes(in.shape, Shape(*target));
  if (!out)
    return ctx.error("cannot expand {} to {}: {}", in.str(), elementsStr(*target),
                     out.status().message());
  ctx.setOutputType(0, TensorType(in.dtype, *out));
  return Status::ok();
}

Status inferConstantOfShape(InferContext &ctx) {
  const Tensor &value = ctx.node().getTensor("value");
  if (value.numElements() != 1)
    return ctx.error("value must hold exactly one element, got {}", value.type().str());
  DLC_ASSIGN_OR_RETURN(auto target, targetDims(ctx, 0, "shape"));
  ctx.setOutputType(0, TensorType(value.dtype(), target ? Shape(*target) : Shape::unranked()));
  return Status::ok();
}

Status inferTile(InferContext &ctx) {
  const TensorType &in = ctx.inputType(0);
  DLC_ASSIGN_OR_RETURN(auto reps, targetDims(ctx, 1, "repeats"));
  Shape out = Shape::unranked();
  if (reps && in.shape.isRanked()) {
    if (static_cast<int64_t>(reps->size()) != in.shape.rank())
      return ctx.error("repeats has {} elements for input {} of rank {}", reps->size(), in.str(),
                       in.shape.rank());
    std::vector<Dim> dims;
    for (int64_t i = 0; i < in.shape.rank(); ++i)
      dims.push_back(dimMul(in.shape[i], (*reps)[static_cast<size_t>(i)]));
    out = Shape(std::move(dims));
  } else if (in.shape.isRanked()) {
    out = Shape(unknownDims(in.shape.rank()));
  } else if (reps) {
    out = Shape(unknownDims(static_cast<int64_t>(reps->size())));
  }
  ctx.setOutputType(0, TensorType(in.dtype, std::move(out)));
  return Status::ok();
}

Expected<int64_t> rangeCount(const Tensor &start, const Tensor &limit, const Tensor &delta) {
  constexpr int64_t kMaxCount = int64_t{1} << 62;
  if (isFloat(start.dtype())) {
    double s = start.elementAsDouble(0), l = limit.elementAsDouble(0), d = delta.elementAsDouble(0);
    if (d == 0)
      return invalidArgument("delta cannot be 0");
    double c = std::ceil((l - s) / d);
    if (!std::isfinite(c) || c >= static_cast<double>(kMaxCount))
      return invalidArgument("range from {} to {} by {} has no finite size", s, l, d);
    return c <= 0 ? int64_t{0} : static_cast<int64_t>(c);
  }
  __int128 s = start.elementAsInt64(0), l = limit.elementAsInt64(0), d = delta.elementAsInt64(0);
  if (d == 0)
    return invalidArgument("delta cannot be 0");
  __int128 diff = l - s, q = diff / d;
  if (diff % d != 0 && ((diff > 0) == (d > 0)))
    ++q;
  if (q >= kMaxCount)
    return invalidArgument("range from {} to {} by {} has too many elements",
                           start.elementAsInt64(0), limit.elementAsInt64(0),
                           delta.elementAsInt64(0));
  return q <= 0 ? int64_t{0} : static_cast<int64_t>(q);
}

Status inferRange(InferContext &ctx) {
  static const char *kNames[] = {"start", "limit", "delta"};
  DType dtype = DType::kUnknown;
  for (int i = 0; i < 3; ++i) {
    const TensorType &t = ctx.inputType(i);
    if (t.shape.isRanked() && (t.shape.rank() > 1 || (t.shape.rank() == 1 && t.shape[0].isKnown() &&
                                                      t.shape[0].value() != 1)))
      return ctx.error("{} must be a scalar, got {}", kNames[i], t.str());
    if (dtype != DType::kUnknown && t.dtype != DType::kUnknown && t.dtype != dtype)
      return ctx.error("start, limit and delta must have one dtype, got {}, {} and {}",
                       dtypeName(ctx.inputType(0).dtype), dtypeName(ctx.inputType(1).dtype),
                       dtypeName(ctx.inputType(2).dtype));
    if (dtype == DType::kUnknown)
      dtype = t.dtype;
  }
  Dim n = Dim::unknown();
  const Tensor *s = ctx.inputConstant(0), *l = ctx.inputConstant(1), *d = ctx.inputConstant(2);
  if (s && l && d && s->numElements() == 1 && l->numElements() == 1 && d->numElements() == 1) {
    auto count = rangeCount(*s, *l, *d);
    if (!count)
      return ctx.error("{}", count.status().message());
    n = Dim(*count);
  }
  ctx.setOutputType(0, TensorType(dtype, Shape({n})));
  return Status::ok();
}

Status inferEyeLike(InferContext &ctx) {
  const TensorType &in = ctx.inputType(0);
  if (in.shape.isRanked() && in.shape.rank() != 2)
    return ctx.error("input must be 2-D, got {}", in.str());
  DType dtype = ctx.node().hasAttr("dtype") ? ctx.node().getDType("dtype") : in.dtype;
  ctx.setOutputType(0, TensorType(dtype, in.shape.isRanked() ? in.shape : Shape(unknownDims(2))));
  return Status::ok();
}

} // namespace dlc::ops::tensor
