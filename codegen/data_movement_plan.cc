// Index plans of the data-movement ops (see data_movement_plan.h). The rules follow the
// reference evaluation in ir/eval/tensor_eval*.cc, whose helpers (slice bounds, transpose
// permutation) are reused so that both agree by construction. Shapes are static; parameters
// the plan bakes in (Slice starts, Pad pads) must be constants. Indices read at run time are
// wrapped when negative and clamped into range: a kernel cannot report an error.
#include "codegen/data_movement_plan.h"

#include <fmt/format.h>

#include <algorithm>

#include "ir/ops/tensor_internal.h"

namespace dlc::codegen {

IndexExpr MovePlan::coord(size_t d) const {
  return iter[d] == 1 ? IndexExpr(0) : IndexExpr::var(fmt::format("c{}", d));
}

int MovePlan::buffer(const Value *v) {
  auto it = std::find(buffers.begin(), buffers.end(), v);
  if (it != buffers.end())
    return static_cast<int>(it - buffers.begin());
  buffers.push_back(v);
  return static_cast<int>(buffers.size()) - 1;
}

bool isMoveOp(Op op) {
  switch (op) {
  case Op::kTranspose:
  case Op::kConcat:
  case Op::kSlice:
  case Op::kGather:
  case Op::kGatherElements:
  case Op::kPad:
  case Op::kExpand:
  case Op::kTile:
  case Op::kDepthToSpace:
  case Op::kSpaceToDepth:
  case Op::kCenterCropPad:
  case Op::kConstantOfShape:
  case Op::kTrilu:
  case Op::kEyeLike:
  case Op::kOneHot:
    return true;
  default:
    return false;
  }
}

namespace {

using ops::tensor::stridesOf;

std::vector<int64_t> sizesOf(const Value *v) { return v->shape().sizes(); }

/// Constant integer input `i` (nullopt when absent); an error when it is not a constant.
Expected<std::optional<std::vector<int64_t>>> constantInts(const Node &n, int i, const char *what) {
  if (!n.hasInput(i))
    return std::optional<std::vector<int64_t>>();
  const Value *v = n.input(i);
  if (!v->isConstant())
    return unimplemented("input '{}' of {} is not a constant", what, n.opName());
  return std::optional(v->constant().toInt64Vector());
}

/// A scalar of `dtype` holding `v`.
Tensor scalarOf(DType dtype, int64_t v) { return Tensor::scalarI64(v).castTo(dtype); }

/// sum_d coord(d) * strides[d] over the iteration dims `dims` (a subset, in order).
IndexExpr dot(const MovePlan &p, const std::vector<size_t> &dims,
              const std::vector<int64_t> &strides) {
  IndexExpr e = 0;
  for (size_t k = 0; k < dims.size(); ++k)
    e = e + p.coord(dims[k]) * strides[k];
  return e;
}

/// Declares `g`: the run-time index `raw` (bound to `q` first) into an axis of `dim` elements,
/// wrapped when negative, then clamped into range.
IndexExpr wrapIndex(MovePlan &p, const IndexExpr &raw, int64_t dim) {
  p.lets.emplace_back("q", raw);
  const IndexExpr q = IndexExpr::var("q");
  p.lets.emplace_back(
      "g", IndexExpr::min(IndexExpr::max(IndexExpr::select(q < 0, q + dim, q), 0), dim - 1));
  return IndexExpr::var("g");
}

MovePlan outputPlan(const Node &n) {
  MovePlan p;
  p.iter = sizesOf(n.output(0));
  return p;
}

Expected<MovePlan> planTranspose(const Node &n) {
  const std::vector<int64_t> in = sizesOf(n.input(0));
  DLC_ASSIGN_OR_RETURN(auto perm, ops::tensor::transposePerm(n, static_cast<int64_t>(in.size())));
  const auto [dims, cperm] = canonicalTranspose(in, perm);
  MovePlan p;
  for (int64_t a : cperm)
    p.iter.push_back(dims[static_cast<size_t>(a)]);
  const std::vector<int64_t> s = stridesOf(dims);
  IndexExpr off = 0;
  for (size_t d = 0; d < cperm.size(); ++d)
    off = off + p.coord(d) * s[static_cast<size_t>(cperm[d])];
  p.sources.push_back({1, p.buffer(n.input(0)), off, {}});
  return p;
}

Expected<MovePlan> planSlice(const Node &n) {
  const std::vector<int64_t> in = sizesOf(n.input(0));
  DLC_ASSIGN_OR_RETURN(auto starts, constantInts(n, 1, "starts"));
  DLC_ASSIGN_OR_RETURN(auto ends, constantInts(n, 2, "ends"));
  DLC_ASSIGN_OR_RETURN(auto axes, constantInts(n, 3, "axes"));
  DLC_ASSIGN_OR_RETURN(auto steps, constantInts(n, 4, "steps"));
  DLC_ASSIGN_OR_RETURN(auto sliced, ops::tensor::sliceAxes(static_cast<int64_t>(in.size()), *starts,
                                                           *ends, axes, steps));
  std::vector<int64_t> first(in.size(), 0), step(in.size(), 1);
  for (const ops::tensor::SliceAxis &s : sliced) {
    const size_t a = static_cast<size_t>(s.axis);
    first[a] = ops::tensor::sliceRange(in[a], s).first;
    step[a] = s.step;
  }
  MovePlan p = outputPlan(n);
  const std::vector<int64_t> st = stridesOf(in);
  IndexExpr off = 0;
  for (size_t d = 0; d < in.size(); ++d)
    off = off + (first[d] + p.coord(d) * step[d]) * st[d];
  p.sources.push_back({1, p.buffer(n.input(0)), off, {}});
  return p;
}

/// Expand: numpy broadcasting of the input to the (static) output shape.
Expected<MovePlan> planExpand(const Node &n) {
  const std::vector<int64_t> in = sizesOf(n.input(0));
  MovePlan p = outputPlan(n);
  const size_t shift = p.iter.size() - in.size();
  const std::vector<int64_t> st = stridesOf(in);
  IndexExpr off = 0;
  for (size_t j = 0; j < in.size(); ++j)
    if (in[j] != 1)
      off = off + p.coord(j + shift) * st[j];
  p.sources.push_back({1, p.buffer(n.input(0)), off, {}});
  return p;
}

/// Tile: the output seen as [out0 / in0, in0, out1 / in1, in1, ...] reads the input with the
/// repeat coordinates ignored.
Expected<MovePlan> planTile(const Node &n) {
  const std::vector<int64_t> in = sizesOf(n.input(0)), out = sizesOf(n.output(0));
  MovePlan p;
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] == 0) { // an empty output
      p.iter.push_back(0);
      p.iter.push_back(1);
      continue;
    }
    if (out[d] % in[d] != 0)
      return invalidArgument("output dim {} ({}) is not a multiple of input dim {} ({})", d, out[d],
                             d, in[d]);
    p.iter.push_back(out[d] / in[d]);
    p.iter.push_back(in[d]);
  }
  const std::vector<int64_t> st = stridesOf(in);
  IndexExpr off = 0;
  for (size_t d = 0; d < in.size(); ++d)
    off = off + p.coord(2 * d + 1) * st[d];
  p.sources.push_back({1, p.buffer(n.input(0)), off, {}});
  return p;
}

