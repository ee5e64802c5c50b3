// Reference evaluation of the data-dependent selection ops: Compress, NonZero, Unique.
// Their output sizes depend on the data, so they take only errors (not shapes) from
// inference, except Compress, whose constant condition fixes its output type.
//
// Unique orders values as numpy.unique does: ascending, -0.0 equal to 0.0, NaN after every
// number and all NaNs equal; with `axis`, slices compare lexicographically in row-major order
// of their remaining dims. f16/bf16 compare in f32 (exact).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "ir/eval/eval_util.h"
#include "ir/eval/tensor_eval.h"
#include "ir/ops/tensor_internal.h"
#include "ir/sizes.h"

namespace dlc::eval::tensor {

using namespace ops::tensor;

namespace {

template <typename T> int compareValues(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    const bool an = std::isnan(a), bn = std::isnan(b);
    if (an || bn)
      return an == bn ? 0 : (an ? 1 : -1);
  }
  return a < b ? -1 : (b < a ? 1 : 0);
}

/// The distinct rows of a [rows, len] matrix: for each row the group it belongs to, and for
/// each group its first row and size; groups in ascending order of their rows.
struct Groups {
  std::vector<int64_t> groupOf, first, count;
};

template <typename T> Groups groupRows(const T *p, int64_t rows, int64_t len) {
  auto cmp = [&](int64_t a, int64_t b) {
    for (int64_t i = 0; i < len; ++i)
      if (int c = compareValues<T>(p[a * len + i], p[b * len + i]); c != 0)
        return c;
    return 0;
  };
  std::vector<int64_t> order(static_cast<size_t>(rows));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return cmp(a, b) < 0; });
  Groups g;
  g.groupOf.resize(static_cast<size_t>(rows));
  for (size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || cmp(order[k - 1], order[k]) != 0) {
      g.first.push_back(order[k]); // stable: the lowest row of its group
      g.count.push_back(0);
    }
    g.groupOf[static_cast<size_t>(order[k])] = static_cast<int64_t>(g.first.size()) - 1;
    ++g.count.back();
  }
  return g;
}

/// Reorders groups by first occurrence (Unique with sorted=0).
void orderByFirstOccurrence(Groups &g) {
  std::vector<int64_t> perm(g.first.size());
  std::iota(perm.begin(), perm.end(), int64_t{0});
  std::sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
    return g.first[static_cast<size_t>(a)] < g.first[static_cast<size_t>(b)];
  });
  std::vector<int64_t> rank(perm.size()), first, count;
  for (size_t k = 0; k < perm.size(); ++k) {
    rank[static_cast<size_t>(perm[k])] = static_cast<int64_t>(k);
    first.push_back(g.first[static_cast<size_t>(perm[k])]);
    count.push_back(g.count[static_cast<size_t>(perm[k])]);
  }
  for (int64_t &x : g.groupOf)
    x = rank[static_cast<size_t>(x)];
  g.first = std::move(first);
  g.count = std::move(count);
}

bool isNonZero(const Tensor &t, int64_t i) {
  return isFloat(t.dtype()) ? t.elementAsDouble(i) != 0.0 : t.elementAsInt64(i) != 0;
}

} // namespace

Expected<Tensors> evalCompress(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, inputs));
  const Tensor &in = inputs[0], &cond = inputs[1];
  const std::vector<int64_t> &s = in.shape();
  int64_t outer = 1, dim = in.numElements(), inner = 1;
  if (node.hasAttr("axis")) {
    DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(node.getInt("axis"), in.rank()));
    const size_t a = static_cast<size_t>(axis);
    outer = product(s, 0, a);
    dim = s[a];
    inner = product(s, a + 1, s.size());
  }
  // Slices past the end of the condition are dropped.
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < std::min(dim, cond.numElements()); ++i)
    if (cond.elementAsInt64(i) != 0)
      keep.push_back(i);
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(in.dtype(), types[0].shape.sizes()));
  const size_t chunk = static_cast<size_t>(inner * dtypeSize(in.dtype()));
  const auto *src = static_cast<const uint8_t *>(in.raw());
  auto *dst = static_cast<uint8_t *>(out.mutableRaw());
  for (int64_t o = 0; o < outer && chunk != 0; ++o)
    for (int64_t k : keep) {
      std::memcpy(dst, src + static_cast<size_t>(o * dim + k) * chunk, chunk);
      dst += chunk;
    }
  return Tensors{std::move(out)};
}

