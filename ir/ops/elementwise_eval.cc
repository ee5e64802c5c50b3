#include "ir/ops/elementwise_eval.h"

#include <cmath>
#include <cstring>
#include <type_traits>

#include "ir/ops/broadcast_iter.h"

namespace dlc::ops {

namespace {

/// Calls `f.template operator()<T>()` with T the storage type of `t` for the dtypes the
/// evaluators compute in (integers, f32, f64, bool); returns false for others (f16, bf16).
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

/// f16 and bf16 are computed in f32.
bool isHalf(DType t) { return t == DType::kF16 || t == DType::kBF16; }

Status checkPresent(const Node &node, const std::vector<Tensor> &in, size_t n) {
  if (in.size() < n)
    return invalidArgument("{}: expects {} inputs, got {}", node.describe(), n, in.size());
  for (size_t i = 0; i < n; ++i)
    if (in[i].empty())
      return invalidArgument("{}: input {} is missing", node.describe(), i);
  return Status::ok();
}

Status checkSameDType(const Node &node, const std::vector<Tensor> &in) {
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i].dtype() != in[0].dtype())
      return invalidArgument("{}: inputs 0 and {} have different dtypes ({} vs {})",
                             node.describe(), i, dtypeName(in[0].dtype()),
                             dtypeName(in[i].dtype()));
  return Status::ok();
}

template <typename T> using Wide = std::make_unsigned_t<T>;

/// a op b for one element; integer results wrap; returns false on integer division by zero.
enum class Bin : uint8_t { kAdd, kSub, kMul, kDiv, kMax, kMin };

template <typename T> bool applyBin(Bin op, T a, T b, T &r) {
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
    case Bin::kAdd:
      r = a + b;
      break;
    case Bin::kSub:
      r = a - b;
      break;
    case Bin::kMul:
      r = a * b;
      break;
    case Bin::kDiv:
      r = a / b;
      break;
    case Bin::kMax:
      r = std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
      break;
    case Bin::kMin:
      r = std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
      break;
    }
  } else if constexpr (std::is_same_v<T, bool>) {
    return false; // filtered out by the callers' dtype checks
  } else {
    using U = Wide<T>;
    switch (op) {
    case Bin::kAdd:
      r = static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
      break;
    case Bin::kSub:
      r = static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
      break;
    case Bin::kMul:
      r = static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
      break;
    case Bin::kDiv:
      if (b == 0)
        return false;
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) { // a / -1 overflows for the minimum value: wrap instead
          r = static_cast<T>(U{0} - static_cast<U>(a));
          break;
        }
      }
      r = static_cast<T>(a / b);
      break;
    case Bin::kMax:
      r = std::max(a, b);
      break;
    case Bin::kMin:
      r = std::min(a, b);
      break;
    }
  }
  return true;
}

/// The broadcast iterator over `shapes`; a broadcast error names the node.
Expected<BroadcastIter> iterFor(const Node &node, const std::vector<std::vector<int64_t>> &shapes) {
  auto it = BroadcastIter::make(shapes);
  if (!it)
    return it.status().withContext(node.describe());
  return it;
}

Status noEval(const Node &node, DType dtype) {
  return unimplemented("{}: no reference evaluation for dtype {}", node.describe(),
                       dtypeName(dtype));
}

/// Broadcasting fold of `op` over all inputs (same dtype, numeric).
EvalResult evalBinary(const Node &node, const std::vector<Tensor> &inRaw, Bin op, size_t n) {
  DLC_RETURN_IF_ERROR(checkPresent(node, inRaw, n));
  DLC_RETURN_IF_ERROR(checkSameDType(node, inRaw));
  DType dtype = inRaw[0].dtype();
  if (!isNumeric(dtype))
    return noEval(node, dtype);
  std::vector<Tensor> in = inRaw;
  if (isHalf(dtype))
    for (Tensor &t : in)
      t = t.castTo(DType::kF32);
  Tensor acc = in[0];
  for (size_t k = 1; k < in.size(); ++k) {
    DLC_ASSIGN_OR_RETURN(BroadcastIter it, iterFor(node, {acc.shape(), in[k].shape()}));
    Tensor out = Tensor::zeros(acc.dtype(), it.outShape());
    bool divByZero = false;
    dispatch(acc.dtype(), [&]<typename T>() {
      if constexpr (!std::is_same_v<T, bool>) {
        const T *a = acc.data<T>(), *b = in[k].data<T>();
        T *o = out.mutableData<T>();
        for (int64_t i = 0; i < it.numElements() && !divByZero; ++i, it.next())
          divByZero = !applyBin(op, a[it.offset(0)], b[it.offset(1)], o[i]);
      }
    });
    if (divByZero)
      return invalidArgument("{}: integer division by zero", node.describe());
    acc = std::move(out);
  }
  if (isHalf(dtype))
    acc = acc.castTo(dtype);
  return std::vector<Tensor>{acc};
}

enum class Cmp : uint8_t { kEqual, kLess, kGreater, kAnd, kOr };

