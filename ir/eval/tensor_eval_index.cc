// Reference evaluation of the indexing ops: GatherElements, GatherND, ScatterElements,
// ScatterND, OneHot.
//
// Gathers copy bytes of the element size (every dtype). Scatters first work out every
// (destination, source) pair, so an out-of-range index is an error before anything is
// written, then apply them in index order: with reduction "none" a repeated index keeps the
// last update; add/mul/max/min combine into the running value (integers wrap, bool uses
// or/and as numpy does, max/min propagate NaN, f16/bf16 accumulate in f32 and round once).
// Negative indices count from the end of their axis.
#include <cmath>
#include <cstring>

#include "ir/eval/eval_util.h"
#include "ir/eval/tensor_eval.h"
#include "ir/ops/tensor_internal.h"
#include "ir/sizes.h"

namespace dlc::eval::tensor {

using namespace ops::tensor;

namespace {

/// Advances a row-major multi-index over `shape`.
void nextIndex(std::vector<int64_t> &idx, const std::vector<int64_t> &shape) {
  for (size_t d = idx.size(); d-- > 0;) {
    if (++idx[d] < shape[d])
      return;
    idx[d] = 0;
  }
}

/// Error unless every dim of `indices` but `skip` fits in the same dim of `data`.
Status checkIndexedDims(const Tensor &indices, const Tensor &data, int64_t skip) {
  for (int64_t d = 0; d < data.rank(); ++d) {
    const size_t u = static_cast<size_t>(d);
    if (d != skip && indices.shape()[u] > data.shape()[u])
      return invalidArgument("indices {} exceed data {} on axis {}", indices.type().str(),
                             data.type().str(), d);
  }
  return Status::ok();
}

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Reduction parseReduction(const std::string &r) {
  if (r == "add")
    return Reduction::kAdd;
  if (r == "mul")
    return Reduction::kMul;
  if (r == "max")
    return Reduction::kMax;
  if (r == "min")
    return Reduction::kMin;
  return Reduction::kNone; // inference has rejected anything else
}

template <typename T> T combine(Reduction r, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    if (r == Reduction::kNone)
      return b;
    return (r == Reduction::kAdd || r == Reduction::kMax) ? (a || b) : (a && b);
  } else if constexpr (std::is_floating_point_v<T>) {
    switch (r) {
    case Reduction::kNone:
      return b;
    case Reduction::kAdd:
      return a + b;
    case Reduction::kMul:
      return a * b;
    case Reduction::kMax:
      return std::isnan(a) || std::isnan(b) ? a + b : (a < b ? b : a);
    case Reduction::kMin:
      return std::isnan(a) || std::isnan(b) ? a + b : (b < a ? b : a);
    }
    return b;
  } else {
    // Modulo 2^64 and truncated: the wrapped result, with no signed overflow.
    const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    switch (r) {
    case Reduction::kNone:
      return b;
    case Reduction::kAdd:
      return static_cast<T>(ua + ub);
    case Reduction::kMul:
      return static_cast<T>(ua * ub);
    case Reduction::kMax:
      return a < b ? b : a;
    case Reduction::kMin:
      return b < a ? b : a;
    }
    return b;
  }
}

/// One scatter step: `count` consecutive elements of updates from `src` onto `dst`.
struct ScatterStep {
  int64_t dst, src;
};

/// data with the steps applied in order (f16/bf16 computed in f32, rounded once).
Expected<Tensor> applyScatter(const Tensor &data, const Tensor &updates,
                              const std::vector<ScatterStep> &steps, int64_t count,
                              Reduction reduction) {
  Tensor work = isHalf(data.dtype()) ? widenHalf(data) : data.clone();
  const Tensor upd = widenHalf(updates);
  bool ok = dispatch(work.dtype(), [&]<typename T>() {
    T *out = work.mutableData<T>();
    const T *in = upd.data<T>();
    for (const ScatterStep &s : steps)
      for (int64_t i = 0; i < count; ++i)
        out[s.dst + i] = combine<T>(reduction, out[s.dst + i], in[s.src + i]);
  });
  if (!ok)
    return noEval(data.dtype());
  return narrowTo(work, data.dtype());
}

/// The offset of the slice that `tuple` (k indices into the leading dims of `shape` from
/// `first`) selects, in units of `strides`.
Expected<int64_t> tupleOffset(const int64_t *tuple, int64_t k, const std::vector<int64_t> &shape,
                              const std::vector<int64_t> &strides, int64_t first) {
  int64_t off = 0;
  for (int64_t j = 0; j < k; ++j) {
    const size_t a = static_cast<size_t>(first + j);
    DLC_ASSIGN_OR_RETURN(int64_t v, normalizeIndex(tuple[j], shape[a], first + j));
    off += v * strides[a];
  }
  return off;
}

/// ScatterND's and GatherND's index tuples: the last dim of indices, the tuple count, and the
/// elements each tuple selects, after checking the ranks agree.
struct NdLayout {
  int64_t k, tuples, slice;
};
Expected<NdLayout> ndLayout(const Tensor &data, const Tensor &indices, int64_t batchDims) {
  const int64_t q = indices.rank();
  if (q < 1)
    return invalidArgument("indices must have rank >= 1, got {}", indices.type().str());
  const int64_t k = indices.shape().back();
  if (k > data.rank() - batchDims)
    return invalidArgument("the last dim of indices {} exceeds the rank of data {}",
                           indices.type().str(), data.type().str());
  const size_t first = static_cast<size_t>(batchDims + k);
  return NdLayout{k, product(indices.shape(), 0, static_cast<size_t>(q - 1)),
                  product(data.shape(), first, data.shape().size())};
}

} // namespace

