// Reference evaluation of Reduce* (axes as optional input 1, keepdims, noop_with_empty_axes)
// and ArgMax/ArgMin (axis, keepdims, select_last_index). See reduction_eval.h for the rules.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/eval/families.h"
#include "ir/eval/reduction_eval.h"

namespace dlc::eval {

namespace {

enum class Reduce : uint8_t {
  kL1,
  kL2,
  kLogSum,
  kLogSumExp,
  kMax,
  kMean,
  kMin,
  kProd,
  kSum,
  kSumSquare
};

/// Which input elements go into which output element.
struct ReducePlan {
  std::vector<int64_t> keepShape; // the input shape with every reduced dim set to 1
  std::vector<int64_t> outShape;  // keepShape, or without the reduced dims
  int64_t outElements = 1;
  int64_t groupSize = 1; // input elements per output element
};

Expected<ReducePlan> planReduce(const Node &node, const std::vector<Tensor> &in) {
  const std::vector<int64_t> &shape = in[0].shape();
  int64_t rank = in[0].rank();
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  bool haveAxes = in.size() > 1 && !in[1].empty() && in[1].numElements() > 0;
  if (haveAxes) {
    if (!isInteger(in[1].dtype()))
      return invalidArgument("axes must be an integer tensor, got {}", dtypeName(in[1].dtype()));
    for (int64_t a : in[1].toInt64Vector()) {
      DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(a, rank));
      if (reduced[static_cast<size_t>(axis)])
        return invalidArgument("axis {} appears more than once in axes", a);
      reduced[static_cast<size_t>(axis)] = true;
    }
  } else if (node.getInt("noop_with_empty_axes") == 0) {
    reduced.assign(reduced.size(), true);
  } // else: no axis is reduced; every element is a set of one
  bool keepdims = node.getInt("keepdims") != 0;
  ReducePlan p;
  for (size_t d = 0; d < shape.size(); ++d) {
    p.keepShape.push_back(reduced[d] ? 1 : shape[d]);
    if (reduced[d])
      p.groupSize *= shape[d];
    else
      p.outElements *= shape[d];
    if (!reduced[d] || keepdims)
      p.outShape.push_back(p.keepShape.back());
  }
  return p;
}

/// Calls f(inputIndex, outputIndex) for every input element, in input order.
template <typename F> void forEachElement(const Tensor &x, const ReducePlan &p, F f) {
  auto it = BroadcastIter::make({x.shape(), p.keepShape});
  DLC_CHECK(it.hasValue(), "reduce plan does not broadcast");
  for (int64_t i = 0; i < x.numElements(); ++i, it->next())
    f(i, it->offset(1));
}

/// The reduction in double, for float element types (and integer L2/LogSum/LogSumExp).
template <typename T>
std::vector<double> reduceInDouble(const Tensor &x, const ReducePlan &p, Reduce kind) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const T *a = x.data<T>();
  size_t nOut = static_cast<size_t>(p.outElements);
  double init = kind == Reduce::kProd  ? 1.0
                : kind == Reduce::kMax ? -kInf
                : kind == Reduce::kMin ? kInf
                                       : 0.0;
  std::vector<double> acc(nOut, init), peak;
  if (kind == Reduce::kLogSumExp) { // subtract the largest element so that exp cannot overflow
    peak.assign(nOut, -kInf);
    forEachElement(x, p, [&](int64_t i, int64_t o) {
      double v = static_cast<double>(a[i]);
      double &m = peak[static_cast<size_t>(o)];
      if (std::isnan(v) || v > m)
        m = std::isnan(m) ? m : v;
    });
  }
  forEachElement(x, p, [&](int64_t i, int64_t o) {
    double v = static_cast<double>(a[i]);
    double &r = acc[static_cast<size_t>(o)];
    switch (kind) {
    case Reduce::kL1:
      r += std::fabs(v);
      break;
    case Reduce::kL2:
    case Reduce::kSumSquare:
      r += v * v;
      break;
    case Reduce::kLogSum:
    case Reduce::kMean:
    case Reduce::kSum:
      r += v;
      break;
    case Reduce::kLogSumExp:
      if (!std::isinf(peak[static_cast<size_t>(o)]))
        r += std::exp(v - peak[static_cast<size_t>(o)]);
      break;
    case Reduce::kProd:
      r *= v;
      break;
    case Reduce::kMax: // NaN sticks: no comparison with it is true
      if (std::isnan(v) || v > r)
        r = std::isnan(r) ? r : v;
      break;
    case Reduce::kMin:
      if (std::isnan(v) || v < r)
        r = std::isnan(r) ? r : v;
      break;
    }
  });
  for (size_t o = 0; o < nOut; ++o) {
    double &r = acc[o];
    if (kind == Reduce::kL2)
      r = std::sqrt(r);
    else if (kind == Reduce::kMean)
      r = r / static_cast<double>(p.groupSize); // empty: 0/0 = NaN
    else if (kind == Reduce::kLogSum)
      r = std::log(r);
    else if (kind == Reduce::kLogSumExp) // an infinite (or NaN) peak is the result itself
      r = std::isinf(peak[o]) || std::isnan(peak[o]) ? peak[o] : peak[o] + std::log(r);
  }
  return acc;
}