/// A view of the output with the input strides that read it (DepthToSpace, SpaceToDepth).
MovePlan viewPlan(const Node &n, std::vector<int64_t> view, const std::vector<int64_t> &strides) {
  MovePlan p;
  p.iter = std::move(view);
  std::vector<size_t> dims;
  for (size_t d = 0; d < p.iter.size(); ++d)
    dims.push_back(d);
  p.sources.push_back({1, p.buffer(n.input(0)), dot(p, dims, strides), {}});
  return p;
}

Expected<MovePlan> planDepthToSpace(const Node &n) {
  const std::vector<int64_t> s = sizesOf(n.input(0));
  if (s.size() != 4)
    return unimplemented("{} needs a 4-D input, got rank {}", n.opName(), s.size());
  const int64_t b = n.getInt("blocksize"), c = s[1] / (b * b), hw = s[2] * s[3];
  // As the reference: the output seen as [N, C', H, b, W, b].
  std::vector<int64_t> strides =
      n.getString("mode") == "DCR"
          ? std::vector<int64_t>{s[1] * hw, hw, s[3], b * c * hw, 1, c * hw}
          : std::vector<int64_t>{s[1] * hw, b * b * hw, s[3], b * hw, 1, hw};
  return viewPlan(n, {s[0], c, s[2], b, s[3], b}, strides);
}

