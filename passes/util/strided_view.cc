// Strided views through data-moving ops (see strided_view.h).
#include "passes/util/strided_view.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/annotations/fusion_roles.h"
#include "ir/match.h"
#include "passes/util/transpose_sink.h"

namespace dlc {

namespace {

std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t a = shape.size(); a-- > 1;)
    strides[a - 1] = strides[a] * shape[a];
  return strides;
}

/// A view over a buffer of shape `shape` as coordinates of that shape: the axis each view axis
/// walks and its step there (axis -1 for a view axis of size 1), and where the offset is.
struct AxisView {
  std::vector<int> axis;
  std::vector<int64_t> step, origin;
};

/// `view` over a buffer of static shape `shape` as coordinates; nullopt when a view axis
/// does not walk one axis of `shape` by whole steps, or its walk (with the others on the
/// same axis) would run past that axis and carry into the next.
std::optional<AxisView> decompose(const std::vector<int64_t> &shape, const StridedView &view) {
  const std::vector<int64_t> st = rowMajorStrides(shape);
  int64_t elements = 1;
  for (int64_t d : shape)
    elements *= d;
  if (view.offset < 0 || view.offset >= elements)
    return std::nullopt;
  AxisView out;
  out.origin.resize(shape.size());
  int64_t rest = view.offset;
  for (size_t a = 0; a < shape.size(); ++a) {
    out.origin[a] = rest / st[a];
    rest %= st[a];
  }
  std::vector<int64_t> reach = out.origin;
  for (size_t j = 0; j < view.sizes.size(); ++j) {
    const int64_t size = view.sizes[j], stride = view.strides[j];
    if (size == 1) {
      out.axis.push_back(-1);
      out.step.push_back(0);
      continue;
    }
    if (size <= 0 || stride <= 0)
      return std::nullopt;
    int found = -1;
    for (size_t a = 0; a < shape.size() && found < 0; ++a)
      if (shape[a] > 1 && stride >= st[a] && stride < st[a] * shape[a])
        found = static_cast<int>(a);
    if (found < 0 || stride % st[static_cast<size_t>(found)] != 0)
      return std::nullopt;
    const int64_t step = stride / st[static_cast<size_t>(found)];
    out.axis.push_back(found);
    out.step.push_back(step);
    reach[static_cast<size_t>(found)] += (size - 1) * step;
  }
  for (size_t a = 0; a < shape.size(); ++a)
    if (reach[a] >= shape[a])
      return std::nullopt;
  return out;
}

/// The view of a buffer of shape `in` whose axis `map[a]` is axis a of the coordinates `c`,
/// with `extra` added to the offset.
StridedView recompose(const std::vector<int64_t> &in, const AxisView &c,
                      const std::vector<int64_t> &map, const StridedView &sizes, int64_t extra) {
  const std::vector<int64_t> st = rowMajorStrides(in);
  StridedView out;
  out.sizes = sizes.sizes;
  out.offset = extra;
  for (size_t a = 0; a < c.origin.size(); ++a)
    out.offset += c.origin[a] * st[static_cast<size_t>(map[a])];
  for (size_t j = 0; j < c.axis.size(); ++j)
    out.strides.push_back(
        c.axis[j] < 0 ? 0
                      : c.step[j] * st[static_cast<size_t>(map[static_cast<size_t>(c.axis[j])])]);
  return out;
}

} // namespace

std::string StridedView::str() const {
  return fmt::format("[{}] at [{}] + {}", fmt::join(sizes, ", "), fmt::join(strides, ", "), offset);
}

StridedView contiguousView(const std::vector<int64_t> &shape) {
  return {shape, rowMajorStrides(shape), 0};
}

std::optional<StridedView> viewThrough(const Node &n, const StridedView &view) {
  const Value *in = n.numInputs() > 0 ? n.input(0) : nullptr;
  const Value *out = n.output(0);
  if (!in || !out || !in->shape().isStatic() || !out->shape().isStatic())
    return std::nullopt;
  if (isViewNode(n))
    return view;
  const std::vector<int64_t> inShape = in->shape().sizes(), outShape = out->shape().sizes();
  if (n.op() == Op::kTranspose) {
    auto perm = transposePerm(n);
    return perm ? viewThroughTranspose(outShape, *perm, view) : std::nullopt;
  }
  if (n.op() == Op::kGather && n.numInputs() == 2) {
    const Value *index = n.input(1);
    auto i = constantInts(index);
    if (!i || i->size() != 1 || !index->shape().isStatic())
      return std::nullopt;
    const int64_t rank = static_cast<int64_t>(inShape.size());
    int64_t axis = n.getInt("axis");
    axis = axis < 0 ? axis + rank : axis;
    if (axis < 0 || axis >= rank)
      return std::nullopt;
    int64_t at = (*i)[0] < 0 ? (*i)[0] + inShape[static_cast<size_t>(axis)] : (*i)[0];
    if (at < 0 || at >= inShape[static_cast<size_t>(axis)])
      return std::nullopt;
    auto c = decompose(outShape, view);
    if (!c)
      return std::nullopt;
    // A scalar index drops the axis; a one-element index keeps it, of size 1.
    const bool dropped = index->shape().rank() == 0;
    std::vector<int64_t> map;
    for (int64_t a = 0; a < static_cast<int64_t>(outShape.size()); ++a)
      map.push_back(dropped && a >= axis ? a + 1 : a);
    if (map.size() + (dropped ? 1 : 0) != inShape.size())
      return std::nullopt;
    return recompose(inShape, *c, map, view,
                     at * rowMajorStrides(inShape)[static_cast<size_t>(axis)]);
  }
  return std::nullopt;
}

std::optional<StridedView> viewThroughTranspose(const std::vector<int64_t> &out,
                                                const std::vector<int64_t> &perm,
                                                const StridedView &view) {
  if (perm.size() != out.size())
    return std::nullopt;
  std::vector<int64_t> in(out.size());
  for (size_t a = 0; a < out.size(); ++a) {
    if (perm[a] < 0 || perm[a] >= static_cast<int64_t>(out.size()))
      return std::nullopt;
    in[static_cast<size_t>(perm[a])] = out[a];
  }
  auto c = decompose(out, view);
  if (!c)
    return std::nullopt;
  return recompose(in, *c, perm, view, 0);
}

std::optional<StridedView> viewInBlock(const std::vector<int64_t> &part, const StridedView &view,
                                       const std::vector<int64_t> &whole,
                                       const std::vector<int64_t> &start) {
  if (part.size() != whole.size() || start.size() != whole.size())
    return std::nullopt;
  for (size_t a = 0; a < whole.size(); ++a)
    if (start[a] < 0 || start[a] + part[a] > whole[a])
      return std::nullopt;
  auto c = decompose(part, view);
  if (!c)
    return std::nullopt;
  std::vector<int64_t> map(whole.size());
  int64_t extra = 0;
  const std::vector<int64_t> st = rowMajorStrides(whole);
  for (size_t a = 0; a < whole.size(); ++a) {
    map[a] = static_cast<int64_t>(a);
    extra += start[a] * st[a];
  }
  return recompose(whole, *c, map, view, extra);
}

} // namespace dlc
