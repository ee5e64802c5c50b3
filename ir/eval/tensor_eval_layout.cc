// Reference evaluation of the padding and layout ops: Pad, CenterCropPad, DepthToSpace,
// SpaceToDepth, Trilu, EyeLike, ReverseSequence. Elements are copied as bytes of the element
// size, so every dtype works.
//
// Pad: negative pads crop first (as the ONNX reference does), then the remaining (positive)
// pads are filled from the cropped data with numpy.pad's rules, which the spec's examples
// follow: reflect and wrap repeat periodically when a pad is longer than the axis (reflect
// with period 2 * (n - 1), a one-element axis repeating its element). An axis cropped away
// entirely can only be padded in constant mode.
#include <algorithm>
#include <cstring>

#include "ir/eval/eval_util.h"
#include "ir/eval/tensor_eval.h"
#include "ir/ops/tensor_internal.h"

namespace dlc::eval::tensor {

using namespace ops::tensor;

namespace {

using AxisMaps = std::vector<std::vector<int64_t>>;

/// out[o] = in[sum_d maps[d][o_d] * stride_d], or `fill` where some maps[d][o_d] is -1.
void mappedCopy(const Tensor &in, Tensor &out, const AxisMaps &maps, const uint8_t *fill) {
  const int64_t n = out.numElements();
  if (n == 0)
    return;
  const size_t es = static_cast<size_t>(dtypeSize(out.dtype()));
  const auto *src = static_cast<const uint8_t *>(in.raw());
  auto *dst = static_cast<uint8_t *>(out.mutableRaw());
  const std::vector<int64_t> strides = stridesOf(in.shape());
  const std::vector<int64_t> &shape = out.shape();
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < shape.size() && off >= 0; ++d) {
      int64_t m = maps[d][static_cast<size_t>(idx[d])];
      off = m < 0 ? -1 : off + m * strides[d];
    }
    std::memcpy(dst + static_cast<size_t>(i) * es, off < 0 ? fill : src + off * es, es);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
}

/// Axis maps that copy every dim as is.
AxisMaps identityMaps(const std::vector<int64_t> &shape) {
  AxisMaps maps;
  for (int64_t dim : shape) {
    std::vector<int64_t> m(static_cast<size_t>(dim));
    for (int64_t o = 0; o < dim; ++o)
      m[static_cast<size_t>(o)] = o;
    maps.push_back(std::move(m));
  }
  return maps;
}

/// Where each output index of a padded axis reads from (-1: the constant).
Expected<std::vector<int64_t>> padMap(const std::string &mode, int64_t axis, int64_t dim,
                                      int64_t begin, int64_t end, int64_t outDim) {
  std::vector<int64_t> map(static_cast<size_t>(outDim), -1);
  if (mode == "constant") {
    for (int64_t o = 0; o < outDim; ++o) // 128-bit: begin may be near INT64_MIN
      if (const __int128 j = static_cast<__int128>(o) - begin; j >= 0 && j < dim)
        map[static_cast<size_t>(o)] = static_cast<int64_t>(j);
    return map;
  }
  const int64_t lo = std::max<int64_t>(-begin, 0), hi = std::max<int64_t>(-end, 0);
  const int64_t pb = std::max<int64_t>(begin, 0), pe = std::max<int64_t>(end, 0);
  const int64_t m = dim - lo - hi;
  if (m < 0)
    return invalidArgument("pads ({}, {}) crop more than axis {} of size {} holds; mode '{}' "
                           "cannot pad it",
                           begin, end, axis, dim, mode);
  if ((pb > 0 || pe > 0) && m == 0)
    return invalidArgument("mode '{}' cannot pad axis {}: it is empty after cropping", mode, axis);
  for (int64_t o = 0; o < outDim; ++o) {
    int64_t j = o - pb;
    if (mode == "edge") {
      j = std::clamp<int64_t>(j, 0, m - 1);
    } else if (mode == "wrap") {
      j = ((j % m) + m) % m;
    } else if (m == 1) { // reflect
      j = 0;
    } else {
      const int64_t period = 2 * (m - 1);
      j = ((j % period) + period) % period;
      j = j >= m ? period - j : j;
    }
    map[static_cast<size_t>(o)] = lo + j;
  }
  return map;
}

} // namespace