Expected<MovePlan> planSpaceToDepth(const Node &n) {
  const std::vector<int64_t> s = sizesOf(n.input(0));
  if (s.size() != 4)
    return unimplemented("{} needs a 4-D input, got rank {}", n.opName(), s.size());
  const int64_t b = n.getInt("blocksize");
  return viewPlan(n, {s[0], b, b, s[1], s[2] / b, s[3] / b},
                  {s[1] * s[2] * s[3], s[3], 1, s[2] * s[3], b * s[3], b});
}

Expected<MovePlan> planConcat(const Node &n) {
  MovePlan p = outputPlan(n);
  const int64_t rank = static_cast<int64_t>(p.iter.size());
  DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(n.getInt("axis"), rank));
  const size_t a = static_cast<size_t>(axis);
  int64_t begin = 0;
  for (int k = 0; k < n.numInputs(); ++k) {
    const Value *v = n.input(k);
    const std::vector<int64_t> in = sizesOf(v);
    if (in[a] == 0)
      continue;
    const std::vector<int64_t> st = stridesOf(in);
    IndexExpr off = 0;
    for (size_t d = 0; d < in.size(); ++d)
      off = off + (d == a ? p.coord(d) - begin : p.coord(d)) * st[d];
    begin += in[a];
    p.sources.push_back({p.coord(a) < begin, p.buffer(v), off, {}});
  }
  if (p.sources.empty())
    p.sources.push_back({1, -1, 0, scalarOf(n.output(0)->dtype(), 0)});
  p.sources.back().when = 1;
  return p;
}

/// Gather: output [data[:a], indices..., data[a+1:]] reads data at the wrapped index.
Expected<MovePlan> planGather(const Node &n) {
  const std::vector<int64_t> data = sizesOf(n.input(0)), idx = sizesOf(n.input(1));
  DLC_ASSIGN_OR_RETURN(int64_t axis,
                       normalizeAxis(n.getInt("axis"), static_cast<int64_t>(data.size())));
  const size_t a = static_cast<size_t>(axis), q = idx.size();
  MovePlan p = outputPlan(n);
  const int dataBuf = p.buffer(n.input(0)), idxBuf = p.buffer(n.input(1));
  const std::vector<int64_t> ds = stridesOf(data), is = stridesOf(idx);
  IndexExpr idxOff = 0;
  for (size_t j = 0; j < q; ++j)
    idxOff = idxOff + p.coord(a + j) * is[j];
  IndexExpr off =
      wrapIndex(p, IndexExpr::load(fmt::format("in{}", idxBuf), idxOff), data[a]) * ds[a];
  for (size_t d = 0; d < data.size(); ++d)
    if (d != a)
      off = off + p.coord(d < a ? d : d + q - 1) * ds[d];
  p.sources.push_back({1, dataBuf, off, {}});
  return p;
}

