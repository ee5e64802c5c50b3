// Reference evaluation of comparisons (IEEE: every comparison with NaN is false, except !=),
// logic on bool, bitwise ops on integers, BitShift on unsigned integers (a shift by the bit
// width or more gives 0), Where, Clip and the casts.
#include <cmath>
#include <cstring>

#include "ir/eval/elementwise_eval.h"

namespace dlc::eval {

namespace {

enum class Cmp : uint8_t { kEq, kLt, kLe, kGt, kGe };

template <Cmp C>
constexpr auto kCompare = [](auto x, auto y, bool &o) {
  switch (C) {
  case Cmp::kEq:
    o = x == y;
    break;
  case Cmp::kLt:
    o = x < y;
    break;
  case Cmp::kLe:
    o = x <= y;
    break;
  case Cmp::kGt:
    o = x > y;
    break;
  case Cmp::kGe:
    o = x >= y;
    break;
  }
  return true;
};

/// A bool tensor from comparing two inputs of one dtype (bool allowed only for Equal).
template <Cmp C> EvalResult compare(const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 2));
  DLC_RETURN_IF_ERROR(checkSameDType(in));
  DType dtype = in[0].dtype();
  if (!isNumeric(dtype) && !(C == Cmp::kEq && dtype == DType::kBool))
    return noEval(dtype);
  Tensor a = widenHalf(in[0]), b = widenHalf(in[1]); // exact, so comparisons are too
  Expected<Tensor> r = noEval(dtype);
  dispatch(a.dtype(),
           [&]<typename T>() { r = zipWith<T, T, bool>(a, b, DType::kBool, kCompare<C>); });
  if (!r)
    return r.takeStatus();
  return std::vector<Tensor>{*r};
}

/// `f` over two bool inputs.
template <typename F> EvalResult logic(const std::vector<Tensor> &in, F f) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 2));
  DLC_RETURN_IF_ERROR(checkSameDType(in));
  if (in[0].dtype() != DType::kBool)
    return noEval(in[0].dtype());
  DLC_ASSIGN_OR_RETURN(Tensor out, (zipWith<bool, bool, bool>(in[0], in[1], DType::kBool,
                                                              [&](bool x, bool y, bool &o) {
                                                                o = f(x, y);
                                                                return true;
                                                              })));
  return std::vector<Tensor>{out};
}

/// `f` over two inputs of one integer dtype (unsigned only when `unsignedOnly`).
template <typename F>
EvalResult bitwise(const std::vector<Tensor> &in, F f, bool unsignedOnly = false) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 2));
  DLC_RETURN_IF_ERROR(checkSameDType(in));
  DType dtype = in[0].dtype();
  if (!(unsignedOnly ? isUnsignedInt(dtype) : isInteger(dtype)))
    return noEval(dtype);
  Expected<Tensor> r = noEval(dtype);
  dispatch(dtype, [&]<typename T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      r = zipWith<T, T, T>(in[0], in[1], dtype, [&](T x, T y, T &o) {
        o = f(x, y);
        return true;
      });
  });
  if (!r)
    return r.takeStatus();
  return std::vector<Tensor>{*r};
}

} // namespace

EvalResult evalEqual(const Node &n, const std::vector<Tensor> &in) { return compare<Cmp::kEq>(in); }
EvalResult evalLess(const Node &n, const std::vector<Tensor> &in) { return compare<Cmp::kLt>(in); }
EvalResult evalLessOrEqual(const Node &n, const std::vector<Tensor> &in) {
  return compare<Cmp::kLe>(in);
}
EvalResult evalGreater(const Node &n, const std::vector<Tensor> &in) {
  return compare<Cmp::kGt>(in);
}
EvalResult evalGreaterOrEqual(const Node &n, const std::vector<Tensor> &in) {
  return compare<Cmp::kGe>(in);
}

EvalResult evalAnd(const Node &n, const std::vector<Tensor> &in) {
  return logic(in, [](bool x, bool y) { return x && y; });
}
EvalResult evalOr(const Node &n, const std::vector<Tensor> &in) {
  return logic(in, [](bool x, bool y) { return x || y; });
}
EvalResult evalXor(const Node &n, const std::vector<Tensor> &in) {
  return logic(in, [](bool x, bool y) { return x != y; });
}

EvalResult evalBitwiseAnd(const Node &n, const std::vector<Tensor> &in) {
  return bitwise(in, [](auto x, auto y) { return static_cast<decltype(x)>(x & y); });
}
EvalResult evalBitwiseOr(const Node &n, const std::vector<Tensor> &in) {
  return bitwise(in, [](auto x, auto y) { return static_cast<decltype(x)>(x | y); });
}
EvalResult evalBitwiseXor(const Node &n, const std::vector<Tensor> &in) {
  return bitwise(in, [](auto x, auto y) { return static_cast<decltype(x)>(x ^ y); });
}