/// Broadcasting comparison or logic op with a bool result.
EvalResult evalCompare(const Node &node, const std::vector<Tensor> &inRaw, Cmp op) {
  DLC_RETURN_IF_ERROR(checkPresent(node, inRaw, 2));
  DLC_RETURN_IF_ERROR(checkSameDType(node, inRaw));
  DType dtype = inRaw[0].dtype();
  bool logic = op == Cmp::kAnd || op == Cmp::kOr;
  if (logic != (dtype == DType::kBool) && !(op == Cmp::kEqual && dtype == DType::kBool))
    return noEval(node, dtype);
  Tensor a = isHalf(dtype) ? inRaw[0].castTo(DType::kF32) : inRaw[0];
  Tensor b = isHalf(dtype) ? inRaw[1].castTo(DType::kF32) : inRaw[1];
  DLC_ASSIGN_OR_RETURN(BroadcastIter it, iterFor(node, {a.shape(), b.shape()}));
  Tensor out = Tensor::zeros(DType::kBool, it.outShape());
  bool *o = out.mutableData<bool>();
  bool ok = dispatch(a.dtype(), [&]<typename T>() {
    const T *x = a.data<T>(), *y = b.data<T>();
    for (int64_t i = 0; i < it.numElements(); ++i, it.next()) {
      T u = x[it.offset(0)], v = y[it.offset(1)];
      switch (op) {
      case Cmp::kEqual:
        o[i] = u == v;
        break;
      case Cmp::kLess:
        o[i] = u < v;
        break;
      case Cmp::kGreater:
        o[i] = u > v;
        break;
      case Cmp::kAnd:
        o[i] = u && v;
        break;
      case Cmp::kOr:
        o[i] = u || v;
        break;
      }
    }
  });
  if (!ok)
    return noEval(node, dtype);
  return std::vector<Tensor>{out};
}

enum class Un : uint8_t { kNeg, kAbs, kNot };

EvalResult evalUnary(const Node &node, const std::vector<Tensor> &in, Un op) {
  DLC_RETURN_IF_ERROR(checkPresent(node, in, 1));
  DType dtype = in[0].dtype();
  if ((op == Un::kNot) != (dtype == DType::kBool))
    return noEval(node, dtype);
  Tensor x = isHalf(dtype) ? in[0].castTo(DType::kF32) : in[0];
  Tensor out = Tensor::zeros(x.dtype(), x.shape());
  bool ok = dispatch(x.dtype(), [&]<typename T>() {
    const T *a = x.data<T>();
    T *o = out.mutableData<T>();
    for (int64_t i = 0; i < x.numElements(); ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        o[i] = !a[i];
      } else if constexpr (std::is_floating_point_v<T>) {
        o[i] = op == Un::kNeg ? -a[i] : std::fabs(a[i]);
      } else {
        using U = Wide<T>;
        U neg = U{0} - static_cast<U>(a[i]); // wraps for the minimum value, like C
        bool negative = std::is_signed_v<T> && a[i] < 0;
        o[i] = op == Un::kNeg || negative ? static_cast<T>(neg) : a[i];
      }
    }
  });
  if (!ok)
    return noEval(node, dtype);
  if (isHalf(dtype))
    out = out.castTo(dtype);
  return std::vector<Tensor>{out};
}

} // namespace

EvalResult evalAdd(const Node &n, const std::vector<Tensor> &in) {
  return evalBinary(n, in, Bin::kAdd, 2);
}
EvalResult evalSub(const Node &n, const std::vector<Tensor> &in) {
  return evalBinary(n, in, Bin::kSub, 2);
}
EvalResult evalMul(const Node &n, const std::vector<Tensor> &in) {
  return evalBinary(n, in, Bin::kMul, 2);
}
EvalResult evalDiv(const Node &n, const std::vector<Tensor> &in) {
  return evalBinary(n, in, Bin::kDiv, 2);
}
EvalResult evalMax(const Node &n, const std::vector<Tensor> &in) {
  return evalBinary(n, in, Bin::kMax, 1);
}
EvalResult evalMin(const Node &n, const std::vector<Tensor> &in) {
  return evalBinary(n, in, Bin::kMin, 1);
}
EvalResult evalEqual(const Node &n, const std::vector<Tensor> &in) {
  return evalCompare(n, in, Cmp::kEqual);
}
EvalResult evalLess(const Node &n, const std::vector<Tensor> &in) {
  return evalCompare(n, in, Cmp::kLess);
}
EvalResult evalGreater(const Node &n, const std::vector<Tensor> &in) {
  return evalCompare(n, in, Cmp::kGreater);
}
EvalResult evalAnd(const Node &n, const std::vector<Tensor> &in) {
  return evalCompare(n, in, Cmp::kAnd);
}
EvalResult evalOr(const Node &n, const std::vector<Tensor> &in) {
  return evalCompare(n, in, Cmp::kOr);
}
EvalResult evalNot(const Node &n, const std::vector<Tensor> &in) {
  return evalUnary(n, in, Un::kNot);
}
EvalResult evalNeg(const Node &n, const std::vector<Tensor> &in) {
  return evalUnary(n, in, Un::kNeg);
}
EvalResult evalAbs(const Node &n, const std::vector<Tensor> &in) {
  return evalUnary(n, in, Un::kAbs);
}

EvalResult evalWhere(const Node &node, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkPresent(node, in, 3));
  if (in[0].dtype() != DType::kBool)
    return invalidArgument("{}: condition has dtype {}, expected bool", node.describe(),
                           dtypeName(in[0].dtype()));
  if (in[1].dtype() != in[2].dtype())
    return invalidArgument("{}: inputs 1 and 2 have different dtypes ({} vs {})", node.describe(),
                           dtypeName(in[1].dtype()), dtypeName(in[2].dtype()));
  DLC_ASSIGN_OR_RETURN(BroadcastIter it,
                       iterFor(node, {in[0].shape(), in[1].shape(), in[2].shape()}));
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

EvalResult evalCast(const Node &node, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkPresent(node, in, 1));
  const Attribute *to = node.findAttr("to");
  if (!to || to->kind() != AttrKind::kDType || to->dtype() == DType::kUnknown)
    return invalidArgument("{}: attribute 'to' must be a known dtype", node.describe());
  return std::vector<Tensor>{in[0].castTo(to->dtype())};
}

} // namespace dlc::ops
