// Reference evaluation of the signal ops: BlackmanWindow, HammingWindow, HannWindow, DFT,
// STFT, MelWeightMatrix, after the ONNX reference implementation.
//
// Transforms are direct O(N^2) sums in f64 over exact twiddle tables (cos/sin of 2 pi m / N),
// rounded once to the input type: the oracle favours accuracy over speed. DFT zero-pads or
// truncates the signal to dft_length; `onesided` keeps bins [0, N/2] (for complex input too,
// as the reference does); `inverse` uses e^{+i...} and divides by N. STFT without a window or
// frame_length uses one frame of the whole signal.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "ir/eval/eval_compute.h"
#include "ir/eval/eval_util.h"
#include "ir/eval/misc_eval.h"

namespace dlc::eval {

namespace {

constexpr double kPi = std::numbers::pi;

enum class Window { kBlackman, kHamming, kHann };

MiscEvalResult evalWindow(const Node &node, const std::vector<Tensor> &in, Window kind) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const int64_t n = types[0].shape[0].value();
  // The symmetric window of size 1 divides by zero and is NaN, as in the reference.
  const double period = static_cast<double>(node.getInt("periodic") != 0 ? n : n - 1);
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(DType::kF64, {n}));
  double *v = out.mutableData<double>();
  for (int64_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(i);
    switch (kind) {
    case Window::kBlackman:
      v[i] = 0.42 - std::cos(x * kPi * 2 / period) / 2 + std::cos(x * kPi * 4 / period) * 0.08;
      break;
    case Window::kHamming:
      v[i] = 25.0 / 46.0 - std::cos(x * kPi * 2 / period) * (1 - 25.0 / 46.0);
      break;
    case Window::kHann:
      v[i] = std::pow(std::sin(x * kPi / period), 2);
      break;
    }
  }
  return std::vector<Tensor>{castTensor(out, types[0].dtype)};
}

/// cos and sin of 2 pi m / N for m in [0, N): a table up to kMaxTable entries (a huge
/// dft_length on a short signal must not allocate N entries), computed on the fly beyond.
class Twiddles {
public:
  static constexpr int64_t kMaxTable = int64_t{1} << 20;
  explicit Twiddles(int64_t n) : n_(n) {
    for (int64_t m = 0; n <= kMaxTable && m < n; ++m) {
      cos_.push_back(std::cos(angle(m)));
      sin_.push_back(std::sin(angle(m)));
    }
  }
  int64_t size() const { return n_; }
  double cos(int64_t m) const {
    return cos_.empty() ? std::cos(angle(m)) : cos_[static_cast<size_t>(m)];
  }
  double sin(int64_t m) const {
    return sin_.empty() ? std::sin(angle(m)) : sin_[static_cast<size_t>(m)];
  }

private:
  double angle(int64_t m) const {
    return 2 * kPi * static_cast<double>(m) / static_cast<double>(n_);
  }
  int64_t n_;
  std::vector<double> cos_, sin_;
};

/// Bins [0, bins) of the length-N transform of the complex signal (re, im) of `len` samples
/// (zero-padded or truncated to N), as (re, im) pairs at out[2k], out[2k+1].
void transform(const double *re, const double *im, int64_t len, const Twiddles &tw, int64_t bins,
               bool inverse, double *out) {
  const int64_t n = std::min(len, tw.size());
  const double sign = inverse ? 1.0 : -1.0;
  const double scale = inverse ? 1.0 / static_cast<double>(tw.size()) : 1.0;
  for (int64_t k = 0; k < bins; ++k) {
    double sr = 0, si = 0;
    for (int64_t t = 0; t < n; ++t) {
      const auto m =
          static_cast<int64_t>((static_cast<unsigned __int128>(k) * static_cast<uint64_t>(t)) %
                               static_cast<uint64_t>(tw.size()));
      const double c = tw.cos(m), s = sign * tw.sin(m);
      sr += re[t] * c - im[t] * s;
      si += re[t] * s + im[t] * c;
    }
    out[2 * k] = sr * scale;
    out[2 * k + 1] = si * scale;
  }
}

