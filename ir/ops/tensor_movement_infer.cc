// Shape inference of the data-movement ops: Transpose, Slice, Concat, Split, Pad,
// CenterCropPad, DepthToSpace, SpaceToDepth, Trilu, ReverseSequence.
//
// Slice and Concat also carry shape values through (a slice of, or a concatenation of, 1-D
// integer tensors whose elements are known as dims).
#include <algorithm>

#include "ir/ops/tensor_internal.h"
#include "ir/ops/util.h"

namespace dlc::ops::tensor {

namespace {
/// Bounds at least this large are taken as "to the end" on a symbolic dim: no real dim is
/// this long, and exporters write INT32_MAX or INT64_MAX for an open end.
constexpr int64_t kOpenBound = 2147483647;

/// The slice keeps every element of an axis whatever its size.
bool coversWholeAxis(const SliceAxis &s) {
  if (s.step == 1)
    return (s.start == 0 || s.start <= -kOpenBound) && s.end >= kOpenBound;
  if (s.step == -1)
    return (s.start == -1 || s.start >= kOpenBound) && s.end <= -kOpenBound;
  return false;
}

/// The named slice operand's values; `absent` when the optional input is not given.
struct OptionalInts {
  bool absent = false;
  std::optional<std::vector<int64_t>> values;
};
OptionalInts optionalInts(const InferContext &ctx, int i) {
  if (!ctx.hasInput(i))
    return {true, std::nullopt};
  return {false, inputInts(ctx, i)};
}
} // namespace

Expected<std::vector<SliceAxis>> sliceAxes(int64_t rank, const std::vector<int64_t> &starts,
                                           const std::vector<int64_t> &ends,
                                           const std::optional<std::vector<int64_t>> &axes,
                                           const std::optional<std::vector<int64_t>> &steps) {
  const size_t n = starts.size();
  if (ends.size() != n)
    return invalidArgument("starts has {} elements but ends has {}", n, ends.size());
  if (axes && axes->size() != n)
    return invalidArgument("starts has {} elements but axes has {}", n, axes->size());
  if (steps && steps->size() != n)
    return invalidArgument("starts has {} elements but steps has {}", n, steps->size());
  std::vector<int64_t> norm;
  if (axes) {
    DLC_ASSIGN_OR_RETURN(norm, normalizeAxes(*axes, rank));
  } else {
    if (static_cast<int64_t>(n) > rank)
      return invalidArgument("starts has {} elements for data of rank {}", n, rank);
    for (size_t i = 0; i < n; ++i)
      norm.push_back(static_cast<int64_t>(i));
  }
  std::vector<SliceAxis> out;
  for (size_t i = 0; i < n; ++i) {
    int64_t step = steps ? (*steps)[i] : 1;
    if (step == 0)
      return invalidArgument("slice step cannot be 0 (axis {})", norm[i]);
    out.push_back({norm[i], starts[i], ends[i], step});
  }
  return out;
}

SliceRange sliceRange(int64_t dim, const SliceAxis &s) {
  if (dim <= 0)
    return {0, 0};
  auto clamp = [](int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); };
  int64_t start = s.start < 0 ? s.start + dim : s.start;
  int64_t end = s.end < 0 ? s.end + dim : s.end;
  __int128 count = 0;
  if (s.step > 0) {
    start = clamp(start, 0, dim);
    end = clamp(end, 0, dim);
    if (end > start)
      count = (static_cast<__int128>(end) - start - 1) / s.step + 1;
  } else {
    start = clamp(start, 0, dim - 1);
    end = clamp(end, -1, dim - 1);
    if (start > end)
      count = (static_cast<__int128>(start) - end - 1) / -static_cast<__int128>(s.step) + 1;
  }
  return {start, static_cast<int64_t>(count)};
}

