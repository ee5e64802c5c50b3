// The data movement that lowers windowed ops to GEMMs, for the reference backend: im2col
// (gather each output position's receptive field into a column) and col2im (scatter-add
// columns back into an image). Conv uses im2col; ConvTranspose and Col2Im use col2im.
//
// Both walk a "window map": positions p of an iterated grid (Conv's output, ConvTranspose's
// input, Col2Im's block grid) and kernel offsets k address the element
//     t = p * stride - padBegin + k * dilation
// of a target grid (Conv's input, the image); t outside the target is padding.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ir/eval/nn_eval_util.h"
#include "ir/ops/tensor_internal.h"

namespace dlc::eval {

struct WindowMap {
  std::vector<int64_t> iterated;  // grid the positions p run over
  std::vector<int64_t> target;    // grid the addressed elements t lie in
  std::vector<int64_t> kernel;    // kernel extent per axis (undilated)
  std::vector<int64_t> strides;   // per axis
  std::vector<int64_t> dilations; // per axis
  std::vector<int64_t> padBegin;  // per axis; may be negative (ConvTranspose's output_shape)

  int64_t iteratedSize() const { return sizeProduct(iterated, 0, iterated.size()); }
  int64_t targetSize() const { return sizeProduct(target, 0, target.size()); }
  int64_t kernelSize() const { return sizeProduct(kernel, 0, kernel.size()); }
};

namespace detail {

inline int64_t floorDiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}
inline int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

/// For kernel offset `k` (one index per axis), walks the iterated positions [p0, p0 + count)
/// in runs along the last axis and calls
///   fn(q, run, base, t0, step, lo, hi)
/// for each run: positions q .. q + run - 1 of the chunk; base is the flat target offset of
/// the run's outer axes (or -1 when they fall in the padding); the last-axis target index of
/// run element j is t0 + j * step; only j in [lo, hi) lie inside the target.
template <typename Fn>
void forEachRun(const WindowMap &m, const std::vector<int64_t> &k, int64_t p0, int64_t count,
                Fn &&fn) {
  if (count <= 0)
    return;
  const size_t n = m.iterated.size(), last = n - 1;
  std::vector<int64_t> targetStrides = ops::tensor::stridesOf(m.target);
  std::vector<int64_t> idx(n);
  for (size_t a = n, rest = static_cast<size_t>(p0); a-- > 0;) {
    idx[a] = static_cast<int64_t>(rest % static_cast<size_t>(m.iterated[a]));
    rest /= static_cast<size_t>(m.iterated[a]);
  }
  const int64_t step = m.strides[last], width = m.target[last];
  const int64_t off = k[last] * m.dilations[last] - m.padBegin[last];
  for (int64_t q = 0; q < count;) {
    int64_t run = std::min(m.iterated[last] - idx[last], count - q);
    int64_t base = 0;
    for (size_t a = 0; a < last && base >= 0; ++a) {
      int64_t t = idx[a] * m.strides[a] - m.padBegin[a] + k[a] * m.dilations[a];
      base = t < 0 || t >= m.target[a] ? -1 : base + t * targetStrides[a];
    }
    int64_t t0 = idx[last] * step + off;
    int64_t lo = std::clamp<int64_t>(ceilDiv(-t0, step), 0, run);
    int64_t hi = std::clamp<int64_t>(floorDiv(width - 1 - t0, step) + 1, lo, run);
    fn(q, run, base, t0, step, lo, hi);
    q += run;
    idx[last] += run;
    for (size_t a = last; a > 0 && idx[a] == m.iterated[a]; --a) {
      idx[a] = 0;
      ++idx[a - 1];
    }
  }
}

/// Advances a kernel-offset odometer; false after the last offset.
inline bool nextOffset(std::vector<int64_t> &k, const std::vector<int64_t> &extent) {
  for (size_t a = k.size(); a-- > 0;) {
    if (++k[a] < extent[a])
      return true;
    k[a] = 0;
  }
  return false;
}

} // namespace detail

/// cols[(c * kernelSize + kk) * count + q] = target image c at the element kernel offset kk
/// of iterated position p0 + q addresses, or `pad` outside: channels images of
/// m.targetSize() elements each at `x`.
template <typename T>
void im2col(const WindowMap &m, const T *x, int64_t channels, int64_t p0, int64_t count, T pad,
            T *cols) {
  const int64_t ks = m.kernelSize(), imageSize = m.targetSize();
  for (int64_t c = 0; c < channels; ++c) {
    std::vector<int64_t> k(m.kernel.size(), 0);
    int64_t kk = 0;
    do {
      T *row = cols + (c * ks + kk) * count;
      const T *image = x + c * imageSize;
      detail::forEachRun(m, k, p0, count,
                         [&](int64_t q, int64_t run, int64_t base, int64_t t0, int64_t step,
                             int64_t lo, int64_t hi) {
                           T *dst = row + q;
                           if (base < 0) {
                             std::fill(dst, dst + run, pad);
                             return;
                           }
                           std::fill(dst, dst + lo, pad);
                           const T *src = image + base + t0;
                           if (step == 1)
                             std::copy(src + lo, src + hi, dst + lo);
                           else
                             for (int64_t j = lo; j < hi; ++j)
                               dst[j] = src[j * step];
                           std::fill(dst + hi, dst + run, pad);
                         });
      ++kk;
    } while (detail::nextOffset(k, m.kernel));
  }
}

/// The adjoint of im2col: image c at each in-range element addressed by (kk, p0 + q) gets
/// cols[(c * kernelSize + kk) * count + q] added.
template <typename T>
void col2im(const WindowMap &m, const T *cols, int64_t channels, int64_t p0, int64_t count, T *y) {
  const int64_t ks = m.kernelSize(), imageSize = m.targetSize();
  for (int64_t c = 0; c < channels; ++c) {
    std::vector<int64_t> k(m.kernel.size(), 0);
    int64_t kk = 0;
    do {
      const T *row = cols + (c * ks + kk) * count;
      T *image = y + c * imageSize;
      detail::forEachRun(m, k, p0, count,
                         [&](int64_t q, int64_t run, int64_t base, int64_t t0, int64_t step,
                             int64_t lo, int64_t hi) {
                           if (base < 0)
                             return;
                           const T *src = row + q;
                           T *dst = image + base + t0;
                           for (int64_t j = lo; j < hi; ++j)
                             dst[j * step] += src[j];
                         });
      ++kk;
    } while (detail::nextOffset(k, m.kernel));
  }
}

} // namespace dlc::eval
