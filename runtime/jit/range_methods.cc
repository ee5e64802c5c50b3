#include "runtime/jit/range_methods.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

namespace dlc {

namespace {

constexpr int kDefaultBins = 2048;
/// ONNX Runtime's smoothing epsilon (quant_utils.smooth_distribution).
constexpr double kSmoothEps = 1e-4;

/// Normalises `d` to sum 1, then gives empty bins kSmoothEps, taken evenly from the others
/// (clamped above zero). False when `d` is all zeros.
bool normaliseAndSmooth(std::vector<double> &d) {
  double sum = 0;
  size_t zeros = 0;
  for (double x : d) {
    sum += x;
    zeros += x == 0;
  }
  if (sum <= 0)
    return false;
  const size_t nonZeros = d.size() - zeros;
  const double take = kSmoothEps * static_cast<double>(zeros) / static_cast<double>(nonZeros);
  for (double &x : d)
    x = x == 0 ? kSmoothEps : std::max(x / sum - take, 1e-12);
  return true;
}

/// KL(p || q) of two distributions of positive entries (each normalised here).
double klDivergence(const std::vector<double> &p, const std::vector<double> &q) {
  double sp = 0, sq = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    sp += p[i];
    sq += q[i];
  }
  double kl = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double pi = p[i] / sp, qi = q[i] / sq;
    kl += pi * std::log(pi / qi);
  }
  return kl;
}

} // namespace

std::string RangeMethod::str() const {
  switch (kind) {
  case RangeMethodKind::kMinMax:
    return "minmax";
  case RangeMethodKind::kPercentile:
    return fmt::format("percentile={}", percentile);
  case RangeMethodKind::kEntropy:
    return "entropy";
  }
  return "?";
}

Expected<RangeMethod> parseRangeMethod(const std::string &text) {
  RangeMethod m;
  if (text == "minmax") {
    m.kind = RangeMethodKind::kMinMax;
    return m;
  }
  if (text == "entropy") {
    m.kind = RangeMethodKind::kEntropy;
    return m;
  }
  const std::string prefix = "percentile=";
  if (text.rfind(prefix, 0) == 0) {
    const std::string p = text.substr(prefix.size());
    char *end = nullptr;
    errno = 0;
    const double v = std::strtod(p.c_str(), &end);
    if (p.empty() || *end != '\0' || errno == ERANGE || !(v > 0 && v <= 100))
      return invalidArgument("--method {}: the percentile must be a number in (0, 100], e.g. "
                             "percentile=99.99",
                             text);
    m.kind = RangeMethodKind::kPercentile;
    m.percentile = v;
    return m;
  }
  return invalidArgument("--method {}: expected minmax, percentile=P (e.g. percentile=99.99) or "
                         "entropy",
                         text);
}

AbsHistogram::AbsHistogram(int bins) : counts_(static_cast<size_t>(bins), 0.0) {
  DLC_CHECK(bins >= 2 && bins % 2 == 0, "the histogram needs an even number of bins");
}

void AbsHistogram::add(const float *xs, size_t n) {
  double largest = 0;
  for (size_t i = 0; i < n; ++i)
    largest = std::max(largest, static_cast<double>(std::fabs(xs[i])));
  if (top_ == 0) {
    top_ = largest; // zeros seen so far sit in bin 0, which they keep for any top
  } else {
    while (largest > top_) { // double the range: bins 2k and 2k+1 become bin k
      const size_t half = counts_.size() / 2;
      for (size_t k = 0; k < half; ++k)
        counts_[k] = counts_[2 * k] + counts_[2 * k + 1];
      std::fill(counts_.begin() + static_cast<std::ptrdiff_t>(half), counts_.end(), 0.0);
      top_ *= 2;
    }
  }
  const double scale = top_ > 0 ? static_cast<double>(counts_.size()) / top_ : 0;
  const size_t last = counts_.size() - 1;
  for (size_t i = 0; i < n; ++i) {
    const auto bin = static_cast<size_t>(std::fabs(xs[i]) * scale);
    counts_[std::min(bin, last)] += 1;
  }
  total_ += static_cast<double>(n);
}