Expected<Tensors> evalPad(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, inputs));
  const Tensor &data = inputs[0];
  const int64_t r = data.rank();
  const std::vector<int64_t> pads = inputs[1].toInt64Vector();
  std::vector<int64_t> axes;
  if (inputs.size() > 3 && !inputs[3].empty()) {
    DLC_ASSIGN_OR_RETURN(axes, normalizeAxes(inputs[3].toInt64Vector(), r));
  } else {
    for (int64_t a = 0; a < r; ++a)
      axes.push_back(a);
  }
  const size_t n = axes.size();
  std::vector<int64_t> begin(static_cast<size_t>(r), 0), end(static_cast<size_t>(r), 0);
  for (size_t k = 0; k < n; ++k) {
    begin[static_cast<size_t>(axes[k])] = pads[k];
    end[static_cast<size_t>(axes[k])] = pads[k + n];
  }
  const size_t es = static_cast<size_t>(dtypeSize(data.dtype()));
  std::vector<uint8_t> fill(es, 0);
  if (inputs.size() > 2 && !inputs[2].empty()) {
    const Tensor &cv = inputs[2];
    if (cv.numElements() != 1)
      return invalidArgument("constant_value must hold one element, got {}", cv.type().str());
    std::memcpy(fill.data(), castTensor(cv, data.dtype()).raw(), es);
  }
  const std::string &mode = node.getString("mode");
  const std::vector<int64_t> outShape = types[0].shape.sizes();
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(data.dtype(), outShape));
  // Maps are as long as the output's dims; an empty output still gets its pads checked.
  const bool empty = out.numElements() == 0;
  AxisMaps maps;
  for (int64_t d = 0; d < r; ++d) {
    const size_t u = static_cast<size_t>(d);
    DLC_ASSIGN_OR_RETURN(
        auto map, padMap(mode, d, data.shape()[u], begin[u], end[u], empty ? 0 : outShape[u]));
    maps.push_back(std::move(map));
  }
  mappedCopy(data, out, maps, fill.data());
  return Tensors{std::move(out)};
}

Expected<Tensors> evalCenterCropPad(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, inputs));
  const Tensor &data = inputs[0];
  const std::vector<int64_t> target = inputs[1].toInt64Vector();
  std::vector<int64_t> axes;
  if (node.hasAttr("axes")) {
    DLC_ASSIGN_OR_RETURN(axes, normalizeAxes(node.getInts("axes"), data.rank()));
  } else {
    for (int64_t a = 0; a < data.rank(); ++a)
      axes.push_back(a);
  }
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(data.dtype(), types[0].shape.sizes()));
  if (out.numElements() == 0)
    return Tensors{std::move(out)};
  AxisMaps maps = identityMaps(data.shape());
  for (size_t k = 0; k < axes.size(); ++k) {
    const size_t a = static_cast<size_t>(axes[k]);
    const int64_t dim = data.shape()[a], t = target[k];
    // Crop or pad symmetrically; the odd element goes to the end.
    std::vector<int64_t> map(static_cast<size_t>(t), -1);
    const int64_t start = (t < dim ? dim - t : t - dim) / 2;
    for (int64_t o = 0; o < t; ++o) {
      const int64_t j = t < dim ? o + start : o - start;
      if (j >= 0 && j < dim)
        map[static_cast<size_t>(o)] = j;
    }
    maps[a] = std::move(map);
  }
  std::vector<uint8_t> zero(static_cast<size_t>(dtypeSize(data.dtype())), 0);
  mappedCopy(data, out, maps, zero.data());
  return Tensors{std::move(out)};
}

Expected<Tensors> evalDepthToSpace(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, inputs));
  const Tensor &in = inputs[0];
  const int64_t b = node.getInt("blocksize");
  const std::vector<int64_t> &s = in.shape();
  const int64_t c = s[1] / (b * b), hw = s[2] * s[3];
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(in.dtype(), types[0].shape.sizes()));
  // The output seen as [N, C/b^2, H, b, W, b] reads the input channel (b1 * b + b2) * C' + c
  // (DCR) or c * b^2 + b1 * b + b2 (CRD).
  Tensor view = out.reshaped({s[0], c, s[2], b, s[3], b});
  std::vector<int64_t> strides;
  if (node.getString("mode") == "DCR")
    strides = {s[1] * hw, hw, s[3], b * c * hw, 1, c * hw};
  else
    strides = {s[1] * hw, b * b * hw, s[3], b * hw, 1, hw};
  stridedCopy(in, view, 0, strides);
  return Tensors{std::move(out)};
}