Expected<int64_t> normalizeIndex(int64_t v, int64_t dim, int64_t axis) {
  if (v < -dim || v >= dim)
    return outOfRange("index {} is out of range for axis {} of size {}", v, axis, dim);
  return v < 0 ? v + dim : v;
}

Expected<Tensors> evalGatherElements(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, inputs));
  const Tensor &data = inputs[0], &indices = inputs[1];
  DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(node.getInt("axis"), data.rank()));
  DLC_RETURN_IF_ERROR(checkIndexedDims(indices, data, axis));
  const std::vector<int64_t> idx = indices.toInt64Vector();
  const std::vector<int64_t> strides = stridesOf(data.shape());
  const size_t a = static_cast<size_t>(axis);
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(data.dtype(), types[0].shape.sizes()));
  const size_t es = static_cast<size_t>(dtypeSize(data.dtype()));
  const auto *src = static_cast<const uint8_t *>(data.raw());
  auto *dst = static_cast<uint8_t *>(out.mutableRaw());
  std::vector<int64_t> pos(indices.shape().size(), 0);
  for (int64_t i = 0; i < indices.numElements(); ++i, nextIndex(pos, indices.shape())) {
    DLC_ASSIGN_OR_RETURN(int64_t v,
                         normalizeIndex(idx[static_cast<size_t>(i)], data.shape()[a], axis));
    int64_t off = 0;
    for (size_t d = 0; d < pos.size(); ++d)
      off += (d == a ? v : pos[d]) * strides[d];
    std::memcpy(dst + static_cast<size_t>(i) * es, src + static_cast<size_t>(off) * es, es);
  }
  return Tensors{std::move(out)};
}

Expected<Tensors> evalGatherND(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, inputs));
  const Tensor &data = inputs[0], &indices = inputs[1];
  const int64_t b = node.getInt("batch_dims");
  for (int64_t d = 0; d < b; ++d)
    if (data.shape()[static_cast<size_t>(d)] != indices.shape()[static_cast<size_t>(d)])
      return invalidArgument("indices {} and data {} differ in batch dim {}", indices.type().str(),
                             data.type().str(), d);
  DLC_ASSIGN_OR_RETURN(NdLayout nd, ndLayout(data, indices, b));
  const int64_t batches = product(data.shape(), 0, static_cast<size_t>(b));
  const int64_t perBatch = batches == 0 ? 0 : nd.tuples / batches;
  const int64_t batchStride = product(data.shape(), static_cast<size_t>(b), data.shape().size());
  const std::vector<int64_t> strides = stridesOf(data.shape());
  const std::vector<int64_t> idx = indices.toInt64Vector();
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(data.dtype(), types[0].shape.sizes()));
  const size_t es = static_cast<size_t>(dtypeSize(data.dtype()));
  const size_t chunk = static_cast<size_t>(nd.slice) * es;
  const auto *src = static_cast<const uint8_t *>(data.raw());
  auto *dst = static_cast<uint8_t *>(out.mutableRaw());
  for (int64_t t = 0; t < nd.tuples; ++t) {
    DLC_ASSIGN_OR_RETURN(int64_t off,
                         tupleOffset(idx.data() + t * nd.k, nd.k, data.shape(), strides, b));
    off += (t / perBatch) * batchStride;
    if (chunk != 0)
      std::memcpy(dst + static_cast<size_t>(t) * chunk, src + static_cast<size_t>(off) * es, chunk);
  }
  return Tensors{std::move(out)};
}

