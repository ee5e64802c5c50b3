// Reference evaluation of Conv, ConvTranspose and ConvInteger against direct loops written
// here (batch x out-channel x output position x in-channel x kernel offset), over every
// attribute combination at small sizes, plus the ONNX spec examples.
#include <chrono>
#include <cstdio>

#include "tests/unit/ir/eval_nn_test_util.h"

namespace dlc::nntest {
namespace {

/// One convolution's attributes and sizes, as the direct loops read them.
struct ConvCase {
  int64_t batch = 1, inC = 1, outC = 1, group = 1;
  std::vector<int64_t> in, kernel, strides, dilations, pads; // pads: [begin..., end...]
  std::string autoPad = "NOTSET";
  bool bias = false;
  std::vector<int64_t> outputPadding; // ConvTranspose
  std::vector<int64_t> outputShape;   // ConvTranspose, spatial
};

size_t rankOf(const ConvCase &c) { return c.in.size(); }
int64_t effK(const ConvCase &c, size_t a) { return (c.kernel[a] - 1) * c.dilations[a] + 1; }

/// Conv: output size and begin pad of axis a, from the ONNX formulas.
std::pair<int64_t, int64_t> convAxis(const ConvCase &c, size_t a) {
  int64_t in = c.in[a], s = c.strides[a], k = effK(c, a);
  if (c.autoPad == "VALID")
    return {(in - k) / s + 1, 0};
  if (c.autoPad == "SAME_UPPER" || c.autoPad == "SAME_LOWER") {
    int64_t out = (in + s - 1) / s;
    int64_t total = std::max<int64_t>(0, (out - 1) * s + k - in);
    return {out, c.autoPad == "SAME_UPPER" ? total / 2 : total - total / 2};
  }
  return {(in + c.pads[a] + c.pads[a + rankOf(c)] - k) / s + 1, c.pads[a]};
}

/// ConvTranspose: output size and begin pad of axis a (ONNX ConvTranspose formulas).
std::pair<int64_t, int64_t> transposeAxis(const ConvCase &c, size_t a) {
  int64_t in = c.in[a], s = c.strides[a], k = effK(c, a);
  int64_t op = c.outputPadding.empty() ? 0 : c.outputPadding[a];
  bool same = c.autoPad == "SAME_UPPER" || c.autoPad == "SAME_LOWER";
  if (!c.outputShape.empty() || same) {
    int64_t out = c.outputShape.empty() ? in * s : c.outputShape[a];
    int64_t total = s * (in - 1) + op + k - out;
    int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2); // floor
    return {out, c.autoPad == "SAME_UPPER" ? half : total - half};
  }
  int64_t pb = c.autoPad == "VALID" ? 0 : c.pads[a],
          pe = c.autoPad == "VALID" ? 0 : c.pads[a + rankOf(c)];
  return {s * (in - 1) + op + k - pb - pe, pb};
}

/// Walks every index tuple of `extent` in row-major order.
bool next(std::vector<int64_t> &idx, const std::vector<int64_t> &extent) {
  for (size_t a = idx.size(); a-- > 0;) {
    if (++idx[a] < extent[a])
      return true;
    idx[a] = 0;
  }
  return false;
}
int64_t flat(const std::vector<int64_t> &idx, const std::vector<int64_t> &extent) {
  int64_t f = 0;
  for (size_t a = 0; a < idx.size(); ++a)
    f = f * extent[a] + idx[a];
  return f;
}
int64_t volume(const std::vector<int64_t> &v) {
  int64_t p = 1;
  for (int64_t e : v)
    p *= e;
  return p;
}

/// Direct Conv: y[b, m, o] = bias[m] + sum over c, k of x[b, g*cg + c, o*s - p + k*d] * w[m, c, k].
std::vector<double> directConv(const ConvCase &c, const std::vector<double> &x,
                               const std::vector<double> &w, const std::vector<double> &bias,
                               std::vector<int64_t> &outShape) {
  size_t n = rankOf(c);
  std::vector<int64_t> out(n), pb(n);
  for (size_t a = 0; a < n; ++a)
    std::tie(out[a], pb[a]) = convAxis(c, a);
  outShape = {c.batch, c.outC};
  outShape.insert(outShape.end(), out.begin(), out.end());
  int64_t cg = c.inC / c.group, mg = c.outC / c.group;
  std::vector<double> y(static_cast<size_t>(c.batch * c.outC * volume(out)));
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t m = 0; m < c.outC; ++m) {
      int64_t g = m / mg;
      std::vector<int64_t> o(n, 0);
      do {
        double acc = c.bias ? bias[static_cast<size_t>(m)] : 0.0;
        for (int64_t ci = 0; ci < cg; ++ci) {
          std::vector<int64_t> k(n, 0);
          do {
            std::vector<int64_t> i(n);
            bool inside = true;
            for (size_t a = 0; a < n; ++a) {
              i[a] = o[a] * c.strides[a] - pb[a] + k[a] * c.dilations[a];
              inside = inside && i[a] >= 0 && i[a] < c.in[a];
            }
            if (!inside)
              continue;
            double xv =
                x[static_cast<size_t>((b * c.inC + g * cg + ci) * volume(c.in) + flat(i, c.in))];
            double wv =
                w[static_cast<size_t>((m * cg + ci) * volume(c.kernel) + flat(k, c.kernel))];
            acc += xv * wv;
          } while (next(k, c.kernel));
        }
        y[static_cast<size_t>((b * c.outC + m) * volume(out) + flat(o, out))] = acc;
      } while (next(o, out));
    }
  return y;
}

