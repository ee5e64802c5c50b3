// Reference evaluation of the arithmetic ops with numpy broadcasting: Add, Sub, Mul, Div, Pow,
// Mod, the variadic Max, Min, Sum and Mean, and PRelu.
//
// Integers: arithmetic wraps; Div truncates toward zero; Mod with fmod=0 takes the sign of
// the divisor (Python's %), with fmod=1 the sign of the dividend (C's fmod); division or modulo
// by zero is an error. Floats: IEEE, with Max/Min propagating NaN (numpy's maximum/minimum).
// Variadic ops fold left to right in the compute type and round once at the end.
#include <cmath>

#include "ir/eval/elementwise_eval.h"
#include "ir/eval/families.h"

namespace dlc::eval {

namespace {

/// Runs `f` over the broadcast of `a` and `b`, which share one non-half, non-bool dtype.
template <typename F>
Expected<Tensor> binaryOp(const Tensor &a, const Tensor &b, F f, const char *failure = "") {
  Expected<Tensor> r = noEval(a.dtype());
  dispatch(a.dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>)
      r = zipWith<T, T, T>(a, b, a.dtype(), f, failure);
  });
  return r;
}

/// Folds `f` left to right over all inputs (one numeric dtype, all present), in the compute
/// type; the result is still in the compute type (f32 for f16/bf16 inputs).
template <typename F>
Expected<Tensor> foldInputs(const std::vector<Tensor> &in, size_t minInputs, bool floatOnly, F f,
                            const char *failure = "") {
  DLC_RETURN_IF_ERROR(checkInputs(in, std::max(minInputs, in.size())));
  DLC_RETURN_IF_ERROR(checkSameDType(in));
  DType dtype = in[0].dtype();
  if (!isNumeric(dtype) || (floatOnly && !isFloat(dtype)))
    return noEval(dtype);
  Tensor acc = widenHalf(in[0]);
  for (size_t k = 1; k < in.size(); ++k) {
    DLC_ASSIGN_OR_RETURN(acc, binaryOp(acc, widenHalf(in[k]), f, failure));
  }
  return acc;
}

EvalResult narrowResult(Expected<Tensor> r, DType dtype) {
  if (!r)
    return r.takeStatus();
  return std::vector<Tensor>{narrowTo(*r, dtype)};
}

// --- Element functions: f(x, y, out&) -> false on an integer division by zero ------------------

constexpr auto kAdd = [](auto x, auto y, auto &o) {
  if constexpr (std::is_floating_point_v<decltype(x)>)
    o = x + y;
  else
    o = wrapAdd(x, y);
  return true;
};

constexpr auto kSub = [](auto x, auto y, auto &o) {
  if constexpr (std::is_floating_point_v<decltype(x)>)
    o = x - y;
  else
    o = wrapSub(x, y);
  return true;
};

constexpr auto kMul = [](auto x, auto y, auto &o) {
  if constexpr (std::is_floating_point_v<decltype(x)>)
    o = x * y;
  else
    o = wrapMul(x, y);
  return true;
};

constexpr auto kDiv = [](auto x, auto y, auto &o) {
  using T = decltype(x);
  if constexpr (std::is_floating_point_v<T>) {
    o = x / y;
  } else {
    if (y == T(0))
      return false;
    if constexpr (std::is_signed_v<T>)
      if (y == T(-1)) { // the minimum value divided by -1 overflows: wrap instead
        o = wrapSub(T(0), x);
        return true;
      }
    o = static_cast<T>(x / y); // C++ truncates toward zero
  }
  return true;
};

template <bool IsMax>
constexpr auto kMaxMin = [](auto x, auto y, auto &o) {
  if constexpr (std::is_floating_point_v<decltype(x)>) {
    if (std::isnan(x) || std::isnan(y)) {
      o = std::isnan(x) ? x : y;
      return true;
    }
  }
  o = IsMax ? (x < y ? y : x) : (y < x ? y : x);
  return true;
};

template <bool Fmod>
constexpr auto kMod = [](auto x, auto y, auto &o) {
  using T = decltype(x);
  if constexpr (std::is_floating_point_v<T>) {
    o = std::fmod(x, y); // callers reject fmod=0 for floats
  } else {
    if (y == T(0))
      return false;
    if constexpr (std::is_signed_v<T>)
      if (y == T(-1)) { // x % -1 is 0, and must not trap for the minimum value
        o = T(0);
        return true;
      }
    T r = static_cast<T>(x % y); // sign of the dividend
    if constexpr (!Fmod && std::is_signed_v<T>)
      if (r != T(0) && ((r < T(0)) != (y < T(0))))
        r = static_cast<T>(r + y); // sign of the divisor; |r| < |y| so this cannot overflow
    o = r;
  }
  return true;
};

