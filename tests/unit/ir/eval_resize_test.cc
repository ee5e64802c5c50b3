// Reference evaluation of Resize. The expected values come from
// ONNX's reference implementation (onnx/reference/ops/op_resize.py), evaluated offline on the
// inputs below: ONNX's spec examples plus antialias, axes, keep_aspect_ratio_policy,
// half_pixel_symmetric, tf_crop_and_resize with axes, and 3-D cases.
#include "tests/unit/ir/eval_nn_test_util.h"

namespace dlc::nntest {
namespace {

/// 1..16 as [1, 1, 4, 4].
Tensor d16() {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i)
    v[static_cast<size_t>(i)] = static_cast<float>(i + 1);
  return f32({1, 1, 4, 4}, v);
}
/// [[1, 2], [3, 4]] as [1, 1, 2, 2].
Tensor d4() { return f32({1, 1, 2, 2}, {1, 2, 3, 4}); }
/// A [1, 2, 3, 4, 5] tensor of quarter-integers in [-2.75, 2.75].
Tensor g5() {
  std::vector<float> v(120);
  for (int i = 0; i < 120; ++i)
    v[static_cast<size_t>(i)] = static_cast<float>((i * 37) % 23 - 11) / 4.0f;
  return f32({1, 2, 3, 4, 5}, v);
}

class ResizeEval : public NnEval {
protected:
  Tensor resize(Tensor x, Tensor roi, Tensor scales, Tensor sizes, AttrMap attrs) {
    return eval1(Op::kResize, {x, roi, scales, sizes}, std::move(attrs));
  }
};

TEST_F(ResizeEval, LinearAntialiasDownsampleScales) {
  Tensor y = resize(d16(), Tensor(), f32({4}, {1, 1, 0.6f, 0.6f}), Tensor(),
                    {{"mode", Attribute("linear")}, {"antialias", Attribute(1)}});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 2, 2}));
  expectClose(y, {2.8749999, 4.4999999, 9.3749997, 11}, 1e-5, 1e-6);
}

TEST_F(ResizeEval, CubicAntialiasDownsampleScales) {
  Tensor y = resize(d16(), Tensor(), f32({4}, {1, 1, 0.6f, 0.6f}), Tensor(),
                    {{"mode", Attribute("cubic")},
                     {"antialias", Attribute(1)},
                     {"cubic_coeff_a", Attribute(-0.5f)}});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 2, 2}));
  expectClose(y, {2.6666665, 4.3807265, 9.5229064, 11.236966}, 1e-5, 1e-6);
}

TEST_F(ResizeEval, LinearAntialiasDownsampleSizes) {
  Tensor y = resize(d16(), Tensor(), Tensor(), i64({4}, {1, 1, 3, 3}),
                    {{"mode", Attribute("linear")}, {"antialias", Attribute(1)}});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 3, 3}));
  expectClose(
      y,
      {2.3636364, 3.5909091, 4.8181818, 7.2727273, 8.5, 9.7272727, 12.181818, 13.409091, 14.636364},
      1e-5, 1e-6);
}

TEST_F(ResizeEval, NearestAxes23UpsampleScales) {
  Tensor y = resize(d4(), Tensor(), f32({2}, {2.0f, 3.0f}), Tensor(),
                    {{"axes", std::vector<int64_t>{2, 3}}});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 4, 6}));
  expectClose(y, {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}, 1e-5,
              1e-6);
}

TEST_F(ResizeEval, NearestNotLarger) {
  Tensor y = resize(d4(), Tensor(), Tensor(), i64({2}, {7, 8}),
                    {{"axes", std::vector<int64_t>{2, 3}},
                     {"keep_aspect_ratio_policy", Attribute("not_larger")}});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 7, 7}));
  expectClose(y, {1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1,
                  2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 3, 3, 3, 3, 4, 4, 4, 3, 3, 3, 3, 4, 4, 4},
              1e-5, 1e-6);
}