/// Integer mean: the sum in 64 bits (so small types do not wrap), divided with C's
/// truncation toward zero.
template <typename T> Status integerMean(const Tensor &x, const ReducePlan &p, Tensor &out) {
  if (p.groupSize == 0)
    return invalidArgument("integer mean of an empty set");
  using W = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  std::vector<W> acc(static_cast<size_t>(p.outElements), W(0));
  const T *a = x.data<T>();
  forEachElement(x, p, [&](int64_t i, int64_t k) {
    W &r = acc[static_cast<size_t>(k)];
    r = wrapAdd(r, static_cast<W>(a[i]));
  });
  for (int64_t k = 0; k < p.outElements; ++k)
    out.mutableData<T>()[k] =
        static_cast<T>(acc[static_cast<size_t>(k)] / static_cast<W>(p.groupSize));
  return Status::ok();
}

/// Exact integer Sum/SumSquare/L1/Prod/Max/Min in T (wrapping); bool Max/Min.
template <typename T>
Status reduceExact(const Tensor &x, const ReducePlan &p, Reduce kind, Tensor &out) {
  if constexpr (!std::is_same_v<T, bool>)
    if (kind == Reduce::kMean)
      return integerMean<T>(x, p, out);
  const T *a = x.data<T>();
  T *o = out.mutableData<T>();
  T init = kind == Reduce::kProd  ? T(1)
           : kind == Reduce::kMax ? std::numeric_limits<T>::lowest()
           : kind == Reduce::kMin ? std::numeric_limits<T>::max()
                                  : T(0);
  std::fill(o, o + p.outElements, init);
  forEachElement(x, p, [&](int64_t i, int64_t k) {
    T v = a[i];
    T &r = o[k];
    if constexpr (std::is_same_v<T, bool>) {
      r = kind == Reduce::kMax ? (r || v) : (r && v);
    } else {
      switch (kind) {
      case Reduce::kL1:
        if constexpr (std::is_signed_v<T>)
          v = v < T(0) ? wrapSub(T(0), v) : v;
        r = wrapAdd(r, v);
        break;
      case Reduce::kSumSquare:
        r = wrapAdd(r, wrapMul(v, v));
        break;
      case Reduce::kProd:
        r = wrapMul(r, v);
        break;
      case Reduce::kMax:
        r = std::max(r, v);
        break;
      case Reduce::kMin:
        r = std::min(r, v);
        break;
      default: // Sum
        r = wrapAdd(r, v);
        break;
      }
    }
  });
  return Status::ok();
}

EvalResult reduce(const Node &node, const std::vector<Tensor> &in, Reduce kind) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 1));
  DType dtype = in[0].dtype();
  bool boolOk = dtype == DType::kBool && (kind == Reduce::kMax || kind == Reduce::kMin);
  if (!isNumeric(dtype) && !boolOk)
    return noEval(dtype);
  DLC_ASSIGN_OR_RETURN(ReducePlan p, planReduce(node, in));
  Tensor x = widenHalf(in[0]);
  Tensor out = Tensor::zeros(dtype, p.outShape);
  bool viaDouble = isFloat(dtype) || kind == Reduce::kL2 || kind == Reduce::kLogSum ||
                   kind == Reduce::kLogSumExp;
  Status st;
  dispatch(x.dtype(), [&]<typename T>() {
    if constexpr (std::is_integral_v<T>) {
      if (!viaDouble) {
        st = reduceExact<T>(x, p, kind, out);
        return;
      }
    }
    if constexpr (!std::is_same_v<T, bool>) {
      std::vector<double> r = reduceInDouble<T>(x, p, kind);
      for (int64_t k = 0; k < p.outElements; ++k) {
        if constexpr (std::is_floating_point_v<T>)
          storeFloat(out, k, r[static_cast<size_t>(k)]);
        else
          out.mutableData<T>()[k] = truncSaturate<T>(r[static_cast<size_t>(k)]);
      }
    }
  });
  DLC_RETURN_IF_ERROR(st);
  return std::vector<Tensor>{out};
}

