// Reference evaluation of the region-of-interest pools: RoiAlign (opset 16) and MaxRoiPool.
//
// Both follow the algorithms ONNX's reference implementation ports from onnxruntime (which
// took them from Caffe2 / Detectron): RoiAlign averages (or takes the max of) bilinear
// samples on a regular grid in each bin; in max mode each sample is the largest of its four
// weighted corner values, as there. MaxRoiPool rounds the box to the feature grid and takes
// the max over each bin (an empty bin gives 0); NaN wins, as in MaxPool.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/eval/nn_eval_util.h"

namespace dlc::eval {

namespace {

/// Bilinear sample weights and offsets of one sampling point (onnxruntime's PreCalc).
template <typename T> struct Sample {
  int64_t pos[4] = {0, 0, 0, 0};
  T w[4] = {0, 0, 0, 0};
};

template <typename T> Sample<T> bilinearSample(T y, T x, int64_t height, int64_t width) {
  Sample<T> s;
  if (y < T(-1) || y > static_cast<T>(height) || x < T(-1) || x > static_cast<T>(width))
    return s; // outside the feature map: contributes 0
  y = std::max(y, T(0));
  x = std::max(x, T(0));
  int64_t yLow = static_cast<int64_t>(y), xLow = static_cast<int64_t>(x), yHigh, xHigh;
  if (yLow >= height - 1) {
    yHigh = yLow = height - 1;
    y = static_cast<T>(yLow);
  } else {
    yHigh = yLow + 1;
  }
  if (xLow >= width - 1) {
    xHigh = xLow = width - 1;
    x = static_cast<T>(xLow);
  } else {
    xHigh = xLow + 1;
  }
  T ly = y - static_cast<T>(yLow), lx = x - static_cast<T>(xLow);
  T hy = T(1) - ly, hx = T(1) - lx;
  s.pos[0] = yLow * width + xLow;
  s.pos[1] = yLow * width + xHigh;
  s.pos[2] = yHigh * width + xLow;
  s.pos[3] = yHigh * width + xHigh;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}

template <typename T> bool takesMax(T candidate, T best) {
  return !std::isnan(best) && (candidate > best || std::isnan(candidate));
}

struct RoiAlignParams {
  int64_t outH, outW, samplingRatio;
  double spatialScale;
  bool halfPixel, maxMode;
};

template <typename T>
void roiAlign(const RoiAlignParams &p, const std::vector<int64_t> &xShape, const T *x,
              const T *rois, const int64_t *batch, int64_t numRois, T *y) {
  const int64_t channels = xShape[1], height = xShape[2], width = xShape[3];
  const T scale = static_cast<T>(p.spatialScale), offset = p.halfPixel ? T(0.5) : T(0);
  for (int64_t r = 0; r < numRois; ++r) {
    const T *box = rois + r * 4;
    T startW = box[0] * scale - offset, startH = box[1] * scale - offset;
    T endW = box[2] * scale - offset, endH = box[3] * scale - offset;
    T roiW = endW - startW, roiH = endH - startH;
    if (!p.halfPixel) { // output_half_pixel: legacy behaviour, ROIs at least 1x1
      roiW = std::max(roiW, T(1));
      roiH = std::max(roiH, T(1));
    }
    T binH = roiH / static_cast<T>(p.outH), binW = roiW / static_cast<T>(p.outW);
    int64_t gridH = p.samplingRatio > 0
                        ? p.samplingRatio
                        : static_cast<int64_t>(std::ceil(roiH / static_cast<T>(p.outH)));
    int64_t gridW = p.samplingRatio > 0
                        ? p.samplingRatio
                        : static_cast<int64_t>(std::ceil(roiW / static_cast<T>(p.outW)));
    const T count = static_cast<T>(std::max<int64_t>(gridH * gridW, 1));
    std::vector<Sample<T>> samples;
    for (int64_t ph = 0; ph < p.outH; ++ph)
      for (int64_t pw = 0; pw < p.outW; ++pw)
        for (int64_t iy = 0; iy < gridH; ++iy) {
          T yy = startH + static_cast<T>(ph) * binH +
                 (static_cast<T>(iy) + T(0.5)) * binH / static_cast<T>(gridH);
          for (int64_t ix = 0; ix < gridW; ++ix) {
            T xx = startW + static_cast<T>(pw) * binW +
                   (static_cast<T>(ix) + T(0.5)) * binW / static_cast<T>(gridW);
            samples.push_back(bilinearSample(yy, xx, height, width));
          }
        }
    for (int64_t c = 0; c < channels; ++c) {
      const T *plane = x + (batch[r] * channels + c) * height * width;
      T *out = y + (r * channels + c) * p.outH * p.outW;
      size_t at = 0;
      for (int64_t bin = 0; bin < p.outH * p.outW; ++bin) {
        T acc = 0;
        for (int64_t i = 0; i < gridH * gridW; ++i, ++at) {
          const Sample<T> &s = samples[at];
          if (!p.maxMode) {
            acc += s.w[0] * plane[s.pos[0]] + s.w[1] * plane[s.pos[1]] + s.w[2] * plane[s.pos[2]] +
                   s.w[3] * plane[s.pos[3]];
            continue;
          }
          T v = s.w[0] * plane[s.pos[0]];
          for (int k = 1; k < 4; ++k)
            v = takesMax(s.w[k] * plane[s.pos[k]], v) ? s.w[k] * plane[s.pos[k]] : v;
          acc = i == 0 || takesMax(v, acc) ? v : acc;
        }
        out[bin] = p.maxMode ? acc : acc / count;
      }
    }
  }
}

template <typename T>
void maxRoiPool(const std::vector<int64_t> &xShape, const T *x, const T *rois, int64_t numRois,
                int64_t pooledH, int64_t pooledW, double spatialScale, T *y) {
  const int64_t channels = xShape[1], height = xShape[2], width = xShape[3];
  for (int64_t r = 0; r < numRois; ++r) {
    const T *roi = rois + r * 5;
    int64_t b = static_cast<int64_t>(roi[0]);
    auto scaled = [&](T v) {
      return static_cast<int64_t>(std::round(v * static_cast<T>(spatialScale)));
    };
    int64_t startW = scaled(roi[1]), startH = scaled(roi[2]);
    int64_t endW = scaled(roi[3]), endH = scaled(roi[4]);
    int64_t roiH = std::max<int64_t>(endH - startH + 1, 1);
    int64_t roiW = std::max<int64_t>(endW - startW + 1, 1);
    const T binH = static_cast<T>(roiH) / static_cast<T>(pooledH);
    const T binW = static_cast<T>(roiW) / static_cast<T>(pooledW);
    for (int64_t c = 0; c < channels; ++c) {
      const T *plane = x + (b * channels + c) * height * width;
      T *out = y + (r * channels + c) * pooledH * pooledW;
      for (int64_t ph = 0; ph < pooledH; ++ph)
        for (int64_t pw = 0; pw < pooledW; ++pw) {
          auto clampTo = [](int64_t v, int64_t hi) {
            return std::min(std::max<int64_t>(v, 0), hi);
          };
          int64_t hs =
              clampTo(static_cast<int64_t>(std::floor(static_cast<T>(ph) * binH)) + startH, height);
          int64_t he = clampTo(
              static_cast<int64_t>(std::ceil(static_cast<T>(ph + 1) * binH)) + startH, height);
          int64_t ws =
              clampTo(static_cast<int64_t>(std::floor(static_cast<T>(pw) * binW)) + startW, width);
          int64_t we = clampTo(
              static_cast<int64_t>(std::ceil(static_cast<T>(pw + 1) * binW)) + startW, width);
          bool empty = he <= hs || we <= ws;
          T best = empty ? T(0) : -std::numeric_limits<T>::max();
          for (int64_t h = hs; h < he; ++h)
            for (int64_t w = ws; w < we; ++w)
              if (takesMax(plane[h * width + w], best))
                best = plane[h * width + w];
          out[ph * pooledW + pw] = best;
        }
    }
  }
}

} // namespace

EvalResult evalRoiAlign(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const Tensor &x = in[0], &rois = in[1], &batch = in[2];
  DLC_ASSIGN_OR_RETURN(DType compute, floatComputeType(x.dtype(), "input X"));
  if (rois.dtype() != x.dtype())
    return invalidArgument("input rois has dtype {} but X has {}", dtypeName(rois.dtype()),
                           dtypeName(x.dtype()));
  if (batch.dtype() != DType::kI64)
    return invalidArgument("input batch_indices must be i64, got {}", dtypeName(batch.dtype()));
  RoiAlignParams p;
  p.outH = node.getInt("output_height");
  p.outW = node.getInt("output_width");
  p.samplingRatio = node.getInt("sampling_ratio");
  p.spatialScale = node.getFloat("spatial_scale");
  const std::string &ctm = node.getString("coordinate_transformation_mode");
  const std::string &mode = node.getString("mode");
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    return invalidArgument("invalid coordinate_transformation_mode '{}'; expected half_pixel or "
                           "output_half_pixel",
                           ctm);
  if (mode != "avg" && mode != "max")
    return invalidArgument("invalid mode '{}'; expected avg or max", mode);
  if (p.samplingRatio < 0)
    return invalidArgument("attribute 'sampling_ratio' must be non-negative, got {}",
                           p.samplingRatio);
  p.halfPixel = ctm == "half_pixel";
  p.maxMode = mode == "max";
  const int64_t numRois = rois.shape()[0];
  for (int64_t r = 0; r < numRois; ++r) {
    int64_t b = batch.data<int64_t>()[r];
    if (b < 0 || b >= x.shape()[0])
      return outOfRange("batch_indices[{}] = {} is out of range for a batch of {}", r, b,
                        x.shape()[0]);
  }
  DLC_ASSIGN_OR_RETURN(Tensor y, newTensor(compute, types[0].shape.sizes()));
  if (x.shape()[2] == 0 || x.shape()[3] == 0)
    return std::vector<Tensor>{y.castTo(x.dtype())};
  Tensor xc = toCompute(x, compute), rc = toCompute(rois, compute);
  withFloatType(compute, [&]<typename T>() {
    roiAlign<T>(p, x.shape(), xc.data<T>(), rc.data<T>(), batch.data<int64_t>(), numRois,
                y.mutableData<T>());
  });
  return std::vector<Tensor>{y.castTo(x.dtype())};
}

EvalResult evalMaxRoiPool(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const Tensor &x = in[0], &rois = in[1];
  DLC_ASSIGN_OR_RETURN(DType compute, floatComputeType(x.dtype(), "input X"));
  if (rois.dtype() != x.dtype())
    return invalidArgument("input rois has dtype {} but X has {}", dtypeName(rois.dtype()),
                           dtypeName(x.dtype()));
  if (rois.shape()[1] != 5)
    return invalidArgument("input rois must have 5 columns (batch index, x1, y1, x2, y2), got {}",
                           rois.shape()[1]);
  const int64_t numRois = rois.shape()[0];
  for (int64_t r = 0; r < numRois; ++r) {
    double b = rois.elementAsDouble(r * 5);
    if (!(b >= 0) || static_cast<int64_t>(b) >= x.shape()[0])
      return outOfRange("rois[{}] has batch index {}, out of range for a batch of {}", r, b,
                        x.shape()[0]);
  }
  std::vector<int64_t> pooled = node.getInts("pooled_shape");
  DLC_ASSIGN_OR_RETURN(Tensor y, newTensor(compute, types[0].shape.sizes()));
  Tensor xc = toCompute(x, compute), rc = toCompute(rois, compute);
  withFloatType(compute, [&]<typename T>() {
    maxRoiPool<T>(x.shape(), xc.data<T>(), rc.data<T>(), numRois, pooled[0], pooled[1],
                  node.getFloat("spatial_scale"), y.mutableData<T>());
  });
  return std::vector<Tensor>{y.castTo(x.dtype())};
}

} // namespace dlc::eval
