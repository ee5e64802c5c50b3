// Comparing a computed tensor with an expected one, as `dlc run --compare` and the
// conformance runner do: floats within a tolerance (NaN equals NaN), integers and bools
// exactly; dtypes and shapes must be equal.
#pragma once

#include <string>

#include "ir/tensor.h"

namespace dlc {

struct Tolerance {
  /// Floats match when |actual - expected| <= atol + rtol * |expected| (numpy.allclose).
  double rtol = 1e-4;
  double atol = 1e-5;
};

struct Comparison {
  bool match = true;
  /// Why the tensors cannot be compared element by element ("dtype f32, expected f64",
  /// "shape [2,3], expected [3,2]"); empty when they can.
  std::string typeMismatch;
  /// Largest |actual - expected| and |actual - expected| / |expected| over all elements
  /// (inf where only one side is NaN, or where expected is 0 and actual is not).
  double maxAbsError = 0;
  double maxRelError = 0;
  /// Elements outside the tolerance, and the first of them (-1 if none).
  int64_t mismatches = 0;
  int64_t firstMismatch = -1;

  /// One line: `max abs error 1.2e-07, max rel error 3.4e-06` plus, on a mismatch, the count
  /// and the first differing element (`...; 3 of 12 elements differ, first at [1,0]: 0.5 vs 0.25`).
  std::string str(const Tensor &actual, const Tensor &expected) const;
};

Comparison compareTensors(const Tensor &actual, const Tensor &expected, const Tolerance &tol);

/// `[1,0]`: the multi-index of flat element `i` in a row-major tensor of `shape`.
std::string elementIndexStr(const std::vector<int64_t> &shape, int64_t i);

} // namespace dlc
