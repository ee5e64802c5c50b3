// Reference evaluation of GridSample (any number of spatial axes) and Col2Im.
//
// GridSample follows ONNX's reference (onnx/reference/ops/op_grid_sample.py): the grid's last
// axis lists coordinates innermost axis first (x = width, then height, ...); each is
// denormalised (align_corners maps -1 and 1 to the centres of the corner pixels, otherwise to
// their outer edges) and kept in f32 as there; nearest rounds half to even; a coordinate outside
// the borders is clamped (border) or reflected (reflection) before interpolation; then the taps of
// linear (2 per axis) or cubic (4 per axis, Keys with A = -0.75) interpolation read 0 outside the
// input (zeros), the clamped pixel (border) or the reflected pixel (reflection). Computed in
// double.
//
// Col2Im scatters the columns back into the image: see col2im in conv_lowering.h.
#include <algorithm>
#include <cmath>

#include "ir/eval/conv_lowering.h"
#include "ir/ops/tensor_internal.h"

namespace dlc::eval {

namespace {

enum class GridMode { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

/// Reflects x into [lo, hi] by its nearer border, repeatedly (the reference's _gs_reflect).
double reflect(double x, double lo, double hi) {
  double range = hi - lo;
  if (range <= 0)
    return lo;
  if (x < lo) {
    double dx = lo - x;
    int64_t n = static_cast<int64_t>(dx / range);
    double r = dx - static_cast<double>(n) * range;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    double dx = x - hi;
    int64_t n = static_cast<int64_t>(dx / range);
    double r = dx - static_cast<double>(n) * range;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

struct GridParams {
  GridMode mode = GridMode::kLinear;
  Padding padding = Padding::kZeros;
  bool alignCorners = false;
};

/// One axis of one sample: input indices (or -1 for a zero tap) and weights.
struct AxisTaps {
  int64_t count = 0;
  int64_t index[4] = {0, 0, 0, 0};
  double weight[4] = {0, 0, 0, 0};
};

void cubicCoefficients(double t, double *c) {
  const double A = -0.75;
  t = std::abs(t);
  c[0] = ((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A;
  c[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
  c[2] = ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1;
  c[3] = ((A * (2 - t) - 5 * A) * (2 - t) + 8 * A) * (2 - t) - 4 * A;
}

/// The taps along one axis of size `size` for normalised grid coordinate `g`.
AxisTaps axisTaps(const GridParams &p, double g, int64_t size) {
  const double len = static_cast<double>(size);
  // The reference keeps denormalised coordinates in f32.
  double x =
      static_cast<float>(p.alignCorners ? (g + 1) / 2.0 * (len - 1) : ((g + 1) * len - 1) / 2.0);
  const double lo = p.alignCorners ? 0.0 : -0.5, hi = p.alignCorners ? len - 1 : len - 0.5;
  if (p.mode == GridMode::kNearest)
    x = std::nearbyint(x); // half to even, as PyTorch and the reference
  if (x < lo || x > hi) {
    if (p.padding == Padding::kBorder)
      x = std::clamp(x, 0.0, len - 1);
    else if (p.padding == Padding::kReflection)
      x = reflect(x, lo, hi);
  }
  auto mapIndex = [&](int64_t i) -> int64_t {
    switch (p.padding) {
    case Padding::kZeros:
      return i >= 0 && i < size ? i : -1;
    case Padding::kBorder:
      return std::clamp<int64_t>(i, 0, size - 1);
    case Padding::kReflection:
      return static_cast<int64_t>(reflect(static_cast<double>(i), lo, hi));
    }
    return -1;
  };
  AxisTaps t;
  if (p.mode == GridMode::kNearest) {
    t.count = 1;
    t.index[0] = mapIndex(static_cast<int64_t>(x));
    t.weight[0] = 1.0;
  } else if (p.mode == GridMode::kLinear) {
    int64_t x0 = static_cast<int64_t>(std::floor(x));
    double f = std::abs(x - static_cast<double>(x0));
    t.count = 2;
    t.index[0] = mapIndex(x0);
    t.index[1] = mapIndex(x0 + 1);
    t.weight[0] = 1 - f;
    t.weight[1] = f;
  } else {
    int64_t x0 = static_cast<int64_t>(std::floor(x)) - 1;
    t.count = 4;
    cubicCoefficients(x - static_cast<double>(x0) - 1, t.weight);
    for (int64_t i = 0; i < 4; ++i)
      t.index[i] = mapIndex(x0 + i);
  }
  return t;
}

/// Sum over the product of the axes' taps of weights * pixel (0 where any index is -1).
double gridSampleValue(const std::vector<AxisTaps> &taps, const std::vector<int64_t> &strides,
                       const double *plane, size_t a, int64_t offset) {
  if (a == taps.size())
    return plane[offset];
  double sum = 0;
  for (int64_t i = 0; i < taps[a].count; ++i) {
    if (taps[a].index[i] < 0)
      continue;
    sum += taps[a].weight[i] *
           gridSampleValue(taps, strides, plane, a + 1, offset + taps[a].index[i] * strides[a]);
  }
  return sum;
}

} // namespace

EvalResult evalGridSample(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const Tensor &x = in[0], &grid = in[1];
  DLC_RETURN_IF_ERROR(floatComputeType(x.dtype(), "input X").status());
  DLC_RETURN_IF_ERROR(floatComputeType(grid.dtype(), "input grid").status());
  GridParams p;
  const std::string &mode = node.getString("mode"), &padding = node.getString("padding_mode");
  if (mode == "nearest")
    p.mode = GridMode::kNearest;
  else if (mode == "linear" || mode == "bilinear")
    p.mode = GridMode::kLinear;
  else if (mode == "cubic" || mode == "bicubic")
    p.mode = GridMode::kCubic;
  else
    return invalidArgument("invalid mode '{}'; expected linear, nearest or cubic", mode);
  if (padding == "zeros")
    p.padding = Padding::kZeros;
  else if (padding == "border")
    p.padding = Padding::kBorder;
  else if (padding == "reflection")
    p.padding = Padding::kReflection;
  else
    return invalidArgument("invalid padding_mode '{}'; expected zeros, border or reflection",
                           padding);
  p.alignCorners = node.getInt("align_corners") != 0;

  const std::vector<int64_t> yShape = types[0].shape.sizes();
  const size_t n = static_cast<size_t>(x.rank()) - 2;
  const std::vector<int64_t> dims(x.shape().begin() + 2, x.shape().end());
  const int64_t batch = x.shape()[0], channels = x.shape()[1];
  const int64_t inPlane = sizeProduct(dims, 0, n);
  const int64_t outPlane = sizeProduct(yShape, 2, yShape.size());
  DLC_ASSIGN_OR_RETURN(Tensor y, newTensor(DType::kF64, yShape));
  if (y.numElements() == 0)
    return std::vector<Tensor>{y.castTo(x.dtype())};
  if (inPlane == 0)
    return invalidArgument("cannot sample an empty input");
  Tensor xd = x.castTo(DType::kF64), gd = grid.castTo(DType::kF64);
  const std::vector<int64_t> strides = ops::tensor::stridesOf(dims);
  std::vector<AxisTaps> taps(n);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t o = 0; o < outPlane; ++o) {
      const double *g = gd.data<double>() + (b * outPlane + o) * static_cast<int64_t>(n);
      for (size_t a = 0; a < n; ++a) // grid lists the innermost axis first
        taps[a] = axisTaps(p, g[n - 1 - a], dims[a]);
      for (int64_t c = 0; c < channels; ++c)
        y.mutableData<double>()[(b * channels + c) * outPlane + o] =
            gridSampleValue(taps, strides, xd.data<double>() + (b * channels + c) * inPlane, 0, 0);
    }
  return std::vector<Tensor>{y.castTo(x.dtype())};
}

EvalResult evalCol2Im(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const Tensor &x = in[0];
  if (!isNumeric(x.dtype()))
    return invalidArgument("input must be numeric, got {}", dtypeName(x.dtype()));
  const std::vector<int64_t> image = in[1].toInt64Vector(), block = in[2].toInt64Vector();
  const size_t n = image.size();
  for (size_t a = 0; a < n; ++a)
    if (block[a] < 1 || image[a] < 0)
      return invalidArgument("image_shape {} and block_shape {} must be non-negative and positive",
                             Shape::fromSizes(image).str(), Shape::fromSizes(block).str());
  auto perAxis = [&](const char *name, size_t count, int64_t dflt) {
    return node.hasAttr(name) ? node.getInts(name) : std::vector<int64_t>(count, dflt);
  };
  WindowMap m;
  m.target = image;
  m.kernel = block;
  m.strides = perAxis("strides", n, 1);
  m.dilations = perAxis("dilations", n, 1);
  std::vector<int64_t> pads = perAxis("pads", 2 * n, 0);
  m.padBegin.assign(pads.begin(), pads.begin() + static_cast<int64_t>(n));
  for (size_t a = 0; a < n; ++a) {
    int64_t extent = m.dilations[a] * (block[a] - 1) + 1;
    int64_t padded = image[a] + pads[a] + pads[a + n];
    m.iterated.push_back(padded < extent ? 0 : (padded - extent) / m.strides[a] + 1);
  }
  const std::vector<int64_t> yShape = types[0].shape.sizes();
  DLC_ASSIGN_OR_RETURN(Tensor y, newTensor(DType::kF64, yShape));
  Tensor xd = x.castTo(DType::kF64);
  const int64_t blocks = x.shape()[2], channels = yShape[1];
  const int64_t inImage = channels * m.kernelSize() * blocks, outImage = channels * m.targetSize();
  for (int64_t b = 0; b < yShape[0]; ++b)
    col2im(m, xd.data<double>() + b * inImage, channels, 0, blocks,
           y.mutableData<double>() + b * outImage);
  return std::vector<Tensor>{y.castTo(x.dtype())};
}

} // namespace dlc::eval