Expected<Tensors> evalScatterElements(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, inputs));
  const Tensor &data = inputs[0], &indices = inputs[1], &updates = inputs[2];
  if (indices.shape() != updates.shape())
    return invalidArgument("updates {} and indices {} differ in shape", updates.type().str(),
                           indices.type().str());
  DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(node.getInt("axis"), data.rank()));
  DLC_RETURN_IF_ERROR(checkIndexedDims(indices, data, axis));
  const std::vector<int64_t> idx = indices.toInt64Vector();
  const std::vector<int64_t> strides = stridesOf(data.shape());
  const size_t a = static_cast<size_t>(axis);
  std::vector<ScatterStep> steps;
  std::vector<int64_t> pos(indices.shape().size(), 0);
  for (int64_t i = 0; i < indices.numElements(); ++i, nextIndex(pos, indices.shape())) {
    DLC_ASSIGN_OR_RETURN(int64_t v,
                         normalizeIndex(idx[static_cast<size_t>(i)], data.shape()[a], axis));
    int64_t off = 0;
    for (size_t d = 0; d < pos.size(); ++d)
      off += (d == a ? v : pos[d]) * strides[d];
    steps.push_back({off, i});
  }
  DLC_ASSIGN_OR_RETURN(Tensor out, applyScatter(data, updates, steps, 1,
                                                parseReduction(node.getString("reduction"))));
  return Tensors{std::move(out)};
}

Expected<Tensors> evalScatterND(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, inputs));
  const Tensor &data = inputs[0], &indices = inputs[1], &updates = inputs[2];
  DLC_ASSIGN_OR_RETURN(NdLayout nd, ndLayout(data, indices, 0));
  std::vector<int64_t> expect(indices.shape().begin(), indices.shape().end() - 1);
  expect.insert(expect.end(), data.shape().begin() + nd.k, data.shape().end());
  if (updates.shape() != expect)
    return invalidArgument("updates {} should have shape {}", updates.type().str(),
                           Shape::fromSizes(expect).str());
  const std::vector<int64_t> strides = stridesOf(data.shape());
  const std::vector<int64_t> idx = indices.toInt64Vector();
  std::vector<ScatterStep> steps;
  for (int64_t t = 0; t < nd.tuples; ++t) {
    DLC_ASSIGN_OR_RETURN(int64_t off,
                         tupleOffset(idx.data() + t * nd.k, nd.k, data.shape(), strides, 0));
    steps.push_back({off, t * nd.slice});
  }
  DLC_ASSIGN_OR_RETURN(Tensor out, applyScatter(data, updates, steps, nd.slice,
                                                parseReduction(node.getString("reduction"))));
  return Tensors{std::move(out)};
}

Expected<Tensors> evalOneHot(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, inputs));
  const Tensor &indices = inputs[0], &values = inputs[2];
  const std::vector<int64_t> outShape = types[0].shape.sizes();
  DLC_ASSIGN_OR_RETURN(int64_t axis,
                       normalizeAxis(node.getInt("axis"), static_cast<int64_t>(outShape.size())));
  const int64_t depth = outShape[static_cast<size_t>(axis)];
  const int64_t inner = product(indices.shape(), static_cast<size_t>(axis), indices.shape().size());
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(values.dtype(), outShape));
  const size_t es = static_cast<size_t>(dtypeSize(values.dtype()));
  const auto *val = static_cast<const uint8_t *>(values.raw());
  auto *dst = static_cast<uint8_t *>(out.mutableRaw());
  for (int64_t i = 0; i < out.numElements(); ++i)
    std::memcpy(dst + static_cast<size_t>(i) * es, val, es);
  const bool floatIndices = isFloat(indices.dtype());
  for (int64_t i = 0; i < indices.numElements(); ++i) {
    // Non-integer indices are cast to int64 (truncated); an index outside [-depth, depth)
    // leaves its row all off_value.
    int64_t v;
    if (floatIndices) {
      double d = std::trunc(indices.elementAsDouble(i));
      if (!(d >= -static_cast<double>(depth) && d < static_cast<double>(depth)))
        continue;
      v = static_cast<int64_t>(d);
    } else {
      v = indices.elementAsInt64(i);
      if (v < -depth || v >= depth)
        continue;
    }
    if (v < 0)
      v += depth;
    const int64_t o = i / inner, r = i % inner;
    std::memcpy(dst + static_cast<size_t>((o * depth + v) * inner + r) * es, val + es, es);
  }
  return Tensors{std::move(out)};
}

} // namespace dlc::eval::tensor
