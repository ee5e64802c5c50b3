// Reference evaluation of Conv, ConvTranspose and ConvInteger, for any number of spatial axes.
//
// Conv lowers each (image, group) pair to one GEMM: im2col gathers the receptive fields into
// a [C/group * prod(kernel), positions] matrix (in chunks of output positions, so the scratch
// stays bounded; a 1x1, stride-1, unpadded convolution reads X directly) and sgemm / dgemm
// multiplies the group's [M/group, C/group * prod(kernel)] weights with it. ConvTranspose is
// the adjoint: a GEMM with the transposed weights gives every input position's contribution
// to each (output channel, kernel offset), and col2im adds them into the output. ConvInteger
// follows Conv in exact integer arithmetic (wrapping like int32 hardware accumulators).
#include <algorithm>

#include "ir/eval/conv_lowering.h"
#include "ir/eval/cpu_gemm.h"
#include "ir/ops/conv_util.h"

namespace dlc::eval {

using ops::AutoPad;
using ops::readWindowGeometry;
using ops::WindowGeometry;

namespace {

/// Bound on the elements of an im2col / col2im scratch matrix (64 MiB of f32).
constexpr int64_t kMaxScratch = int64_t{1} << 24;

/// Positions per chunk when each position needs `rows` scratch elements.
int64_t chunkFor(int64_t rows, int64_t positions) {
  int64_t c = std::max<int64_t>(1, kMaxScratch / std::max<int64_t>(1, rows));
  return std::max<int64_t>(1, std::min(c, positions));
}

void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
          const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
  sgemm(ta, tb, M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc);
}
void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const double *A, int64_t lda,
          const double *B, int64_t ldb, double beta, double *C, int64_t ldc) {
  dgemm(ta, tb, M, N, K, 1.0, A, lda, B, ldb, beta, C, ldc);
}

/// The sizes of one convolution and the window map between its grids.
struct ConvSetup {
  int64_t batch = 0, inChannels = 0, outChannels = 0, group = 1;
  WindowMap map;
};

std::vector<int64_t> spatial(const std::vector<int64_t> &shape) {
  return std::vector<int64_t>(shape.begin() + 2, shape.end());
}

Expected<WindowGeometry> convGeometry(const Node &node, const Tensor &x, const Tensor &w) {
  std::vector<int64_t> weightKernel = spatial(w.shape());
  return readWindowGeometry(node, x.rank() - 2, &weightKernel, {});
}

/// Conv and ConvInteger: positions run over Y's spatial grid and address X's.
Expected<ConvSetup> convSetup(const Node &node, const Tensor &x, const Tensor &w,
                              const std::vector<int64_t> &yShape) {
  DLC_ASSIGN_OR_RETURN(WindowGeometry g, convGeometry(node, x, w));
  ConvSetup s;
  s.batch = x.shape()[0];
  s.inChannels = x.shape()[1];
  s.outChannels = w.shape()[0];
  s.group = node.getInt("group");
  s.map = {spatial(yShape), spatial(x.shape()), g.kernel, g.strides, g.dilations, {}};
  for (int64_t a = 0; a < g.spatialRank(); ++a)
    s.map.padBegin.push_back(g.resolvePads(a, s.map.target[static_cast<size_t>(a)]).first);
  return s;
}

/// ConvTranspose: positions run over X's spatial grid and address Y's; the pads as
/// WindowGeometry::transposedPadsBegin resolves them (shared with the GPU kernel).
Expected<ConvSetup> transposeSetup(const Node &node, const Tensor &x, const Tensor &w,
                                   const std::vector<int64_t> &yShape) {
  DLC_ASSIGN_OR_RETURN(WindowGeometry g, convGeometry(node, x, w));
  ConvSetup s;
  s.batch = x.shape()[0];
  s.inChannels = x.shape()[1];
  s.outChannels = yShape[1];
  s.group = node.getInt("group");
  s.map = {spatial(x.shape()), spatial(yShape), g.kernel, g.strides, g.dilations, {}};
  s.map.padBegin = g.transposedPadsBegin(node, s.map.iterated, s.map.target);
  return s;
}

