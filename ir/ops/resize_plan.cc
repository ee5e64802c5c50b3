// Resize's sampling plan (resize_plan.h), shared by the reference kernel
// (ir/eval/resize_eval.cc) and the GPU kernel (codegen/data_movement.cc), for the opset-19
// form: nearest, linear and cubic modes, every coordinate_transformation_mode, antialias,
// exclude_outside, axes, roi and keep_aspect_ratio_policy.
//
// The arithmetic is that of ONNX's reference implementation (onnx/reference/ops/op_resize.py),
// which produced the expected outputs of ONNX's Resize node tests, in double:
//  * per axis, x_original follows from the output coordinate, the scale (the given float scale,
//    or output size / input size) and `output_width = scale * input size`, which is
//    fractional when the scale is (align_corners and tf_crop_and_resize divide by
//    output_width - 1, as the reference does);
//  * the taps are the n nearest input indices of x_original (n = 2 for nearest and linear, 4
//    for cubic, wider with antialias), ties preferring the smaller index, clamped to the edge;
//    exclude_outside zeroes the weights of taps outside the input and renormalises;
//  * the n-D result is the 1-D interpolation applied axis by axis, innermost axis first (one
//    pass per resized axis, the same sums as the reference's recursion); in
//    tf_crop_and_resize a coordinate outside the input yields extrapolation_value at that
//    axis's level.
// Two deliberate differences: taps of weight exactly 0 are skipped (so a NaN or inf next to a
// sample does not leak in through 0 * NaN, as in onnxruntime), and pytorch_half_pixel maps
// an output of length 1 to x_original = 0 as the spec says (the reference uses -0.5).
// Output sizes are those of shape inference (floor(input size * scale) in float).
#include "ir/ops/resize_plan.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace dlc::ops {

namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Transform {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfCropAndResize,
};
enum class NearestMode { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

struct ResizeParams {
  Mode mode = Mode::kNearest;
  Transform transform = Transform::kHalfPixel;
  NearestMode nearest = NearestMode::kRoundPreferFloor;
  bool antialias = false, excludeOutside = false;
  double cubicA = -0.75, extrapolation = 0.0;
};

Expected<ResizeParams> readParams(const Node &node) {
  ResizeParams p;
  const std::string &mode = node.getString("mode");
  if (mode == "nearest")
    p.mode = Mode::kNearest;
  else if (mode == "linear")
    p.mode = Mode::kLinear;
  else if (mode == "cubic")
    p.mode = Mode::kCubic;
  else
    return invalidArgument("invalid mode '{}'; expected nearest, linear or cubic", mode);
  const std::string &ctm = node.getString("coordinate_transformation_mode");
  static const std::pair<const char *, Transform> transforms[] = {
      {"half_pixel", Transform::kHalfPixel},
      {"half_pixel_symmetric", Transform::kHalfPixelSymmetric},
      {"pytorch_half_pixel", Transform::kPytorchHalfPixel},
      {"align_corners", Transform::kAlignCorners},
      {"asymmetric", Transform::kAsymmetric},
      {"tf_crop_and_resize", Transform::kTfCropAndResize}};
  auto t = std::find_if(std::begin(transforms), std::end(transforms),
                        [&](const auto &e) { return ctm == e.first; });
  if (t == std::end(transforms))
    return invalidArgument("invalid coordinate_transformation_mode '{}'; expected half_pixel, "
                           "half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric "
                           "or tf_crop_and_resize",
                           ctm);
  p.transform = t->second;
  const std::string &nm = node.getString("nearest_mode");
  if (nm == "round_prefer_floor")
    p.nearest = NearestMode::kRoundPreferFloor;
  else if (nm == "round_prefer_ceil")
    p.nearest = NearestMode::kRoundPreferCeil;
  else if (nm == "floor")
    p.nearest = NearestMode::kFloor;
  else if (nm == "ceil")
    p.nearest = NearestMode::kCeil;
  else
    return invalidArgument("invalid nearest_mode '{}'; expected round_prefer_floor, "
                           "round_prefer_ceil, floor or ceil",
                           nm);
  p.antialias = node.getInt("antialias") != 0;
  p.excludeOutside = node.getInt("exclude_outside") != 0;
  p.cubicA = node.getFloat("cubic_coeff_a");
  p.extrapolation = node.getFloat("extrapolation_value");
  return p;
}

/// The Keys cubic kernel with parameter A.
double cubicKernel(double x, double A) {
  x = std::abs(x);
  double x2 = x * x, x3 = x * x2;
  if (x <= 1)
    return (A + 2) * x3 - (A + 3) * x2 + 1;
  if (x < 2)
    return A * x3 - 5 * A * x2 + 8 * A * x - 4 * A;
  return 0.0;
}

/// The reference's coefficient functions: weights of taps base + first, base + first + 1, ...
/// where x_original = base + ratio, ratio in (0, 1].
std::vector<double> coefficients(const ResizeParams &p, double ratio, double scale,
                                 int64_t &first) {
  const double r = ratio;
  if (p.mode == Mode::kNearest) {
    first = 0;
    bool high = r == 1.0;
    if (!high) {
      switch (p.nearest) {
      case NearestMode::kRoundPreferFloor:
        high = r > 0.5;
        break;
      case NearestMode::kRoundPreferCeil:
        high = r >= 0.5;
        break;
      case NearestMode::kFloor:
        high = false;
        break;
      case NearestMode::kCeil:
        high = true;
        break;
      }
    }
    return {high ? 0.0 : 1.0, high ? 1.0 : 0.0};
  }
  if (!p.antialias || (p.mode == Mode::kLinear && scale >= 1.0)) {
    if (p.mode == Mode::kLinear) {
      first = 0;
      return {1 - r, r};
    }
    if (!p.antialias) {
      const double A = p.cubicA;
      first = -1;
      return {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A,
              ((A + 2) * r - (A + 3)) * r * r + 1,
              ((A + 2) * (1 - r) - (A + 3)) * (1 - r) * (1 - r) + 1,
              ((A * ((1 - r) + 1) - 5 * A) * ((1 - r) + 1) + 8 * A) * ((1 - r) + 1) - 4 * A};
    }
  }
  const double s = std::min(scale, 1.0);
  std::vector<double> c;
  double sum = 0;
  if (p.mode == Mode::kLinear) {
    int64_t start = static_cast<int64_t>(std::floor(-1 / s) + 1);
    int64_t footprint = 2 - 2 * start;
    for (int64_t i = start; i < start + footprint; ++i) {
      double v = std::clamp(1 - std::abs((static_cast<double>(i) - r) * s), 0.0, 1.0);
      c.push_back(v);
      sum += v;
    }
    first = start;
  } else {
    int64_t start = static_cast<int64_t>(std::floor(-2 / s) + 1), end = 2 - start;
    for (int64_t i = start; i < end; ++i) {
      double v = cubicKernel(s * (static_cast<double>(i) - r), p.cubicA);
      c.push_back(v);
      sum += v;
    }
    first = start;
  }
  for (double &v : c)
    v /= sum;
  return c;
}

using AxisPlan = ResizeAxisPlan;

/// x_original of output coordinate x, or nullopt when tf_crop_and_resize extrapolates.
std::optional<double> originalCoordinate(const ResizeParams &p, int64_t x, int64_t in,
                                         int64_t outInt, double scale, double roiStart,
                                         double roiSpan) {
  const double xd = static_cast<double>(x), inD = static_cast<double>(in);
  const double outW = scale * inD; // fractional when the scale is
  switch (p.transform) {
  case Transform::kAlignCorners:
    return outW == 1 ? 0.0 : xd * (inD - 1) / (outW - 1);
  case Transform::kAsymmetric:
    return xd / scale;
  case Transform::kTfCropAndResize: {
    double xo = outW == 1 ? roiSpan * (inD - 1) / 2 : xd * roiSpan * (inD - 1) / (outW - 1);
    xo += roiStart * (inD - 1);
    if (xo < 0 || xo > inD - 1)
      return std::nullopt;
    return xo;
  }
  case Transform::kPytorchHalfPixel:
    return outInt > 1 ? (xd + 0.5) / scale - 0.5 : 0.0;
  case Transform::kHalfPixel:
    return (xd + 0.5) / scale - 0.5;
  case Transform::kHalfPixelSymmetric: {
    double adjustment = static_cast<double>(outInt) / outW;
    double offset = inD / 2 * (1 - adjustment);
    return offset + (xd + 0.5) / scale - 0.5;
  }
  }
  return 0.0;
}

AxisPlan planAxis(const ResizeParams &p, int64_t in, int64_t out, double scale, double roiStart,
                  double roiSpan) {
  AxisPlan plan;
  plan.begin.push_back(0);
  for (int64_t x = 0; x < out; ++x) {
    std::optional<double> xo = originalCoordinate(p, x, in, out, scale, roiStart, roiSpan);
    plan.extrapolate.push_back(!xo.has_value());
    if (xo) {
      double fl = std::floor(*xo);
      double ratio = *xo == fl ? 1.0 : *xo - fl;
      int64_t base = static_cast<int64_t>(*xo - ratio), first = 0;
      std::vector<double> c = coefficients(p, ratio, scale, first);
      if (p.excludeOutside) {
        double sum = 0;
        for (size_t i = 0; i < c.size(); ++i) {
          int64_t idx = base + first + static_cast<int64_t>(i);
          if (idx < 0 || idx >= in)
            c[i] = 0;
          sum += c[i];
        }
        for (double &v : c)
          v /= sum;
      }
      for (size_t i = 0; i < c.size(); ++i) {
        if (c[i] == 0)
          continue;
        plan.index.push_back(
            std::clamp<int64_t>(base + first + static_cast<int64_t>(i), 0, in - 1));
        plan.weight.push_back(c[i]);
      }
    }
    plan.begin.push_back(plan.index.size());
  }
  return plan;
}

/// Whether the plan maps every output index to the same input index with weight 1.
bool isIdentity(const AxisPlan &plan, int64_t in, int64_t out) {
  if (in != out)
    return false;
  for (int64_t o = 0; o < out; ++o) {
    size_t t = plan.begin[static_cast<size_t>(o)];
    if (plan.extrapolate[static_cast<size_t>(o)] ||
        plan.begin[static_cast<size_t>(o) + 1] != t + 1 || plan.index[t] != o ||
        plan.weight[t] != 1.0)
      return false;
  }
  return true;
}

} // namespace