/// GatherElements: output[c] = data[c with axis coordinate replaced by indices[c]].
Expected<MovePlan> planGatherElements(const Node &n) {
  const std::vector<int64_t> data = sizesOf(n.input(0));
  DLC_ASSIGN_OR_RETURN(int64_t axis,
                       normalizeAxis(n.getInt("axis"), static_cast<int64_t>(data.size())));
  MovePlan p = outputPlan(n);
  const int dataBuf = p.buffer(n.input(0)), idxBuf = p.buffer(n.input(1));
  const std::vector<int64_t> ds = stridesOf(data);
  const size_t a = static_cast<size_t>(axis);
  IndexExpr off =
      wrapIndex(p, IndexExpr::load(fmt::format("in{}", idxBuf), IndexExpr::var("i")), data[a]) *
      ds[a];
  for (size_t d = 0; d < data.size(); ++d)
    if (d != a)
      off = off + p.coord(d) * ds[d];
  p.sources.push_back({1, dataBuf, off, {}});
  return p;
}

/// Where output coordinate c of a padded axis reads (numpy.pad rules, as the reference's
/// padMap); `valid` is set for constant mode.
struct PadAxis {
  IndexExpr coord = 0;
  std::optional<IndexExpr> valid;
};

Expected<PadAxis> padAxis(MovePlan &p, const std::string &mode, size_t d, int64_t dim,
                          int64_t begin, int64_t end) {
  const IndexExpr c = p.coord(d);
  if (mode == "constant") {
    // Only the bounds that some output coordinate can cross are tested.
    const IndexExpr j = c - begin;
    IndexExpr valid = 1;
    if (begin > 0)
      valid = 0 <= j;
    if (p.iter[d] - 1 - begin >= dim)
      valid = valid && (j < dim);
    return PadAxis{j, valid.isConst() ? std::nullopt : std::optional(valid)};
  }
  const int64_t lo = std::max<int64_t>(-begin, 0), hi = std::max<int64_t>(-end, 0);
  const int64_t pb = std::max<int64_t>(begin, 0), pe = std::max<int64_t>(end, 0);
  const int64_t m = dim - lo - hi;
  if (m < 0)
    return invalidArgument("pads ({}, {}) crop more than axis {} of size {} holds", begin, end, d,
                           dim);
  if ((pb > 0 || pe > 0) && m == 0)
    return invalidArgument("mode '{}' cannot pad axis {}: it is empty after cropping", mode, d);
  if (pb == 0 && pe == 0)
    return PadAxis{lo + c, std::nullopt};
  const IndexExpr j = c - pb;
  if (mode == "edge")
    return PadAxis{lo + IndexExpr::min(IndexExpr::max(j, 0), m - 1), std::nullopt};
  if (mode == "wrap")
    return PadAxis{lo + (j % m + m) % m, std::nullopt};
  if (m == 1) // reflect of one element
    return PadAxis{IndexExpr(lo), std::nullopt};
  const int64_t period = 2 * (m - 1);
  const std::string name = fmt::format("r{}", d);
  p.lets.emplace_back(name, (j % period + period) % period);
  const IndexExpr r = IndexExpr::var(name);
  return PadAxis{lo + IndexExpr::select(r < m, r, period - r), std::nullopt};
}

