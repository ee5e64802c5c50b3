// Reference evaluation of Attention (ir/ops/attention.h): each operand read into its logical
// [B, H, S, D] order in double, scores, mask, softmax and the weighted sum in double, Y
// rounded once to its dtype.
#include <array>
#include <cmath>
#include <limits>

#include "ir/eval/eval_util.h"
#include "ir/eval/linalg_eval.h"
#include "ir/ops/attention.h"

namespace dlc::eval {

namespace {

/// `t` (stored) as the logical [B, H, S, D] tensor of `op`, in double: its elements gathered
/// through the operand's strides (attentionLayout checked they are in the buffer).
Expected<Tensor> logicalF64(const Tensor &t, const ops::AttentionOperand &op) {
  const Tensor flat = castTensor(t, DType::kF64);
  const auto n = op.logical();
  const auto s = op.strides();
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(DType::kF64, {n.begin(), n.end()}));
  const double *src = flat.data<double>();
  double *dst = out.mutableData<double>();
  for (int64_t b = 0; b < n[0]; ++b)
    for (int64_t h = 0; h < n[1]; ++h)
      for (int64_t i = 0; i < n[2]; ++i)
        for (int64_t d = 0; d < n[3]; ++d)
          *dst++ = src[op.offset + b * s[0] + h * s[1] + i * s[2] + d * s[3]];
  return out;
}

} // namespace

EvalResult evalAttention(const Node &node, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 3));
  const DType dtype = in[0].dtype();
  if (!isFloat(dtype))
    return noEval(dtype);
  DLC_ASSIGN_OR_RETURN(std::vector<TensorType> types, staticOutputTypes(node, in));
  DLC_ASSIGN_OR_RETURN(ops::AttentionLayout l,
                       ops::attentionLayout(node, in[0].shape(), in[1].shape(), in[2].shape()));
  DLC_ASSIGN_OR_RETURN(Tensor q, logicalF64(in[0], l.q));
  DLC_ASSIGN_OR_RETURN(Tensor k, logicalF64(in[1], l.k));
  DLC_ASSIGN_OR_RETURN(Tensor v, logicalF64(in[2], l.v));
  const int64_t B = l.batch, Hq = l.qHeads, Sq = l.qSeq, Sk = l.kvSeq, D = l.headSize,
                Dv = l.vHeadSize, group = Hq / l.kvHeads;
  const bool hasMask = in.size() > 3 && !in[3].empty();
  Tensor mask;
  std::array<int64_t, 4> ms{};
  if (hasMask) {
    mask = castTensor(in[3], DType::kF64);
    ms = ops::attentionMaskStrides(in[3].shape());
  }
  const bool boolMask = hasMask && in[3].dtype() == DType::kBool;
  constexpr double kNegInf = -std::numeric_limits<double>::infinity();
  DLC_ASSIGN_OR_RETURN(Tensor y, newTensor(DType::kF64, {B, Hq, Sq, Dv}));
  const double *pq = q.data<double>(), *pk = k.data<double>(), *pv = v.data<double>();
  const double *pm = hasMask ? mask.data<double>() : nullptr;
  double *py = y.mutableData<double>();
  std::vector<double> s(static_cast<size_t>(Sk));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t kvh = h / group;
      const double *kb = pk + (b * l.kvHeads + kvh) * Sk * D;
      const double *vb = pv + (b * l.kvHeads + kvh) * Sk * Dv;
      for (int64_t i = 0; i < Sq; ++i) {
        const double *qi = pq + ((b * Hq + h) * Sq + i) * D;
        double mx = kNegInf;
        for (int64_t j = 0; j < Sk; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += qi[d] * kb[j * D + d];
          double x = dot * static_cast<double>(l.scale);
          if (l.softcap > 0)
            x = l.softcap * std::tanh(x / l.softcap);
          if (pm) {
            const double m = pm[b * ms[0] + h * ms[1] + i * ms[2] + j * ms[3]];
            x = boolMask ? (m != 0 ? x : kNegInf) : x + m;
          }
          if (l.causal && j > i)
            x = kNegInf;
          s[static_cast<size_t>(j)] = x;
          mx = std::max(mx, x);
        }
        // Every key masked: max is -inf and exp(-inf - -inf) is NaN, as softmax gives it.
        double sum = 0;
        for (double &x : s) {
          x = std::exp(x - mx);
          sum += x;
        }
        double *yi = py + ((b * Hq + h) * Sq + i) * Dv;
        for (int64_t j = 0; j < Sk; ++j) {
          const double p = s[static_cast<size_t>(j)] / sum;
          for (int64_t d = 0; d < Dv; ++d)
            yi[d] += p * vb[j * Dv + d];
        }
      }
    }
  // Back to the stored order: view axis a holds logical axis j where perm[j] == a.
  std::vector<int64_t> toView(4);
  for (int64_t j = 0; j < 4; ++j)
    toView[static_cast<size_t>(l.y.perm[static_cast<size_t>(j)])] = j;
  DLC_ASSIGN_OR_RETURN(Tensor stored, permuted(y, toView));
  return std::vector<Tensor>{castTensor(stored.reshaped(types[0].shape.sizes()), dtype)};
}

} // namespace dlc::eval
