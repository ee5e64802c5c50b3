// Reference evaluation of RNN, GRU and LSTM, after the equations of the ONNX spec (gate order
// i for RNN; z, r, h for GRU; i, o, f, c for LSTM; peepholes i, o, f).
//
// f32 (and f16/bf16, widened) compute in f32 with dlc::eval::sgemm for X*W^T and H*R^T; f64
// computes in f64. Layout 1 inputs are transposed to layout 0 first and the outputs back.
// `clip` bounds the input of every gate activation (f and g) to [-clip, clip]; h(Ct) of the
// LSTM is not clipped. With sequence_lens, a batch entry stops at its length: its later Y
// rows are zero and Y_h / Y_c hold the state after its last step (for the reverse direction,
// its steps run from length - 1 down to 0). LSTM's input_forget couples the gates: f = 1 - i.
#include <algorithm>
#include <cstring>

#include "ir/eval/cpu_gemm.h"
#include "ir/eval/eval_compute.h"
#include "ir/eval/misc_eval.h"
#include "ir/eval/rnn_activation.h"
#include "ir/ops/tensor_internal.h"

namespace dlc::eval {

namespace rnn {

namespace {
struct ActInfo {
  const char *name;
  ActKind kind;
  int params; // how many of alpha, beta it takes
  float alpha, beta;
};
constexpr ActInfo kActivations[] = {
    {"Relu", ActKind::kRelu, 0, 0, 0},
    {"Tanh", ActKind::kTanh, 0, 0, 0},
    {"Sigmoid", ActKind::kSigmoid, 0, 0, 0},
    {"Affine", ActKind::kAffine, 2, 1.0f, 0.0f},
    {"LeakyRelu", ActKind::kLeakyRelu, 1, 0.01f, 0},
    {"ThresholdedRelu", ActKind::kThresholdedRelu, 1, 1.0f, 0},
    {"ScaledTanh", ActKind::kScaledTanh, 2, 1.0f, 1.0f},
    {"HardSigmoid", ActKind::kHardSigmoid, 2, 0.2f, 0.5f},
    {"Elu", ActKind::kElu, 1, 1.0f, 0},
    {"Softsign", ActKind::kSoftsign, 0, 0, 0},
    {"Softplus", ActKind::kSoftplus, 0, 0, 0},
};
} // namespace

Expected<std::vector<Activation>> parseActivations(const Node &node, int perDirection, int dirs,
                                                   const std::vector<std::string> &defaults) {
  std::vector<std::string> names = defaults;
  if (const Attribute *a = node.findAttr("activations"))
    names = a->strings();
  const size_t need = static_cast<size_t>(perDirection * dirs);
  if (names.size() < need && names.size() != static_cast<size_t>(perDirection))
    return invalidArgument("attribute 'activations' has {} entries; direction '{}' needs {}",
                           names.size(), node.getString("direction"), need);
  const std::vector<float> alphas = node.getFloats("activation_alpha");
  const std::vector<float> betas = node.getFloats("activation_beta");
  size_t nextAlpha = 0, nextBeta = 0;
  std::vector<Activation> out;
  for (size_t i = 0; i < std::min(names.size(), need); ++i) {
    const ActInfo *info = nullptr;
    for (const ActInfo &k : kActivations)
      if (names[i] == k.name)
        info = &k;
    if (!info)
      return invalidArgument("unknown activation '{}'", names[i]);
    Activation act{info->kind, info->alpha, info->beta};
    if (info->params >= 1 && nextAlpha < alphas.size())
      act.alpha = alphas[nextAlpha++];
    if (info->params >= 2 && nextBeta < betas.size())
      act.beta = betas[nextBeta++];
    out.push_back(act);
  }
  while (out.size() < need) // one direction's list, used for both
    out.push_back(out[out.size() - static_cast<size_t>(perDirection)]);
  return out;
}

namespace {

enum class Cell { kRnn, kGru, kLstm };

int gateCount(Cell c) { return c == Cell::kRnn ? 1 : (c == Cell::kGru ? 3 : 4); }

/// Everything one evaluation needs, in layout 0 and the compute type T.
template <typename T> struct Problem {
  Cell cell;
  int64_t seq, batch, input, hidden, dirs;
  std::vector<T> x;          // [seq, batch, input]
  std::vector<T> w, r, b;    // [dirs, G*H, input], [dirs, G*H, H], [dirs, 2*G*H]
  std::vector<T> h0, c0, p;  // [dirs, batch, H], [dirs, batch, H], [dirs, 3*H]
  std::vector<int64_t> lens; // [batch]
  std::vector<Activation> acts;
  bool hasClip = false, linearBeforeReset = false, inputForget = false;
  T clip = 0;
  bool reverseOnly = false;
};

template <typename T> struct Outputs {
  std::vector<T> y, yh, yc; // [seq, dirs, batch, H], [dirs, batch, H] x 2
};

void gemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b, int64_t ldb,
          float *c) {
  sgemm(false, true, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, n);
}
void gemm(int64_t m, int64_t n, int64_t k, const double *a, int64_t lda, const double *b,
          int64_t ldb, double *c) {
  dgemm(false, true, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, n);
}

/// Runs direction `d` (forward unless `reverse`) and writes its part of the outputs.
template <typename T>
void runDirection(const Problem<T> &pr, int64_t d, bool reverse, Outputs<T> &out) {
  const int64_t H = pr.hidden, B = pr.batch, I = pr.input, G = gateCount(pr.cell), GH = G * H;
  const T *W = pr.w.data() + d * GH * I, *R = pr.r.data() + d * GH * H;
  const T *Wb = pr.b.data() + d * 2 * GH, *Rb = Wb + GH;
  const T *P = pr.p.data() + d * 3 * H;
  const Activation *act = pr.acts.data() + d * (pr.cell == Cell::kRnn ? 1 : G - 1);
  auto clip = [&](T v) { return pr.hasClip ? std::clamp(v, -pr.clip, pr.clip) : v; };
  auto f = [&](int k, T v) { return activate<T>(act[k], clip(v)); };

  std::vector<T> xw(static_cast<size_t>(pr.seq * B * GH));
  gemm(pr.seq * B, GH, I, pr.x.data(), I, W, I, xw.data());
  std::vector<T> h(pr.h0.begin() + d * B * H, pr.h0.begin() + (d + 1) * B * H);
  std::vector<T> c(pr.c0.begin() + d * B * H, pr.c0.begin() + (d + 1) * B * H);
  std::vector<T> hr(static_cast<size_t>(B * GH)), zr(static_cast<size_t>(B * 2 * H));
  std::vector<T> rh(static_cast<size_t>(B * H)), rhR(static_cast<size_t>(B * H));
  for (int64_t s = 0; s < pr.seq; ++s) {
    const int64_t t = reverse ? pr.seq - 1 - s : s;
    gemm(B, GH, H, h.data(), H, R, H, hr.data());
    if (pr.cell == Cell::kGru) {
      // z and r first: without linear_before_reset, h's recurrence reads r (.) H.
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < 2 * H; ++j) {
          const int64_t g = (t * B + b) * GH + j;
          zr[static_cast<size_t>(b * 2 * H + j)] = f(
              0, xw[static_cast<size_t>(g)] + hr[static_cast<size_t>(b * GH + j)] + Wb[j] + Rb[j]);
        }
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < H; ++j)
          rh[static_cast<size_t>(b * H + j)] =
              zr[static_cast<size_t>(b * 2 * H + H + j)] * h[static_cast<size_t>(b * H + j)];
      if (!pr.linearBeforeReset)
        gemm(B, H, H, rh.data(), H, R + 2 * H * H, H, rhR.data());
    }
    for (int64_t b = 0; b < B; ++b) {
      if (t >= pr.lens[static_cast<size_t>(b)])
        continue;
      const T *xg = xw.data() + (t * B + b) * GH, *hg = hr.data() + b * GH;
      T *hb = h.data() + b * H, *cb = c.data() + b * H;
      for (int64_t j = 0; j < H; ++j) {
        auto pre = [&](int64_t gate) {
          return xg[gate * H + j] + hg[gate * H + j] + Wb[gate * H + j] + Rb[gate * H + j];
        };
        if (pr.cell == Cell::kRnn) {
          hb[j] = f(0, pre(0));
        } else if (pr.cell == Cell::kGru) {
          const T z = zr[static_cast<size_t>(b * 2 * H + j)];
          const T rg = zr[static_cast<size_t>(b * 2 * H + H + j)];
          const T ht =
              pr.linearBeforeReset
                  ? f(1, xg[2 * H + j] + rg * (hg[2 * H + j] + Rb[2 * H + j]) + Wb[2 * H + j])
                  : f(1, xg[2 * H + j] + rhR[static_cast<size_t>(b * H + j)] + Rb[2 * H + j] +
                             Wb[2 * H + j]);
          hb[j] = (T(1) - z) * ht + z * hb[j];
        } else {
          const T i = f(0, pre(0) + P[j] * cb[j]);
          const T fg = pr.inputForget ? T(1) - i : f(0, pre(2) + P[2 * H + j] * cb[j]);
          const T cc = f(1, pre(3));
          cb[j] = fg * cb[j] + i * cc;
          const T o = f(0, pre(1) + P[H + j] * cb[j]);
          hb[j] = o * activate<T>(act[2], cb[j]);
        }
      }
      std::copy(hb, hb + H, out.y.begin() + ((t * pr.dirs + d) * B + b) * H);
    }
  }
  std::copy(h.begin(), h.end(), out.yh.begin() + d * B * H);
  std::copy(c.begin(), c.end(), out.yc.begin() + d * B * H);
}