Expected<Tensors> evalNonZero(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, constantOutputTypes(node, inputs));
  const Tensor &in = inputs[0];
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < in.numElements(); ++i)
    if (isNonZero(in, i))
      hits.push_back(i);
  const int64_t r = in.rank(), n = static_cast<int64_t>(hits.size());
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(DType::kI64, {r, n}));
  int64_t *dst = out.mutableData<int64_t>();
  for (int64_t k = 0; k < n; ++k) {
    int64_t rest = hits[static_cast<size_t>(k)];
    for (int64_t d = r; d-- > 0;) {
      const int64_t size = in.shape()[static_cast<size_t>(d)];
      dst[d * n + k] = rest % size;
      rest /= size;
    }
  }
  return Tensors{std::move(out)};
}

Expected<Tensors> evalUnique(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, constantOutputTypes(node, inputs));
  const Tensor &in = inputs[0];
  const std::vector<int64_t> &s = in.shape();
  int64_t outer = 1, dim = in.numElements(), inner = 1, axis = -1;
  if (node.hasAttr("axis")) {
    DLC_ASSIGN_OR_RETURN(axis, normalizeAxis(node.getInt("axis"), in.rank()));
    const size_t a = static_cast<size_t>(axis);
    outer = product(s, 0, a);
    dim = s[a];
    inner = product(s, a + 1, s.size());
  }
  // The slices along the axis as the rows of [dim, outer * inner].
  DLC_ASSIGN_OR_RETURN(Tensor rows, newTensor(in.dtype(), {dim, outer, inner}));
  stridedCopy(in, rows, 0, {inner, dim * inner, 1});
  const int64_t len = outer * inner;
  const Tensor keys = widenHalf(rows);
  Groups g;
  if (!dispatch(keys.dtype(), [&]<typename T>() { g = groupRows<T>(keys.data<T>(), dim, len); }))
    return noEval(in.dtype());
  if (node.getInt("sorted") == 0)
    orderByFirstOccurrence(g);

  const int64_t u = static_cast<int64_t>(g.first.size());
  const size_t rowBytes = static_cast<size_t>(len * dtypeSize(in.dtype()));
  DLC_ASSIGN_OR_RETURN(Tensor picked, newTensor(in.dtype(), {u, outer, inner}));
  for (int64_t k = 0; k < u && rowBytes != 0; ++k)
    std::memcpy(static_cast<uint8_t *>(picked.mutableRaw()) + static_cast<size_t>(k) * rowBytes,
                static_cast<const uint8_t *>(rows.raw()) +
                    static_cast<size_t>(g.first[static_cast<size_t>(k)]) * rowBytes,
                rowBytes);
  std::vector<int64_t> yShape{u};
  if (axis >= 0) {
    yShape = s;
    yShape[static_cast<size_t>(axis)] = u;
  }
  DLC_ASSIGN_OR_RETURN(Tensor y, newTensor(in.dtype(), yShape));
  Tensor yView = y.reshaped({outer, u, inner});
  stridedCopy(picked, yView, 0, {inner, len, 1});

  Tensors outs{std::move(y), Tensor::vectorI64(g.first), Tensor::vectorI64(g.groupOf),
               Tensor::vectorI64(g.count)};
  outs.resize(static_cast<size_t>(node.numOutputs()));
  return outs;
}

} // namespace dlc::eval::tensor
