// Reference evaluation of Einsum.
//
// Every label of the equation (the letters, plus one per dim that "..." covers, right-aligned
// across operands) gets a size and, per operand, a stride (summed when a label repeats in one
// term: a diagonal; 0 where a size-1 dim broadcasts). The general path then walks the whole
// label space, output labels first, multiplying one element of each operand and summing into
// the output (floats in double, integers wrapping). Two-operand float contractions without
// diagonals or broadcasting take a fast path instead: transpose to [batch, M, K] x [batch, K, N],
// multiply with sgemm/dgemm, transpose the result to the output's label order.
#include <algorithm>
#include <cctype>
#include <cstring>

#include "ir/eval/cpu_gemm.h"
#include "ir/eval/linalg_eval.h"
#include "ir/ops/einsum.h"

namespace dlc::eval {

using ops::EinsumEquation;
using ops::EinsumTerm;
using ops::parseEinsum;

namespace {

constexpr int kLetters = 52; // label ids: 0-25 'a'-'z', 26-51 'A'-'Z', then ellipsis dims

int letterId(char c) {
  return std::islower(static_cast<unsigned char>(c)) ? c - 'a' : c - 'A' + 26;
}

std::string labelName(int id) {
  if (id >= kLetters)
    return "...";
  return std::string(1, static_cast<char>(id < 26 ? 'a' + id : 'A' + id - 26));
}

struct LabelSpace {
  std::vector<int64_t> size;                 // per label id (0 when unused)
  std::vector<bool> used;                    // per label id
  std::vector<std::vector<int>> inputLabels; // per operand, the label of each dim
  std::vector<std::vector<int64_t>> strides; // per operand, per label id
  std::vector<int> outLabels;                // the output's dims
  std::vector<int> sumLabels;                // every other used label
  bool diagonalOrBroadcast = false;          // some operand repeats a label or broadcasts
};

Expected<LabelSpace> buildLabelSpace(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(std::string equation, stringAttr(node, "equation"));
  auto parsed = parseEinsum(equation);
  if (!parsed)
    return parsed.status();
  const EinsumEquation &eq = *parsed;
  if (eq.inputs.size() != in.size())
    return invalidArgument("equation '{}' has {} input terms for {} inputs", equation,
                           eq.inputs.size(), in.size());
  // Dims covered by "...": the most any operand's ellipsis covers.
  int64_t ellipsisRank = 0;
  for (size_t k = 0; k < in.size(); ++k) {
    const EinsumTerm &t = eq.inputs[k];
    int64_t n = static_cast<int64_t>(t.labels.size()), r = in[k].rank();
    if ((t.ellipsis < 0 && r != n) || (t.ellipsis >= 0 && r < n))
      return invalidArgument("input {} has rank {} but its term '{}' has {} labels{}", k, r,
                             t.labels, n, t.ellipsis >= 0 ? " and ..." : "");
    if (t.ellipsis >= 0)
      ellipsisRank = std::max(ellipsisRank, r - n);
  }
  LabelSpace s;
  size_t numLabels = static_cast<size_t>(kLetters + ellipsisRank);
  s.size.assign(numLabels, 1);
  s.used.assign(numLabels, false);
  std::vector<int> counts(numLabels, 0);
  for (size_t k = 0; k < in.size(); ++k) {
    const EinsumTerm &t = eq.inputs[k];
    int64_t r = in[k].rank(), covered = r - static_cast<int64_t>(t.labels.size());
    int64_t pos = t.ellipsis >= 0 ? t.ellipsis : r;
    std::vector<int> labels;
    for (int64_t d = 0; d < r; ++d) {
      int id = d < pos             ? letterId(t.labels[static_cast<size_t>(d)])
               : d < pos + covered ? static_cast<int>(kLetters + ellipsisRank - covered + d - pos)
                                   : letterId(t.labels[static_cast<size_t>(d - covered)]);
      labels.push_back(id);
      ++counts[static_cast<size_t>(id)];
      int64_t dim = in[k].shape()[static_cast<size_t>(d)];
      int64_t &size = s.size[static_cast<size_t>(id)];
      if (s.used[static_cast<size_t>(id)] && size != dim && size != 1 && dim != 1)
        return invalidArgument("label '{}' has sizes {} and {}", labelName(id), size, dim);
      if (!s.used[static_cast<size_t>(id)] || size == 1)
        size = dim;
      s.used[static_cast<size_t>(id)] = true;
    }
    s.inputLabels.push_back(std::move(labels));
  }
  // Strides, now that every label's size is known.
  for (size_t k = 0; k < in.size(); ++k) {
    std::vector<int64_t> strides(numLabels, 0);
    int64_t stride = 1;
    std::vector<bool> seen(numLabels, false);
    for (size_t d = in[k].shape().size(); d-- > 0;) {
      int id = s.inputLabels[k][d];
      int64_t dim = in[k].shape()[d];
      if (dim == s.size[static_cast<size_t>(id)])
        strides[static_cast<size_t>(id)] += stride;
      else
        s.diagonalOrBroadcast = true; // a size-1 dim broadcasting: stride 0
      if (seen[static_cast<size_t>(id)])
        s.diagonalOrBroadcast = true;
      seen[static_cast<size_t>(id)] = true;
      stride *= dim;
    }
    s.strides.push_back(std::move(strides));
  }
  // Output labels: explicit, or implicit (the ellipsis, then letters used once, in ASCII order).
  std::vector<int> ellipsisLabels;
  for (int64_t j = 0; j < ellipsisRank; ++j)
    ellipsisLabels.push_back(static_cast<int>(kLetters + j));
  if (eq.output) {
    const EinsumTerm &t = *eq.output;
    for (size_t j = 0; j <= t.labels.size(); ++j) {
      if (static_cast<int>(j) == t.ellipsis)
        s.outLabels.insert(s.outLabels.end(), ellipsisLabels.begin(), ellipsisLabels.end());
      if (j == t.labels.size())
        break;
      int id = letterId(t.labels[j]);
      if (!s.used[static_cast<size_t>(id)])
        return invalidArgument("output label '{}' does not appear in any input", t.labels[j]);
      if (std::count(s.outLabels.begin(), s.outLabels.end(), id) != 0)
        return invalidArgument("label '{}' appears more than once in the output", t.labels[j]);
      s.outLabels.push_back(id);
    }
    if (t.ellipsis < 0 && ellipsisRank > 0)
      return invalidArgument("the output has no '...' but the inputs' ellipsis covers {} dims",
                             ellipsisRank);
  } else {
    s.outLabels = ellipsisLabels;
    for (char c : std::string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"))
      if (counts[static_cast<size_t>(letterId(c))] == 1)
        s.outLabels.push_back(letterId(c));
  }
  std::vector<int64_t> usedSizes;
  for (size_t id = 0; id < numLabels; ++id) {
    if (!s.used[id])
      continue;
    usedSizes.push_back(s.size[id]);
    if (std::count(s.outLabels.begin(), s.outLabels.end(), id) == 0)
      s.sumLabels.push_back(static_cast<int>(id));
  }
  auto total = checkedNumElements(usedSizes, "einsum label space");
  if (!total)
    return total.status();
  return s;
}

std::vector<int64_t> sizesOf(const LabelSpace &s, const std::vector<int> &labels) {
  std::vector<int64_t> out;
  for (int id : labels)
    out.push_back(s.size[static_cast<size_t>(id)]);
  return out;
}

/// The general path: out[o] = sum over the summed labels of prod_k in_k[...].
template <typename T> Tensor einsumGeneral(const LabelSpace &s, const std::vector<Tensor> &in) {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
  std::vector<int> labels = s.outLabels;
  labels.insert(labels.end(), s.sumLabels.begin(), s.sumLabels.end());
  std::vector<int64_t> sizes = sizesOf(s, labels), outShape = sizesOf(s, s.outLabels);
  int64_t outCount = 1, total = 1;
  for (int64_t d : outShape)
    outCount *= d;
  for (int64_t d : sizes)
    total *= d;
  std::vector<Acc> acc(static_cast<size_t>(outCount), Acc(0));
  size_t nIn = in.size(), nl = labels.size();
  // Per label (in walk order): the step of each operand's offset and of the output's.
  std::vector<std::vector<int64_t>> step(nl, std::vector<int64_t>(nIn + 1, 0));
  int64_t outStride = 1;
  for (size_t j = s.outLabels.size(); j-- > 0;) {
    step[j][nIn] = outStride;
    outStride *= sizes[j];
  }
  for (size_t j = 0; j < nl; ++j)
    for (size_t k = 0; k < nIn; ++k)
      step[j][k] = s.strides[k][static_cast<size_t>(labels[j])];
  std::vector<int64_t> counter(nl, 0), off(nIn + 1, 0);
  std::vector<const T *> data;
  for (const Tensor &t : in)
    data.push_back(t.data<T>());
  for (int64_t it = 0; it < total; ++it) {
    Acc p = Acc(1);
    for (size_t k = 0; k < nIn; ++k) {
      if constexpr (std::is_floating_point_v<T>)
        p *= static_cast<double>(data[k][off[k]]);
      else
        p = wrapMul(p, data[k][off[k]]);
    }
    Acc &r = acc[static_cast<size_t>(off[nIn])];
    if constexpr (std::is_floating_point_v<T>)
      r += p;
    else
      r = wrapAdd(r, p);
    for (size_t j = nl; j-- > 0;) { // odometer, last label fastest
      for (size_t k = 0; k <= nIn; ++k)
        off[k] += step[j][k];
      if (++counter[j] < sizes[j])
        break;
      for (size_t k = 0; k <= nIn; ++k)
        off[k] -= step[j][k] * sizes[j];
      counter[j] = 0;
    }
  }
  Tensor out = Tensor::zeros(in[0].dtype(), outShape);
  for (int64_t i = 0; i < outCount; ++i)
    out.mutableData<T>()[i] = static_cast<T>(acc[static_cast<size_t>(i)]);
  return out;
}

/// `x`'s elements laid out in the order of `labels` (each of x's labels once).
template <typename T>
Tensor permuteTo(const Tensor &x, const LabelSpace &s, size_t k, const std::vector<int> &labels) {
  std::vector<int64_t> shape = sizesOf(s, labels), strides;
  for (int id : labels)
    strides.push_back(s.strides[k][static_cast<size_t>(id)]);
  Tensor out = Tensor::zeros(x.dtype(), shape);
  std::vector<int64_t> counter(shape.size(), 0);
  int64_t off = 0;
  const T *src = x.data<T>();
  T *dst = out.mutableData<T>();
  for (int64_t i = 0; i < out.numElements(); ++i) {
    dst[i] = src[off];
    for (size_t j = shape.size(); j-- > 0;) {
      off += strides[j];
      if (++counter[j] < shape[j])
        break;
      off -= strides[j] * shape[j];
      counter[j] = 0;
    }
  }
  return out;
}

/// The fast path for two float operands; nullopt-like empty Tensor when it does not apply.
template <typename T> Tensor einsumByGemm(const LabelSpace &s, const std::vector<Tensor> &in) {
  if (in.size() != 2 || s.diagonalOrBroadcast)
    return Tensor();
  auto has = [&](size_t k, int id) {
    return std::count(s.inputLabels[k].begin(), s.inputLabels[k].end(), id) != 0;
  };
  std::vector<int> batch, ms, ns, ks;
  for (int id : s.outLabels)
    (has(0, id) && has(1, id) ? batch : has(0, id) ? ms : ns).push_back(id);
  for (int id : s.inputLabels[0])
    if (!has(1, id) && std::count(s.outLabels.begin(), s.outLabels.end(), id) == 0)
      return Tensor(); // summed over one operand only: not a plain product
    else if (has(1, id) && std::count(s.outLabels.begin(), s.outLabels.end(), id) == 0)
      ks.push_back(id);
  for (int id : s.inputLabels[1])
    if (!has(0, id) && std::count(s.outLabels.begin(), s.outLabels.end(), id) == 0)
      return Tensor();
  auto count = [&](const std::vector<int> &labels) {
    int64_t p = 1;
    for (int64_t d : sizesOf(s, labels))
      p *= d;
    return p;
  };
  int64_t nb = count(batch), m = count(ms), n = count(ns), k = count(ks);
  std::vector<int> aOrder = batch, bOrder = batch, cOrder = batch;
  aOrder.insert(aOrder.end(), ms.begin(), ms.end());
  aOrder.insert(aOrder.end(), ks.begin(), ks.end());
  bOrder.insert(bOrder.end(), ks.begin(), ks.end());
  bOrder.insert(bOrder.end(), ns.begin(), ns.end());
  cOrder.insert(cOrder.end(), ms.begin(), ms.end());
  cOrder.insert(cOrder.end(), ns.begin(), ns.end());
  Tensor a = permuteTo<T>(in[0], s, 0, aOrder), b = permuteTo<T>(in[1], s, 1, bOrder);
  Tensor c = Tensor::zeros(in[0].dtype(), sizesOf(s, cOrder));
  for (int64_t i = 0; i < nb; ++i) {
    const T *pa = a.data<T>() + i * m * k, *pb = b.data<T>() + i * k * n;
    T *pc = c.mutableData<T>() + i * m * n;
    if constexpr (std::is_same_v<T, float>)
      sgemm(false, false, m, n, k, 1.0f, pa, k, pb, n, 0.0f, pc, n);
    else
      dgemm(false, false, m, n, k, 1.0, pa, k, pb, n, 0.0, pc, n);
  }
  // c's labels are cOrder; lay them out in the output's order.
  LabelSpace cs = s;
  cs.strides.assign(1, std::vector<int64_t>(s.size.size(), 0));
  int64_t stride = 1;
  for (size_t j = cOrder.size(); j-- > 0;) {
    cs.strides[0][static_cast<size_t>(cOrder[j])] = stride;
    stride *= s.size[static_cast<size_t>(cOrder[j])];
  }
  return permuteTo<T>(c, cs, 0, s.outLabels);
}

} // namespace

EvalResult evalEinsum(const Node &node, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, std::max<size_t>(1, in.size())));
  DLC_RETURN_IF_ERROR(checkSameDType(in));
  DType dtype = in[0].dtype();
  if (!isNumeric(dtype))
    return noEval(dtype);
  DLC_ASSIGN_OR_RETURN(LabelSpace s, buildLabelSpace(node, in));
  std::vector<Tensor> x;
  for (const Tensor &t : in)
    x.push_back(widenHalf(t));
  Tensor out;
  dispatch(x[0].dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      if constexpr (std::is_floating_point_v<T>)
        out = einsumByGemm<T>(s, x);
      if (out.empty())
        out = einsumGeneral<T>(s, x);
    }
  });
  return std::vector<Tensor>{narrowTo(out, dtype)};
}

} // namespace dlc::eval