TEST_F(ResizeEval, NearestNotSmaller) {
  Tensor y = resize(d4(), Tensor(), Tensor(), i64({2}, {7, 8}),
                    {{"axes", std::vector<int64_t>{2, 3}},
                     {"keep_aspect_ratio_policy", Attribute("not_smaller")}});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 8, 8}));
  expectClose(y, {1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 2, 2,
                  2, 2, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 3, 3,
                  4, 4, 4, 4, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 3, 3, 4, 4, 4, 4},
              1e-5, 1e-6);
}

TEST_F(ResizeEval, LinearHalfPixelSymmetricDown) {
  Tensor y = resize(f32({1, 1, 1, 4}, {1, 2, 3, 4}), Tensor(), f32({4}, {1, 1, 1, 0.6f}), Tensor(),
                    {{"mode", Attribute("linear")},
                     {"coordinate_transformation_mode", Attribute("half_pixel_symmetric")}});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 1, 2}));
  expectClose(y, {1.6666667, 3.3333333}, 1e-5, 1e-6);
}

TEST_F(ResizeEval, LinearHalfPixelSymmetricUp) {
  Tensor y = resize(d4(), Tensor(), f32({4}, {1, 1, 2.3f, 2.94f}), Tensor(),
                    {{"mode", Attribute("linear")},
                     {"coordinate_transformation_mode", Attribute("half_pixel_symmetric")}});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 4, 5}));
  expectClose(y, {1,         1.159864,  1.5,       1.840136,  2,         1.5652174, 1.7250813,
                  2.0652174, 2.4053534, 2.5652174, 2.4347826, 2.5946466, 2.9347826, 3.2749187,
                  3.4347826, 3,         3.159864,  3.5,       3.840136,  4},
              1e-5, 1e-6);
}

TEST_F(ResizeEval, TfCropAndResizeAxes23) {
  Tensor y = resize(d16(), f32({4}, {0.6f, 0.4f, 0.8f, 0.6f}), Tensor(), i64({2}, {3, 3}),
                    {{"mode", Attribute("linear")},
                     {"axes", std::vector<int64_t>{3, 2}},
                     {"coordinate_transformation_mode", Attribute("tf_crop_and_resize")},
                     {"extrapolation_value", Attribute(10.0f)}});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 3, 3}));
  expectClose(y, {7.6000001, 7.9000001, 8.2000001, 8.8000003, 9.1000002, 9.4000002, 10, 10.3, 10.6},
              1e-5, 1e-6);
}

TEST_F(ResizeEval, TfCropAndResizeExtrapolates) {
  Tensor y = resize(d16(), f32({8}, {0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f}), Tensor(),
                    i64({4}, {1, 1, 3, 3}),
                    {{"mode", Attribute("linear")},
                     {"coordinate_transformation_mode", Attribute("tf_crop_and_resize")},
                     {"extrapolation_value", Attribute(10.0f)}});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 3, 3}));
  expectClose(y, {7.6000001, 10, 10, 12.400001, 10, 10, 10, 10, 10}, 1e-5, 1e-6);
}