Status inferSlice(InferContext &ctx) {
  static const char *kNames[] = {"data", "starts", "ends", "axes", "steps"};
  for (int i = 1; i < 5 && i < ctx.numInputs(); ++i) {
    if (!ctx.hasInput(i))
      continue;
    DLC_RETURN_IF_ERROR(checkIndexType(ctx, i, kNames[i]));
    DLC_RETURN_IF_ERROR(checkRankAtMost(ctx, i, 1, kNames[i]));
  }
  const TensorType &in = ctx.inputType(0);
  if (!in.shape.isRanked()) {
    ctx.setOutputType(0, in);
    return Status::ok();
  }
  const int64_t r = in.shape.rank();
  auto starts = inputInts(ctx, 1), ends = inputInts(ctx, 2);
  OptionalInts axes = optionalInts(ctx, 3), steps = optionalInts(ctx, 4);
  std::vector<Dim> dims = in.shape.dims();
  if (starts && ends && (axes.absent || axes.values) && (steps.absent || steps.values)) {
    DLC_ASSIGN_OR_RETURN(auto sa, sliceAxes(r, *starts, *ends, axes.values, steps.values));
    for (const SliceAxis &s : sa) {
      Dim &d = dims[static_cast<size_t>(s.axis)];
      if (d.isKnown())
        d = Dim(sliceRange(d.value(), s).count);
      else if (!coversWholeAxis(s))
        d = Dim::unknown();
    }
    auto elems = inputElements(ctx, 0);
    if (r == 1 && elems && in.shape[0].isKnown() &&
        static_cast<int64_t>(elems->size()) == in.shape[0].value()) {
      std::vector<Dim> value = *elems;
      if (!sa.empty()) {
        const SliceAxis &s = sa.front();
        SliceRange range = sliceRange(static_cast<int64_t>(elems->size()), s);
        value.clear();
        for (int64_t k = 0; k < range.count; ++k)
          value.push_back((*elems)[static_cast<size_t>(range.first + k * s.step)]);
      }
      ctx.setOutputShapeValue(0, std::move(value));
    }
  } else if (axes.values) {
    DLC_ASSIGN_OR_RETURN(auto norm, normalizeAxes(*axes.values, r));
    for (int64_t a : norm)
      dims[static_cast<size_t>(a)] = Dim::unknown();
  } else if (auto n = axes.absent ? staticLength(ctx, 1) : std::nullopt; n && *n <= r) {
    for (int64_t a = 0; a < *n; ++a)
      dims[static_cast<size_t>(a)] = Dim::unknown();
  } else {
    dims = unknownDims(r);
  }
  ctx.setOutputType(0, TensorType(in.dtype, Shape(std::move(dims))));
  return Status::ok();
}

Expected<std::vector<int64_t>> transposePerm(const Node &node, int64_t rank) {
  std::vector<int64_t> perm;
  if (!node.hasAttr("perm")) {
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
    return perm;
  }
  perm = node.getInts("perm");
  if (!isPermutation(perm, rank))
    return invalidArgument("perm {} is not a permutation of {} axes", intsStr(perm), rank);
  return perm;
}

Status inferTranspose(InferContext &ctx) {
  const TensorType &in = ctx.inputType(0);
  if (!in.shape.isRanked() && !ctx.node().hasAttr("perm")) {
    ctx.setOutputType(0, in);
    return Status::ok();
  }
  int64_t r = in.shape.isRanked() ? in.shape.rank()
                                  : static_cast<int64_t>(ctx.node().getInts("perm").size());
  DLC_ASSIGN_OR_RETURN(auto perm, transposePerm(ctx.node(), r));
  std::vector<Dim> dims;
  for (int64_t p : perm)
    dims.push_back(in.shape.isRanked() ? in.shape[p] : Dim::unknown());
  ctx.setOutputType(0, TensorType(in.dtype, Shape(std::move(dims))));
  return Status::ok();
}

Status inferConcat(InferContext &ctx) {
  int first = -1; // first ranked input
  DType dtype = DType::kUnknown;
  int dtypeFrom = -1;
  for (int i = 0; i < ctx.numInputs(); ++i) {
    const TensorType &t = ctx.inputType(i);
    if (t.dtype != DType::kUnknown) {
      if (dtypeFrom >= 0 && t.dtype != dtype)
        return ctx.error("input {} is {} but input {} is {}", i, t.str(), dtypeFrom,
                         ctx.inputType(dtypeFrom).str());
      if (dtypeFrom < 0)
        dtype = t.dtype, dtypeFrom = i;
    }
    if (!t.shape.isRanked())
      continue;
    if (first < 0)
      first = i;
    else if (t.shape.rank() != ctx.inputType(first).shape.rank())
      return ctx.error("input {} is {} but input {} is {}: ranks differ", i, t.str(), first,
                       ctx.inputType(first).str());
  }
  if (first < 0) {
    ctx.setOutputType(0, TensorType(dtype, Shape::unranked()));
    return Status::ok();
  }
  const int64_t r = ctx.inputType(first).shape.rank();
  if (r == 0)
    return ctx.error("cannot concatenate 0-D tensors");
  DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(ctx.node().getInt("axis"), r));
  std::vector<Dim> dims = ctx.inputType(first).shape.dims();
  std::vector<int> from(static_cast<size_t>(r), first);
  Dim sum(0);
  bool allRanked = true;
  for (int i = 0; i < ctx.numInputs(); ++i) {
    const Shape &s = ctx.inputType(i).shape;
    if (!s.isRanked()) {
      allRanked = false;
      continue;
    }
    for (int64_t d = 0; d < r; ++d) {
      Dim &o = dims[static_cast<size_t>(d)];
      const Dim &x = s[d];
      if (d == axis)
        continue;
      if (o.isKnown() && x.isKnown() && o.value() != x.value())
        return ctx.error("inputs {} and {} differ in dim {} ({} vs {})",
                         from[static_cast<size_t>(d)], i, d, o.value(), x.value());
      if (!o.isKnown() && (x.isKnown() || (o.isUnknown() && x.isSymbol())))
        o = x, from[static_cast<size_t>(d)] = i;
    }
    const Dim &x = s[axis];
    if (sum.isKnown() && sum.value() == 0)
      sum = x;
    else if (int64_t total; !(x.isKnown() && x.value() == 0))
      sum = sum.isKnown() && x.isKnown() && !__builtin_add_overflow(sum.value(), x.value(), &total)
                ? Dim(total)
                : Dim::unknown();
  }
  dims[static_cast<size_t>(axis)] = allRanked ? sum : Dim::unknown();
  ctx.setOutputType(0, TensorType(dtype, Shape(std::move(dims))));
  if (r == 1) {
    std::vector<Dim> value;
    for (int i = 0; i < ctx.numInputs(); ++i) {
      auto elems = inputElements(ctx, i);
      if (!elems)
        return Status::ok();
      value.insert(value.end(), elems->begin(), elems->end());
    }
    ctx.setOutputShapeValue(0, std::move(value));
  }
  return Status::ok();
}