double percentileThreshold(const AbsHistogram &h, double percentile) {
  if (h.total() == 0)
    return 0;
  const double target = percentile / 100.0 * h.total();
  double cumulative = 0;
  for (int i = 0; i < h.bins(); ++i) {
    cumulative += h.counts()[static_cast<size_t>(i)];
    if (cumulative >= target)
      return (i + 1) * h.binWidth();
  }
  return h.top();
}

double entropyThreshold(const AbsHistogram &h, int levels) {
  const int bins = h.bins();
  if (h.total() == 0 || h.top() == 0 || levels > bins)
    return h.top();
  const std::vector<double> &c = h.counts();
  std::vector<double> prefix(static_cast<size_t>(bins) + 1, 0.0);
  for (int i = 0; i < bins; ++i)
    prefix[static_cast<size_t>(i) + 1] = prefix[static_cast<size_t>(i)] + c[static_cast<size_t>(i)];

  int best = bins;
  double bestKl = std::numeric_limits<double>::infinity();
  std::vector<double> p, q;
  for (int i = levels; i <= bins; ++i) {
    const auto n = static_cast<size_t>(i);
    // P: the first i bins, the counts past the threshold clipped into the last one.
    p.assign(c.begin(), c.begin() + i);
    p[n - 1] += prefix[static_cast<size_t>(bins)] - prefix[n];
    // Q: the unclipped bins merged into `levels` groups, each group's count spread evenly
    // over the bins of P that are non-zero.
    q.assign(n, 0.0);
    const int merged = i / levels;
    for (int j = 0; j < levels; ++j) {
      const auto start = static_cast<size_t>(j * merged);
      const size_t end = j == levels - 1 ? n : start + static_cast<size_t>(merged);
      const double sum = prefix[end] - prefix[start];
      size_t nonZero = 0;
      for (size_t k = start; k < end; ++k)
        nonZero += p[k] != 0;
      if (nonZero == 0)
        continue;
      for (size_t k = start; k < end; ++k)
        q[k] = p[k] != 0 ? sum / static_cast<double>(nonZero) : 0;
    }
    if (!normaliseAndSmooth(p) || !normaliseAndSmooth(q))
      continue;
    const double kl = klDivergence(p, q);
    if (kl < bestKl) {
      bestKl = kl;
      best = i;
    }
  }
  return best * h.binWidth();
}

RangeCollector::RangeCollector(const RangeMethod &method) : method_(method) {
  if (method.kind != RangeMethodKind::kMinMax)
    hist_.emplace(kDefaultBins);
}

void RangeCollector::add(const Tensor &t) {
  switch (t.dtype()) {
  case DType::kF32:
    add(t.data<float>(), static_cast<size_t>(t.numElements()));
    return;
  case DType::kF16:
  case DType::kBF16:
  case DType::kF64: {
    const Tensor f = t.castTo(DType::kF32);
    add(f.data<float>(), static_cast<size_t>(f.numElements()));
    return;
  }
  default:
    return;
  }
}

void RangeCollector::add(const float *xs, size_t n) {
  finite_.clear();
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(xs[i])) {
      ++nonFinite_;
      continue;
    }
    const float x = xs[i];
    if (count_ == 0 && finite_.empty())
      min_ = max_ = x;
    min_ = std::min(min_, x);
    max_ = std::max(max_, x);
    finite_.push_back(x);
  }
  count_ += static_cast<int64_t>(finite_.size());
  if (hist_)
    hist_->add(finite_.data(), finite_.size());
}

std::optional<ValueRange> RangeCollector::range() const {
  if (count_ == 0)
    return std::nullopt;
  if (method_.kind == RangeMethodKind::kMinMax)
    return ValueRange{min_, max_};
  const double largest = std::max(std::fabs(min_), std::fabs(max_));
  const double t = method_.kind == RangeMethodKind::kPercentile
                       ? percentileThreshold(*hist_, method_.percentile)
                       : entropyThreshold(*hist_);
  const auto a = static_cast<float>(std::min(t, largest));
  return ValueRange{min_ < 0 ? -a : 0.0f, a};
}

} // namespace dlc