Expected<ResizePlan> planResize(const Node &node, const std::vector<int64_t> &xShape,
                                const std::vector<int64_t> &yShape, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(ResizeParams p, readParams(node));
  const int64_t rank = static_cast<int64_t>(xShape.size());
  std::vector<int64_t> axes;
  for (int64_t a : node.hasAttr("axes") ? node.getInts("axes") : std::vector<int64_t>{})
    axes.push_back(a < 0 ? a + rank : a);
  if (!node.hasAttr("axes"))
    for (int64_t a = 0; a < rank; ++a)
      axes.push_back(a);
  auto given = [&](size_t i) { return in.size() > i && in[i].numElements() > 0; };

  // Per-axis scale (double), as the reference derives it.
  std::vector<double> scale(static_cast<size_t>(rank), 1.0);
  if (given(2)) {
    for (size_t i = 0; i < axes.size(); ++i)
      scale[static_cast<size_t>(axes[i])] =
          static_cast<float>(in[2].elementAsDouble(static_cast<int64_t>(i)));
  } else {
    const Tensor &sizes = in[3];
    for (size_t i = 0; i < axes.size(); ++i) {
      size_t a = static_cast<size_t>(axes[i]);
      scale[a] = static_cast<double>(sizes.elementAsInt64(static_cast<int64_t>(i))) /
                 static_cast<double>(xShape[a]);
    }
    const std::string &policy = node.getString("keep_aspect_ratio_policy");
    if (policy != "stretch") {
      double s = scale[static_cast<size_t>(axes[0])];
      for (int64_t a : axes)
        s = policy == "not_larger" ? std::min(s, scale[static_cast<size_t>(a)])
                                   : std::max(s, scale[static_cast<size_t>(a)]);
      for (int64_t a : axes)
        scale[static_cast<size_t>(a)] = s;
    }
  }

  // roi per axis: [start, end), default [0, 1]; the span is computed in the roi's precision.
  std::vector<double> roiStart(static_cast<size_t>(rank), 0.0),
      roiSpan(static_cast<size_t>(rank), 1.0);
  if (p.transform == Transform::kTfCropAndResize) {
    if (!given(1))
      return invalidArgument("coordinate_transformation_mode tf_crop_and_resize needs input roi");
    const Tensor &roi = in[1];
    if (!isFloat(roi.dtype()))
      return invalidArgument("input roi must be a float tensor, got {}", dtypeName(roi.dtype()));
    const int64_t n = static_cast<int64_t>(axes.size());
    if (roi.numElements() != 2 * n)
      return invalidArgument("input roi has {} values, expected {} (start and end for each of {} "
                             "axes)",
                             roi.numElements(), 2 * n, n);
    for (int64_t i = 0; i < n; ++i) {
      size_t a = static_cast<size_t>(axes[static_cast<size_t>(i)]);
      double s = roi.elementAsDouble(i), e = roi.elementAsDouble(i + n);
      roiStart[a] = s;
      roiSpan[a] = roi.dtype() == DType::kF64
                       ? e - s
                       : static_cast<double>(static_cast<float>(e) - static_cast<float>(s));
    }
  }

  ResizePlan plan;
  plan.extrapolation = p.extrapolation;
  for (int64_t a = 0; a < rank; ++a) {
    size_t i = static_cast<size_t>(a);
    plan.axes.push_back(planAxis(p, xShape[i], yShape[i], scale[i], roiStart[i], roiSpan[i]));
    plan.axes.back().identity = isIdentity(plan.axes.back(), xShape[i], yShape[i]);
  }
  return plan;
}

} // namespace dlc::ops