/// Direct ConvTranspose: y[b, g*mg + m, i*s - p + k*d] += x[b, g*cg + c, i] * w[g*cg + c, m, k].
std::vector<double> directConvTranspose(const ConvCase &c, const std::vector<double> &x,
                                        const std::vector<double> &w,
                                        const std::vector<double> &bias,
                                        std::vector<int64_t> &outShape) {
  size_t n = rankOf(c);
  std::vector<int64_t> out(n), pb(n);
  for (size_t a = 0; a < n; ++a)
    std::tie(out[a], pb[a]) = transposeAxis(c, a);
  outShape = {c.batch, c.outC};
  outShape.insert(outShape.end(), out.begin(), out.end());
  int64_t cg = c.inC / c.group, mg = c.outC / c.group;
  std::vector<double> y(static_cast<size_t>(c.batch * c.outC * volume(out)));
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t m = 0; m < c.outC; ++m)
      for (int64_t p = 0; p < volume(out); ++p)
        y[static_cast<size_t>((b * c.outC + m) * volume(out) + p)] =
            c.bias ? bias[static_cast<size_t>(m)] : 0.0;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t ch = 0; ch < c.inC; ++ch) {
      int64_t g = ch / cg;
      std::vector<int64_t> i(n, 0);
      do {
        double xv = x[static_cast<size_t>((b * c.inC + ch) * volume(c.in) + flat(i, c.in))];
        for (int64_t m = 0; m < mg; ++m) {
          std::vector<int64_t> k(n, 0);
          do {
            std::vector<int64_t> o(n);
            bool inside = true;
            for (size_t a = 0; a < n; ++a) {
              o[a] = i[a] * c.strides[a] - pb[a] + k[a] * c.dilations[a];
              inside = inside && o[a] >= 0 && o[a] < out[a];
            }
            if (!inside)
              continue;
            double wv =
                w[static_cast<size_t>((ch * mg + m) * volume(c.kernel) + flat(k, c.kernel))];
            y[static_cast<size_t>((b * c.outC + g * mg + m) * volume(out) + flat(o, out))] +=
                xv * wv;
          } while (next(k, c.kernel));
        }
      } while (next(i, c.in));
    }
  return y;
}

AttrMap convAttrs(const ConvCase &c, bool transpose) {
  AttrMap a;
  a["group"] = Attribute(c.group);
  a["strides"] = Attribute(c.strides);
  a["dilations"] = Attribute(c.dilations);
  a["kernel_shape"] = Attribute(c.kernel);
  if (c.autoPad == "NOTSET")
    a["pads"] = Attribute(c.pads);
  else
    a["auto_pad"] = Attribute(c.autoPad);
  if (transpose && !c.outputPadding.empty())
    a["output_padding"] = Attribute(c.outputPadding);
  if (transpose && !c.outputShape.empty())
    a["output_shape"] = Attribute(c.outputShape);
  return a;
}