TEST_F(ResizeEval, Linear3DAlignCorners) {
  Tensor y = resize(g5(), Tensor(), f32({5}, {1, 1, 1.5f, 0.75f, 1.7f}), Tensor(),
                    {{"mode", Attribute("linear")},
                     {"coordinate_transformation_mode", Attribute("align_corners")}});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 2, 4, 3, 8}));
  expectClose(y, {-2.75,
                  -0.88333339,
                  0.60000008,
                  -0.59999989,
                  -1.0333336,
                  0.83333304,
                  1.5500002,
                  0.35000027,
                  -2.375,
                  -0.50833339,
                  0.97500008,
                  -0.22499989,
                  -0.65833357,
                  1.208333,
                  1.9250002,
                  0.72500027,
                  -2,
                  -0.13333339,
                  1.3500001,
                  0.15000011,
                  -0.28333357,
                  1.583333,
                  2.3000002,
                  1.1000003,
                  -2.1785714,
                  -0.31190482,
                  1.1714286,
                  -0.028571314,
                  -0.90000001,
                  -0.7857143,
                  -0.50714296,
                  0.045237972,
                  -1.8035714,
                  0.063095179,
                  1.5464286,
                  0.34642869,
                  -0.52500001,
                  -0.4107143,
                  -0.13214296,
                  0.42023797,
                  -1.4285714,
                  0.43809518,
                  1.9214286,
                  0.72142869,
                  -0.15000001,
                  -0.035714304,
                  0.24285704,
                  0.79523797,
                  -1.6071429,
                  0.25952375,
                  1.7428572,
                  0.54285726,
                  -0.6571427,
                  -1.8571427,
                  -1.9071432,
                  -0.040476606,
                  -1.2321429,
                  0.19642853,
                  1.3511905,
                  0.58928579,
                  -0.2821427,
                  -1.4821427,
                  -1.5321432,
                  0.33452339,
                  -0.85714286,
                  0.57142853,
                  1.7261905,
                  0.96428579,
                  0.092857295,
                  -1.1071427,
                  -1.1571432,
                  0.70952339,
                  -1.0357143,
                  0.83095232,
                  2.3142858,
                  1.1142858,
                  -0.085714133,
                  -1.2857141,
                  -1.3357146,
                  0.53095197,
                  -0.66071429,
                  -0.9845238,
                  -1.1440477,
                  -0.15357152,
                  0.28928587,
                  -0.91071409,
                  -0.96071464,
                  0.90595197,
                  -0.28571429,
                  -0.6095238,
                  -0.76904768,
                  0.22142848,
                  0.66428587,
                  -0.53571409,
                  -0.58571464,
                  1.280952,
                  0.25,
                  -0.94999996,
                  -1.7666668,
                  0.099999822,
                  1.2000002,
                  1.9073486e-07,
                  -0.050000356,
                  1.8166663,
                  0.625,
                  -0.57499996,
                  -1.3916668,
                  0.47499982,
                  1.5750002,
                  0.37500019,
                  -0.82499977,
                  -2.0249997,
                  1,
                  -0.19999996,
                  -1.0166668,
                  0.84999982,
                  1.9500002,
                  0.75000019,
                  -0.44999977,
                  -1.6499997,
                  0.82142857,
                  -0.37857139,
                  -1.1952382,
                  0.67142839,
                  1.7714287,
                  0.57142876,
                  -0.13571431,
                  -0.021428597,
                  1.1964286,
                  -0.0035713904,
                  -0.92976197,
                  0.060714191,
                  0.72261909,
                  0.39880958,
                  -0.2535712,
                  -1.4535712,
                  1.5714286,
                  0.37142861,
                  -0.66428572,
                  -0.55000001,
                  -0.32619055,
                  0.22619039,
                  0.1214288,
                  -1.0785712,
                  1.3928571,
                  0.19285718,
                  -0.67857152,
                  0.74999986,
                  1.6309525,
                  0.86904774,
                  -0.057142628,
                  -1.2571426,
                  1.7678571,
                  0.56785718,
                  -0.46785715,
                  -0.35357144,
                  -0.12976198,
                  0.42261896,
                  0.31785737,
                  -0.88214259,
                  1.3214286,
                  0.55952383,
                  -0.25714278,
                  -1.4571427,
                  -1.8904764,
                  -0.023809821,
                  0.69285737,
                  -0.50714259,
                  1.9642857,
                  0.76428575,
                  -0.32619046,
                  -0.64999997,
                  -0.64523822,
                  0.34523794,
                  0.51428594,
                  -0.68571402,
                  2.3392857,
                  1.1392858,
                  -0.0059523325,
                  -0.76785707,
                  -0.98214304,
                  0.44642834,
                  0.88928594,
                  -0.31071402,
                  -1.3928571,
                  -0.40238098,
                  0.31428579,
                  -0.88571417,
                  -1.3190479,
                  0.54761875,
                  1.2642859,
                  0.064285981},
              1e-5, 1e-6);
}

