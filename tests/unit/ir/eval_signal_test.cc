// Reference evaluation of the signal ops: the three windows, DFT (lengths, onesided, inverse,
// axis, complex input), STFT and MelWeightMatrix, against naive formulas in the test.
#include <cmath>
#include <complex>
#include <numbers>

#include "eval_tensor_test_util.h"

namespace dlc::evaltest {
namespace {

using Complex = std::complex<double>;
constexpr double kPi = std::numbers::pi;

std::vector<double> windowFormula(Op op, int64_t n, bool periodic) {
  const double denom = static_cast<double>(periodic ? n : n - 1);
  std::vector<double> w;
  for (int64_t i = 0; i < n; ++i) {
    const double x = 2 * kPi * static_cast<double>(i) / denom;
    if (op == Op::kHannWindow)
      w.push_back(0.5 - 0.5 * std::cos(x));
    else if (op == Op::kHammingWindow)
      w.push_back(25.0 / 46 - 21.0 / 46 * std::cos(x));
    else
      w.push_back(0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2 * x));
  }
  return w;
}

TEST(EvalWindow, PeriodicAndSymmetricFormulas) {
  for (Op op : {Op::kHannWindow, Op::kHammingWindow, Op::kBlackmanWindow})
    for (int periodic : {0, 1}) {
      Graph g;
      Node *n = g.createNode(op, {i32(g, {}, {10})}, 1, "w");
      n->setAttr("periodic", periodic);
      n->setAttr("output_datatype", DType::kF64);
      Tensor out = eval1(n);
      EXPECT_EQ(out.type().str(), "f64[10]");
      expectClose(values<double>(out), windowFormula(op, 10, periodic != 0), 1e-15);
    }
  Graph g;
  Tensor f = eval1(g.createNode(Op::kHannWindow, {scalarI64(g, 4)}, 1, "w"));
  EXPECT_EQ(f.type().str(), "f32[4]");
  expectClose(values<float>(f), std::vector<float>{0, 0.5f, 1, 0.5f}, 1e-7);
}

/// Naive transform of rows of complex samples; bins [0, keep).
std::vector<Complex> naiveDft(const std::vector<Complex> &x, int64_t n, int64_t keep,
                              bool inverse) {
  std::vector<Complex> out;
  for (int64_t k = 0; k < keep; ++k) {
    Complex s = 0;
    for (int64_t t = 0; t < std::min<int64_t>(n, static_cast<int64_t>(x.size())); ++t)
      s += x[static_cast<size_t>(t)] *
           std::polar(1.0, (inverse ? 2 : -2) * kPi * static_cast<double>(k * t) /
                               static_cast<double>(n));
    out.push_back(inverse ? s / static_cast<double>(n) : s);
  }
  return out;
}

/// DFT of a real [batch, len, 1] signal along axis 1.
void checkRealDft(int64_t len, std::optional<int64_t> dftLength, bool onesided) {
  SCOPED_TRACE("len " + std::to_string(len) + " onesided " + std::to_string(onesided));
  Graph g;
  const int64_t batch = 2, n = dftLength.value_or(len), bins = onesided ? n / 2 + 1 : n;
  const std::vector<float> x = randomFloats(batch * len, 31);
  Node *node = g.createNode(
      Op::kDFT, {f32(g, {batch, len, 1}, x), dftLength ? scalarI64(g, *dftLength) : nullptr}, 1,
      "dft");
  node->setAttr("onesided", onesided ? 1 : 0);
  Tensor out = eval1(node);
  ASSERT_EQ(out.type().str(), "f32[2," + std::to_string(bins) + ",2]");
  std::vector<float> want;
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Complex> row(x.begin() + b * len, x.begin() + (b + 1) * len);
    for (Complex c : naiveDft(row, n, bins, false)) {
      want.push_back(static_cast<float>(c.real()));
      want.push_back(static_cast<float>(c.imag()));
    }
  }
  expectClose(values<float>(out), want, 2e-6, 1e-6);
}