Expected<MovePlan> planPad(const Node &n) {
  const std::vector<int64_t> in = sizesOf(n.input(0));
  const size_t r = in.size();
  DLC_ASSIGN_OR_RETURN(auto pads, constantInts(n, 1, "pads"));
  DLC_ASSIGN_OR_RETURN(auto axesIn, constantInts(n, 3, "axes"));
  std::vector<int64_t> axes;
  if (axesIn) {
    DLC_ASSIGN_OR_RETURN(axes, ops::tensor::normalizeAxes(*axesIn, static_cast<int64_t>(r)));
  } else {
    for (size_t a = 0; a < r; ++a)
      axes.push_back(static_cast<int64_t>(a));
  }
  if (pads->size() != 2 * axes.size())
    return invalidArgument("pads has {} elements for {} axes", pads->size(), axes.size());
  std::vector<int64_t> begin(r, 0), end(r, 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    begin[static_cast<size_t>(axes[k])] = (*pads)[k];
    end[static_cast<size_t>(axes[k])] = (*pads)[k + axes.size()];
  }
  const std::string &mode = n.getString("mode");
  MovePlan p = outputPlan(n);
  const int data = p.buffer(n.input(0));
  const std::vector<int64_t> st = stridesOf(in);
  IndexExpr off = 0, valid = 1;
  for (size_t d = 0; d < r; ++d) {
    DLC_ASSIGN_OR_RETURN(PadAxis ax, padAxis(p, mode, d, in[d], begin[d], end[d]));
    off = off + ax.coord * st[d];
    if (ax.valid)
      valid = valid && *ax.valid;
  }
  p.sources.push_back({valid, data, off, {}});
  if (!valid.isConst()) {
    if (n.hasInput(2)) {
      if (n.input(2)->shape().numElements() != 1)
        return invalidArgument("constant_value must hold one element, got {}",
                               n.input(2)->type().str());
      if (n.input(2)->dtype() != n.input(0)->dtype())
        return unimplemented("constant_value is {} but the data is {}",
                             dtypeName(n.input(2)->dtype()), dtypeName(n.input(0)->dtype()));
      p.sources.push_back({1, p.buffer(n.input(2)), 0, {}});
    } else {
      p.sources.push_back({1, -1, 0, scalarOf(n.input(0)->dtype(), 0)});
    }
  }
  return p;
}

/// CenterCropPad: each listed axis is cropped or zero-padded symmetrically to its target.
Expected<MovePlan> planCenterCropPad(const Node &n) {
  const std::vector<int64_t> in = sizesOf(n.input(0));
  MovePlan p = outputPlan(n);
  const std::vector<int64_t> st = stridesOf(in);
  IndexExpr off = 0, valid = 1;
  for (size_t d = 0; d < in.size(); ++d) {
    const int64_t t = p.iter[d], dim = in[d];
    const int64_t start = (t < dim ? dim - t : t - dim) / 2;
    const IndexExpr j = t < dim ? p.coord(d) + start : p.coord(d) - start;
    if (t > dim)
      valid = valid && (0 <= j) && (j < dim);
    off = off + j * st[d];
  }
  p.sources.push_back({valid, p.buffer(n.input(0)), off, {}});
  if (!valid.isConst())
    p.sources.push_back({1, -1, 0, scalarOf(n.input(0)->dtype(), 0)});
  return p;
}

Expected<MovePlan> planTrilu(const Node &n) {
  MovePlan p = outputPlan(n);
  const size_t r = p.iter.size();
  if (r < 2)
    return invalidArgument("input must have rank >= 2, got {}", r);
  const int data = p.buffer(n.input(0));
  IndexExpr k = 0;
  if (n.hasInput(1)) {
    if (n.input(1)->shape().numElements() != 1)
      return invalidArgument("k must hold one element, got {}", n.input(1)->type().str());
    p.lets.emplace_back("k", IndexExpr::load(fmt::format("in{}", p.buffer(n.input(1))), 0));
    k = IndexExpr::var("k");
  }
  const IndexExpr diag = p.coord(r - 1) - p.coord(r - 2);
  const IndexExpr keep = n.getInt("upper") != 0 ? k <= diag : diag <= k;
  p.sources.push_back({keep, data, IndexExpr::var("i"), {}});
  p.sources.push_back({1, -1, 0, scalarOf(n.output(0)->dtype(), 0)});
  return p;
}

Expected<MovePlan> planEyeLike(const Node &n) {
  MovePlan p = outputPlan(n);
  if (p.iter.size() != 2)
    return invalidArgument("output must be 2-D, got rank {}", p.iter.size());
  const DType t = n.output(0)->dtype();
  p.sources.push_back({p.coord(1) - p.coord(0) == n.getInt("k"), -1, 0, scalarOf(t, 1)});
  p.sources.push_back({1, -1, 0, scalarOf(t, 0)});
  return p;
}