TEST_F(ResizeEval, Cubic3DAsymmetricExclude) {
  Tensor y = resize(g5(), Tensor(), Tensor(), i64({5}, {1, 2, 5, 3, 7}),
                    {{"mode", Attribute("cubic")},
                     {"cubic_coeff_a", Attribute(-0.6f)},
                     {"exclude_outside", Attribute(1)},
                     {"coordinate_transformation_mode", Attribute("asymmetric")}});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 2, 5, 3, 7}));
  expectClose(y, {-2.75,        -0.026056338, -0.10932945, -1.2405248,   1.7405248,   0.81387843,
                  -0.51264591,  -2.412963,    0.3109807,   0.22770759,   -0.90348774, 2.0775618,
                  1.1509155,    -0.17560888,  -2.0595238,  0.66441985,   0.58114674,  -0.55004859,
                  2.431001,     1.5043546,    0.17783028,  -2.2462179,   0.47772581,  0.60645325,
                  -1.1352251,   -0.9710347,   -0.16547845, 0.38411174,   -1.9091808,  1.2282835,
                  1.2858806,    -0.83039904,  -0.63936615, 0.17155859,   0.72114878,  -1.5557417,
                  1.5479659,    1.6113695,    -0.47433042, -0.28548875,  0.52499774,  1.0745879,
                  -1.4972527,   1.2266909,    1.5328023,   -0.7196761,   -2.9123923,  -0.65747714,
                  1.4618851,    -1.1602157,   0.66579488,  1.1263612,    -0.31269513, -2.5636979,
                  -0.3204401,   1.7989222,    -0.80677656, 1.0925347,    1.5404924,   0.035034319,
                  -2.2112104,   0.032999052,  2.1523613,   -0.88224368,  1.8417,      2.1269824,
                  -0.065516442, -1.9814784,   0.10324916,  2.0382846,    -0.54520665, -2.1234167,
                  -1.0981136,   0.60663416,   -1.5885891,  0.4402862,    2.3753217,   -0.19176749,
                  -1.4187813,   -0.45388806,  0.9327171,   -1.2397094,   0.79372535,  2.7287608,
                  -0.61046512,  2.1134785,    2.3923046,   0.21839786,   -1.6117771,  0.42019653,
                  2.2980952,    -0.27342808,  -3.3175817,  -2.0465757,   1.0047372,   -1.1998563,
                  0.75723357,   2.6351322,    0.080011074, -2.4932775,   -1.3032658,  1.3214986,
                  -0.85253012,  1.1106727,    2.9885714,   0.25,         -1.6746479,  -0.59620991,
                  1.4409621,    -0.6909621,   1.2806616,   3.1585603,    0.58703704,  -1.3376109,
                  -0.25917288,  1.8437134,    0.040360652, -2.2487648,   -3.4963828,  0.94047619,
                  -0.9841717,   0.094266278,  2.1917881,   0.36161322,   -1.5796959,  -2.5721697,
                  0.75378215,   -1.2105623,   0.1318984,   2.42873,      0.080422807, -0.32177618,
                  -0.097123213, 1.0699417,    -0.78083132, -0.085695857, 1.6802386,   0.44299331,
                  -1.5197928,   -2.6584259,   1.7829844,   -0.08915774,  -1.1128389,  -0.66932211,
                  0.44837879,   -0.87123834,  -2.0683876,  1.5027473,    -0.33570212, 0.1694278,
                  1.7843877,    0.83043306,   -1.2257331,  -2.4937572,   1.8851183,   0.14636539,
                  -0.24619072,  0.61877476,   0.95214723,  -0.50624545,  -1.629852,   1.4577019,
                  0.60587045,   -1.6447023,   -2.6624124,  0.85751651,   0.044517077, -1.3194225,
                  2.1177563,    0.6061005,    -1.0622802,  -1.2975089,   0.96687995,  -0.18181119,
                  -1.5093836,   2.6719966,    1.0278763,   -0.88350419,  -1.2416907,  1.2621799,
                  0.2412016,    -1.0476753,   -0.71577918, 0.40866863,   -0.55578198, -1.5678521,
                  1.5319571,    0.6303566,    -0.70441341, 2.3895349,    1.0186047,   -1.5857448,
                  -2.6172927,   1.0350905,    0.25002502,  -1.123111,    3.0177864,   1.4154415,
                  -1.1567951,   -2.0475267,   1.40097,     0.57290591,   -0.78607399, -1.6447951,
                  0.33419855,   -0.099759951, -1.129236,   1.8244121,    0.89198698,  -0.43263484},
              1e-5, 1e-6);
}