Status checkComplexDim(const Tensor &x, const char *what) {
  const int64_t c = x.shape().back();
  if (c != 1 && c != 2)
    return invalidArgument("the last dim of {} must be 1 (real) or 2 (complex), got {}", what,
                           x.type().str());
  return Status::ok();
}

bool present(const std::vector<Tensor> &in, size_t i) { return in.size() > i && !in[i].empty(); }

/// numpy's floor division of doubles (npy_divmod), which MelWeightMatrix's bins go through.
double floorDivide(double a, double b) {
  const double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0)))
    div -= 1.0;
  if (div == 0)
    return std::copysign(0.0, a / b);
  double floordiv = std::floor(div);
  if (div - floordiv > 0.5)
    floordiv += 1.0;
  return floordiv;
}

} // namespace

MiscEvalResult evalBlackmanWindow(const Node &node, const std::vector<Tensor> &in) {
  return evalWindow(node, in, Window::kBlackman);
}
MiscEvalResult evalHammingWindow(const Node &node, const std::vector<Tensor> &in) {
  return evalWindow(node, in, Window::kHamming);
}
MiscEvalResult evalHannWindow(const Node &node, const std::vector<Tensor> &in) {
  return evalWindow(node, in, Window::kHann);
}

MiscEvalResult evalDft(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const Tensor &x = in[0];
  DLC_RETURN_IF_ERROR(checkComplexDim(x, "input"));
  const int64_t r = x.rank(), c = x.shape().back();
  int64_t axis = present(in, 2) ? in[2].elementAsInt64(0) : -2;
  axis = axis < 0 ? axis + r : axis;
  const std::vector<int64_t> outShape = types[0].shape.sizes();
  const size_t a = static_cast<size_t>(axis);
  const int64_t len = x.shape()[a], bins = outShape[a];
  const int64_t n = present(in, 1) ? in[1].elementAsInt64(0) : len;
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < a; ++d)
    outer *= x.shape()[d];
  for (size_t d = a + 1; d + 1 < x.shape().size(); ++d)
    inner *= x.shape()[d];
  DLC_ASSIGN_OR_RETURN(Tensor result, newTensor(DType::kF64, outShape));
  double *out = result.mutableData<double>();
  const std::vector<double> v = floatValues<double>(x);
  std::vector<double> re(static_cast<size_t>(len)), im(static_cast<size_t>(len));
  std::vector<double> spec(static_cast<size_t>(2 * bins));
  const Twiddles tw(n);
  const bool inverse = node.getInt("inverse") != 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t t = 0; t < len; ++t) {
        const size_t at = static_cast<size_t>(((o * len + t) * inner + i) * c);
        re[static_cast<size_t>(t)] = v[at];
        im[static_cast<size_t>(t)] = c == 2 ? v[at + 1] : 0.0;
      }
      transform(re.data(), im.data(), len, tw, bins, inverse, spec.data());
      for (int64_t k = 0; k < bins; ++k)
        for (int64_t p = 0; p < 2; ++p)
          out[((o * bins + k) * inner + i) * 2 + p] = spec[static_cast<size_t>(2 * k + p)];
    }
  return std::vector<Tensor>{castTensor(result, x.dtype())};
}