template <typename T>
void convForward(const ConvSetup &s, const T *x, const T *w, const T *bias, T *y) {
  const WindowMap &m = s.map;
  const int64_t cg = s.inChannels / s.group, mg = s.outChannels / s.group;
  const int64_t kdim = cg * m.kernelSize(), inSize = m.targetSize(), outSize = m.iteratedSize();
  bool direct = m.iterated == m.target;
  for (size_t a = 0; a < m.kernel.size(); ++a)
    direct = direct && m.kernel[a] == 1 && m.strides[a] == 1 && m.padBegin[a] == 0;
  if (bias)
    for (int64_t r = 0; r < s.batch * s.outChannels; ++r)
      std::fill(y + r * outSize, y + (r + 1) * outSize, bias[r % s.outChannels]);
  const T beta = bias ? T(1) : T(0);
  const int64_t chunk = direct ? std::max<int64_t>(1, outSize) : chunkFor(kdim, outSize);
  std::vector<T> cols(direct ? 0 : static_cast<size_t>(kdim * chunk));
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t g = 0; g < s.group; ++g) {
      const T *xg = x + (b * s.inChannels + g * cg) * inSize;
      const T *wg = w + g * mg * kdim;
      T *yg = y + (b * s.outChannels + g * mg) * outSize;
      for (int64_t p0 = 0; p0 < outSize; p0 += chunk) {
        int64_t count = std::min(chunk, outSize - p0);
        if (direct) {
          gemm(false, false, mg, count, cg, wg, kdim, xg + p0, inSize, beta, yg + p0, outSize);
          continue;
        }
        im2col(m, xg, cg, p0, count, T(0), cols.data());
        gemm(false, false, mg, count, kdim, wg, kdim, cols.data(), count, beta, yg + p0, outSize);
      }
    }
}

template <typename T>
void convTransposeForward(const ConvSetup &s, const T *x, const T *w, const T *bias, T *y) {
  const WindowMap &m = s.map;
  const int64_t cg = s.inChannels / s.group, mg = s.outChannels / s.group;
  const int64_t rows = mg * m.kernelSize(), inSize = m.iteratedSize(), outSize = m.targetSize();
  const int64_t chunk = chunkFor(rows, inSize);
  std::vector<T> cols(static_cast<size_t>(rows * chunk));
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t g = 0; g < s.group; ++g) {
      const T *xg = x + (b * s.inChannels + g * cg) * inSize;
      const T *wg = w + g * cg * rows;
      T *yg = y + (b * s.outChannels + g * mg) * outSize;
      for (int64_t p0 = 0; p0 < inSize; p0 += chunk) {
        int64_t count = std::min(chunk, inSize - p0);
        gemm(true, false, rows, count, cg, wg, rows, xg + p0, inSize, T(0), cols.data(), count);
        col2im(m, cols.data(), mg, p0, count, yg);
      }
    }
  if (bias)
    for (int64_t r = 0; r < s.batch * s.outChannels; ++r)
      for (int64_t i = 0; i < outSize; ++i)
        y[r * outSize + i] += bias[r % s.outChannels];
}

/// [N, spatial..., C] dims as [N, C, spatial...].
std::vector<int64_t> channelsFirstShape(std::vector<int64_t> v) {
  if (v.size() >= 3) {
    v.insert(v.begin() + 1, v.back());
    v.pop_back();
  }
  return v;
}

/// A convolution with channels_last = 1 (x [N, spatial..., C], w [M, k..., C], y
/// [N, spatial..., M]) evaluated channels first: `first` runs on x and w permuted to
/// [N, C, spatial...] and [M, C, k...] (other inputs as they are); its result is permuted back.
template <class F> EvalResult evalChannelsLast(const std::vector<Tensor> &in, F first) {
  if (in.size() < 2 || in[0].rank() < 3 || in[1].rank() != in[0].rank())
    return invalidArgument("channels_last needs X and W of one rank, at least 3");
  const int64_t r = in[0].rank();
  std::vector<int64_t> toFirst{0, r - 1}, toLast{0};
  for (int64_t d = 1; d < r - 1; ++d)
    toFirst.push_back(d);
  for (int64_t d = 2; d < r; ++d)
    toLast.push_back(d);
  toLast.push_back(1);
  std::vector<Tensor> args = in;
  DLC_ASSIGN_OR_RETURN(args[0], permuted(in[0], toFirst));
  DLC_ASSIGN_OR_RETURN(args[1], permuted(in[1], toFirst));
  DLC_ASSIGN_OR_RETURN(std::vector<Tensor> y, first(args));
  DLC_ASSIGN_OR_RETURN(Tensor out, permuted(y[0], toLast));
  return std::vector<Tensor>{std::move(out)};
}

