// Reference evaluation of the unary elementwise ops: math functions, activations and
// predicates. Float ops compute in the element type (f16/bf16 in f32, rounded once); where the
// spec writes exp(x) - 1 the exact expm1 is used, and softplus-like terms use the overflow-free
// form of the same function. NaN inputs give NaN wherever the spec's formula does (numpy's
// behaviour), except where a comparison selects a constant (ThresholdedRelu, Shrink give 0).
#include <cmath>
#include <numbers>

#include "ir/eval/elementwise_eval.h"
#include "ir/eval/eval_util.h"

namespace dlc::eval {

namespace {

/// out[i] = f(x[i]) for a float tensor; f is called with float (f16, bf16, f32) or double.
template <typename F> EvalResult mapFloat(const std::vector<Tensor> &in, F f) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 1));
  DType dtype = in[0].dtype();
  if (!isFloat(dtype))
    return noEval(dtype);
  Tensor x = widenHalf(in[0]);
  Tensor out = Tensor::zeros(x.dtype(), x.shape());
  auto run = [&]<typename T>() {
    const T *a = x.data<T>();
    T *o = out.mutableData<T>();
    for (int64_t i = 0, n = x.numElements(); i < n; ++i)
      o[i] = f(a[i]);
  };
  if (x.dtype() == DType::kF64)
    run.template operator()<double>();
  else
    run.template operator()<float>();
  return std::vector<Tensor>{narrowTo(out, dtype)};
}

/// out[i] = f(x[i]) for any numeric tensor (not bool); `signedOnly` rejects unsigned types.
template <typename F>
EvalResult mapNumeric(const std::vector<Tensor> &in, F f, bool signedOnly = false) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 1));
  DType dtype = in[0].dtype();
  if (!isNumeric(dtype) || (signedOnly && isUnsignedInt(dtype)))
    return noEval(dtype);
  Tensor x = widenHalf(in[0]);
  Tensor out = Tensor::zeros(x.dtype(), x.shape());
  dispatch(x.dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      const T *a = x.data<T>();
      T *o = out.mutableData<T>();
      for (int64_t i = 0, n = x.numElements(); i < n; ++i)
        o[i] = f(a[i]);
    }
  });
  return std::vector<Tensor>{narrowTo(out, dtype)};
}

/// A bool tensor: pred(x[i]) for a float tensor.
template <typename F> EvalResult predicateFloat(const std::vector<Tensor> &in, F pred) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 1));
  if (!isFloat(in[0].dtype()))
    return noEval(in[0].dtype());
  Tensor x = widenHalf(in[0]);
  Tensor out = Tensor::zeros(DType::kBool, x.shape());
  bool *o = out.mutableData<bool>();
  auto run = [&]<typename T>() {
    const T *a = x.data<T>();
    for (int64_t i = 0, n = x.numElements(); i < n; ++i)
      o[i] = pred(a[i]);
  };
  if (x.dtype() == DType::kF64)
    run.template operator()<double>();
  else
    run.template operator()<float>();
  return std::vector<Tensor>{out};
}

/// ln(1 + e^x) without overflow for large x.
template <typename T> T softplus(T x) {
  return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

/// 1 / (1 + e^-x) without overflow for very negative x.
template <typename T> T sigmoid(T x) {
  return x >= T(0) ? T(1) / (T(1) + std::exp(-x)) : std::exp(x) / (T(1) + std::exp(x));
}

/// x * max(0, min(1, x/6 + 1/2)); NaN passes through.
template <typename T> T hardSwish(T x) {
  T v = static_cast<T>(1.0 / 6.0) * x + T(0.5);
  return x * (v < T(0) ? T(0) : v > T(1) ? T(1) : v);
}

} // namespace

// --- Math -------------------------------------------------------------------------------------

#define DLC_FLOAT_UNARY(Name, expr)                                                                \
  EvalResult eval##Name(const Node &n, const std::vector<Tensor> &in) {                            \
    return mapFloat(in, [](auto x) -> decltype(x) { return expr; });                               \
  }