/// x ** e for an integer base and an integer exponent, exactly (wrapping). A negative
/// exponent gives 1/x**|e| truncated toward zero: 0 unless |x| == 1; false for x == 0.
template <typename B, typename E> bool intPow(B x, E e, B &o) {
  if constexpr (std::is_signed_v<E>) {
    if (e < 0) {
      if (x == B(0))
        return false;
      bool minusOne = false;
      if constexpr (std::is_signed_v<B>)
        minusOne = x == B(-1);
      o = x == B(1) ? B(1) : minusOne ? (e % 2 == 0 ? B(1) : B(-1)) : B(0);
      return true;
    }
  }
  B result = 1, b = x;
  for (uint64_t n = static_cast<uint64_t>(e); n != 0; n >>= 1) {
    if (n & 1u)
      result = wrapMul(result, b);
    b = wrapMul(b, b);
  }
  o = result;
  return true;
}

constexpr auto kPow = [](auto x, auto e, auto &o) {
  using B = decltype(x);
  using E = decltype(e);
  if constexpr (std::is_floating_point_v<B>) {
    o = static_cast<B>(std::pow(static_cast<double>(x), static_cast<double>(e)));
  } else if constexpr (std::is_floating_point_v<E>) { // numpy: computed in double, truncated
    o = truncSaturate<B>(std::pow(static_cast<double>(x), static_cast<double>(e)));
  } else {
    return intPow(x, e, o);
  }
  return true;
};

} // namespace

EvalResult evalAdd(const Node &n, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 2));
  return narrowResult(foldInputs(in, 2, false, kAdd), in[0].dtype());
}

EvalResult evalSub(const Node &n, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 2));
  return narrowResult(foldInputs(in, 2, false, kSub), in[0].dtype());
}

EvalResult evalMul(const Node &n, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 2));
  return narrowResult(foldInputs(in, 2, false, kMul), in[0].dtype());
}

EvalResult evalDiv(const Node &n, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 2));
  return narrowResult(foldInputs(in, 2, false, kDiv, "integer division by zero"), in[0].dtype());
}

EvalResult evalMod(const Node &n, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 2));
  int64_t fmod = n.getInt("fmod");
  if (fmod != 0 && fmod != 1)
    return invalidArgument("attribute 'fmod' must be 0 or 1, got {}", fmod);
  if (fmod == 0 && isFloat(in[0].dtype()))
    return invalidArgument("floating-point Mod requires fmod=1");
  const char *failure = "integer modulo by zero";
  return narrowResult(fmod ? foldInputs(in, 2, false, kMod<true>, failure)
                           : foldInputs(in, 2, false, kMod<false>, failure),
                      in[0].dtype());
}

EvalResult evalMax(const Node &n, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 1));
  return narrowResult(foldInputs(in, 1, false, kMaxMin<true>), in[0].dtype());
}

EvalResult evalMin(const Node &n, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 1));
  return narrowResult(foldInputs(in, 1, false, kMaxMin<false>), in[0].dtype());
}

EvalResult evalSum(const Node &n, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 1));
  return narrowResult(foldInputs(in, 1, true, kAdd), in[0].dtype());
}

EvalResult evalMean(const Node &n, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 1));
  DLC_ASSIGN_OR_RETURN(Tensor sum, foldInputs(in, 1, true, kAdd));
  Tensor out = Tensor::zeros(sum.dtype(), sum.shape());
  auto divide = [&]<typename T>() {
    T count = static_cast<T>(in.size());
    for (int64_t i = 0; i < sum.numElements(); ++i)
      out.mutableData<T>()[i] = sum.data<T>()[i] / count;
  };
  if (sum.dtype() == DType::kF64)
    divide.template operator()<double>();
  else
    divide.template operator()<float>();
  return std::vector<Tensor>{narrowTo(out, in[0].dtype())};
}

EvalResult evalPow(const Node &n, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 2));
  DType dtype = in[0].dtype();
  if (!isNumeric(dtype) || !isNumeric(in[1].dtype()))
    return noEval(isNumeric(dtype) ? in[1].dtype() : dtype);
  Tensor base = widenHalf(in[0]);
  // The exponent, whatever its type, as i64, u64 or f64 (exact for every allowed type).
  DType et = in[1].dtype();
  Tensor e = castTensor(in[1], isFloat(et)       ? DType::kF64
                               : isSignedInt(et) ? DType::kI64
                                                 : DType::kU64);
  Expected<Tensor> r = noEval(dtype);
  dispatch(base.dtype(), [&]<typename B>() {
    if constexpr (!std::is_same_v<B, bool>)
      dispatch(e.dtype(), [&]<typename E>() {
        if constexpr (std::is_same_v<E, int64_t> || std::is_same_v<E, uint64_t> ||
                      std::is_same_v<E, double>)
          r = zipWith<B, E, B>(base, e, base.dtype(), kPow,
                               "integer zero raised to a negative power");
      });
  });
  return narrowResult(std::move(r), dtype);
}

