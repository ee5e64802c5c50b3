// Reference evaluation of the pooling ops against direct loops written here, over every
// attribute combination at small sizes, plus spec examples, NaN handling, MaxPool's Indices
// in both storage orders, MaxUnpool, RoiAlign and MaxRoiPool.
#include <limits>

#include "tests/unit/ir/eval_nn_test_util.h"

namespace dlc::nntest {
namespace {

struct PoolCase {
  int64_t batch = 1, channels = 1;
  std::vector<int64_t> in, kernel, strides, dilations, pads;
  std::string autoPad = "NOTSET";
  bool ceil = false, countIncludePad = false;
  int64_t p = 2;
};

/// Output size and begin pad of axis a (ONNX pooling formulas, computed independently).
std::pair<int64_t, int64_t> poolAxis(const PoolCase &c, size_t a) {
  int64_t in = c.in[a], s = c.strides[a], k = (c.kernel[a] - 1) * c.dilations[a] + 1;
  if (c.autoPad == "SAME_UPPER" || c.autoPad == "SAME_LOWER") {
    int64_t out = (in + s - 1) / s;
    int64_t total = std::max<int64_t>(0, (out - 1) * s + k - in);
    return {out, c.autoPad == "SAME_UPPER" ? total / 2 : total - total / 2};
  }
  // VALID: no padding; ceil_mode still applies, as in ONNX's shape inference.
  bool valid = c.autoPad == "VALID";
  int64_t pb = valid ? 0 : c.pads[a], pe = valid ? 0 : c.pads[a + c.in.size()];
  int64_t span = in + pb + pe - k;
  if (!c.ceil)
    return {span / s + 1, pb};
  int64_t out = (span + s - 1) / s + 1;
  if ((out - 1) * s >= in + pb)
    --out; // a window may not start in the end padding
  return {out, pb};
}

std::pair<int64_t, int64_t> padExtent(const PoolCase &c, size_t a) {
  if (c.autoPad != "NOTSET") {
    int64_t pb = poolAxis(c, a).second, out = poolAxis(c, a).first;
    int64_t k = (c.kernel[a] - 1) * c.dilations[a] + 1;
    int64_t total =
        c.autoPad == "VALID" ? 0 : std::max<int64_t>(0, (out - 1) * c.strides[a] + k - c.in[a]);
    return {pb, total - pb};
  }
  return {c.pads[a], c.pads[a + c.in.size()]};
}

bool next(std::vector<int64_t> &idx, const std::vector<int64_t> &extent) {
  for (size_t a = idx.size(); a-- > 0;) {
    if (++idx[a] < extent[a])
      return true;
    idx[a] = 0;
  }
  return false;
}

enum class Kind { kAvg, kMax, kLp };

/// Direct pooling. For max, also the row-major and column-major flat indices.
std::vector<double> directPool(const PoolCase &c, Kind kind, const std::vector<double> &x,
                               std::vector<int64_t> &outShape, std::vector<int64_t> *rowIdx,
                               std::vector<int64_t> *colIdx) {
  size_t n = c.in.size();
  std::vector<int64_t> out(n), pb(n), pe(n);
  for (size_t a = 0; a < n; ++a) {
    out[a] = poolAxis(c, a).first;
    std::tie(pb[a], pe[a]) = padExtent(c, a);
  }
  outShape = {c.batch, c.channels};
  outShape.insert(outShape.end(), out.begin(), out.end());
  int64_t inSize = 1, outSize = 1;
  for (size_t a = 0; a < n; ++a) {
    inSize *= c.in[a];
    outSize *= out[a];
  }
  std::vector<double> y;
  for (int64_t plane = 0; plane < c.batch * c.channels; ++plane) {
    std::vector<int64_t> o(n, 0);
    do {
      double sum = 0, best = 0;
      int64_t count = 0, padded = 0, bestRow = -1, bestCol = -1;
      std::vector<int64_t> k(n, 0);
      do {
        bool inside = true, inPadded = true;
        int64_t row = 0, col = 0, colStride = 1;
        for (size_t a = 0; a < n; ++a) {
          int64_t t = o[a] * c.strides[a] - pb[a] + k[a] * c.dilations[a];
          inside = inside && t >= 0 && t < c.in[a];
          inPadded = inPadded && t >= -pb[a] && t < c.in[a] + pe[a];
          row = row * c.in[a] + t;
          col += t * colStride;
          colStride *= c.in[a];
        }
        padded += inPadded;
        if (!inside)
          continue;
        double v = x[static_cast<size_t>(plane * inSize + row)];
        sum += kind == Kind::kLp ? std::pow(std::abs(v), static_cast<double>(c.p)) : v;
        if (count == 0 || v > best) {
          best = v;
          bestRow = plane * inSize + row;
          bestCol = plane * inSize + col;
        }
        ++count;
      } while (next(k, c.kernel));
      if (kind == Kind::kMax) {
        y.push_back(best);
        rowIdx->push_back(bestRow);
        colIdx->push_back(bestCol);
      } else if (kind == Kind::kLp) {
        y.push_back(std::pow(sum, 1.0 / static_cast<double>(c.p)));
      } else {
        y.push_back(sum / static_cast<double>(c.countIncludePad ? padded : count));
      }
    } while (next(o, out));
  }
  (void)outSize;
  return y;
}

AttrMap poolAttrs(const PoolCase &c, Kind kind) {
  AttrMap a{{"kernel_shape", c.kernel},
            {"strides", c.strides},
            {"dilations", c.dilations},
            {"ceil_mode", Attribute(c.ceil ? 1 : 0)}};
  if (c.autoPad == "NOTSET")
    a["pads"] = Attribute(c.pads);
  else
    a["auto_pad"] = Attribute(c.autoPad);
  if (kind == Kind::kAvg)
    a["count_include_pad"] = Attribute(c.countIncludePad ? 1 : 0);
  if (kind == Kind::kLp)
    a["p"] = Attribute(c.p);
  return a;
}

PoolCase randomCase(std::mt19937 &rng, size_t rank) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  PoolCase c;
  c.batch = pick(1, 2);
  c.channels = pick(1, 3);
  const char *modes[] = {"NOTSET", "NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
  c.autoPad = modes[pick(0, 5)];
  int64_t maxIn = rank == 3 ? 6 : rank == 2 ? 9 : 14;
  for (size_t a = 0; a < rank; ++a) {
    c.kernel.push_back(pick(1, 3));
    c.strides.push_back(pick(1, 3));
    c.dilations.push_back(pick(1, 2));
    c.in.push_back(pick(1, maxIn));
  }
  c.pads.assign(2 * rank, 0);
  for (size_t a = 0; a < rank; ++a) {
    int64_t k = (c.kernel[a] - 1) * c.dilations[a] + 1;
    // No window wholly in the padding: pads at most (kernel - 1) * dilation.
    c.pads[a] = pick(0, std::min<int64_t>(2, k - 1));
    c.pads[a + rank] = pick(0, std::min<int64_t>(2, k - 1));
    c.in[a] = std::max(c.in[a], k); // keep the output non-empty without padding
  }
  c.ceil = pick(0, 1) == 1;
  c.countIncludePad = pick(0, 1) == 1;
  c.p = pick(1, 3);
  return c;
}

std::string describe(const PoolCase &c) {
  auto v = [](const std::vector<int64_t> &x) {
    std::string s = "[";
    for (int64_t e : x)
      s += std::to_string(e) + ",";
    return s + "]";
  };
  return "in=" + v(c.in) + " k=" + v(c.kernel) + " s=" + v(c.strides) + " d=" + v(c.dilations) +
         " pads=" + v(c.pads) + " auto_pad=" + c.autoPad + " ceil=" + std::to_string(c.ceil) +
         " count_include_pad=" + std::to_string(c.countIncludePad) + " p=" + std::to_string(c.p);
}

class PoolEval : public NnEval {
protected:
  void check(const PoolCase &c, Kind kind, DType dtype, uint32_t seed) {
    std::vector<int64_t> xShape{c.batch, c.channels};
    xShape.insert(xShape.end(), c.in.begin(), c.in.end());
    Tensor x = randomTensor(xShape, seed, dtype);
    std::vector<int64_t> outShape, rowIdx, colIdx;
    std::vector<double> expected = directPool(c, kind, values(x), outShape, &rowIdx, &colIdx);
    Op op = kind == Kind::kAvg ? Op::kAveragePool : kind == Kind::kMax ? Op::kMaxPool : Op::kLpPool;
    AttrMap attrs = poolAttrs(c, kind);
    if (kind == Kind::kMax)
      attrs["storage_order"] = Attribute(static_cast<int64_t>(seed % 2));
    auto r = eval(op, {x}, attrs, kind == Kind::kMax ? 2 : 1);
    ASSERT_TRUE(r.hasValue()) << r.status().message() << " " << describe(c);
    ASSERT_EQ(r->at(0).shape(), outShape) << describe(c);
    EXPECT_EQ(r->at(0).dtype(), dtype);
    double tol = dtype == DType::kF64 ? 1e-12 : dtype == DType::kF32 ? 1e-6 : 1e-2;
    expectClose(r->at(0), expected, tol, tol, describe(c));
    if (kind == Kind::kMax) {
      std::vector<int64_t> want = seed % 2 ? colIdx : rowIdx;
      EXPECT_EQ(r->at(1).dtype(), DType::kI64);
      EXPECT_EQ(r->at(1).toInt64Vector(), want) << describe(c);
    }
  }
};

TEST_F(PoolEval, RandomAttributeCombinations1D2D3D) {
  std::mt19937 rng(77);
  for (int iter = 0; iter < 300; ++iter) {
    size_t rank = 1 + static_cast<size_t>(iter % 3);
    PoolCase c = randomCase(rng, rank);
    Kind kind = static_cast<Kind>((iter / 3) % 3);
    check(c, kind, iter % 5 == 4 ? DType::kF64 : DType::kF32, 1000 + static_cast<uint32_t>(iter));
  }
}

TEST_F(PoolEval, HalfTypes) {
  PoolCase c;
  c.channels = 2;
  c.in = {7, 6};
  c.kernel = {3, 2};
  c.strides = {2, 2};
  c.dilations = {1, 1};
  c.pads = {1, 0, 1, 1};
  c.ceil = true;
  check(c, Kind::kAvg, DType::kF16, 1);
  check(c, Kind::kMax, DType::kBF16, 2);
  check(c, Kind::kLp, DType::kF16, 3);
}

TEST_F(PoolEval, SpecExamples) {
  // onnx/backend/test/case/node/averagepool.py and maxpool.py, *_2d_precomputed_pads:
  // x = 1..25 as 5x5, kernel 5x5, pads 2.
  std::vector<float> xs(25);
  for (int i = 0; i < 25; ++i)
    xs[static_cast<size_t>(i)] = static_cast<float>(i + 1);
  Tensor x = f32({1, 1, 5, 5}, xs);
  AttrMap attrs{{"kernel_shape", std::vector<int64_t>{5, 5}},
                {"pads", std::vector<int64_t>{2, 2, 2, 2}}};
  Tensor avg = eval1(Op::kAveragePool, {x}, attrs);
  expectClose(avg, {7,    7.5, 8,    8.5, 9,    9.5, 10,   10.5, 11,   11.5, 12,   12.5, 13,
                    13.5, 14,  14.5, 15,  15.5, 16,  16.5, 17,   17.5, 18,   18.5, 19},
              1e-5);
  Tensor mx = eval1(Op::kMaxPool, {x}, attrs);
  EXPECT_EQ(values(mx), (std::vector<double>{13, 14, 15, 15, 15, 18, 19, 20, 20, 20, 23, 24, 25,
                                             25, 25, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25}));
  // maxpool_2d_ceil: 4x4, kernel 3, stride 2, ceil_mode.
  Tensor x4 = f32({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  Tensor ceil = eval1(Op::kMaxPool, {x4},
                      {{"kernel_shape", std::vector<int64_t>{3, 3}},
                       {"strides", std::vector<int64_t>{2, 2}},
                       {"ceil_mode", Attribute(1)}});
  EXPECT_EQ(values(ceil), (std::vector<double>{11, 12, 15, 16}));
  // maxpool_2d_dilations.
  Tensor dil = eval1(
      Op::kMaxPool, {x4},
      {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"dilations", std::vector<int64_t>{2, 2}}});
  EXPECT_EQ(values(dil), (std::vector<double>{11, 12, 15, 16}));
}

TEST_F(PoolEval, MaxPoolIndicesSpecExample) {
  // maxpool_with_argmax_2d_precomputed_strides, storage_order 1.
  std::vector<float> xs(25);
  for (int i = 0; i < 25; ++i)
    xs[static_cast<size_t>(i)] = static_cast<float>(i + 1);
  auto r = eval(Op::kMaxPool, {f32({1, 1, 5, 5}, xs)},
                {{"kernel_shape", std::vector<int64_t>{2, 2}},
                 {"strides", std::vector<int64_t>{2, 2}},
                 {"storage_order", Attribute(1)}},
                2);
  ASSERT_TRUE(r.hasValue()) << r.status().message();
  EXPECT_EQ(values(r->at(0)), (std::vector<double>{7, 9, 17, 19}));
  EXPECT_EQ(r->at(1).toInt64Vector(), (std::vector<int64_t>{6, 16, 8, 18}));
}

TEST_F(PoolEval, MaxPoolNaNPropagatesLikeNumpyMax) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = f32({1, 1, 1, 6}, {1, nan, 3, 4, 2, nan});
  auto r = eval(
      Op::kMaxPool, {x},
      {{"kernel_shape", std::vector<int64_t>{1, 2}}, {"strides", std::vector<int64_t>{1, 2}}}, 2);
  ASSERT_TRUE(r.hasValue()) << r.status().message();
  std::vector<double> y = values(r->at(0));
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 4.0);
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_EQ(r->at(1).toInt64Vector(), (std::vector<int64_t>{1, 3, 5}));
  Tensor g = eval1(Op::kGlobalMaxPool, {x});
  EXPECT_TRUE(std::isnan(values(g)[0]));
}

TEST_F(PoolEval, MaxPoolIntegerTypesAndWindowInPadding) {
  Tensor x = Tensor::fromVector<uint8_t>(DType::kU8, {1, 1, 1, 4}, {3, 200, 7, 9});
  Tensor y = eval1(
      Op::kMaxPool, {x},
      {{"kernel_shape", std::vector<int64_t>{1, 2}}, {"pads", std::vector<int64_t>{0, 0, 0, 1}}});
  EXPECT_EQ(y.dtype(), DType::kU8);
  EXPECT_EQ(values(y), (std::vector<double>{200, 200, 9, 9}));
  // pads (3) larger than the kernel (2): the first two windows lie wholly in the padding.
  auto r =
      eval(Op::kMaxPool, {f32({1, 1, 2}, {5, 6})},
           {{"kernel_shape", std::vector<int64_t>{2}}, {"pads", std::vector<int64_t>{3, 0}}}, 2);
  ASSERT_TRUE(r.hasValue()) << r.status().message();
  EXPECT_EQ(values(r->at(0)),
            (std::vector<double>{-std::numeric_limits<double>::infinity(),
                                 -std::numeric_limits<double>::infinity(), 5, 6}));
  EXPECT_EQ(r->at(1).toInt64Vector(), (std::vector<int64_t>{-1, -1, 0, 1}));
}

TEST_F(PoolEval, GlobalPools) {
  Tensor x = randomTensor({2, 3, 4, 5}, 9);
  std::vector<double> xs = values(x);
  std::vector<double> avg, mx, lp;
  for (int plane = 0; plane < 6; ++plane) {
    double s = 0, m = -1e9, l = 0;
    for (int i = 0; i < 20; ++i) {
      double v = xs[static_cast<size_t>(plane * 20 + i)];
      s += v;
      m = std::max(m, v);
      l += std::pow(std::abs(v), 3.0);
    }
    avg.push_back(s / 20);
    mx.push_back(m);
    lp.push_back(std::cbrt(l));
  }
  Tensor a = eval1(Op::kGlobalAveragePool, {x});
  EXPECT_EQ(a.shape(), (std::vector<int64_t>{2, 3, 1, 1}));
  expectClose(a, avg, 1e-6);
  expectClose(eval1(Op::kGlobalMaxPool, {x}), mx, 0);
  expectClose(eval1(Op::kGlobalLpPool, {x}, {{"p", Attribute(3)}}), lp, 1e-6);
}

TEST_F(PoolEval, MaxUnpoolInvertsMaxPoolIndices) {
  // onnx/backend/test/case/node/maxunpool.py, without and with output_shape.
  Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor idx = i64({1, 1, 2, 2}, {5, 7, 13, 15});
  AttrMap attrs{{"kernel_shape", std::vector<int64_t>{2, 2}},
                {"strides", std::vector<int64_t>{2, 2}}};
  Tensor y = eval1(Op::kMaxUnpool, {x, idx}, attrs);
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 4, 4}));
  EXPECT_EQ(values(y), (std::vector<double>{0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4}));
  // With output_shape, indices still address the inferred 4x4 unpooled plane, which sits at
  // the top-left of the 5x5 output (as in ONNX's reference and node test).
  Tensor y5 = eval1(Op::kMaxUnpool, {x, idx, i64({4}, {1, 1, 5, 5})}, attrs);
  EXPECT_EQ(y5.shape(), (std::vector<int64_t>{1, 1, 5, 5}));
  EXPECT_EQ(values(y5), (std::vector<double>{0, 0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0,
                                             0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(evalError(Op::kMaxUnpool, {x, i64({1, 1, 2, 2}, {5, 7, 13, 16})}, attrs),
            "node 'n' (MaxUnpool): index 16 in input I is out of range for an unpooled shape of "
            "16 elements");
  EXPECT_EQ(evalError(Op::kMaxUnpool, {x, idx, i64({4}, {1, 1, 3, 5})}, attrs),
            "node 'n' (MaxUnpool): output_shape [1,1,3,5] is smaller than the unpooled shape "
            "[1,1,4,4]");
}

TEST_F(PoolEval, RoiAlignSpecExample) {
  // onnx/backend/test/case/node/roialign.py (test_roialign_aligned_false), first ROI and
  // first row of each: X is 1x1x10x10.
  std::vector<float> xs{
      0.2764f, 0.7150f, 0.1958f, 0.3416f, 0.4638f, 0.0259f, 0.2963f, 0.6518f, 0.4856f, 0.7250f,
      0.9637f, 0.0895f, 0.2919f, 0.6753f, 0.0234f, 0.6132f, 0.8085f, 0.5324f, 0.8992f, 0.4467f,
      0.3265f, 0.8479f, 0.9698f, 0.2471f, 0.9336f, 0.1878f, 0.4766f, 0.4308f, 0.3400f, 0.2162f,
      0.0206f, 0.1720f, 0.2155f, 0.4394f, 0.0653f, 0.3406f, 0.7724f, 0.3921f, 0.2541f, 0.5799f,
      0.4062f, 0.2194f, 0.4473f, 0.4687f, 0.7109f, 0.9327f, 0.9815f, 0.6320f, 0.1728f, 0.6119f,
      0.3097f, 0.1283f, 0.4984f, 0.5068f, 0.4279f, 0.0173f, 0.4388f, 0.0430f, 0.4671f, 0.7119f,
      0.1011f, 0.8477f, 0.4726f, 0.1777f, 0.9923f, 0.4042f, 0.1869f, 0.7795f, 0.9946f, 0.9689f,
      0.1366f, 0.3671f, 0.7011f, 0.6234f, 0.9867f, 0.5585f, 0.6985f, 0.5609f, 0.8788f, 0.9928f,
      0.5697f, 0.8511f, 0.6711f, 0.9406f, 0.8751f, 0.7496f, 0.1650f, 0.1049f, 0.1559f, 0.2514f,
      0.7012f, 0.4056f, 0.7879f, 0.3461f, 0.0415f, 0.2998f, 0.5094f, 0.3727f, 0.5482f, 0.0502f};
  Tensor x = f32({1, 1, 10, 10}, xs);
  Tensor rois = f32({3, 4}, {0, 0, 9, 9, 0, 5, 4, 9, 5, 5, 9, 9});
  Tensor batch = i64({3}, {0, 0, 0});
  AttrMap attrs{{"spatial_scale", Attribute(1.0f)},
                {"output_height", Attribute(5)},
                {"output_width", Attribute(5)},
                {"sampling_ratio", Attribute(2)},
                {"coordinate_transformation_mode", Attribute("output_half_pixel")}};
  Tensor y = eval1(Op::kRoiAlign, {x, rois, batch}, attrs);
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{3, 1, 5, 5}));
  expectClose(y, {0.4664, 0.4466, 0.3405, 0.5688, 0.6068, 0.3714, 0.4296, 0.3835, 0.5562, 0.3510,
                  0.2768, 0.4883, 0.5222, 0.5528, 0.4171, 0.4713, 0.4844, 0.6904, 0.4920, 0.8774,
                  0.6239, 0.7125, 0.6289, 0.3355, 0.3495, 0.3022, 0.4305, 0.4696, 0.3978, 0.5423,
                  0.3656, 0.7050, 0.5165, 0.3172, 0.7015, 0.2912, 0.5059, 0.6476, 0.6235, 0.8299,
                  0.5916, 0.7389, 0.7048, 0.8372, 0.8893, 0.6227, 0.6153, 0.7097, 0.6154, 0.4585,
                  0.2384, 0.3379, 0.3717, 0.6100, 0.7601, 0.3767, 0.3785, 0.7147, 0.9243, 0.9727,
                  0.5749, 0.5826, 0.5709, 0.7619, 0.8770, 0.5355, 0.2566, 0.2141, 0.2796, 0.3600,
                  0.4365, 0.3504, 0.2887, 0.3661, 0.2349},
              1e-4, 0, "output_half_pixel");
  // test_roialign_aligned_true: the same with half_pixel.
  attrs["coordinate_transformation_mode"] = Attribute("half_pixel");
  expectClose(eval1(Op::kRoiAlign, {x, rois, batch}, attrs),
              {0.5178, 0.3434, 0.3229, 0.4474, 0.6344, 0.4031, 0.5366, 0.4428, 0.4861, 0.4023,
               0.2512, 0.4002, 0.5155, 0.6954, 0.3465, 0.3350, 0.4601, 0.5881, 0.3439, 0.6849,
               0.4932, 0.7141, 0.8217, 0.4719, 0.4039, 0.3070, 0.2187, 0.3337, 0.4880, 0.4870,
               0.1871, 0.4914, 0.5561, 0.4192, 0.3686, 0.1433, 0.4608, 0.5971, 0.5310, 0.4982,
               0.2788, 0.4386, 0.6022, 0.7000, 0.7524, 0.5774, 0.7024, 0.7251, 0.7338, 0.8163,
               0.2393, 0.4075, 0.3379, 0.2525, 0.4743, 0.3671, 0.2702, 0.4105, 0.6419, 0.8308,
               0.5556, 0.4543, 0.5564, 0.7502, 0.9300, 0.6626, 0.5617, 0.4813, 0.4954, 0.6663,
               0.6636, 0.3721, 0.2056, 0.1928, 0.2478},
              1e-4, 0, "half_pixel");
  EXPECT_EQ(evalError(Op::kRoiAlign, {x, rois, i64({3}, {0, 1, 0})}, attrs),
            "node 'n' (RoiAlign): batch_indices[1] = 1 is out of range for a batch of 1");
}