/// Checks that the float inputs X, W and optional B share X's dtype; returns the compute type.
Expected<DType> floatConvType(const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(DType compute, floatComputeType(in[0].dtype(), "input X"));
  const char *names[] = {"input X", "weight W", "bias B"};
  for (size_t i = 1; i < std::min<size_t>(in.size(), 3); ++i)
    if (!in[i].empty() && in[i].dtype() != in[0].dtype())
      return invalidArgument("{} has dtype {} but input X has {}", names[i],
                             dtypeName(in[i].dtype()), dtypeName(in[0].dtype()));
  return compute;
}

/// Shared driver of Conv and ConvTranspose; `yFirst`: the output shape channels first when
/// `in` holds a channels_last conv's operands permuted (evalChannelsLast).
template <bool kTranspose>
EvalResult evalFloatConv(const Node &node, const std::vector<Tensor> &in,
                         const std::vector<int64_t> *yFirst = nullptr) {
  std::vector<int64_t> yShape;
  if (yFirst) {
    yShape = *yFirst;
  } else {
    DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
    yShape = types[0].shape.sizes();
  }
  DLC_ASSIGN_OR_RETURN(DType compute, floatConvType(in));
  DLC_ASSIGN_OR_RETURN(ConvSetup s, kTranspose ? transposeSetup(node, in[0], in[1], yShape)
                                               : convSetup(node, in[0], in[1], yShape));
  DLC_ASSIGN_OR_RETURN(Tensor y, newTensor(compute, yShape));
  Tensor x = toCompute(in[0], compute), w = toCompute(in[1], compute);
  Tensor bias = in.size() > 2 ? toCompute(in[2], compute) : Tensor();
  withFloatType(compute, [&]<typename T>() {
    const T *b = bias.empty() ? nullptr : bias.data<T>();
    if constexpr (kTranspose)
      convTransposeForward<T>(s, x.data<T>(), w.data<T>(), b, y.mutableData<T>());
    else
      convForward<T>(s, x.data<T>(), w.data<T>(), b, y.mutableData<T>());
  });
  return std::vector<Tensor>{y.castTo(in[0].dtype())};
}

/// `t` minus its zero point, as int32: `zp` empty (0), one element, or one per row of
/// `rowSize` elements.
Expected<std::vector<int32_t>> subtractZeroPoint(const Tensor &t, const Tensor &zp, int64_t rowSize,
                                                 const char *what) {
  std::vector<int32_t> out(static_cast<size_t>(t.numElements()));
  int64_t rows = rowSize > 0 ? t.numElements() / rowSize : 0;
  if (!zp.empty()) {
    if (zp.dtype() != t.dtype())
      return invalidArgument("{} zero point has dtype {} but the input has {}", what,
                             dtypeName(zp.dtype()), dtypeName(t.dtype()));
    if (zp.rank() > 1 || (zp.numElements() != 1 && zp.numElements() != rows))
      return invalidArgument("{} zero point must be a scalar{}, got shape {}", what,
                             rowSize > 0 ? " or hold one value per output channel" : "",
                             Shape::fromSizes(zp.shape()).str());
  }
  for (int64_t i = 0; i < t.numElements(); ++i) {
    int64_t z = zp.empty() ? 0 : zp.elementAsInt64(zp.numElements() == 1 ? 0 : i / rowSize);
    out[static_cast<size_t>(i)] = static_cast<int32_t>(t.elementAsInt64(i) - z);
  }
  return out;
}