TEST(EvalDft, RealSignalsLengthsAndOnesided) {
  checkRealDft(5, std::nullopt, false);
  checkRealDft(5, std::nullopt, true);
  checkRealDft(6, std::nullopt, true);
  checkRealDft(5, 8, false); // zero-padded
  checkRealDft(7, 4, true);  // truncated
}

TEST(EvalDft, ComplexInputOnAnAxisAndInverseRoundTrip) {
  Graph g;
  const std::vector<float> x = randomFloats(4 * 3 * 2, 41);
  Node *fwd = g.createNode(Op::kDFT, {f32(g, {4, 3, 2}, x), nullptr, scalarI64(g, 0)}, 1, "dft");
  Tensor spec = eval1(fwd);
  ASSERT_EQ(spec.type().str(), "f32[4,3,2]");
  std::vector<float> want(24);
  for (int64_t col = 0; col < 3; ++col) {
    std::vector<Complex> sig;
    for (int64_t t = 0; t < 4; ++t)
      sig.emplace_back(x[static_cast<size_t>((t * 3 + col) * 2)],
                       x[static_cast<size_t>((t * 3 + col) * 2 + 1)]);
    std::vector<Complex> s = naiveDft(sig, 4, 4, false);
    for (int64_t k = 0; k < 4; ++k) {
      want[static_cast<size_t>((k * 3 + col) * 2)] =
          static_cast<float>(s[static_cast<size_t>(k)].real());
      want[static_cast<size_t>((k * 3 + col) * 2 + 1)] =
          static_cast<float>(s[static_cast<size_t>(k)].imag());
    }
  }
  expectClose(values<float>(spec), want, 2e-6, 1e-6);
  Node *inv =
      g.createNode(Op::kDFT, {g.addConstant("s", spec), nullptr, scalarI64(g, -3)}, 1, "idft");
  inv->setAttr("inverse", 1);
  expectClose(values<float>(eval1(inv)), x, 2e-6);
}

TEST(EvalDft, HugeLengthOnAShortSignal) {
  // Past the twiddle table's size the angles are computed on the fly.
  Graph g;
  const int64_t n = int64_t{1} << 21;
  Node *node = g.createNode(Op::kDFT, {f64(g, {1, 3, 1}, {1, 2, 3}), scalarI64(g, n)}, 1, "dft");
  node->setAttr("onesided", 1);
  Tensor out = eval1(node);
  ASSERT_EQ(out.type().str(), "f64[1,1048577,2]");
  const std::vector<double> v = values<double>(out);
  for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{12345}, n / 2}) {
    const Complex want = naiveDft({1, 2, 3}, n, k + 1, false).back();
    EXPECT_NEAR(v[static_cast<size_t>(2 * k)], want.real(), 1e-12) << k;
    EXPECT_NEAR(v[static_cast<size_t>(2 * k + 1)], want.imag(), 1e-12) << k;
  }
}

TEST(EvalDft, F64AndBadComplexDim) {
  Graph g;
  Tensor out = eval1(g.createNode(Op::kDFT, {f64(g, {1, 4, 1}, {1, 2, 3, 4})}, 1, "dft"));
  EXPECT_EQ(out.type().str(), "f64[1,4,2]");
  expectClose(values<double>(out), std::vector<double>{10, 0, -2, 2, -2, 0, -2, -2}, 1e-13);
  Node *bad = g.createNode(Op::kDFT, {f32(g, {2, 3}, randomFloats(6, 2))}, 1, "dft");
  EXPECT_EQ(evalError(bad), "node 'dft' (DFT): the last dim of input must be 1 (real) or 2 "
                            "(complex), got f32[2,3]");
}