EvalResult evalBitShift(const Node &n, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(std::string dir, stringAttr(n, "direction"));
  if (dir != "LEFT" && dir != "RIGHT")
    return invalidArgument("attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"{}\"", dir);
  bool left = dir == "LEFT";
  return bitwise(
      in,
      [left](auto x, auto s) {
        using T = decltype(x);
        if (static_cast<uint64_t>(s) >=
            sizeof(T) * 8) // C leaves this undefined; every bit is shifted out
          return T(0);
        return static_cast<T>(left ? x << s : x >> s);
      },
      /*unsignedOnly=*/true);
}

EvalResult evalWhere(const Node &node, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 3));
  if (in[0].dtype() != DType::kBool)
    return invalidArgument("condition has dtype {}, expected bool", dtypeName(in[0].dtype()));
  if (in[1].dtype() != in[2].dtype())
    return invalidArgument("inputs 1 and 2 have different dtypes ({} vs {})",
                           dtypeName(in[1].dtype()), dtypeName(in[2].dtype()));
  DLC_ASSIGN_OR_RETURN(BroadcastIter it,
                       BroadcastIter::make({in[0].shape(), in[1].shape(), in[2].shape()}));
  Tensor out = Tensor::zeros(in[1].dtype(), it.outShape());
  // Any dtype: elements are copied as bytes.
  size_t size = static_cast<size_t>(dtypeSize(out.dtype()));
  const bool *cond = in[0].data<bool>();
  const auto *x = static_cast<const uint8_t *>(in[1].raw());
  const auto *y = static_cast<const uint8_t *>(in[2].raw());
  auto *o = static_cast<uint8_t *>(out.mutableRaw());
  for (int64_t i = 0; i < it.numElements(); ++i, it.next()) {
    const uint8_t *src = cond[it.offset(0)] ? x + static_cast<size_t>(it.offset(1)) * size
                                            : y + static_cast<size_t>(it.offset(2)) * size;
    std::memcpy(o + static_cast<size_t>(i) * size, src, size);
  }
  return std::vector<Tensor>{out};
}

EvalResult evalClip(const Node &node, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 1));
  DType dtype = in[0].dtype();
  if (!isNumeric(dtype))
    return noEval(dtype);
  Tensor bounds[2];
  for (size_t i : {1, 2}) {
    if (i >= in.size() || in[i].empty())
      continue;
    const char *what = i == 1 ? "min" : "max";
    if (in[i].dtype() != dtype)
      return invalidArgument("{} has dtype {}, but the input has dtype {}", what,
                             dtypeName(in[i].dtype()), dtypeName(dtype));
    if (in[i].numElements() != 1)
      return invalidArgument("{} must be a scalar, got shape {}", what,
                             Shape::fromSizes(in[i].shape()).str());
    bounds[i - 1] = widenHalf(in[i]);
  }
  Tensor x = widenHalf(in[0]);
  Tensor out = Tensor::zeros(x.dtype(), x.shape());
  dispatch(x.dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      // An absent bound clamps nothing (so infinities pass, unlike numeric_limits bounds).
      bool hasLo = !bounds[0].empty(), hasHi = !bounds[1].empty();
      T lo = hasLo ? bounds[0].data<T>()[0] : T(0), hi = hasHi ? bounds[1].data<T>()[0] : T(0);
      const T *a = x.data<T>();
      T *o = out.mutableData<T>();
      for (int64_t i = 0; i < x.numElements(); ++i) {
        T v = a[i]; // NaN passes through: every comparison with it is false
        if (hasLo && v < lo)
          v = lo;
        if (hasHi && v > hi)
          v = hi; // so min > max gives max, as the spec says
        if constexpr (std::is_floating_point_v<T>)
          if ((hasLo && std::isnan(lo)) || (hasHi && std::isnan(hi)))
            v = std::isnan(lo) ? lo : hi; // a NaN bound propagates, like numpy's clip
        o[i] = v;
      }
    }
  });
  return std::vector<Tensor>{narrowTo(out, dtype)};
}

EvalResult evalCast(const Node &node, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 1));
  const Attribute *to = node.findAttr("to");
  if (!to || to->kind() != AttrKind::kDType || to->dtype() == DType::kUnknown)
    return invalidArgument("attribute 'to' must be a known dtype");
  return std::vector<Tensor>{castTensor(in[0], to->dtype())};
}

EvalResult evalCastLike(const Node &node, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 2));
  return std::vector<Tensor>{castTensor(in[0], in[1].dtype())};
}

} // namespace dlc::eval