/// y[m, p] += sum_k w[m, k] * cols[k, p] in wrapping 32-bit arithmetic.
void integerGemm(int64_t M, int64_t N, int64_t K, const int32_t *w, int64_t ldw,
                 const int32_t *cols, uint32_t *y, int64_t ldy) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k) {
      uint32_t a = static_cast<uint32_t>(w[i * ldw + k]);
      if (a == 0)
        continue;
      const int32_t *c = cols + k * N;
      uint32_t *dst = y + i * ldy;
      for (int64_t j = 0; j < N; ++j)
        dst[j] += a * static_cast<uint32_t>(c[j]);
    }
}

} // namespace

EvalResult evalConv(const Node &node, const std::vector<Tensor> &in) {
  if (node.getInt("channels_last") == 0)
    return evalFloatConv<false>(node, in);
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const std::vector<int64_t> yFirst = channelsFirstShape(types[0].shape.sizes());
  return evalChannelsLast(in, [&](const std::vector<Tensor> &first) {
    return evalFloatConv<false>(node, first, &yFirst);
  });
}

EvalResult evalConvTranspose(const Node &node, const std::vector<Tensor> &in) {
  return evalFloatConv<true>(node, in);
}

namespace {

/// ConvInteger channels first: x [N, C, ...], w [M, C/group, ...] into Y of `yShape`.
EvalResult convIntegerFirst(const Node &node, const Tensor &x, const Tensor &w,
                            const std::vector<Tensor> &in, std::vector<int64_t> yShape) {
  for (const Tensor *t : {&x, &w})
    if (t->dtype() != DType::kU8 && t->dtype() != DType::kI8)
      return invalidArgument("{} must be u8 or i8, got {}", t == &x ? "input x" : "input w",
                             dtypeName(t->dtype()));
  DLC_ASSIGN_OR_RETURN(ConvSetup s, convSetup(node, x, w, yShape));
  Tensor none;
  DLC_ASSIGN_OR_RETURN(std::vector<int32_t> xi,
                       subtractZeroPoint(x, in.size() > 2 ? in[2] : none, 0, "input x"));
  int64_t wRow = s.outChannels > 0 ? w.numElements() / s.outChannels : 1;
  DLC_ASSIGN_OR_RETURN(std::vector<int32_t> wi,
                       subtractZeroPoint(w, in.size() > 3 ? in[3] : none, wRow, "input w"));
  DLC_ASSIGN_OR_RETURN(Tensor y, newTensor(DType::kI32, yShape));
  const WindowMap &m = s.map;
  const int64_t cg = s.inChannels / s.group, mg = s.outChannels / s.group;
  const int64_t kdim = cg * m.kernelSize(), inSize = m.targetSize(), outSize = m.iteratedSize();
  const int64_t chunk = chunkFor(kdim, outSize);
  std::vector<int32_t> cols(static_cast<size_t>(kdim * chunk));
  auto *yu = static_cast<uint32_t *>(y.mutableRaw());
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t g = 0; g < s.group; ++g)
      for (int64_t p0 = 0; p0 < outSize; p0 += chunk) {
        int64_t count = std::min(chunk, outSize - p0);
        im2col(m, xi.data() + (b * s.inChannels + g * cg) * inSize, cg, p0, count, 0, cols.data());
        integerGemm(mg, count, kdim, wi.data() + g * mg * kdim, kdim, cols.data(),
                    yu + (b * s.outChannels + g * mg) * outSize + p0, outSize);
      }
  return std::vector<Tensor>{std::move(y)};
}

} // namespace

EvalResult evalConvInteger(const Node &node, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 2));
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  std::vector<int64_t> yShape = types[0].shape.sizes();
  if (node.getInt("channels_last") == 0)
    return convIntegerFirst(node, in[0], in[1], in, yShape);
  // channels_last = 1 (realize-int8's form): x [N, spatial..., C], w [M, k..., C], Y
  // [N, spatial..., M]; evaluated channels first on permuted operands.
  const std::vector<int64_t> yFirst = channelsFirstShape(yShape);
  return evalChannelsLast(in, [&](const std::vector<Tensor> &first) {
    return convIntegerFirst(node, first[0], first[1], in, yFirst);
  });
}

} // namespace dlc::eval