TEST(EvalStft, WindowedFramesOnesided) {
  Graph g;
  const std::vector<float> sig = randomFloats(2 * 16, 51);
  const std::vector<double> hann = windowFormula(Op::kHannWindow, 8, true);
  std::vector<float> win(hann.begin(), hann.end());
  Node *n = g.createNode(Op::kSTFT, {f32(g, {2, 16, 1}, sig), scalarI64(g, 4), f32(g, {8}, win)}, 1,
                         "stft");
  Tensor out = eval1(n);
  ASSERT_EQ(out.type().str(), "f32[2,3,5,2]");
  std::vector<float> want;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t f = 0; f < 3; ++f) {
      std::vector<Complex> frame;
      for (int64_t t = 0; t < 8; ++t)
        frame.emplace_back(sig[static_cast<size_t>(b * 16 + f * 4 + t)] *
                           win[static_cast<size_t>(t)]);
      for (Complex c : naiveDft(frame, 8, 5, false)) {
        want.push_back(static_cast<float>(c.real()));
        want.push_back(static_cast<float>(c.imag()));
      }
    }
  expectClose(values<float>(out), want, 2e-6, 1e-6);
}

TEST(EvalStft, FrameLengthWithoutWindowTwoSided) {
  Graph g;
  const std::vector<float> sig = randomFloats(10 * 2, 52);
  Node *n = g.createNode(
      Op::kSTFT, {f32(g, {1, 10, 2}, sig), scalarI64(g, 3), nullptr, scalarI64(g, 4)}, 1, "stft");
  n->setAttr("onesided", 0);
  Tensor out = eval1(n);
  ASSERT_EQ(out.type().str(), "f32[1,3,4,2]");
  std::vector<float> want;
  for (int64_t f = 0; f < 3; ++f) {
    std::vector<Complex> frame;
    for (int64_t t = 0; t < 4; ++t)
      frame.emplace_back(sig[static_cast<size_t>((f * 3 + t) * 2)],
                         sig[static_cast<size_t>((f * 3 + t) * 2 + 1)]);
    for (Complex c : naiveDft(frame, 4, 4, false)) {
      want.push_back(static_cast<float>(c.real()));
      want.push_back(static_cast<float>(c.imag()));
    }
  }
  expectClose(values<float>(out), want, 2e-6, 1e-6);
}

TEST(EvalMelWeightMatrix, TrianglesOnTheReferenceBins) {
  // 5 bands between 100 Hz and 6000 Hz at 16 kHz, 64-point DFT: 7 mel points at bins
  // 0 1 3 5 8 11 17 (the reference's mel step divides the range by the 7 points).
  Graph g;
  Node *n = g.createNode(Op::kMelWeightMatrix,
                         {i64(g, {}, {5}), i64(g, {}, {64}), i64(g, {}, {16000}), scalarF32(g, 100),
                          scalarF32(g, 6000)},
                         1, "mel");
  Tensor out = eval1(n);
  ASSERT_EQ(out.type().str(), "f32[33,5]");
  const std::vector<int64_t> edges = {0, 1, 3, 5, 8, 11, 17};
  std::vector<float> want(33 * 5, 0.0f);
  for (int64_t i = 0; i < 5; ++i) {
    const int64_t l = edges[static_cast<size_t>(i)], c = edges[static_cast<size_t>(i + 1)],
                  r = edges[static_cast<size_t>(i + 2)];
    for (int64_t j = l; j <= c; ++j)
      want[static_cast<size_t>(j * 5 + i)] = static_cast<float>(j - l) / static_cast<float>(c - l);
    for (int64_t j = c; j < r; ++j)
      want[static_cast<size_t>(j * 5 + i)] = static_cast<float>(r - j) / static_cast<float>(r - c);
  }
  expectClose(values<float>(out), want, 1e-7);
  Node *bad = g.createNode(
      Op::kMelWeightMatrix,
      {i64(g, {}, {4}), i64(g, {}, {16}), i64(g, {}, {8000}), scalarF32(g, 0), scalarF32(g, 20000)},
      1, "mel");
  EXPECT_EQ(evalError(bad), "node 'mel' (MelWeightMatrix): mel band edge 4 (5993.9 Hz) maps to "
                            "spectrogram bin 12, outside [0, 9)");
}

} // namespace
} // namespace dlc::evaltest
