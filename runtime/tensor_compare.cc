#include "runtime/tensor_compare.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace dlc {

namespace {

std::string elementStr(const Tensor &t, int64_t i) {
  if (t.dtype() == DType::kBool)
    return t.elementAsInt64(i) ? "true" : "false";
  if (t.dtype() == DType::kF64)
    return fmt::format("{}", t.elementAsDouble(i));
  if (isFloat(t.dtype())) // the shortest text that reads back to the same float
    return fmt::format("{}", static_cast<float>(t.elementAsDouble(i)));
  if (t.dtype() == DType::kU64)
    return fmt::format("{}", static_cast<uint64_t>(t.elementAsInt64(i)));
  return fmt::format("{}", t.elementAsInt64(i));
}

} // namespace

std::string elementIndexStr(const std::vector<int64_t> &shape, int64_t i) {
  std::vector<int64_t> idx(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    int64_t d = std::max<int64_t>(shape[k], 1);
    idx[k] = i % d;
    i /= d;
  }
  std::string s = "[";
  for (size_t k = 0; k < idx.size(); ++k)
    s += fmt::format("{}{}", k ? "," : "", idx[k]);
  return s + "]";
}

Comparison compareTensors(const Tensor &actual, const Tensor &expected, const Tolerance &tol) {
  Comparison c;
  if (actual.dtype() != expected.dtype()) {
    c.match = false;
    c.typeMismatch = fmt::format("dtype {}, expected {}", dtypeName(actual.dtype()),
                                 dtypeName(expected.dtype()));
    return c;
  }
  if (actual.shape() != expected.shape()) {
    c.match = false;
    c.typeMismatch = fmt::format("shape {}, expected {}", Shape::fromSizes(actual.shape()).str(),
                                 Shape::fromSizes(expected.shape()).str());
    return c;
  }
  const double inf = std::numeric_limits<double>::infinity();
  bool floating = isFloat(actual.dtype());
  int64_t size = dtypeSize(actual.dtype());
  const auto *pa = static_cast<const uint8_t *>(actual.raw());
  const auto *pe = static_cast<const uint8_t *>(expected.raw());
  for (int64_t i = 0; i < actual.numElements(); ++i) {
    double a = actual.elementAsDouble(i), e = expected.elementAsDouble(i);
    double absErr, relErr;
    bool ok;
    if (floating) {
      if (std::isnan(a) || std::isnan(e)) {
        ok = std::isnan(a) && std::isnan(e);
        absErr = relErr = ok ? 0 : inf;
      } else if (std::isinf(a) || std::isinf(e)) {
        ok = a == e;
        absErr = relErr = ok ? 0 : inf;
      } else {
        absErr = std::fabs(a - e);
        relErr = e != 0 ? absErr / std::fabs(e) : (absErr == 0 ? 0 : inf);
        ok = absErr <= tol.atol + tol.rtol * std::fabs(e);
      }
    } else {
      ok = std::memcmp(pa + i * size, pe + i * size, static_cast<size_t>(size)) == 0;
      absErr = ok ? 0 : std::fabs(a - e);
      relErr = ok ? 0 : (e != 0 ? absErr / std::fabs(e) : inf);
    }
    c.maxAbsError = std::max(c.maxAbsError, absErr);
    c.maxRelError = std::max(c.maxRelError, relErr);
    if (!ok) {
      if (c.mismatches++ == 0)
        c.firstMismatch = i;
      c.match = false;
    }
  }
  return c;
}

std::string Comparison::str(const Tensor &actual, const Tensor &expected) const {
  if (!typeMismatch.empty())
    return typeMismatch;
  std::string s =
      fmt::format("max abs error {:.3g}, max rel error {:.3g}", maxAbsError, maxRelError);
  if (mismatches > 0)
    s += fmt::format("; {} of {} elements differ, first at {}: {} vs expected {}", mismatches,
                     actual.numElements(), elementIndexStr(actual.shape(), firstMismatch),
                     elementStr(actual, firstMismatch), elementStr(expected, firstMismatch));
  return s;
}

} // namespace dlc