Status checkShape(const Tensor &t, const std::vector<int64_t> &expect, const char *what) {
  if (t.shape() != expect)
    return invalidArgument("input {} is {} but should be {}", what, t.type().str(),
                           TensorType(t.dtype(), Shape::fromSizes(expect)).str());
  return Status::ok();
}

/// `t` (layout 1: [batch, outer, inner]) as layout 0 ([outer, batch, inner]), or as is.
Expected<Tensor> toLayout0(const Tensor &t, bool layout1) {
  if (!layout1)
    return t;
  const std::vector<int64_t> &s = t.shape();
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(t.dtype(), {s[1], s[0], s[2]}));
  stridedCopy(t, out, 0, {s[2], s[1] * s[2], 1});
  return out;
}

template <typename T>
Expected<Problem<T>> readProblem(const Node &node, const std::vector<Tensor> &in, Cell cell) {
  Problem<T> pr;
  pr.cell = cell;
  const bool layout1 = node.getInt("layout") == 1;
  const Tensor &x = in[0], &w = in[1], &r = in[2];
  const int64_t G = gateCount(cell);
  pr.seq = x.shape()[layout1 ? 1 : 0];
  pr.batch = x.shape()[layout1 ? 0 : 1];
  pr.input = x.shape()[2];
  pr.dirs = w.shape()[0];
  pr.hidden = r.shape()[2];
  const int64_t H = pr.hidden, D = pr.dirs, B = pr.batch;
  static const char *kNames[] = {"X",         "W",         "R", "B", "sequence_lens",
                                 "initial_h", "initial_c", "P"};
  for (size_t i = 1; i < in.size(); ++i)
    if (i != 4 && !in[i].empty() && in[i].dtype() != x.dtype())
      return invalidArgument("input {} is {} but X is {}", kNames[i], in[i].type().str(),
                             x.type().str());
  DLC_RETURN_IF_ERROR(checkShape(w, {D, G * H, pr.input}, "W"));
  DLC_RETURN_IF_ERROR(checkShape(r, {D, G * H, H}, "R"));
  auto present = [&](size_t i) { return in.size() > i && !in[i].empty(); };
  DLC_ASSIGN_OR_RETURN(Tensor x0, toLayout0(x, layout1));
  pr.x = floatValues<T>(x0);
  pr.w = floatValues<T>(w);
  pr.r = floatValues<T>(r);
  pr.b.assign(static_cast<size_t>(D * 2 * G * H), T(0));
  if (present(3)) {
    DLC_RETURN_IF_ERROR(checkShape(in[3], {D, 2 * G * H}, "B"));
    pr.b = floatValues<T>(in[3]);
  }
  pr.lens.assign(static_cast<size_t>(B), pr.seq);
  if (present(4)) {
    DLC_RETURN_IF_ERROR(checkShape(in[4], {B}, "sequence_lens"));
    pr.lens = in[4].toInt64Vector();
    for (int64_t b = 0; b < B; ++b)
      if (int64_t v = pr.lens[static_cast<size_t>(b)]; v < 0 || v > pr.seq)
        return outOfRange("sequence_lens[{}] = {} is out of range for a sequence of {}", b, v,
                          pr.seq);
  }
  const std::vector<int64_t> stateShape =
      layout1 ? std::vector<int64_t>{B, D, H} : std::vector<int64_t>{D, B, H};
  for (size_t i : {size_t{5}, size_t{6}}) {
    std::vector<T> &dst = i == 5 ? pr.h0 : pr.c0;
    dst.assign(static_cast<size_t>(D * B * H), T(0));
    if (!present(i))
      continue;
    DLC_RETURN_IF_ERROR(checkShape(in[i], stateShape, kNames[i]));
    DLC_ASSIGN_OR_RETURN(Tensor s0, toLayout0(in[i], layout1));
    dst = floatValues<T>(s0);
  }
  pr.p.assign(static_cast<size_t>(D * 3 * H), T(0));
  if (present(7)) {
    DLC_RETURN_IF_ERROR(checkShape(in[7], {D, 3 * H}, "P"));
    pr.p = floatValues<T>(in[7]);
  }
  static const std::vector<std::string> kDefaults[] = {
      {"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
  const int perDir = cell == Cell::kRnn ? 1 : G - 1;
  DLC_ASSIGN_OR_RETURN(pr.acts, parseActivations(node, perDir, static_cast<int>(D),
                                                 kDefaults[static_cast<int>(cell)]));
  if (node.hasAttr("clip")) {
    const float c = node.getFloat("clip");
    if (!(c >= 0.0f))
      return invalidArgument("attribute 'clip' must not be negative, got {}", c);
    pr.hasClip = true;
    pr.clip = static_cast<T>(c);
  }
  pr.linearBeforeReset = cell == Cell::kGru && node.getInt("linear_before_reset") != 0;
  pr.inputForget = cell == Cell::kLstm && node.getInt("input_forget") != 0;
  pr.reverseOnly = node.getString("direction") == "reverse";
  return pr;
}

/// A compute-type result as a tensor of `dtype`, moved back to layout 1 if needed: Y from
/// [seq, dirs, batch, H] to [batch, seq, dirs, H]; states from [dirs, batch, H] to
/// [batch, dirs, H].
template <typename T>
Expected<Tensor> finish(const std::vector<T> &v, std::vector<int64_t> shape0, DType dtype,
                        bool layout1) {
  Tensor t = tensorFromValues<T>(dtype, shape0, v);
  if (!layout1)
    return t;
  const std::vector<int64_t> st = ops::tensor::stridesOf(shape0);
  std::vector<int64_t> shape1, strides;
  if (shape0.size() == 4) {
    shape1 = {shape0[2], shape0[0], shape0[1], shape0[3]};
    strides = {st[2], st[0], st[1], st[3]};
  } else {
    shape1 = {shape0[1], shape0[0], shape0[2]};
    strides = {st[1], st[0], st[2]};
  }
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(dtype, shape1));
  stridedCopy(t, out, 0, strides);
  return out;
}

template <typename T>
MiscEvalResult evalRecurrentAs(const Node &node, const std::vector<Tensor> &in, Cell cell) {
  DLC_ASSIGN_OR_RETURN(Problem<T> pr, readProblem<T>(node, in, cell));
  const int64_t H = pr.hidden, D = pr.dirs, B = pr.batch;
  Outputs<T> out;
  out.y.assign(static_cast<size_t>(pr.seq * D * B * H), T(0));
  out.yh.assign(static_cast<size_t>(D * B * H), T(0));
  out.yc.assign(static_cast<size_t>(D * B * H), T(0));
  for (int64_t d = 0; d < D; ++d)
    runDirection(pr, d, d == 1 || pr.reverseOnly, out);
  const bool layout1 = node.getInt("layout") == 1;
  const DType dtype = in[0].dtype();
  std::vector<Tensor> results;
  for (int i = 0; i < node.numOutputs(); ++i) {
    if (!node.output(i)) {
      results.emplace_back();
      continue;
    }
    const std::vector<T> &v = i == 0 ? out.y : (i == 1 ? out.yh : out.yc);
    std::vector<int64_t> shape0 =
        i == 0 ? std::vector<int64_t>{pr.seq, D, B, H} : std::vector<int64_t>{D, B, H};
    DLC_ASSIGN_OR_RETURN(Tensor t, finish<T>(v, std::move(shape0), dtype, layout1));
    results.push_back(std::move(t));
  }
  return results;
}

MiscEvalResult evalRecurrent(const Node &node, const std::vector<Tensor> &in, Cell cell) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const DType dtype = in[0].dtype();
  if (dtype == DType::kF64)
    return evalRecurrentAs<double>(node, in, cell);
  if (isFloat(dtype))
    return evalRecurrentAs<float>(node, in, cell);
  return invalidArgument("input X must be a float tensor, got {}", in[0].type().str());
}

} // namespace
} // namespace rnn

MiscEvalResult evalRnn(const Node &node, const std::vector<Tensor> &in) {
  return rnn::evalRecurrent(node, in, rnn::Cell::kRnn);
}
MiscEvalResult evalGru(const Node &node, const std::vector<Tensor> &in) {
  return rnn::evalRecurrent(node, in, rnn::Cell::kGru);
}
MiscEvalResult evalLstm(const Node &node, const std::vector<Tensor> &in) {
  return rnn::evalRecurrent(node, in, rnn::Cell::kLstm);
}

} // namespace dlc::eval