Expected<MovePlan> planConstantOfShape(const Node &n) {
  MovePlan p = outputPlan(n);
  const Tensor &value = n.getTensor("value");
  if (value.numElements() != 1)
    return invalidArgument("attribute 'value' must hold one element, got {}", value.type().str());
  p.sources.push_back({1, -1, 0, value.reshaped({})});
  return p;
}

/// OneHot(indices, depth, values): values[1] where the output's axis coordinate equals the
/// (wrapped) index, values[0] elsewhere.
Expected<MovePlan> planOneHot(const Node &n) {
  if (!isSignedInt(n.input(0)->dtype()) && !isUnsignedInt(n.input(0)->dtype()))
    return unimplemented("{} indices are not supported (integer indices only)",
                         dtypeName(n.input(0)->dtype()));
  MovePlan p = outputPlan(n);
  DLC_ASSIGN_OR_RETURN(int64_t axis,
                       normalizeAxis(n.getInt("axis"), static_cast<int64_t>(p.iter.size())));
  const size_t a = static_cast<size_t>(axis);
  const int64_t depth = p.iter[a];
  const int idxBuf = p.buffer(n.input(0)), valBuf = p.buffer(n.input(2));
  const std::vector<int64_t> is = stridesOf(sizesOf(n.input(0)));
  IndexExpr idxOff = 0;
  for (size_t d = 0, j = 0; d < p.iter.size(); ++d)
    if (d != a)
      idxOff = idxOff + p.coord(d) * is[j++];
  p.lets.emplace_back("g", IndexExpr::load(fmt::format("in{}", idxBuf), idxOff));
  const IndexExpr g = IndexExpr::var("g");
  p.sources.push_back({p.coord(a) == IndexExpr::select(g < 0, g + depth, g), valBuf, 1, {}});
  p.sources.push_back({1, valBuf, 0, {}});
  return p;
}

} // namespace

Expected<MovePlan> planMove(const Node &node) {
  Expected<MovePlan> plan = [&]() -> Expected<MovePlan> {
    switch (node.op()) {
    case Op::kTranspose:
      return planTranspose(node);
    case Op::kConcat:
      return planConcat(node);
    case Op::kSlice:
      return planSlice(node);
    case Op::kGather:
      return planGather(node);
    case Op::kGatherElements:
      return planGatherElements(node);
    case Op::kPad:
      return planPad(node);
    case Op::kExpand:
      return planExpand(node);
    case Op::kTile:
      return planTile(node);
    case Op::kDepthToSpace:
      return planDepthToSpace(node);
    case Op::kSpaceToDepth:
      return planSpaceToDepth(node);
    case Op::kCenterCropPad:
      return planCenterCropPad(node);
    case Op::kConstantOfShape:
      return planConstantOfShape(node);
    case Op::kTrilu:
      return planTrilu(node);
    case Op::kEyeLike:
      return planEyeLike(node);
    case Op::kOneHot:
      return planOneHot(node);
    default:
      return unimplemented("op '{}' is not a data-movement op", node.opName());
    }
  }();
  if (plan && (plan->sources.empty() || !plan->sources.back().when.isConst() ||
               plan->sources.back().when.constValue() == 0))
    return internalError("plan of {} has no unconditional last source", node.describe());
  return plan;
}