DLC_FLOAT_UNARY(Acos, std::acos(x))
DLC_FLOAT_UNARY(Acosh, std::acosh(x))
DLC_FLOAT_UNARY(Asin, std::asin(x))
DLC_FLOAT_UNARY(Asinh, std::asinh(x))
DLC_FLOAT_UNARY(Atan, std::atan(x))
DLC_FLOAT_UNARY(Atanh, std::atanh(x))
DLC_FLOAT_UNARY(Ceil, std::ceil(x))
DLC_FLOAT_UNARY(Cos, std::cos(x))
DLC_FLOAT_UNARY(Cosh, std::cosh(x))
DLC_FLOAT_UNARY(Exp, std::exp(x))
DLC_FLOAT_UNARY(Floor, std::floor(x))
DLC_FLOAT_UNARY(Log, std::log(x))
DLC_FLOAT_UNARY(Reciprocal, decltype(x)(1) / x)
DLC_FLOAT_UNARY(Round, std::nearbyint(x)) // the default rounding mode: half to even
DLC_FLOAT_UNARY(Sin, std::sin(x))
DLC_FLOAT_UNARY(Sinh, std::sinh(x))
DLC_FLOAT_UNARY(Sqrt, std::sqrt(x))
DLC_FLOAT_UNARY(Tan, std::tan(x))
DLC_FLOAT_UNARY(Tanh, std::tanh(x))
// --- Activations without attributes ---
DLC_FLOAT_UNARY(HardSwish, hardSwish(x))
DLC_FLOAT_UNARY(Mish, x *std::tanh(softplus(x)))
DLC_FLOAT_UNARY(Sigmoid, sigmoid(x))
DLC_FLOAT_UNARY(Softplus, softplus(x))
DLC_FLOAT_UNARY(Softsign, x / (1 + std::fabs(x)))
#undef DLC_FLOAT_UNARY

EvalResult evalIsNaN(const Node &n, const std::vector<Tensor> &in) {
  return predicateFloat(in, [](auto x) { return std::isnan(x); });
}

EvalResult evalIsInf(const Node &n, const std::vector<Tensor> &in) {
  bool neg = n.getInt("detect_negative") != 0, pos = n.getInt("detect_positive") != 0;
  return predicateFloat(in, [=](auto x) { return std::isinf(x) && (x < 0 ? neg : pos); });
}

EvalResult evalErf(const Node &n, const std::vector<Tensor> &in) {
  // Integer inputs are allowed: erf in double, truncated back (0 or +-1).
  return mapNumeric(in, [](auto x) -> decltype(x) {
    using T = decltype(x);
    if constexpr (std::is_floating_point_v<T>)
      return std::erf(x);
    else
      return truncSaturate<T>(std::erf(static_cast<double>(x)));
  });
}

EvalResult evalAbs(const Node &n, const std::vector<Tensor> &in) {
  return mapNumeric(in, [](auto x) -> decltype(x) {
    using T = decltype(x);
    if constexpr (std::is_floating_point_v<T>)
      return std::fabs(x);
    else if constexpr (std::is_signed_v<T>)
      return x < 0 ? wrapSub(T(0), x) : x; // the minimum value wraps to itself, like C
    else
      return x;
  });
}

EvalResult evalNeg(const Node &n, const std::vector<Tensor> &in) {
  return mapNumeric(
      in,
      [](auto x) -> decltype(x) {
        using T = decltype(x);
        if constexpr (std::is_floating_point_v<T>)
          return -x;
        else
          return wrapSub(T(0), x); // the minimum value wraps to itself, like C
      },
      /*signedOnly=*/true);
}

EvalResult evalSign(const Node &n, const std::vector<Tensor> &in) {
  return mapNumeric(in, [](auto x) -> decltype(x) {
    using T = decltype(x);
    if (x > T(0))
      return T(1);
    if constexpr (std::is_signed_v<T>)
      if (x < T(0))
        return T(-1);
    return x == T(0) ? T(0) : x; // NaN stays NaN
  });
}

EvalResult evalRelu(const Node &n, const std::vector<Tensor> &in) {
  return mapNumeric(
      in,
      [](auto x) -> decltype(x) {
        using T = decltype(x);
        if constexpr (std::is_signed_v<T>)
          return x < T(0) ? T(0) : x; // NaN passes through
        else
          return x; // unreachable: signed types only
      },
      /*signedOnly=*/true);
}

// --- Activations with attributes --------------------------------------------------------------