Expected<Tensors> evalSpaceToDepth(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, inputs));
  const Tensor &in = inputs[0];
  const int64_t b = node.getInt("blocksize");
  const std::vector<int64_t> &s = in.shape();
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(in.dtype(), types[0].shape.sizes()));
  // The output seen as [N, b, b, C, H/b, W/b] reads input[n][c][h' * b + b1][w' * b + b2].
  Tensor view = out.reshaped({s[0], b, b, s[1], s[2] / b, s[3] / b});
  stridedCopy(in, view, 0, {s[1] * s[2] * s[3], s[3], 1, s[2] * s[3], b * s[3], b});
  return Tensors{std::move(out)};
}

Expected<Tensors> evalTrilu(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, inputs));
  const Tensor &in = inputs[0];
  int64_t k = 0;
  if (inputs.size() > 1 && !inputs[1].empty()) {
    if (inputs[1].numElements() != 1)
      return invalidArgument("k must hold one element, got {}", inputs[1].type().str());
    k = inputs[1].elementAsInt64(0);
  }
  const bool upper = node.getInt("upper") != 0;
  const int64_t rows = in.shape()[in.shape().size() - 2], cols = in.shape().back();
  Tensor out = in.clone();
  if (out.numElements() == 0)
    return Tensors{std::move(out)};
  const size_t es = static_cast<size_t>(dtypeSize(in.dtype()));
  auto *dst = static_cast<uint8_t *>(out.mutableRaw());
  const int64_t mats = out.numElements() / (rows * cols);
  for (int64_t m = 0; m < mats; ++m)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        if (upper ? j - i < k : j - i > k)
          std::memset(dst + static_cast<size_t>((m * rows + i) * cols + j) * es, 0, es);
  return Tensors{std::move(out)};
}

Expected<Tensors> evalEyeLike(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, inputs));
  const DType dtype = types[0].dtype;
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(dtype, types[0].shape.sizes()));
  const int64_t rows = out.shape()[0], cols = out.shape()[1], k = node.getInt("k");
  const Tensor one = Tensor::scalarI64(1).castTo(dtype);
  const size_t es = static_cast<size_t>(dtypeSize(dtype));
  auto *dst = static_cast<uint8_t *>(out.mutableRaw());
  // Row i holds its one at column i + k; only rows with that column in range.
  const int64_t first = k >= 0 ? 0 : (k <= -rows ? rows : -k);
  for (int64_t i = first; i < rows && k < cols - i; ++i)
    std::memcpy(dst + static_cast<size_t>(i * cols + i + k) * es, one.raw(), es);
  return Tensors{std::move(out)};
}

Expected<Tensors> evalReverseSequence(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, inputs));
  const Tensor &in = inputs[0];
  const int64_t batchAxis = node.getInt("batch_axis"), timeAxis = node.getInt("time_axis");
  const std::vector<int64_t> lens = inputs[1].toInt64Vector();
  const std::vector<int64_t> &s = in.shape();
  const int64_t batch = s[static_cast<size_t>(batchAxis)], time = s[static_cast<size_t>(timeAxis)];
  if (static_cast<int64_t>(lens.size()) != batch)
    return invalidArgument("sequence_lens has {} elements for a batch of {}", lens.size(), batch);
  const std::vector<int64_t> strides = stridesOf(s);
  const int64_t bs = strides[static_cast<size_t>(batchAxis)];
  const int64_t ts = strides[static_cast<size_t>(timeAxis)];
  const size_t es = static_cast<size_t>(dtypeSize(in.dtype()));
  const size_t chunk = static_cast<size_t>(strides[1]) * es;
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(in.dtype(), types[0].shape.sizes()));
  const auto *src = static_cast<const uint8_t *>(in.raw());
  auto *dst = static_cast<uint8_t *>(out.mutableRaw());
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = lens[static_cast<size_t>(b)];
    if (len < 0 || len > time)
      return outOfRange("sequence_lens[{}] = {} is out of range for time axis {} of size {}", b,
                        len, timeAxis, time);
    for (int64_t t = 0; t < time && chunk != 0; ++t) {
      const int64_t from = t < len ? len - 1 - t : t;
      std::memcpy(dst + static_cast<size_t>(b * bs + t * ts) * es,
                  src + static_cast<size_t>(b * bs + from * ts) * es, chunk);
    }
  }
  return Tensors{std::move(out)};
}

} // namespace dlc::eval::tensor