Expected<SplitPlan> planSplit(const Node &node) {
  const std::vector<int64_t> in = sizesOf(node.input(0));
  DLC_ASSIGN_OR_RETURN(int64_t axis,
                       normalizeAxis(node.getInt("axis"), static_cast<int64_t>(in.size())));
  const size_t a = static_cast<size_t>(axis);
  SplitPlan p;
  p.iter = in;
  MovePlan coords; // for coord()
  coords.iter = in;
  int64_t begin = 0;
  for (int k = 0; k < node.numOutputs(); ++k) {
    const Value *out = node.output(k);
    if (!out)
      return unimplemented("output {} of {} is absent; its size is unknown", k, node.opName());
    const std::vector<int64_t> os = sizesOf(out);
    const std::vector<int64_t> st = stridesOf(os);
    IndexExpr off = 0;
    for (size_t d = 0; d < in.size(); ++d)
      off = off + (d == a ? coords.coord(d) - begin : coords.coord(d)) * st[d];
    begin += os[a];
    if (os[a] > 0)
      p.targets.push_back({coords.coord(a) < begin, out, off});
  }
  if (begin != in[a])
    return invalidArgument("the outputs' sizes along axis {} add up to {}, not {}", axis, begin,
                           in[a]);
  if (!p.targets.empty())
    p.targets.back().when = 1;
  return p;
}

std::pair<std::vector<int64_t>, std::vector<int64_t>>
canonicalTranspose(const std::vector<int64_t> &in, const std::vector<int64_t> &perm) {
  std::vector<int64_t> renumber(in.size(), -1), dims, p;
  for (size_t k = 0; k < in.size(); ++k)
    if (in[k] != 1) {
      renumber[k] = static_cast<int64_t>(dims.size());
      dims.push_back(in[k]);
    }
  for (int64_t a : perm)
    if (renumber[static_cast<size_t>(a)] >= 0)
      p.push_back(renumber[static_cast<size_t>(a)]);
  // Runs of consecutive input axes in output order become one axis each.
  std::vector<std::pair<int64_t, int64_t>> runs; // (first input axis, length), output order
  for (int64_t a : p) {
    if (!runs.empty() && runs.back().first + runs.back().second == a)
      ++runs.back().second;
    else
      runs.emplace_back(a, 1);
  }
  std::vector<size_t> byInput(runs.size());
  for (size_t j = 0; j < runs.size(); ++j)
    byInput[j] = j;
  std::sort(byInput.begin(), byInput.end(),
            [&](size_t x, size_t y) { return runs[x].first < runs[y].first; });
  std::vector<int64_t> newDims, rank(runs.size());
  for (size_t k = 0; k < byInput.size(); ++k) {
    const auto [first, len] = runs[byInput[k]];
    int64_t size = 1;
    for (int64_t a = first; a < first + len; ++a)
      size *= dims[static_cast<size_t>(a)];
    newDims.push_back(size);
    rank[byInput[k]] = static_cast<int64_t>(k);
  }
  return {newDims, rank};
}

IndexExpr::Env coordinateEnv(const std::vector<int64_t> &iter, int64_t flat) {
  IndexExpr::Env env;
  env.vars["i"] = flat;
  for (size_t d = iter.size(); d-- > 0;) {
    env.vars[fmt::format("c{}", d)] = iter[d] == 0 ? 0 : flat % iter[d];
    flat = iter[d] == 0 ? 0 : flat / iter[d];
  }
  return env;
}

MovePick evalMove(const MovePlan &plan, int64_t flat,
                  const std::function<int64_t(int, int64_t)> &load) {
  IndexExpr::Env env = coordinateEnv(plan.iter, flat);
  env.load = [&](const std::string &name, int64_t off) {
    return load(std::stoi(name.substr(2)), off);
  };
  for (const auto &[name, e] : plan.lets)
    env.vars[name] = e.eval(env);
  for (const MoveSource &s : plan.sources)
    if (s.when.eval(env) != 0)
      return {&s, s.offset.eval(env)};
  return {};
}

std::pair<const SplitTarget *, int64_t> evalSplit(const SplitPlan &plan, int64_t flat) {
  IndexExpr::Env env = coordinateEnv(plan.iter, flat);
  for (const SplitTarget &t : plan.targets)
    if (t.when.eval(env) != 0)
      return {&t, t.offset.eval(env)};
  return {nullptr, 0};
}

} // namespace dlc::codegen
