// Range methods of calibration (`dlc quantize --method`): how the values one tensor took over
// every calibration sample become one range [lo, hi] for quantization.
//
//  * minmax         [smallest, largest] value seen.
//  * percentile=P   a = the P-th percentile of |x| over all samples; [-a, a] when the value
//                   took a negative value, else [0, a]. Read from the histogram below, as the
//                   upper edge of the bin where the cumulative count reaches P% (so within one
//                   bin width, largest|x| / 2048, above the exact percentile; never above the
//                   largest |x|).
//  * entropy        TensorRT's KL-divergence calibration: a = the threshold, among the upper
//                   edges of bins 128..2048 of the histogram, whose clipped distribution P
//                   (counts past the threshold added to its last bin) loses least information
//                   when quantized to 128 levels Q (merged in groups, spread back evenly over
//                   the bins that were non-zero): the smallest KL(P || Q). P and Q are smoothed
//                   as ONNX Runtime's calibrator does (empty bins get 1e-4, taken evenly from
//                   the others). Symmetric or [0, a] as for percentile.
//
// The histogram: 2048 fixed bins of |x| over [0, top]. `top` starts at the first non-zero
// largest |x| and doubles when a later value exceeds it, merging bins pairwise, so re-binning is
// exact (no count is split); the resolution is then between top/4096 and top/2048.
//
// NaN and infinite values are skipped and counted apart; they never widen a range.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/annotations/quant_ranges.h"
#include "ir/tensor.h"

namespace dlc {

enum class RangeMethodKind : uint8_t { kMinMax, kPercentile, kEntropy };

struct RangeMethod {
  RangeMethodKind kind = RangeMethodKind::kEntropy;
  /// kPercentile only: 0 < percentile <= 100.
  double percentile = 99.99;
  /// As `--method` spells it: `minmax`, `percentile=99.99`, `entropy`.
  std::string str() const;
};

/// Parses `minmax`, `percentile=P` (0 < P <= 100) or `entropy`; an error lists the choices.
Expected<RangeMethod> parseRangeMethod(const std::string &text);

/// Counts of |x| in `bins` equal bins over [0, top] (see the file comment).
class AbsHistogram {
public:
  explicit AbsHistogram(int bins = 2048);
  /// Adds finite values (the caller filters NaN and Inf).
  void add(const float *xs, size_t n);
  int bins() const { return static_cast<int>(counts_.size()); }
  double top() const { return top_; }
  double binWidth() const { return top_ / static_cast<double>(counts_.size()); }
  const std::vector<double> &counts() const { return counts_; }
  double total() const { return total_; }

private:
  std::vector<double> counts_;
  double top_ = 0;
  double total_ = 0;
};

/// The upper edge of the bin where the cumulative count reaches `percentile`% of the total;
/// 0 for an empty histogram.
double percentileThreshold(const AbsHistogram &h, double percentile);

/// The KL-divergence threshold (see the file comment): the upper edge of bin i - 1 for the
/// best i in [levels, bins]; 0 for an empty histogram.
double entropyThreshold(const AbsHistogram &h, int levels = 128);

/// Accumulates one value over every sample.
class RangeCollector {
public:
  explicit RangeCollector(const RangeMethod &method);
  /// Adds every element of a floating-point tensor (f32, f16, bf16, f64); other dtypes are
  /// ignored.
  void add(const Tensor &t);
  void add(const float *xs, size_t n);
  /// Finite elements seen.
  int64_t count() const { return count_; }
  /// NaN and infinite elements skipped.
  int64_t nonFinite() const { return nonFinite_; }
  /// The range by the collector's method; nullopt when no finite element was seen.
  std::optional<ValueRange> range() const;

private:
  RangeMethod method_;
  std::optional<AbsHistogram> hist_; // percentile and entropy only
  float min_ = 0;
  float max_ = 0;
  int64_t count_ = 0;
  int64_t nonFinite_ = 0;
  std::vector<float> finite_; // scratch
};

} // namespace dlc
