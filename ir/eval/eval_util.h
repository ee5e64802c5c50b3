// Helpers shared by the reference kernels (ir/eval/*.cc): output types from inference, guarded
// allocation, input checks, dispatch on element types, f16/bf16 handling, exact conversions to
// narrow float types, and the [outer, axis, inner] view of a tensor around one axis.
//
// Conventions every kernel follows: error messages do not name the node (evaluate and
// fold-constants prefix its description); f16 and bf16 are widened to f32, computed there and
// rounded once at the end; integer arithmetic wraps like unsigned machine arithmetic (never
// undefined behaviour); float -> integer conversions truncate toward zero and saturate, NaN
// giving 0 (what CUDA's cvt.rzi does, so GPU results compare bit for bit).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ir/eval/broadcast_iter.h"
#include "ir/graph.h"
#include "ir/numeric.h"
#include "ir/status.h"
#include "ir/tensor.h"

namespace dlc::eval {

using EvalResult = Expected<std::vector<Tensor>>;

// --- Output types and allocation ---------------------------------------------------------------

/// Output types from running the op's inference on constant inputs (its errors are the
/// evaluation's errors); data-dependent dims may stay unknown.
Expected<std::vector<TensorType>> constantOutputTypes(const Node &node,
                                                      const std::vector<Tensor> &inputs);
/// Output types from running the op's inference on constant inputs; every present output's type
/// must be static.
Expected<std::vector<TensorType>> staticOutputTypes(const Node &node,
                                                    const std::vector<Tensor> &inputs);
/// A zero-filled tensor; an error when the size overflows or exceeds the per-tensor limit
/// (ir/limits.h, --max-tensor-bytes).
Expected<Tensor> newTensor(DType dtype, const std::vector<int64_t> &shape);
/// out[idx] = in[base + sum(idx[d] * strides[d])] for every index of out (element units).
void stridedCopy(const Tensor &in, Tensor &out, int64_t base, const std::vector<int64_t> &strides);
/// `in` with its dims permuted: out dim d is in dim perm[d] (a valid permutation of in's rank);
/// an error only past newTensor's size limit.
Expected<Tensor> permuted(const Tensor &in, const std::vector<int64_t> &perm);

// --- Checks -----------------------------------------------------------------------------------

/// Error unless inputs 0..n-1 exist and are present (not empty tensors).
Status checkInputs(const std::vector<Tensor> &in, size_t n);
/// Error unless every present input has input 0's dtype.
Status checkSameDType(const std::vector<Tensor> &in);
/// The error for an element type an evaluator does not handle (kUnimplemented, so that
/// fold-constants leaves the node alone instead of failing).
Status noEval(DType dtype);
/// A string attribute that has no default; an error when it is absent.
Expected<std::string> stringAttr(const Node &node, const char *name);
/// The value of a one-element integer input (a scalar or [1]); `what` names it in errors.
Expected<int64_t> scalarIntInput(const Tensor &t, const char *what);

// --- Element types ----------------------------------------------------------------------------

inline bool isHalf(DType t) { return t == DType::kF16 || t == DType::kBF16; }

/// Calls `f.template operator()<T>()` with T the storage type of `t`, for every dtype except
/// f16 and bf16 (whose storage type is not their arithmetic type); returns false for those.
template <typename F> bool dispatch(DType t, F &&f) {
  switch (t) {
#define X(e, n, s, ty)                                                                             \
  case DType::k##e:                                                                                \
    if constexpr (!std::is_same_v<ty, uint16_t> || DType::k##e == DType::kU16) {                   \
      f.template operator()<ty>();                                                                 \
      return true;                                                                                 \
    }                                                                                              \
    return false;
    DLC_DTYPES(X)
#undef X
  default:
    return false;
  }
}

/// f16/bf16 -> f32 (exact); any other tensor is returned unchanged.
Tensor widenHalf(const Tensor &t);
/// An f32 tensor rounded once to `to` when `to` is f16/bf16; returned unchanged otherwise.
Tensor narrowTo(const Tensor &t, DType to);

/// `x` rounded to float with round-to-odd: a later round-to-nearest-even to a narrower format
/// (f16, bf16) then rounds exactly as if it started from `x` (no double rounding).
float toFloatOdd(double x);
/// `v` rounded once to float dtype `to` (f32, f64, f16, bf16) and stored as element `i`.
void storeFloat(Tensor &out, int64_t i, double v);

/// Integer arithmetic that wraps instead of overflowing.
template <typename T> T wrapAdd(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <typename T> T wrapSub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}
template <typename T> T wrapMul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  // Promote to at least unsigned int so that small types do not multiply as signed int.
  using P = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
  return static_cast<T>(static_cast<U>(static_cast<P>(static_cast<U>(a)) * static_cast<P>(b)));
}

/// Element type conversion with ONNX Cast semantics: to bool is `!= 0` (NaN is true); integer
/// to integer wraps; float to integer truncates and saturates (NaN -> 0); every conversion to
/// a float type rounds once, to nearest even (f16/bf16 included, from any source type).
Tensor castTensor(const Tensor &x, DType to);

/// saturate(round_half_even(real) + zeroPoint) stored as element `i` of the integer tensor
/// `out` (QuantizeLinear's formula). NaN rounds to 0, so it quantizes to the zero point.
void storeQuantized(Tensor &out, int64_t i, double real, int64_t zeroPoint);

// --- Broadcasting loops -------------------------------------------------------------------

/// out = f(a, b) elementwise over the numpy broadcast of `a` (element type TA) and `b` (TB),
/// into a new tensor of dtype `outType` (element type TO). `f(x, y, out&)` returns false to
/// stop with the error `failure` (integer division by zero).
template <typename TA, typename TB, typename TO, typename F>
Expected<Tensor> zipWith(const Tensor &a, const Tensor &b, DType outType, F f,
                         const char *failure = "") {
  DLC_ASSIGN_OR_RETURN(BroadcastIter it, BroadcastIter::make({a.shape(), b.shape()}));
  Tensor out = Tensor::zeros(outType, it.outShape());
  const TA *x = a.data<TA>();
  const TB *y = b.data<TB>();
  TO *o = out.mutableData<TO>();
  int64_t n = it.numElements();
  bool ok = true;
  // Flat fast paths: equal shapes, or one side a single element (the other's order is the
  // output's order then, whatever leading 1s the broadcast adds).
  if (a.shape() == b.shape()) {
    for (int64_t i = 0; i < n && ok; ++i)
      ok = f(x[i], y[i], o[i]);
  } else if (b.numElements() == 1 && a.numElements() == n) {
    for (int64_t i = 0; i < n && ok; ++i)
      ok = f(x[i], y[0], o[i]);
  } else if (a.numElements() == 1 && b.numElements() == n) {
    for (int64_t i = 0; i < n && ok; ++i)
      ok = f(x[0], y[i], o[i]);
  } else {
    for (int64_t i = 0; i < n && ok; ++i, it.next())
      ok = f(x[it.offset(0)], y[it.offset(1)], o[i]);
  }
  if (!ok)
    return invalidArgument("{}", failure);
  return out;
}

// --- Layout -----------------------------------------------------------------------------------

/// A tensor seen as [outer, len, inner] around one axis.
struct AxisSplit {
  int64_t outer = 1, len = 1, inner = 1;
};
AxisSplit splitAt(const std::vector<int64_t> &shape, int64_t axis);

} // namespace dlc::eval