std::vector<int64_t> concat(std::vector<int64_t> a, const std::vector<int64_t> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// A random case of `rank` spatial axes (sizes kept small so the direct loops stay fast).
ConvCase randomCase(std::mt19937 &rng, size_t rank, bool transpose) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  ConvCase c;
  c.batch = pick(1, 2);
  int64_t groupKind = pick(0, 2); // 1, 2 or depthwise
  int64_t perGroupIn = groupKind == 2 ? 1 : pick(1, 3);
  c.group = groupKind == 0 ? 1 : groupKind == 1 ? 2 : pick(2, 4);
  c.inC = perGroupIn * c.group;
  c.outC = (groupKind == 2 ? pick(1, 2) : pick(1, 3)) * c.group;
  const char *modes[] = {"NOTSET", "NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
  c.autoPad = modes[pick(0, 5)];
  int64_t maxIn = rank == 3 ? 5 : rank == 2 ? 8 : 12;
  for (size_t a = 0; a < rank; ++a) {
    c.kernel.push_back(pick(1, 3));
    c.strides.push_back(pick(1, 3));
    c.dilations.push_back(pick(1, 2));
    c.in.push_back(pick(1, maxIn));
  }
  c.pads.assign(2 * rank, 0);
  for (int64_t &p : c.pads)
    p = pick(0, 2);
  for (size_t a = 0; a < rank; ++a) { // keep every output axis non-empty
    int64_t need = effK(c, a) - c.in[a] - c.pads[a] - c.pads[a + rank];
    if (need > 0)
      c.in[a] += need;
    if (c.autoPad == "VALID" && c.in[a] < effK(c, a))
      c.in[a] = effK(c, a);
  }
  c.bias = pick(0, 1) == 1;
  if (transpose) {
    if (pick(0, 1) == 1) {
      c.outputPadding.assign(rank, 0);
      for (size_t a = 0; a < rank; ++a) // output_padding must be smaller than stride or dilation
        c.outputPadding[a] = pick(0, std::max(c.strides[a], c.dilations[a]) - 1);
    }
    for (size_t a = 0; a < rank; ++a) // keep every output axis non-empty
      while (transposeAxis(c, a).first < 1)
        c.pads[c.pads[a] > 0 ? a : a + rank] -= 1;
    if (c.autoPad == "NOTSET" && pick(0, 3) == 0) {
      std::vector<int64_t> shape;
      for (size_t a = 0; a < rank; ++a)
        shape.push_back(transposeAxis(c, a).first + pick(0, 1));
      c.outputShape = shape;
    }
  }
  return c;
}

std::string describe(const ConvCase &c) {
  auto v = [](const std::vector<int64_t> &x) {
    std::string s = "[";
    for (int64_t e : x)
      s += std::to_string(e) + ",";
    return s + "]";
  };
  return "N=" + std::to_string(c.batch) + " C=" + std::to_string(c.inC) +
         " M=" + std::to_string(c.outC) + " group=" + std::to_string(c.group) + " in=" + v(c.in) +
         " k=" + v(c.kernel) + " s=" + v(c.strides) + " d=" + v(c.dilations) +
         " pads=" + v(c.pads) + " auto_pad=" + c.autoPad + " bias=" + std::to_string(c.bias) +
         " output_padding=" + v(c.outputPadding) + " output_shape=" + v(c.outputShape);
}

class ConvEval : public NnEval {
protected:
  void check(const ConvCase &c, bool transpose, DType dtype, uint32_t seed) {
    std::vector<int64_t> xShape = concat({c.batch, c.inC}, c.in);
    std::vector<int64_t> wShape = transpose ? concat({c.inC, c.outC / c.group}, c.kernel)
                                            : concat({c.outC, c.inC / c.group}, c.kernel);
    Tensor x = randomTensor(xShape, seed, dtype), w = randomTensor(wShape, seed + 1, dtype);
    Tensor b = c.bias ? randomTensor({c.outC}, seed + 2, dtype) : Tensor();
    std::vector<int64_t> outShape;
    std::vector<double> expected =
        transpose ? directConvTranspose(c, values(x), values(w), values(b), outShape)
                  : directConv(c, values(x), values(w), values(b), outShape);
    std::vector<Tensor> inputs{x, w};
    if (c.bias)
      inputs.push_back(b);
    Tensor y = eval1(transpose ? Op::kConvTranspose : Op::kConv, inputs, convAttrs(c, transpose));
    ASSERT_EQ(y.shape(), outShape) << describe(c);
    EXPECT_EQ(y.dtype(), dtype);
    double tol = dtype == DType::kF64 ? 1e-12 : dtype == DType::kF32 ? 1e-5 : 1e-2;
    expectClose(y, expected, tol, tol, describe(c));
  }
};

TEST_F(ConvEval, RandomAttributeCombinations1D2D3D) {
  std::mt19937 rng(2024);
  for (int iter = 0; iter < 240; ++iter) {
    size_t rank = 1 + static_cast<size_t>(iter % 3);
    ConvCase c = randomCase(rng, rank, false);
    check(c, false, iter % 4 == 3 ? DType::kF64 : DType::kF32, 100 + static_cast<uint32_t>(iter));
  }
}

TEST_F(ConvEval, TransposeRandomAttributeCombinations1D2D3D) {
  std::mt19937 rng(4048);
  for (int iter = 0; iter < 240; ++iter) {
    size_t rank = 1 + static_cast<size_t>(iter % 3);
    ConvCase c = randomCase(rng, rank, true);
    check(c, true, iter % 4 == 3 ? DType::kF64 : DType::kF32, 500 + static_cast<uint32_t>(iter));
  }
}

TEST_F(ConvEval, HalfTypesComputeInF32) {
  ConvCase c;
  c.inC = 4;
  c.outC = 6;
  c.group = 2;
  c.in = {6, 7};
  c.kernel = {3, 2};
  c.strides = {2, 1};
  c.dilations = {1, 2};
  c.pads = {1, 0, 1, 1};
  c.bias = true;
  check(c, false, DType::kF16, 7);
  check(c, false, DType::kBF16, 8);
  check(c, true, DType::kF16, 9);
}

TEST_F(ConvEval, LargeImageUsesChunkedIm2colAnd1x1FastPath) {
  // 3x3 over 64 channels of 48x48: the im2col scratch (576 x 2304) is filled in one chunk;
  // a 1x1 convolution reads X directly. Both against the direct loops.
  ConvCase c;
  c.inC = 16;
  c.outC = 8;
  c.in = {40, 36};
  c.kernel = {3, 3};
  c.strides = {1, 1};
  c.dilations = {1, 1};
  c.pads = {1, 1, 1, 1};
  check(c, false, DType::kF32, 11);
  c.kernel = {1, 1};
  c.pads = {0, 0, 0, 0};
  c.bias = true;
  check(c, false, DType::kF32, 12);
}

TEST_F(ConvEval, SpecExampleWithAndWithoutPadding) {
  // onnx/backend/test/case/node/conv.py: x = 0..24 as 5x5, W = all ones 3x3.
  std::vector<float> xs(25);
  for (int i = 0; i < 25; ++i)
    xs[static_cast<size_t>(i)] = static_cast<float>(i);
  Tensor x = f32({1, 1, 5, 5}, xs), w = f32({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  Tensor padded = eval1(
      Op::kConv, {x, w},
      {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  EXPECT_EQ(values(padded),
            (std::vector<double>{12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
                                 117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84}));
  Tensor valid = eval1(
      Op::kConv, {x, w},
      {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{0, 0, 0, 0}}});
  EXPECT_EQ(values(valid), (std::vector<double>{54, 63, 72, 99, 108, 117, 144, 153, 162}));
}

TEST_F(ConvEval, TransposeSpecExample) {
  // onnx/backend/test/case/node/convtranspose.py, test_convtranspose.
  Tensor x = f32({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  Tensor w = f32({1, 2, 3, 3}, std::vector<float>(18, 1.0f));
  Tensor y = eval1(Op::kConvTranspose, {x, w});
  std::vector<double> plane{0,  1,  3, 3,  2,  3,  8,  15, 12, 7,  9,  21, 36,
                            27, 15, 9, 20, 33, 24, 13, 6,  13, 21, 15, 8};
  std::vector<double> expected = plane;
  expected.insert(expected.end(), plane.begin(), plane.end());
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 2, 5, 5}));
  EXPECT_EQ(values(y), expected);
}

TEST_F(ConvEval, ConvIntegerWithZeroPoints) {
  // onnx/backend/test/case/node/convinteger.py: x = 2..10 (u8) with zero point 1, W = 1s.
  Tensor x = Tensor::fromVector<uint8_t>(DType::kU8, {1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10});
  Tensor w = Tensor::fromVector<uint8_t>(DType::kU8, {1, 1, 2, 2}, {1, 1, 1, 1});
  Tensor xzp = Tensor::fromVector<uint8_t>(DType::kU8, {}, {1});
  Tensor y = eval1(Op::kConvInteger, {x, w, xzp});
  EXPECT_EQ(y.dtype(), DType::kI32);
  EXPECT_EQ(values(y), (std::vector<double>{12, 16, 24, 28}));
  Tensor padded =
      eval1(Op::kConvInteger, {x, w, xzp}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  EXPECT_EQ(values(padded),
            (std::vector<double>{1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9}));
}

TEST_F(ConvEval, ConvIntegerPerChannelWeightZeroPointsAgainstFloatConv) {
  // i8 weights with one zero point per output channel, u8 input, groups and strides: equal to
  // a float Conv of the zero-point-shifted values (exact in f64).
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> u8(0, 255), i8(-128, 127);
  std::vector<uint8_t> xs(2 * 4 * 6 * 5);
  std::vector<int8_t> ws(6 * 2 * 3 * 2);
  for (auto &v : xs)
    v = static_cast<uint8_t>(u8(rng));
  for (auto &v : ws)
    v = static_cast<int8_t>(i8(rng));
  std::vector<int8_t> wzp{3, -2, 0, 5, -7, 1};
  Tensor x = Tensor::fromVector<uint8_t>(DType::kU8, {2, 4, 6, 5}, xs);
  Tensor w = Tensor::fromVector<int8_t>(DType::kI8, {6, 2, 3, 2}, ws);
  Tensor xz = Tensor::fromVector<uint8_t>(DType::kU8, {}, {128});
  Tensor wz = Tensor::fromVector<int8_t>(DType::kI8, {6}, wzp);
  AttrMap attrs{{"group", Attribute(2)},
                {"strides", std::vector<int64_t>{2, 1}},
                {"pads", std::vector<int64_t>{1, 0, 0, 1}}};
  Tensor y = eval1(Op::kConvInteger, {x, w, xz, wz}, attrs);
  Tensor xf = Tensor::zeros(DType::kF64, x.shape()), wf = Tensor::zeros(DType::kF64, w.shape());
  for (int64_t i = 0; i < x.numElements(); ++i)
    xf.mutableData<double>()[i] = xs[static_cast<size_t>(i)] - 128.0;
  for (int64_t i = 0; i < w.numElements(); ++i)
    wf.mutableData<double>()[i] = ws[static_cast<size_t>(i)] - wzp[static_cast<size_t>(i / 12)];
  Tensor ref = eval1(Op::kConv, {xf, wf}, attrs);
  EXPECT_EQ(y.shape(), ref.shape());
  EXPECT_EQ(values(y), values(ref));
}

TEST_F(ConvEval, Errors) {
  Tensor x = randomTensor({1, 2, 4, 4}, 1), w = randomTensor({3, 2, 3, 3}, 2);
  EXPECT_EQ(evalError(Op::kConv, {x, w.castTo(DType::kF64)}),
            "node 'n' (Conv): weight W has dtype f64 but input X has f32");
  EXPECT_EQ(evalError(Op::kConv, {x.castTo(DType::kI32), w.castTo(DType::kI32)}),
            "node 'n' (Conv): input X must be a float tensor, got i32");
  EXPECT_EQ(evalError(Op::kConv, {x, randomTensor({3, 1, 3, 3}, 3)}),
            "node 'n' (Conv): input channels (2) must equal weight channels (1) * group (1)");
  Tensor xq = Tensor::fromVector<uint8_t>(DType::kU8, {1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor wq = Tensor::fromVector<uint8_t>(DType::kU8, {2, 1, 1, 1}, {1, 2});
  EXPECT_EQ(evalError(Op::kConvInteger,
                      {xq, wq, Tensor(), Tensor::fromVector<uint8_t>(DType::kU8, {3}, {1, 2, 3})}),
            "node 'n' (ConvInteger): input w zero point must be a scalar or hold one value per "
            "output channel, got shape [3]");
}

/// Not run by default: times a ResNet-style 3x3 convolution (64 -> 64 channels, 56x56); run
/// with --gtest_also_run_disabled_tests --gtest_filter='*Conv3x3_56x56x64*' on a release build.
TEST_F(ConvEval, DISABLED_Conv3x3_56x56x64) {
  Tensor x = randomTensor({1, 64, 56, 56}, 1), w = randomTensor({64, 64, 3, 3}, 2);
  Tensor b = randomTensor({64}, 3);
  AttrMap attrs{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  eval1(Op::kConv, {x, w, b}, attrs);
  const int reps = 10;
  auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r)
    eval1(Op::kConv, {x, w, b}, attrs);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
  double flops = 2.0 * 64 * 64 * 9 * 56 * 56;
  std::printf("conv 3x3 64->64 56x56: %.3f ms, %.1f GFLOP/s\n", s * 1e3, flops / s / 1e9);
}

/// Not run by default: times the 53 convolutions of ResNet-50 at batch 1, 224x224 (random
/// weights), the bulk of the model's arithmetic (~4.1 GMAC).
TEST_F(ConvEval, DISABLED_ResNet50Convs) {
  struct Layer {
    int64_t in, out, size, k, s;
  };
  std::vector<Layer> layers{{3, 64, 224, 7, 2}};
  int64_t channels = 64, size = 56;
  const int64_t widths[] = {64, 128, 256, 512}, blocks[] = {3, 4, 6, 3};
  for (int stage = 0; stage < 4; ++stage)
    for (int64_t b = 0; b < blocks[stage]; ++b) {
      int64_t w = widths[stage], stride = stage > 0 && b == 0 ? 2 : 1;
      layers.push_back({channels, w, size, 1, 1});
      layers.push_back({w, w, size, 3, stride});
      int64_t outSize = size / stride;
      layers.push_back({w, 4 * w, outSize, 1, 1});
      if (b == 0)
        layers.push_back({channels, 4 * w, size, 1, stride});
      channels = 4 * w;
      size = outSize;
    }
  double flops = 0, seconds = 0;
  uint32_t seed = 1;
  for (const Layer &l : layers) {
    Tensor x = randomTensor({1, l.in, l.size, l.size}, seed++);
    Tensor w = randomTensor({l.out, l.in, l.k, l.k}, seed++);
    int64_t p = l.k / 2, out = (l.size + 2 * p - l.k) / l.s + 1;
    auto t0 = std::chrono::steady_clock::now();
    Tensor y = eval1(
        Op::kConv, {x, w},
        {{"pads", std::vector<int64_t>{p, p, p, p}}, {"strides", std::vector<int64_t>{l.s, l.s}}});
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, l.out, out, out}));
    flops += 2.0 * l.out * l.in * l.k * l.k * out * out;
  }
  std::printf("ResNet-50 convolutions (%zu layers, %.2f GFLOP): %.3f s, %.1f GFLOP/s\n",
              layers.size(), flops / 1e9, seconds, flops / seconds / 1e9);
}

} // namespace
} // namespace dlc::nntest
