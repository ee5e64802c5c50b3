// Conversions between element types that the IR core and the reference kernels share.
#pragma once

#include <cmath>
#include <limits>

namespace dlc {

/// Float -> integer: truncation toward zero, saturating at T's range, NaN -> 0 (where C++ and
/// numpy leave it undefined, dlc is deterministic).
template <typename T> T truncSaturate(double v) {
  if (std::isnan(v))
    return T(0);
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest()))
    return std::numeric_limits<T>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<T>::max()))
    return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

} // namespace dlc