TEST_F(PoolEval, MaxRoiPool) {
  // A 4x4 map with a 2x2 pooled box over rows 0..3 and cols 0..3 at scale 1: each bin is a
  // 2x2 block; the second ROI (scale 0.5 of [0,0,2,2] -> [0,0,1,1]) pools 1x1 bins.
  Tensor x = f32({1, 1, 4, 4}, {1, 5, 2, 0, 3, 4, 8, 1, 0, 9, 2, 2, 7, 1, 3, 6});
  Tensor rois = f32({2, 5}, {0, 0, 0, 3, 3, 0, 0, 0, 2, 2});
  Tensor y = eval1(Op::kMaxRoiPool, {x, rois}, {{"pooled_shape", std::vector<int64_t>{2, 2}}});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{2, 1, 2, 2}));
  std::vector<double> got = values(y);
  EXPECT_EQ(std::vector<double>(got.begin(), got.begin() + 4), (std::vector<double>{5, 8, 9, 6}));
  Tensor half =
      eval1(Op::kMaxRoiPool, {x, rois},
            {{"pooled_shape", std::vector<int64_t>{2, 2}}, {"spatial_scale", Attribute(0.5f)}});
  std::vector<double> h = values(half);
  EXPECT_EQ(std::vector<double>(h.begin() + 4, h.end()), (std::vector<double>{1, 5, 3, 4}));
  EXPECT_EQ(evalError(Op::kMaxRoiPool, {x, f32({1, 5}, {1, 0, 0, 1, 1})},
                      {{"pooled_shape", std::vector<int64_t>{1, 1}}}),
            "node 'n' (MaxRoiPool): rois[0] has batch index 1, out of range for a batch of 1");
}

} // namespace
} // namespace dlc::nntest