EvalResult evalPRelu(const Node &n, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 2));
  DLC_RETURN_IF_ERROR(checkSameDType(in));
  DType dtype = in[0].dtype();
  if (!isNumeric(dtype))
    return noEval(dtype);
  Tensor x = widenHalf(in[0]), slope = widenHalf(in[1]);
  auto prelu = [](auto v, auto s, auto &o) {
    using T = decltype(v);
    if constexpr (std::is_floating_point_v<T>)
      o = v < T(0) ? s * v : v; // NaN passes through
    else if constexpr (std::is_signed_v<T>)
      o = v < T(0) ? wrapMul(s, v) : v;
    else
      o = v;
    return true;
  };
  DLC_ASSIGN_OR_RETURN(Tensor out, binaryOp(x, slope, prelu));
  if (out.shape() != x.shape())
    return invalidArgument("slope of shape {} does not broadcast to the input's shape {}",
                           Shape::fromSizes(slope.shape()).str(),
                           Shape::fromSizes(x.shape()).str());
  return std::vector<Tensor>{narrowTo(out, dtype)};
}

std::vector<EvalRow> elementwiseEvals() {
  return {
      {Op::kAbs, evalAbs},
      {Op::kAcos, evalAcos},
      {Op::kAcosh, evalAcosh},
      {Op::kAdd, evalAdd},
      {Op::kAnd, evalAnd},
      {Op::kAsin, evalAsin},
      {Op::kAsinh, evalAsinh},
      {Op::kAtan, evalAtan},
      {Op::kAtanh, evalAtanh},
      {Op::kBitShift, evalBitShift},
      {Op::kBitwiseAnd, evalBitwiseAnd},
      {Op::kBitwiseNot, evalBitwiseNot},
      {Op::kBitwiseOr, evalBitwiseOr},
      {Op::kBitwiseXor, evalBitwiseXor},
      {Op::kCast, evalCast},
      {Op::kCastLike, evalCastLike},
      {Op::kCeil, evalCeil},
      {Op::kCelu, evalCelu},
      {Op::kClip, evalClip},
      {Op::kCos, evalCos},
      {Op::kCosh, evalCosh},
      {Op::kDiv, evalDiv},
      {Op::kElu, evalElu},
      {Op::kEqual, evalEqual},
      {Op::kErf, evalErf},
      {Op::kExp, evalExp},
      {Op::kFloor, evalFloor},
      {Op::kGelu, evalGelu},
      {Op::kGreater, evalGreater},
      {Op::kGreaterOrEqual, evalGreaterOrEqual},
      {Op::kHardSigmoid, evalHardSigmoid},
      {Op::kHardSwish, evalHardSwish},
      {Op::kIsInf, evalIsInf},
      {Op::kIsNaN, evalIsNaN},
      {Op::kLeakyRelu, evalLeakyRelu},
      {Op::kLess, evalLess},
      {Op::kLessOrEqual, evalLessOrEqual},
      {Op::kLog, evalLog},
      {Op::kMax, evalMax},
      {Op::kMean, evalMean},
      {Op::kMin, evalMin},
      {Op::kMish, evalMish},
      {Op::kMod, evalMod},
      {Op::kMul, evalMul},
      {Op::kNeg, evalNeg},
      {Op::kNot, evalNot},
      {Op::kOr, evalOr},
      {Op::kPRelu, evalPRelu},
      {Op::kPow, evalPow},
      {Op::kReciprocal, evalReciprocal},
      {Op::kRelu, evalRelu},
      {Op::kRound, evalRound},
      {Op::kSelu, evalSelu},
      {Op::kShrink, evalShrink},
      {Op::kSigmoid, evalSigmoid},
      {Op::kSign, evalSign},
      {Op::kSin, evalSin},
      {Op::kSinh, evalSinh},
      {Op::kSoftplus, evalSoftplus},
      {Op::kSoftsign, evalSoftsign},
      {Op::kSqrt, evalSqrt},
      {Op::kSub, evalSub},
      {Op::kSum, evalSum},
      {Op::kTan, evalTan},
      {Op::kTanh, evalTanh},
      {Op::kThresholdedRelu, evalThresholdedRelu},
      {Op::kWhere, evalWhere},
      {Op::kXor, evalXor},
  };
}

} // namespace dlc::eval