Expected<std::vector<Dim>> splitSizes(const Node &node, const Dim &dim,
                                      const std::optional<std::vector<int64_t>> &split,
                                      bool hasSplitInput, int numOutputs) {
  const size_t n = static_cast<size_t>(numOutputs);
  if (hasSplitInput) {
    if (node.hasAttr("num_outputs"))
      return invalidArgument("the split input and the num_outputs attribute are both given");
    if (!split)
      return unknownDims(numOutputs);
    if (split->size() != n)
      return invalidArgument("split has {} elements for {} outputs", split->size(), n);
    std::vector<Dim> sizes;
    int64_t sum = 0;
    for (int64_t v : *split) {
      if (v < 0)
        return invalidArgument("split {} has a negative value {}", intsStr(*split), v);
      sizes.emplace_back(v);
      if (__builtin_add_overflow(sum, v, &sum))
        return invalidArgument("split {} overflows", intsStr(*split));
    }
    if (dim.isKnown() && sum != dim.value())
      return invalidArgument("split {} sums to {} but the axis has size {}", intsStr(*split), sum,
                             dim.value());
    return sizes;
  }
  if (node.hasAttr("num_outputs") && node.getInt("num_outputs") != numOutputs)
    return invalidArgument("num_outputs is {} but the node has {} outputs",
                           node.getInt("num_outputs"), numOutputs);
  if (n == 0)
    return invalidArgument("split needs at least one output");
  if (!dim.isKnown())
    return n == 1 ? std::vector<Dim>{dim} : unknownDims(numOutputs);
  const int64_t d = dim.value(), k = static_cast<int64_t>(n);
  if (!node.hasAttr("num_outputs")) {
    if (d % k != 0)
      return invalidArgument("cannot split an axis of size {} into {} equal parts", d, k);
    return std::vector<Dim>(n, Dim(d / k));
  }
  // Opset 18: parts of ceil(d / k), the last one smaller.
  const int64_t chunk = (d + k - 1) / k, last = d - chunk * (k - 1);
  if (last < 0)
    return invalidArgument("cannot split an axis of size {} into {} parts of {}", d, k, chunk);
  std::vector<Dim> sizes(n, Dim(chunk));
  sizes.back() = Dim(last);
  return sizes;
}

Status inferSplit(InferContext &ctx) {
  const TensorType &in = ctx.inputType(0);
  if (ctx.hasInput(1)) {
    DLC_RETURN_IF_ERROR(checkIndexType(ctx, 1, "split"));
    DLC_RETURN_IF_ERROR(checkRankAtMost(ctx, 1, 1, "split"));
  }
  if (!in.shape.isRanked()) {
    for (int i = 0; i < ctx.numOutputs(); ++i)
      ctx.setOutputType(i, in);
    return Status::ok();
  }
  DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(ctx.node().getInt("axis"), in.shape.rank()));
  DLC_ASSIGN_OR_RETURN(auto sizes, splitSizes(ctx.node(), in.shape[axis], inputInts(ctx, 1),
                                              ctx.hasInput(1), ctx.numOutputs()));
  for (int i = 0; i < ctx.numOutputs(); ++i) {
    Shape s = in.shape;
    s[axis] = sizes[static_cast<size_t>(i)];
    ctx.setOutputType(i, TensorType(in.dtype, std::move(s)));
  }
  return Status::ok();
}

} // namespace dlc::ops::tensor