EvalResult evalCelu(const Node &n, const std::vector<Tensor> &in) {
  float alpha = n.getFloat("alpha");
  return mapFloat(in, [=](auto x) -> decltype(x) {
    using T = decltype(x);
    return x > 0 ? x : T(alpha) * std::expm1(x / T(alpha));
  });
}

EvalResult evalElu(const Node &n, const std::vector<Tensor> &in) {
  float alpha = n.getFloat("alpha");
  return mapFloat(
      in, [=](auto x) -> decltype(x) { return x < 0 ? decltype(x)(alpha) * std::expm1(x) : x; });
}

EvalResult evalGelu(const Node &n, const std::vector<Tensor> &in) {
  const std::string &mode = n.getString("approximate");
  if (mode == "tanh")
    return mapFloat(in, [](auto x) -> decltype(x) {
      using T = decltype(x);
      T k = static_cast<T>(std::sqrt(2.0 / std::numbers::pi));
      return T(0.5) * x * (1 + std::tanh(k * (x + T(0.044715) * x * x * x)));
    });
  if (mode != "none")
    return invalidArgument("attribute 'approximate' must be \"none\" or \"tanh\", got \"{}\"",
                           mode);
  return mapFloat(in, [](auto x) -> decltype(x) {
    using T = decltype(x);
    return T(0.5) * x * (1 + std::erf(x / static_cast<T>(std::numbers::sqrt2)));
  });
}

EvalResult evalHardSigmoid(const Node &n, const std::vector<Tensor> &in) {
  float alpha = n.getFloat("alpha"), beta = n.getFloat("beta");
  return mapFloat(in, [=](auto x) -> decltype(x) {
    using T = decltype(x);
    T v = T(alpha) * x + T(beta);
    return v < 0 ? 0 : v > 1 ? 1 : v; // NaN passes through
  });
}

EvalResult evalLeakyRelu(const Node &n, const std::vector<Tensor> &in) {
  float alpha = n.getFloat("alpha");
  return mapFloat(in, [=](auto x) -> decltype(x) { return x < 0 ? decltype(x)(alpha) * x : x; });
}

EvalResult evalSelu(const Node &n, const std::vector<Tensor> &in) {
  float alpha = n.getFloat("alpha"), gamma = n.getFloat("gamma");
  return mapFloat(in, [=](auto x) -> decltype(x) {
    using T = decltype(x);
    return x > 0 ? T(gamma) * x : T(gamma) * (T(alpha) * std::expm1(x));
  });
}

EvalResult evalShrink(const Node &n, const std::vector<Tensor> &in) {
  double bias = n.getFloat("bias"), lambd = n.getFloat("lambd");
  return mapNumeric(in, [=](auto x) -> decltype(x) {
    using T = decltype(x);
    if constexpr (std::is_floating_point_v<T>) {
      return x < -T(lambd) ? x + T(bias) : x > T(lambd) ? x - T(bias) : T(0);
    } else { // integers: compare and shift in double, then back (truncating, saturating)
      double v = static_cast<double>(x);
      return v < -lambd  ? truncSaturate<T>(v + bias)
             : v > lambd ? truncSaturate<T>(v - bias)
                         : T(0);
    }
  });
}

EvalResult evalThresholdedRelu(const Node &n, const std::vector<Tensor> &in) {
  float alpha = n.getFloat("alpha");
  return mapFloat(in, [=](auto x) -> decltype(x) { return x > decltype(x)(alpha) ? x : 0; });
}

// --- Bool and bitwise -------------------------------------------------------------------------

EvalResult evalNot(const Node &n, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 1));
  if (in[0].dtype() != DType::kBool)
    return noEval(in[0].dtype());
  Tensor out = Tensor::zeros(DType::kBool, in[0].shape());
  for (int64_t i = 0; i < out.numElements(); ++i)
    out.mutableData<bool>()[i] = !in[0].data<bool>()[i];
  return std::vector<Tensor>{out};
}

EvalResult evalBitwiseNot(const Node &n, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 1));
  if (!isInteger(in[0].dtype()))
    return noEval(in[0].dtype());
  return mapNumeric(in, [](auto x) -> decltype(x) {
    using T = decltype(x);
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(~x);
    else
      return x; // unreachable: integers only
  });
}

} // namespace dlc::eval
