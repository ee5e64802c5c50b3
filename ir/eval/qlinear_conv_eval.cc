// Reference evaluation of QLinearConv: a direct loop over output positions and kernel taps
// (window geometry from ir/ops/conv_util.h), on zero-point-centered integers accumulated
// exactly, then requantized per output channel with the multiplier
// x_scale * w_scale[m] / y_scale computed in f32 (rounding half to even, saturating).
// Padding contributes nothing: a padded x equals its zero point.
#include "ir/eval/quant_eval.h"
#include "ir/ops/conv_util.h"

namespace dlc::eval {

using ops::readWindowGeometry;

namespace {

std::string shapeStr(const std::vector<int64_t> &s) { return Shape::fromSizes(s).str(); }

/// Calls f(coords) for every point of the box `dims`, last coordinate fastest.
template <typename F> void forEachPoint(const std::vector<int64_t> &dims, F f) {
  for (int64_t d : dims)
    if (d == 0)
      return;
  std::vector<int64_t> c(dims.size(), 0);
  while (true) {
    f(c);
    size_t j = dims.size();
    while (j > 0 && ++c[j - 1] == dims[j - 1])
      c[--j] = 0;
    if (j == 0)
      return;
  }
}

/// A scalar (one-element) quantization parameter; `what` names it in errors.
Status checkScalar(const Tensor &t, const char *what) {
  if (t.numElements() != 1)
    return invalidArgument("{} must be a scalar, got shape {}", what, shapeStr(t.shape()));
  return Status::ok();
}

/// Per output channel parameter: a scalar or a 1-D tensor of M elements.
Status checkPerChannel(const Tensor &t, int64_t m, const char *what) {
  if (t.numElements() != 1 && !(t.rank() == 1 && t.numElements() == m))
    return invalidArgument("{} must be a scalar or have {} elements, got shape {}", what, m,
                           shapeStr(t.shape()));
  return Status::ok();
}

} // namespace

// Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B?.
EvalResult evalQLinearConv(const Node &node, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 8));
  const Tensor &x = in[0], &w = in[3];
  for (size_t i : {0, 3, 7})
    if (!isInteger(in[i].dtype()))
      return noEval(in[i].dtype());
  if (x.rank() < 3 || w.rank() != x.rank())
    return invalidArgument("x {} and w {} must have the same rank >= 3", shapeStr(x.shape()),
                           shapeStr(w.shape()));
  int64_t batch = x.shape()[0], channels = x.shape()[1], m = w.shape()[0];
  int64_t group = node.getInt("group");
  if (group < 1 || m % group != 0 || channels != w.shape()[1] * group)
    return invalidArgument("x has {} channels and w is {}, which group {} does not fit", channels,
                           shapeStr(w.shape()), group);
  DLC_RETURN_IF_ERROR(checkScalar(in[1], "x_scale"));
  DLC_RETURN_IF_ERROR(checkScalar(in[2], "x_zero_point"));
  DLC_RETURN_IF_ERROR(checkPerChannel(in[4], m, "w_scale"));
  DLC_RETURN_IF_ERROR(checkPerChannel(in[5], m, "w_zero_point"));
  DLC_RETURN_IF_ERROR(checkScalar(in[6], "y_scale"));
  DLC_RETURN_IF_ERROR(checkScalar(in[7], "y_zero_point"));
  bool hasBias = in.size() > 8 && !in[8].empty();
  if (hasBias && in[8].numElements() != m)
    return invalidArgument("B must have {} elements, got shape {}", m, shapeStr(in[8].shape()));

  int64_t spatial = x.rank() - 2;
  std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  auto geometry = readWindowGeometry(node, spatial, &kernel, {});
  if (!geometry)
    return geometry.status();
  std::vector<int64_t> inDims(x.shape().begin() + 2, x.shape().end()), outDims, padBegin;
  for (int64_t d = 0; d < spatial; ++d) {
    auto dim = geometry->outputDim(d, Dim(inDims[static_cast<size_t>(d)]));
    if (!dim)
      return dim.status();
    outDims.push_back(dim->value());
    padBegin.push_back(geometry->resolvePads(d, inDims[static_cast<size_t>(d)]).first);
  }

  std::vector<int64_t> outShape{batch, m};
  outShape.insert(outShape.end(), outDims.begin(), outDims.end());
  Tensor out = Tensor::zeros(in[7].dtype(), outShape);
  int64_t xzp = in[2].elementAsInt64(0), yzp = in[7].elementAsInt64(0);
  float xs = static_cast<float>(in[1].elementAsDouble(0));
  float ys = static_cast<float>(in[6].elementAsDouble(0));
  int64_t inSize = 1, kSize = 1;
  for (size_t d = 0; d < inDims.size(); ++d) {
    inSize *= inDims[d];
    kSize *= kernel[d];
  }
  Tensor xi = castTensor(x, DType::kI32), wi = castTensor(w, DType::kI32);
  const int32_t *xv = xi.data<int32_t>(), *wv = wi.data<int32_t>();
  int64_t cPerGroup = channels / group, mPerGroup = m / group;
  std::vector<int64_t> inCoord(static_cast<size_t>(spatial));
  int64_t o = 0; // output element index, in order
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t oc = 0; oc < m; ++oc) {
      int64_t g = oc / mPerGroup;
      int64_t wzp = in[5].elementAsInt64(in[5].numElements() == 1 ? 0 : oc);
      float ws = static_cast<float>(in[4].elementAsDouble(in[4].numElements() == 1 ? 0 : oc));
      float multiplier = xs * ws / ys;
      int64_t bias = hasBias ? in[8].elementAsInt64(oc) : 0;
      forEachPoint(outDims, [&](const std::vector<int64_t> &pos) {
        int64_t acc = bias;
        for (int64_t c = 0; c < cPerGroup; ++c) {
          int64_t xBase = (n * channels + g * cPerGroup + c) * inSize;
          int64_t wBase = (oc * cPerGroup + c) * kSize;
          int64_t tap = 0;
          forEachPoint(kernel, [&](const std::vector<int64_t> &k) {
            int64_t xOff = 0;
            bool inside = true;
            for (size_t d = 0; d < k.size() && inside; ++d) {
              int64_t i =
                  pos[d] * geometry->strides[d] - padBegin[d] + k[d] * geometry->dilations[d];
              inside = i >= 0 && i < inDims[d];
              xOff = xOff * inDims[d] + i;
            }
            if (inside)
              acc += (xv[xBase + xOff] - xzp) * (wv[wBase + tap] - wzp);
            ++tap;
          });
        }
        storeQuantized(out, o++, static_cast<double>(acc) * multiplier, yzp);
      });
    }
  return std::vector<Tensor>{out};
}

} // namespace dlc::eval