TEST_F(ResizeEval, NearestCeilPytorchHalfPixel) {
  Tensor y = resize(g5(), Tensor(), Tensor(), i64({5}, {1, 2, 2, 7, 3}),
                    {{"nearest_mode", Attribute("ceil")},
                     {"coordinate_transformation_mode", Attribute("pytorch_half_pixel")}});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 2, 2, 7, 3}));
  expectClose(y,
              {1.75,  -0.5,  0.75,  2,     -0.25, 1,     2,     -0.25, 1,     2.25,  0,    1.25,
               2.5,   0.25,  1.5,   2.5,   0.25,  1.5,   2.5,   0.25,  1.5,   2.75,  0.5,  1.75,
               -2.75, 0.75,  2,     -2.75, 0.75,  2,     -2.5,  1,     2.25,  -2.25, 1.25, 2.5,
               -2.25, 1.25,  2.5,   -2.25, 1.25,  2.5,   -1,    2.5,   -2,    -0.75, 2.75, -1.75,
               -0.75, 2.75,  -1.75, -0.5,  -2.75, -1.5,  -0.25, -2.5,  -1.25, -0.25, -2.5, -1.25,
               -0.25, -2.5,  -1.25, 0,     -2.25, -1,    0.25,  -2,    -0.75, 0.25,  -2,   -0.75,
               0.5,   -1.75, -0.5,  0.75,  -1.5,  -0.25, 0.75,  -1.5,  -0.25, 0.75,  -1.5, -0.25},
              1e-5, 1e-6);
}

TEST_F(ResizeEval, NearestRoundPreferCeilHalfPixel) {
  Tensor y = resize(g5(), Tensor(), f32({5}, {1, 1, 2, 0.5f, 1.5f}), Tensor(),
                    {{"nearest_mode", Attribute("round_prefer_ceil")}});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 2, 6, 2, 7}));
  expectClose(
      y,
      {-2.5, 1,     1,     -1.25, 2.25, 2.25, 0,     -2,    1.5,   1.5,   -0.75, 2.75, 2.75, 0.5,
       -2.5, 1,     1,     -1.25, 2.25, 2.25, 0,     -2,    1.5,   1.5,   -0.75, 2.75, 2.75, 0.5,
       -1.5, 2,     2,     -0.25, -2.5, -2.5, 1,     -1,    2.5,   2.5,   0.25,  -2,   -2,   1.5,
       -1.5, 2,     2,     -0.25, -2.5, -2.5, 1,     -1,    2.5,   2.5,   0.25,  -2,   -2,   1.5,
       -0.5, -2.75, -2.75, 0.75,  -1.5, -1.5, 2,     0,     -2.25, -2.25, 1.25,  -1,   -1,   2.5,
       -0.5, -2.75, -2.75, 0.75,  -1.5, -1.5, 2,     0,     -2.25, -2.25, 1.25,  -1,   -1,   2.5,
       0.5,  -1.75, -1.75, 1.75,  -0.5, -0.5, -2.75, 1,     -1.25, -1.25, 2.25,  0,    0,    -2.25,
       0.5,  -1.75, -1.75, 1.75,  -0.5, -0.5, -2.75, 1,     -1.25, -1.25, 2.25,  0,    0,    -2.25,
       1.5,  -0.75, -0.75, 2.75,  0.5,  0.5,  -1.75, 2,     -0.25, -0.25, -2.5,  1,    1,    -1.25,
       1.5,  -0.75, -0.75, 2.75,  0.5,  0.5,  -1.75, 2,     -0.25, -0.25, -2.5,  1,    1,    -1.25,
       2.5,  0.25,  0.25,  -2,    1.5,  1.5,  -0.75, -2.75, 0.75,  0.75,  -1.5,  2,    2,    -0.25,
       2.5,  0.25,  0.25,  -2,    1.5,  1.5,  -0.75, -2.75, 0.75,  0.75,  -1.5,  2,    2,    -0.25},
      1e-5, 1e-6);
}