/// The index of the largest (IsMax) or smallest element of each slice along `axis`.
template <bool IsMax> EvalResult argReduce(const Node &node, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 1));
  DType dtype = in[0].dtype();
  if (!isNumeric(dtype))
    return noEval(dtype);
  DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(node.getInt("axis"), in[0].rank()));
  AxisSplit s = splitAt(in[0].shape(), axis);
  if (s.len == 0)
    return invalidArgument("axis {} is empty, so it has no {}", axis,
                           IsMax ? "maximum" : "minimum");
  bool last = node.getInt("select_last_index") != 0;
  std::vector<int64_t> shape = in[0].shape();
  if (node.getInt("keepdims") != 0)
    shape[static_cast<size_t>(axis)] = 1;
  else
    shape.erase(shape.begin() + axis);
  Tensor x = widenHalf(in[0]);
  Tensor out = Tensor::zeros(DType::kI64, shape);
  int64_t *o = out.mutableData<int64_t>();
  dispatch(x.dtype(), [&]<typename T>() {
    const T *a = x.data<T>();
    // Whether v replaces the best so far: NaN wins (numpy); ties keep the first index unless
    // select_last_index.
    auto better = [&](T v, T best) {
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(v))
          return last || !std::isnan(best);
        if (std::isnan(best))
          return false;
      }
      return IsMax ? (last ? v >= best : v > best) : (last ? v <= best : v < best);
    };
    for (int64_t outer = 0; outer < s.outer; ++outer)
      for (int64_t inner = 0; inner < s.inner; ++inner) {
        const T *slice = a + outer * s.len * s.inner + inner;
        int64_t best = 0;
        for (int64_t j = 1; j < s.len; ++j)
          if (better(slice[j * s.inner], slice[best * s.inner]))
            best = j;
        o[outer * s.inner + inner] = best;
      }
  });
  return std::vector<Tensor>{out};
}

} // namespace

EvalResult evalReduceL1(const Node &n, const std::vector<Tensor> &in) {
  return reduce(n, in, Reduce::kL1);
}
EvalResult evalReduceL2(const Node &n, const std::vector<Tensor> &in) {
  return reduce(n, in, Reduce::kL2);
}
EvalResult evalReduceLogSum(const Node &n, const std::vector<Tensor> &in) {
  return reduce(n, in, Reduce::kLogSum);
}
EvalResult evalReduceLogSumExp(const Node &n, const std::vector<Tensor> &in) {
  return reduce(n, in, Reduce::kLogSumExp);
}
EvalResult evalReduceMax(const Node &n, const std::vector<Tensor> &in) {
  return reduce(n, in, Reduce::kMax);
}
EvalResult evalReduceMean(const Node &n, const std::vector<Tensor> &in) {
  return reduce(n, in, Reduce::kMean);
}
EvalResult evalReduceMin(const Node &n, const std::vector<Tensor> &in) {
  return reduce(n, in, Reduce::kMin);
}
EvalResult evalReduceProd(const Node &n, const std::vector<Tensor> &in) {
  return reduce(n, in, Reduce::kProd);
}
EvalResult evalReduceSum(const Node &n, const std::vector<Tensor> &in) {
  return reduce(n, in, Reduce::kSum);
}
EvalResult evalReduceSumSquare(const Node &n, const std::vector<Tensor> &in) {
  return reduce(n, in, Reduce::kSumSquare);
}
EvalResult evalArgMax(const Node &n, const std::vector<Tensor> &in) {
  return argReduce<true>(n, in);
}
EvalResult evalArgMin(const Node &n, const std::vector<Tensor> &in) {
  return argReduce<false>(n, in);
}

std::vector<EvalRow> reductionEvals() {
  return {
      {Op::kArgMax, evalArgMax},
      {Op::kArgMin, evalArgMin},
      {Op::kReduceL1, evalReduceL1},
      {Op::kReduceL2, evalReduceL2},
      {Op::kReduceLogSum, evalReduceLogSum},
      {Op::kReduceLogSumExp, evalReduceLogSumExp},
      {Op::kReduceMax, evalReduceMax},
      {Op::kReduceMean, evalReduceMean},
      {Op::kReduceMin, evalReduceMin},
      {Op::kReduceProd, evalReduceProd},
      {Op::kReduceSum, evalReduceSum},
      {Op::kReduceSumSquare, evalReduceSumSquare},
      {Op::kSoftmax, evalSoftmax},
      {Op::kLogSoftmax, evalLogSoftmax},
      {Op::kHardmax, evalHardmax},
      {Op::kTopK, evalTopK},
      {Op::kCumSum, evalCumSum},
  };
}

} // namespace dlc::eval