MiscEvalResult evalStft(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(auto types, constantOutputTypes(node, in));
  const Tensor &x = in[0];
  DLC_RETURN_IF_ERROR(checkComplexDim(x, "input signal"));
  const int64_t batch = x.shape()[0], len = x.shape()[1], c = x.shape()[2];
  const int64_t step = in[1].elementAsInt64(0);
  int64_t frameLength = len;
  if (present(in, 3))
    frameLength = in[3].elementAsInt64(0);
  else if (present(in, 2))
    frameLength = in[2].numElements();
  if (present(in, 2) && in[2].numElements() != frameLength)
    return invalidArgument("window has {} elements but frame_length is {}", in[2].numElements(),
                           frameLength);
  if (frameLength < 1 || frameLength > len)
    return invalidArgument("frame_length {} must be in [1, {}] (the signal length)", frameLength,
                           len);
  const int64_t frames = (len - frameLength) / step + 1;
  const int64_t bins = node.getInt("onesided") != 0 ? frameLength / 2 + 1 : frameLength;
  DLC_ASSIGN_OR_RETURN(Tensor result, newTensor(DType::kF64, {batch, frames, bins, 2}));
  double *out = result.mutableData<double>();
  std::vector<double> window(static_cast<size_t>(frameLength), 1.0);
  if (present(in, 2))
    window = floatValues<double>(in[2]);
  const std::vector<double> v = floatValues<double>(x);
  std::vector<double> re(static_cast<size_t>(frameLength)), im(static_cast<size_t>(frameLength));
  const Twiddles tw(frameLength);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t t = 0; t < frameLength; ++t) {
        const size_t at = static_cast<size_t>((b * len + f * step + t) * c);
        const double w = window[static_cast<size_t>(t)];
        re[static_cast<size_t>(t)] = v[at] * w;
        im[static_cast<size_t>(t)] = c == 2 ? v[at + 1] * w : 0.0;
      }
      transform(re.data(), im.data(), frameLength, tw, bins, false,
                out + (b * frames + f) * bins * 2);
    }
  return std::vector<Tensor>{castTensor(result, x.dtype())};
}

MiscEvalResult evalMelWeightMatrix(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const int64_t mels = in[0].elementAsInt64(0), dftLength = in[1].elementAsInt64(0);
  const int64_t sampleRate = in[2].elementAsInt64(0);
  if (sampleRate <= 0)
    return invalidArgument("input sample_rate must be positive, got {}", sampleRate);
  const double lower = in[3].elementAsDouble(0), upper = in[4].elementAsDouble(0);
  const int64_t rows = dftLength / 2 + 1;
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(DType::kF64, {rows, mels}));
  // mels + 2 points evenly spaced on the mel scale, mel(f) = 2595 log10(1 + f / 700) (the
  // reference divides the range by the number of points), converted back to hertz and then
  // to spectrogram bins, all in f64.
  const double lowMel = 2595 * std::log10(1 + lower / 700);
  const double melStep =
      (2595 * std::log10(1 + upper / 700) - lowMel) / static_cast<double>(mels + 2);
  std::vector<int64_t> edges;
  for (int64_t i = 0; i < mels + 2; ++i) {
    const double mel = static_cast<double>(i) * melStep + lowMel;
    const double hz = 700 * (std::pow(10.0, mel / 2595) - 1);
    const double bin =
        floorDivide(static_cast<double>(dftLength + 1) * hz, static_cast<double>(sampleRate));
    if (!(bin >= 0 && bin < static_cast<double>(rows)))
      return outOfRange("mel band edge {} ({:.1f} Hz) maps to spectrogram bin {}, outside [0, {})",
                        i, hz, bin, rows);
    edges.push_back(static_cast<int64_t>(bin));
  }
  double *w = out.mutableData<double>();
  for (int64_t i = 0; i < mels; ++i) {
    const int64_t left = edges[static_cast<size_t>(i)], center = edges[static_cast<size_t>(i + 1)];
    const int64_t right = edges[static_cast<size_t>(i + 2)];
    if (center == left)
      w[center * mels + i] = 1;
    for (int64_t j = left; center != left && j <= center; ++j)
      w[j * mels + i] = static_cast<double>(j - left) / static_cast<double>(center - left);
    for (int64_t j = center; j < right; ++j)
      w[j * mels + i] = static_cast<double>(right - j) / static_cast<double>(right - center);
  }
  return std::vector<Tensor>{castTensor(out, types[0].dtype)};
}

} // namespace dlc::eval