TEST_F(ResizeEval, CubicAntialias3D) {
  Tensor y = resize(g5(), Tensor(), f32({5}, {1, 1, 0.7f, 0.5f, 0.45f}), Tensor(),
                    {{"mode", Attribute("cubic")}, {"antialias", Attribute(1)}});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 2, 2, 2, 2}));
  expectClose(y,
              {-0.76718924, 0.18127186, -0.15861268, 0.7049875, -0.042273116, -0.49254677,
               -0.37455293, -0.1397092, -0.004017025, 0.24480861, 0.34682734, -0.3786661, 0.9055873,
               -0.11375104, 0.065287151, -0.21767987},
              1e-5, 1e-6);
}

TEST_F(ResizeEval, UpsampleScalesNearest) {
  Tensor y = resize(d4(), Tensor(), f32({4}, {1, 1, 2, 3}), Tensor(), {});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 4, 6}));
  expectClose(y, {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}, 1e-5,
              1e-6);
}

TEST_F(ResizeEval, DownsampleScalesLinearAlignCorners) {
  Tensor y = resize(f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), Tensor(),
                    f32({4}, {1, 1, 0.6f, 0.6f}), Tensor(),
                    {{"mode", Attribute("linear")},
                     {"coordinate_transformation_mode", Attribute("align_corners")}});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 1, 2}));
  expectClose(y, {1, 3.142857}, 1e-5, 1e-6);
}

TEST_F(ResizeEval, UpsampleSizesNearestRoundPreferCeilAsymmetric) {
  Tensor y = resize(d16(), Tensor(), Tensor(), i64({4}, {1, 1, 8, 8}),
                    {{"nearest_mode", Attribute("round_prefer_ceil")},
                     {"coordinate_transformation_mode", Attribute("asymmetric")}});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 8, 8}));
  expectClose(y, {1,  2,  2,  3,  3,  4,  4,  4,  5,  6,  6,  7,  7,  8,  8,  8,
                  5,  6,  6,  7,  7,  8,  8,  8,  9,  10, 10, 11, 11, 12, 12, 12,
                  9,  10, 10, 11, 11, 12, 12, 12, 13, 14, 14, 15, 15, 16, 16, 16,
                  13, 14, 14, 15, 15, 16, 16, 16, 13, 14, 14, 15, 15, 16, 16, 16},
              1e-5, 1e-6);
}

TEST_F(ResizeEval, DownsampleScalesCubicANeg05ExcludeOutside) {
  Tensor y = resize(d16(), Tensor(), f32({4}, {1, 1, 0.8f, 0.8f}), Tensor(),
                    {{"mode", Attribute("cubic")},
                     {"cubic_coeff_a", Attribute(-0.5f)},
                     {"exclude_outside", Attribute(1)}});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 3, 3}));
  expectClose(y,
              {1.3681267, 2.6695013, 4.0133366, 6.5736252, 7.8749999, 9.2188351, 11.948966,
               13.250341, 14.594176},
              1e-5, 1e-6);
}

TEST_F(ResizeEval, UpsampleScalesCubicAlignCorners) {
  Tensor y = resize(d16(), Tensor(), f32({4}, {1, 1, 2, 2}), Tensor(),
                    {{"mode", Attribute("cubic")},
                     {"coordinate_transformation_mode", Attribute("align_corners")}});
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1, 8, 8}));
  expectClose(
      y, {1,         1.3411079, 1.8002915, 2.3294461, 2.6705539, 3.1997085, 3.6588921, 4,
          2.3644315, 2.7055394, 3.164723,  3.6938776, 4.0349854, 4.5641399, 5.0233236, 5.3644315,
          4.2011662, 4.5422741, 5.0014577, 5.5306122, 5.8717201, 6.4008746, 6.8600583, 7.2011662,
          6.3177843, 6.6588921, 7.1180758, 7.6472303, 7.9883382, 8.5174927, 8.9766764, 9.3177843,
          7.6822157, 8.0233236, 8.4825073, 9.0116618, 9.3527697, 9.8819242, 10.341108, 10.682216,
          9.7988338, 10.139942, 10.599125, 11.12828,  11.469388, 11.998542, 12.457726, 12.798834,
          11.635569, 11.976676, 12.43586,  12.965015, 13.306122, 13.835277, 14.294461, 14.635569,
          13,        13.341108, 13.800292, 14.329446, 14.670554, 15.199708, 15.658892, 16},
      1e-5, 1e-6);
}
TEST_F(ResizeEval, PytorchHalfPixelMapsALengthOneOutputToZero) {
  // The spec's x_original = 0 (not the reference's -0.5): cubic then reads data[0] exactly.
  Tensor y = resize(f32({1, 1, 1, 4}, {3, 5, 9, 2}), Tensor(), Tensor(), i64({4}, {1, 1, 1, 1}),
                    {{"mode", Attribute("cubic")},
                     {"coordinate_transformation_mode", Attribute("pytorch_half_pixel")}});
  EXPECT_EQ(values(y), (std::vector<double>{3}));
}

TEST_F(ResizeEval, HalfAndIntegerTypes) {
  Tensor h = resize(d16().castTo(DType::kF16), Tensor(), f32({4}, {1, 1, 0.6f, 0.6f}), Tensor(),
                    {{"mode", Attribute("linear")}, {"antialias", Attribute(1)}});
  EXPECT_EQ(h.dtype(), DType::kF16);
  expectClose(h, {2.875, 4.5, 9.375, 11.0}, 0, 1e-3);
  Tensor u8 = Tensor::fromVector<uint8_t>(DType::kU8, {1, 1, 2, 2}, {10, 20, 30, 250});
  Tensor up = resize(u8, Tensor(), f32({4}, {1, 1, 2, 1}), Tensor(), {});
  EXPECT_EQ(up.dtype(), DType::kU8);
  EXPECT_EQ(values(up), (std::vector<double>{10, 20, 10, 20, 30, 250, 30, 250}));
}

TEST_F(ResizeEval, Errors) {
  EXPECT_EQ(evalError(Op::kResize, {d4(), Tensor(), f32({4}, {1, 1, 2, 2})},
                      {{"mode", Attribute("area")}}),
            "node 'n' (Resize): invalid mode 'area'; expected nearest, linear or cubic");
  EXPECT_EQ(evalError(Op::kResize, {d4(), f32({2}, {0, 1}), f32({4}, {1, 1, 2, 2})},
                      {{"coordinate_transformation_mode", Attribute("tf_crop_and_resize")}}),
            "node 'n' (Resize): input roi has 2 values, expected 8 (start and end for each of 4 "
            "axes)");
}

} // namespace
} // namespace dlc::nntest
