// expand-ops: rewrites ops that have no GPU kernel into ops that have, so that a model with
// them runs on the GPU (and its pieces fuse like any others) instead of sending a node to
// the CPU and back.
//
//  * RNN, GRU and LSTM whose sequence length is static and at most `max-steps` (default 128):
//    per direction, the input products of every step as one MatMul with the input bias; then
//    per step one MatMul of the state with R (GRU: two, the reset gate's product apart) and
//    the gate arithmetic, elementwise ops that `fuse` groups into one or two kernels a step.
//    The equations are ONNX's, as ir/eval/rnn_eval.cc evaluates them: gate orders z r h (GRU)
//    and i o f c (LSTM), peepholes i o f, `clip` on every gate activation's input,
//    `linear_before_reset`, `input_forget`, layouts 0 and 1, every listed activation. A
//    `sequence_lens` input is expanded only when it is a constant equal to the sequence
//    length for every batch entry (shorter entries need masking; they stay as they are).
//  * BatchNormalization in training mode: the batch's mean and (biased) variance over every
//    axis but the channel with ReduceMean, the normalisation, and the running statistics
//    moved towards them by 1 - momentum; in inference mode with statistics that are not
//    constants (fold-batchnorm folds the others), the normalisation alone.
//  * Einsum: batched MatMuls and the data movement around them (passes/util/einsum_expand.h).
//  * Dropout that computes the identity (not training, or a constant ratio of 0): its input and
//    an all-true mask; in training (constant training_mode and ratio): a RandomUniformLike
//    drawing what the reference draws, the mask (>= ratio) and the kept elements scaled.
//  * OneHot with float indices: the indices cast to int64 first (NaN mapped out of range).
//  * MeanVarianceNormalization, the training optimizers, ReverseSequence, MaxUnpool, DFT,
//    STFT, GatherND, Det and RoiAlign (passes/util/more_expansions.h).
//  * NonZero, Compress, Unique and NonMaxSuppression, whose output sizes are the data's: fixed
//    size work, a count and a Slice by it (passes/util/sized_by_data.h).
//  * If with a constant condition, Scan with a static sequence length and Loop with a constant
//    trip count (at most `max-steps`) whose body does not compute its condition: their bodies
//    inlined (passes/util/control_flow_expand.h).
//
// A node placed on the CPU by the model, or one the rewrite cannot express, stays as it is;
// `--debug-only=expand-ops` says why for each.
#include <fmt/format.h>

#include <bit>

#include <optional>

#include "ir/annotations/placement.h"
#include "ir/eval/rnn_activation.h"
#include "ir/match.h"
#include "passes/pass.h"
#include "passes/util/control_flow_expand.h"
#include "passes/util/einsum_expand.h"
#include "passes/util/more_expansions.h"
#include "passes/util/node_builder.h"
#include "passes/util/sized_by_data.h"

namespace dlc {

namespace {

using eval::rnn::Activation;
using eval::rnn::ActKind;

/// The activation `a` of `x` (after clipping it to [-clip, clip] when given), as IR ops.
Expected<Value *> activate(NodeBuilder &b, Value *x, const Activation &a,
                           std::optional<double> clip, const std::string &name) {
  const DType t = x->dtype();
  if (clip) {
    DLC_ASSIGN_OR_RETURN(
        x, b.op(Op::kClip, {x, b.scalar(name + "_lo", -*clip, t), b.scalar(name + "_hi", *clip, t)},
                name + "_clip"));
  }
  auto alpha = Attribute(a.alpha), beta = Attribute(a.beta);
  switch (a.kind) {
  case ActKind::kRelu:
    return b.op(Op::kRelu, {x}, name);
  case ActKind::kTanh:
    return b.op(Op::kTanh, {x}, name);
  case ActKind::kSigmoid:
    return b.op(Op::kSigmoid, {x}, name);
  case ActKind::kLeakyRelu:
    return b.op(Op::kLeakyRelu, {x}, name, {{"alpha", alpha}});
  case ActKind::kThresholdedRelu:
    return b.op(Op::kThresholdedRelu, {x}, name, {{"alpha", alpha}});
  case ActKind::kHardSigmoid:
    return b.op(Op::kHardSigmoid, {x}, name, {{"alpha", alpha}, {"beta", beta}});
  case ActKind::kElu:
    return b.op(Op::kElu, {x}, name, {{"alpha", alpha}});
  case ActKind::kSoftsign:
    return b.op(Op::kSoftsign, {x}, name);
  case ActKind::kSoftplus:
    return b.op(Op::kSoftplus, {x}, name);
  case ActKind::kAffine: {
    DLC_ASSIGN_OR_RETURN(Value * m, b.op(Op::kMul, {x, b.scalar(name + "_a", a.alpha, t)}, name));
    return b.op(Op::kAdd, {m, b.scalar(name + "_b", a.beta, t)}, name + "_shift");
  }
  case ActKind::kScaledTanh: {
    DLC_ASSIGN_OR_RETURN(Value * m, b.op(Op::kMul, {x, b.scalar(name + "_b", a.beta, t)}, name));
    DLC_ASSIGN_OR_RETURN(Value * th, b.op(Op::kTanh, {m}, name + "_tanh"));
    return b.op(Op::kMul, {th, b.scalar(name + "_a", a.alpha, t)}, name + "_scale");
  }
  }
  return invalidArgument("unknown activation");
}

/// Uses of `from` (an output of the node being expanded) go to `to`, which takes `from`'s name
/// once the node is gone (`renames`): the expanded graph keeps the model's value names.
using Renames = std::vector<std::pair<Value *, std::string>>;
void replace(Graph &g, Value *from, Value *to, Renames &renames) {
  g.replaceAllUsesWith(from, to);
  renames.emplace_back(to, from->name());
}

enum class Cell { kRnn, kGru, kLstm };

struct Recurrent {
  Cell cell;
  int64_t seq, batch, hidden, dirs, gates;
  bool layout1, reverse;
  std::vector<Activation> acts; // per direction: 1 (RNN), 2 (GRU), 3 (LSTM)
};

/// Why `n` cannot be expanded, or its description.
Expected<Recurrent> describeRecurrent(const Node &n, int64_t maxSteps) {
  Recurrent r;
  r.cell = n.op() == Op::kRNN ? Cell::kRnn : (n.op() == Op::kGRU ? Cell::kGru : Cell::kLstm);
  r.gates = r.cell == Cell::kRnn ? 1 : (r.cell == Cell::kGru ? 3 : 4);
  const Value *x = n.input(0), *rw = n.input(2);
  const DType t = x->dtype();
  if (t != DType::kF32 && t != DType::kF16 && t != DType::kBF16)
    return invalidArgument("X is {}; only f32, f16 and bf16 are expanded", x->type().str());
  if (!x->shape().isStatic() || !rw->shape().isStatic() || x->shape().rank() != 3)
    return invalidArgument("X ({}) or R ({}) has no static shape", x->type().str(),
                           rw->type().str());
  r.layout1 = n.getInt("layout") == 1;
  r.seq = x->shape()[r.layout1 ? 1 : 0].value();
  r.batch = x->shape()[r.layout1 ? 0 : 1].value();
  r.hidden = rw->shape()[2].value();
  r.dirs = rw->shape()[0].value();
  if (r.seq < 1 || r.seq > maxSteps)
    return invalidArgument("{} steps; expand-ops unrolls 1 to {} (max-steps)", r.seq, maxSteps);
  const std::string &direction = n.getString("direction");
  r.reverse = direction == "reverse";
  if (n.hasInput(4)) {
    const Value *lens = n.input(4);
    if (!lens->isConstant())
      return invalidArgument("sequence_lens is not a constant");
    for (int64_t len : lens->constant().toInt64Vector())
      if (len != r.seq)
        return invalidArgument("sequence_lens has {}, not the sequence length {}", len, r.seq);
  }
  const int per = r.cell == Cell::kRnn ? 1 : (r.cell == Cell::kGru ? 2 : 3);
  const std::vector<std::string> defaults =
      r.cell == Cell::kRnn   ? std::vector<std::string>{"Tanh"}
      : r.cell == Cell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                             : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  DLC_ASSIGN_OR_RETURN(r.acts,
                       eval::rnn::parseActivations(n, per, static_cast<int>(r.dirs), defaults));
  return r;
}

/// One direction's state after every step; `ys[t]` is the hidden state after step t (in time
/// order, whichever way the direction runs), `h` and `c` the final ones.
struct DirectionResult {
  std::vector<Value *> ys;
  Value *h = nullptr, *c = nullptr;
};

Expected<DirectionResult> expandDirection(NodeBuilder &b, const Node &n, const Recurrent &r,
                                          Value *x0, int64_t d) {
  const int64_t H = r.hidden, GH = r.gates * H;
  const DType t = x0->dtype();
  const std::string D = fmt::format("d{}", d);
  const Activation *act = r.acts.data() + d * (r.cell == Cell::kRnn   ? 1
                                               : r.cell == Cell::kGru ? 2
                                                                      : 3);
  std::optional<double> clip;
  if (const Attribute *a = n.findAttr("clip"))
    clip = a->f();
  auto f = [&](int k, Value *v, const std::string &name) {
    return activate(b, v, act[k], clip, D + name);
  };
  const int64_t stateAxis = r.layout1 ? 1 : 0; // the direction axis of initial_h / initial_c

  // The input products of every step at once: X [seq, B, I] x W_d^T [I, GH] (+ Wb).
  DLC_ASSIGN_OR_RETURN(Value * w, b.pick(n.input(1), d, 0, D + "_w"));
  DLC_ASSIGN_OR_RETURN(Value * wt, b.transpose(w, {1, 0}, D + "_wt"));
  DLC_ASSIGN_OR_RETURN(Value * xw, b.op(Op::kMatMul, {x0, wt}, D + "_xw"));
  DLC_ASSIGN_OR_RETURN(Value * rm, b.pick(n.input(2), d, 0, D + "_r"));
  DLC_ASSIGN_OR_RETURN(Value * rt, b.transpose(rm, {1, 0}, D + "_rt")); // [H, GH]
  Value *rb = nullptr;
  if (n.hasInput(3)) {
    DLC_ASSIGN_OR_RETURN(Value * bias, b.pick(n.input(3), d, 0, D + "_b"));
    DLC_ASSIGN_OR_RETURN(Value * wb, b.slice(bias, 0, GH, 0, D + "_wb"));
    DLC_ASSIGN_OR_RETURN(rb, b.slice(bias, GH, 2 * GH, 0, D + "_rb"));
    DLC_ASSIGN_OR_RETURN(xw, b.op(Op::kAdd, {xw, wb}, D + "_xwb"));
  }
  Value *h = nullptr, *c = nullptr;
  if (n.hasInput(5)) {
    DLC_ASSIGN_OR_RETURN(h, b.pick(n.input(5), d, stateAxis, D + "_h0"));
  } else {
    h = b.zeros(D + "_h0", t, {r.batch, H});
  }
  Value *pi = nullptr, *po = nullptr, *pf = nullptr;
  if (r.cell == Cell::kLstm) {
    if (n.hasInput(6)) {
      DLC_ASSIGN_OR_RETURN(c, b.pick(n.input(6), d, stateAxis, D + "_c0"));
    } else {
      c = b.zeros(D + "_c0", t, {r.batch, H});
    }
    if (n.hasInput(7)) {
      DLC_ASSIGN_OR_RETURN(Value * p, b.pick(n.input(7), d, 0, D + "_p"));
      DLC_ASSIGN_OR_RETURN(pi, b.slice(p, 0, H, 0, D + "_pi"));
      DLC_ASSIGN_OR_RETURN(po, b.slice(p, H, 2 * H, 0, D + "_po"));
      DLC_ASSIGN_OR_RETURN(pf, b.slice(p, 2 * H, 3 * H, 0, D + "_pf"));
    }
  }
  // GRU: R's reset-gate rows apart (z and r read H, h reads r (.) H or r (.) (H R_h^T + Rb_h)).
  Value *rtZr = rt, *rtH = nullptr, *rbZr = rb, *rbH = nullptr;
  if (r.cell == Cell::kGru) {
    DLC_ASSIGN_OR_RETURN(rtZr, b.slice(rt, 0, 2 * H, 1, D + "_rt_zr"));
    DLC_ASSIGN_OR_RETURN(rtH, b.slice(rt, 2 * H, 3 * H, 1, D + "_rt_h"));
    if (rb) {
      DLC_ASSIGN_OR_RETURN(rbZr, b.slice(rb, 0, 2 * H, 0, D + "_rb_zr"));
      DLC_ASSIGN_OR_RETURN(rbH, b.slice(rb, 2 * H, 3 * H, 0, D + "_rb_h"));
    }
  }
  auto plusBias = [&](Value *v, Value *bias, const std::string &name) -> Expected<Value *> {
    return bias ? b.op(Op::kAdd, {v, bias}, name) : Expected<Value *>(v);
  };
  auto gate = [&](Value *g, int64_t k, const std::string &name) {
    return b.slice(g, k * H, (k + 1) * H, 1, name);
  };

  DirectionResult out;
  out.ys.resize(static_cast<size_t>(r.seq));
  const bool reverse = r.reverse || d == 1;
  for (int64_t s = 0; s < r.seq; ++s) {
    const int64_t step = reverse ? r.seq - 1 - s : s;
    const std::string S = fmt::format("{}_t{}", D, step);
    DLC_ASSIGN_OR_RETURN(Value * xt, b.pick(xw, step, 0, S + "_x")); // [B, GH]
    if (r.cell == Cell::kRnn) {
      DLC_ASSIGN_OR_RETURN(Value * hr, b.op(Op::kMatMul, {h, rt}, S + "_hr"));
      DLC_ASSIGN_OR_RETURN(hr, plusBias(hr, rb, S + "_hrb"));
      DLC_ASSIGN_OR_RETURN(Value * pre, b.op(Op::kAdd, {xt, hr}, S + "_pre"));
      DLC_ASSIGN_OR_RETURN(h, f(0, pre, fmt::format("_t{}_h", step)));
    } else if (r.cell == Cell::kGru) {
      DLC_ASSIGN_OR_RETURN(Value * hr, b.op(Op::kMatMul, {h, rtZr}, S + "_hr"));
      DLC_ASSIGN_OR_RETURN(hr, plusBias(hr, rbZr, S + "_hrb"));
      DLC_ASSIGN_OR_RETURN(Value * xzr, b.slice(xt, 0, 2 * H, 1, S + "_xzr"));
      DLC_ASSIGN_OR_RETURN(Value * pre, b.op(Op::kAdd, {xzr, hr}, S + "_pre"));
      DLC_ASSIGN_OR_RETURN(Value * zr, f(0, pre, fmt::format("_t{}_zr", step)));
      DLC_ASSIGN_OR_RETURN(Value * z, gate(zr, 0, S + "_z"));
      DLC_ASSIGN_OR_RETURN(Value * rg, gate(zr, 1, S + "_r"));
      DLC_ASSIGN_OR_RETURN(Value * xh, gate(xt, 2, S + "_xh"));
      Value *hh = nullptr;
      if (n.getInt("linear_before_reset") != 0) {
        DLC_ASSIGN_OR_RETURN(Value * m, b.op(Op::kMatMul, {h, rtH}, S + "_hrh"));
        DLC_ASSIGN_OR_RETURN(m, plusBias(m, rbH, S + "_hrhb"));
        DLC_ASSIGN_OR_RETURN(hh, b.op(Op::kMul, {rg, m}, S + "_rhr"));
      } else {
        DLC_ASSIGN_OR_RETURN(Value * rh, b.op(Op::kMul, {rg, h}, S + "_rh"));
        DLC_ASSIGN_OR_RETURN(hh, b.op(Op::kMatMul, {rh, rtH}, S + "_rhr"));
        DLC_ASSIGN_OR_RETURN(hh, plusBias(hh, rbH, S + "_rhrb"));
      }
      DLC_ASSIGN_OR_RETURN(Value * hpre, b.op(Op::kAdd, {xh, hh}, S + "_hpre"));
      DLC_ASSIGN_OR_RETURN(Value * ht, f(1, hpre, fmt::format("_t{}_ht", step)));
      // H = (1 - z) ht + z H
      DLC_ASSIGN_OR_RETURN(Value * omz,
                           b.op(Op::kSub, {b.scalar(S + "_one", 1, t), z}, S + "_1mz"));
      DLC_ASSIGN_OR_RETURN(Value * a, b.op(Op::kMul, {omz, ht}, S + "_new"));
      DLC_ASSIGN_OR_RETURN(Value * keep, b.op(Op::kMul, {z, h}, S + "_keep"));
      DLC_ASSIGN_OR_RETURN(h, b.op(Op::kAdd, {a, keep}, S + "_h"));
    } else {
      DLC_ASSIGN_OR_RETURN(Value * hr, b.op(Op::kMatMul, {h, rt}, S + "_hr"));
      DLC_ASSIGN_OR_RETURN(hr, plusBias(hr, rb, S + "_hrb"));
      DLC_ASSIGN_OR_RETURN(Value * g, b.op(Op::kAdd, {xt, hr}, S + "_pre"));
      auto peep = [&](Value *v, Value *p, Value *state,
                      const std::string &name) -> Expected<Value *> {
        if (!p)
          return v;
        DLC_ASSIGN_OR_RETURN(Value * pc, b.op(Op::kMul, {p, state}, name + "_peep"));
        return b.op(Op::kAdd, {v, pc}, name);
      };
      DLC_ASSIGN_OR_RETURN(Value * gi, gate(g, 0, S + "_gi"));
      DLC_ASSIGN_OR_RETURN(Value * go, gate(g, 1, S + "_go"));
      DLC_ASSIGN_OR_RETURN(Value * gf, gate(g, 2, S + "_gf"));
      DLC_ASSIGN_OR_RETURN(Value * gc, gate(g, 3, S + "_gc"));
      DLC_ASSIGN_OR_RETURN(gi, peep(gi, pi, c, S + "_gip"));
      DLC_ASSIGN_OR_RETURN(Value * i, f(0, gi, fmt::format("_t{}_i", step)));
      Value *fg = nullptr;
      if (n.getInt("input_forget") != 0) {
        DLC_ASSIGN_OR_RETURN(fg, b.op(Op::kSub, {b.scalar(S + "_one", 1, t), i}, S + "_f"));
      } else {
        DLC_ASSIGN_OR_RETURN(gf, peep(gf, pf, c, S + "_gfp"));
        DLC_ASSIGN_OR_RETURN(fg, f(0, gf, fmt::format("_t{}_f", step)));
      }
      DLC_ASSIGN_OR_RETURN(Value * cc, f(1, gc, fmt::format("_t{}_cc", step)));
      DLC_ASSIGN_OR_RETURN(Value * keep, b.op(Op::kMul, {fg, c}, S + "_keep"));
      DLC_ASSIGN_OR_RETURN(Value * add, b.op(Op::kMul, {i, cc}, S + "_add"));
      DLC_ASSIGN_OR_RETURN(c, b.op(Op::kAdd, {keep, add}, S + "_c"));
      DLC_ASSIGN_OR_RETURN(go, peep(go, po, c, S + "_gop"));
      DLC_ASSIGN_OR_RETURN(Value * o, f(0, go, fmt::format("_t{}_o", step)));
      DLC_ASSIGN_OR_RETURN(Value * hc, activate(b, c, act[2], std::nullopt, S + "_hc"));
      DLC_ASSIGN_OR_RETURN(h, b.op(Op::kMul, {o, hc}, S + "_h"));
    }
    out.ys[static_cast<size_t>(step)] = h;
  }
  out.h = h;
  out.c = c;
  return out;
}

/// Rewrites recurrent node `n` (described by `r`) into the ops above.
Status expandRecurrent(Graph &g, Node *n, const Recurrent &r, Renames &renames) {
  NodeBuilder b(g, n);
  Value *x0 = n->input(0);
  if (r.layout1) {
    DLC_ASSIGN_OR_RETURN(x0, b.transpose(x0, {1, 0, 2}, "x_seq_first"));
  }
  std::vector<DirectionResult> dirs;
  for (int64_t d = 0; d < r.dirs; ++d) {
    DLC_ASSIGN_OR_RETURN(DirectionResult res, expandDirection(b, *n, r, x0, d));
    dirs.push_back(std::move(res));
  }
  if (!isUnused(n->output(0))) { // Y [seq, dirs, B, H], or layout 1 [B, seq, dirs, H]
    std::vector<Value *> steps;
    for (int64_t s = 0; s < r.seq; ++s) {
      std::vector<Value *> perDir;
      for (int64_t d = 0; d < r.dirs; ++d) {
        DLC_ASSIGN_OR_RETURN(Value * u,
                             b.unsqueeze(dirs[static_cast<size_t>(d)].ys[static_cast<size_t>(s)],
                                         {0, 1}, fmt::format("y_t{}_d{}", s, d)));
        perDir.push_back(u);
      }
      DLC_ASSIGN_OR_RETURN(Value * step, b.concat(perDir, 1, fmt::format("y_t{}", s)));
      steps.push_back(step);
    }
    DLC_ASSIGN_OR_RETURN(Value * y, b.concat(steps, 0, "y"));
    if (r.layout1) {
      DLC_ASSIGN_OR_RETURN(y, b.transpose(y, {2, 0, 1, 3}, "y_batch_first"));
    }
    replace(g, n->output(0), y, renames);
  }
  for (int i = 1; i <= (r.cell == Cell::kLstm ? 2 : 1); ++i) {
    if (isUnused(n->output(i)))
      continue;
    std::vector<Value *> perDir;
    for (int64_t d = 0; d < r.dirs; ++d) {
      Value *state = i == 1 ? dirs[static_cast<size_t>(d)].h : dirs[static_cast<size_t>(d)].c;
      DLC_ASSIGN_OR_RETURN(
          Value * u, b.unsqueeze(state, {r.layout1 ? 1 : 0}, fmt::format("state{}_d{}", i, d)));
      perDir.push_back(u);
    }
    DLC_ASSIGN_OR_RETURN(Value * s, b.concat(perDir, r.layout1 ? 1 : 0, fmt::format("state{}", i)));
    replace(g, n->output(i), s, renames);
  }
  return Status::ok();
}

/// Whether BatchNormalization `n` is expanded: in training mode, or in inference mode with
/// statistics or parameters that are not constants (fold-batchnorm folds the others). An error
/// says why it is kept.
Expected<bool> expandsBatchNorm(const Node &n) {
  const bool training = n.getInt("training_mode") != 0;
  bool constantParams = true;
  for (int i = 1; i <= 4; ++i)
    constantParams &= n.input(i)->isConstant();
  if (!training && constantParams)
    return false;
  const Value *x = n.input(0);
  if (x->dtype() != DType::kF32 && x->dtype() != DType::kF16 && x->dtype() != DType::kBF16)
    return invalidArgument("X is {}; only f32, f16 and bf16 are expanded", x->type().str());
  if (!x->shape().isRanked() || x->shape().rank() < 2)
    return invalidArgument("X ({}) has no rank of at least 2", x->type().str());
  for (int i = 1; i <= 4; ++i)
    if (n.input(i)->dtype() != x->dtype())
      return invalidArgument("input {} is {}, not X's type", i, n.input(i)->type().str());
  return true;
}

/// y = (x - mean) / sqrt(var + epsilon) * scale + B, per channel (axis 1), with the batch's
/// statistics in training mode (and the running ones moved towards them), else the given ones.
Status expandBatchNorm(Graph &g, Node *n, Renames &renames) {
  NodeBuilder b(g, n);
  Value *x = n->input(0);
  const DType t = x->dtype();
  const bool training = n->getInt("training_mode") != 0;
  const int64_t rank = x->shape().rank();
  std::vector<int64_t> axes = {0}, channelShape = {-1};
  for (int64_t a = 2; a < rank; ++a) {
    axes.push_back(a);
    channelShape.push_back(1);
  }
  Value *shape = b.ints("channel_shape", channelShape);
  const std::vector<std::pair<std::string, Attribute>> keep = {{"keepdims", Attribute(int64_t{1})}};
  Value *mean = nullptr, *var = nullptr, *dev = nullptr;
  if (training) {
    DLC_ASSIGN_OR_RETURN(mean, b.op(Op::kReduceMean, {x, b.ints("axes", axes)}, "mean", keep));
    DLC_ASSIGN_OR_RETURN(dev, b.op(Op::kSub, {x, mean}, "dev"));
    DLC_ASSIGN_OR_RETURN(Value * sq, b.op(Op::kMul, {dev, dev}, "dev_sq"));
    DLC_ASSIGN_OR_RETURN(var, b.op(Op::kReduceMean, {sq, b.ints("axes2", axes)}, "var", keep));
  } else {
    DLC_ASSIGN_OR_RETURN(mean, b.op(Op::kReshape, {n->input(3), shape}, "mean_c"));
    DLC_ASSIGN_OR_RETURN(var, b.op(Op::kReshape, {n->input(4), shape}, "var_c"));
    DLC_ASSIGN_OR_RETURN(dev, b.op(Op::kSub, {x, mean}, "dev"));
  }
  DLC_ASSIGN_OR_RETURN(
      Value * ve, b.op(Op::kAdd, {var, b.scalar("eps", n->getFloat("epsilon"), t)}, "var_eps"));
  DLC_ASSIGN_OR_RETURN(Value * sd, b.op(Op::kSqrt, {ve}, "std"));
  DLC_ASSIGN_OR_RETURN(Value * norm, b.op(Op::kDiv, {dev, sd}, "norm"));
  DLC_ASSIGN_OR_RETURN(Value * scale, b.op(Op::kReshape, {n->input(1), shape}, "scale_c"));
  DLC_ASSIGN_OR_RETURN(Value * bias, b.op(Op::kReshape, {n->input(2), shape}, "bias_c"));
  DLC_ASSIGN_OR_RETURN(Value * scaled, b.op(Op::kMul, {norm, scale}, "scaled"));
  DLC_ASSIGN_OR_RETURN(Value * y, b.op(Op::kAdd, {scaled, bias}, "y"));
  replace(g, n->output(0), y, renames);
  const double momentum = n->getFloat("momentum");
  for (int i = 1; i <= 2 && i < n->numOutputs(); ++i) {
    Value *out = n->output(i);
    if (isUnused(out))
      continue;
    if (!training) { // the running statistics pass through
      g.replaceAllUsesWith(out, n->input(i + 2));
      continue;
    }
    Value *batch = i == 1 ? mean : var;
    const std::string name = i == 1 ? "running_mean" : "running_var";
    DLC_ASSIGN_OR_RETURN(
        Value * flat, b.op(Op::kReshape, {batch, b.ints(name + "_shape", {-1})}, name + "_batch"));
    DLC_ASSIGN_OR_RETURN(
        Value * old,
        b.op(Op::kMul, {n->input(i + 2), b.scalar(name + "_m", momentum, t)}, name + "_old"));
    DLC_ASSIGN_OR_RETURN(
        Value * now,
        b.op(Op::kMul, {flat, b.scalar(name + "_1m", 1 - momentum, t)}, name + "_new"));
    DLC_ASSIGN_OR_RETURN(Value * r, b.op(Op::kAdd, {old, now}, name));
    replace(g, out, r, renames);
  }
  return Status::ok();
}

/// Whether Dropout `n` expands: to its input and an all-true mask when it computes the identity
/// (not training, or a ratio of 0), to its draws in training; an error says why it is kept.
Status checkDropout(const Node &n) {
  auto constantScalar = [&](int i) -> std::optional<double> {
    if (!n.hasInput(i))
      return std::nullopt;
    const Value *v = n.input(i);
    if (!v->isConstant() || v->constant().numElements() != 1)
      return std::nullopt;
    return v->constant().elementAsDouble(0);
  };
  const bool training = n.hasInput(2);
  std::optional<double> mode = constantScalar(2), ratio = constantScalar(1);
  if (training && !mode)
    return invalidArgument("training_mode is not a constant");
  if (training && *mode != 0 && n.hasInput(1) && !ratio)
    return invalidArgument("in training mode its ratio is not a constant");
  if (training && *mode != 0 && ratio && !(*ratio >= 0 && *ratio < 1))
    return invalidArgument("in training mode its ratio {} is outside [0, 1)", *ratio);
  if (training && *mode != 0 && !isFloat(n.input(0)->dtype()))
    return invalidArgument("its data is {}", dtypeName(n.input(0)->dtype()));
  if (n.numOutputs() > 1 && n.output(1) && !n.input(0)->shape().isStatic())
    return invalidArgument("the mask's shape is not static");
  return Status::ok();
}

/// The ratio of a Dropout that draws (training_mode a constant true), or nullopt for one that
/// passes its data through (inference, or a ratio of 0).
std::optional<double> drawingRatio(const Node &n) {
  if (!n.hasInput(2) || n.input(2)->constant().elementAsDouble(0) == 0)
    return std::nullopt;
  const double ratio = n.hasInput(1) ? n.input(1)->constant().elementAsDouble(0) : 0.5;
  return ratio == 0 ? std::nullopt : std::optional<double>(ratio);
}

/// Dropout in training as the reference draws it (ir/eval/norm_eval.cc): element i is kept,
/// scaled by 1 / (1 - ratio), when draw i of the stream started at the int seed's low 32 bits
/// is at least ratio. RandomUniformLike makes the same draws from the seed's bits as a float,
/// in f64, so the mask is the reference's exactly.
Expected<std::vector<Value *>> expandTrainingDropout(Graph &g, Node *n, double ratio) {
  NodeBuilder b(g, n);
  Value *x = n->input(0);
  const uint32_t state = n->hasAttr("seed") ? static_cast<uint32_t>(n->getInt("seed")) : 0u;
  std::vector<std::pair<std::string, Attribute>> attrs = {{"dtype", Attribute(DType::kF64)}};
  attrs.push_back({"seed", Attribute(std::bit_cast<float>(state))});
  DLC_ASSIGN_OR_RETURN(Value * u, b.op(Op::kRandomUniformLike, {x}, "draws", attrs));
  DLC_ASSIGN_OR_RETURN(
      Value * keep, b.op(Op::kGreaterOrEqual, {u, b.scalar("ratio", ratio, DType::kF64)}, "mask"));
  DLC_ASSIGN_OR_RETURN(
      Value * scaled,
      b.op(Op::kMul, {x, b.scalar("scale", 1.0 / (1.0 - ratio), x->dtype())}, "scaled"));
  DLC_ASSIGN_OR_RETURN(Value * y,
                       b.op(Op::kWhere, {keep, scaled, b.scalar("zero", 0, x->dtype())}, "output"));
  return std::vector<Value *>{y, keep};
}

Expected<std::vector<Value *>> expandDropout(Graph &g, Node *n) {
  if (std::optional<double> ratio = drawingRatio(*n))
    return expandTrainingDropout(g, n, *ratio);
  NodeBuilder b(g, n);
  Value *x = n->input(0);
  DLC_ASSIGN_OR_RETURN(Value * y, b.op(Op::kIdentity, {x}, "output"));
  std::vector<Value *> outs = {y};
  if (n->numOutputs() > 1 && n->output(1)) {
    Value *yes = b.constant("true", Tensor::fromVector<uint8_t>(DType::kBool, {}, {1}));
    DLC_ASSIGN_OR_RETURN(
        Value * mask, b.op(Op::kExpand, {yes, b.ints("mask_shape", x->shape().sizes())}, "mask"));
    outs.push_back(mask);
  }
  return outs;
}

/// OneHot with float indices: the GPU's OneHot reads integer indices, so the indices become
/// int64 first, truncated as the reference truncates them, with NaN (which the reference skips,
/// and a cast would make 0) replaced by a value far outside every depth.
Status checkFloatOneHot(const Node &n) {
  if (!isFloat(n.input(0)->dtype()))
    return invalidArgument("its indices are {}: it has a GPU kernel",
                           dtypeName(n.input(0)->dtype()));
  return Status::ok();
}

Expected<std::vector<Value *>> expandFloatOneHot(Graph &g, Node *n) {
  NodeBuilder b(g, n);
  Value *ind = n->input(0);
  DLC_ASSIGN_OR_RETURN(Value * nan, b.op(Op::kIsNaN, {ind}, "indices_nan"));
  Value *far = b.scalar("indices_far", -1e18, ind->dtype());
  DLC_ASSIGN_OR_RETURN(Value * numbers, b.op(Op::kWhere, {nan, far, ind}, "indices_numbers"));
  DLC_ASSIGN_OR_RETURN(Value * ints,
                       b.op(Op::kCast, {numbers}, "indices_i64", {{"to", Attribute(DType::kI64)}}));
  DLC_ASSIGN_OR_RETURN(Value * y, b.op(Op::kOneHot, {ints, n->input(1), n->input(2)}, "onehot",
                                       {{"axis", Attribute(n->getInt("axis"))}}));
  return std::vector<Value *>{y};
}

Expected<std::vector<Value *>> expandEinsumNode(Graph &g, Node *n) {
  DLC_ASSIGN_OR_RETURN(Value * y, expandEinsum(g, n));
  return std::vector<Value *>{y};
}

/// The one-node rewrites of this file in OpExpansion's form, beside more_expansions.h's.
constexpr OpExpansion kLocalExpansions[] = {
    {Op::kEinsum, checkEinsumExpandable, expandEinsumNode},
    {Op::kDropout, checkDropout, expandDropout},
    {Op::kOneHot, checkFloatOneHot, expandFloatOneHot},
};

const OpExpansion *expansionOf(Op op) {
  for (const OpExpansion &e : kLocalExpansions)
    if (e.op == op)
      return &e;
  if (const OpExpansion *e = findSizedByDataExpansion(op))
    return e;
  return findOpExpansion(op);
}

/// "node 'name' (Op) -> value" for the decision log.
std::string label(const Node &n) {
  for (int i = 0; i < n.numOutputs(); ++i)
    if (n.output(i))
      return fmt::format("{} -> {}", n.describe(), n.output(i)->name());
  return n.describe();
}

bool placedOnCpu(const Node &n) {
  if (n.device().kind == Device::Kind::kCpu)
    return true;
  Expected<DeviceSpec> spec = parseDeviceSpec(placeRequestOf(n));
  return spec && spec->type == "CPU";
}

class ExpandOps : public Pass {
public:
  std::vector<PassOptionSpec> options() const override {
    return {{"max-steps", PassOptionSpec::Kind::kInt,
             "the longest sequence a recurrent op or Scan is unrolled over, the largest trip "
             "count of a Loop that is (default 128)"}};
  }

  Expected<bool> run(Graph &g, const PassOptions &options) override {
    DLC_ASSIGN_OR_RETURN(int64_t maxSteps, options.getInt("max-steps", 128));
    bool changed = false;
    for (Node *n : g.nodes()) {
      const bool recurrent = n->op() == Op::kRNN || n->op() == Op::kGRU || n->op() == Op::kLSTM;
      const bool control = isControlFlow(n->op());
      const OpExpansion *more = expansionOf(n->op());
      if (!recurrent && !control && !more && n->op() != Op::kBatchNormalization)
        continue;
      std::optional<Recurrent> r;
      if (control) {
        if (Status why = checkControlFlow(*n, maxSteps); !why.isOk()) {
          options.debugf("{}: kept: {}", label(*n), why.message());
          continue;
        }
      } else if (more) {
        if (Status why = more->check(*n); !why.isOk()) {
          options.debugf("{}: kept: {}", label(*n), why.message());
          continue;
        }
      } else if (recurrent) {
        auto described = describeRecurrent(*n, maxSteps);
        if (!described) {
          options.debugf("{}: kept: {}", label(*n), described.status().message());
          continue;
        }
        r = *described;
      } else {
        Expected<bool> expands = expandsBatchNorm(*n);
        if (!expands)
          options.debugf("{}: kept: {}", label(*n), expands.status().message());
        if (!expands || !*expands)
          continue;
      }
      if (placedOnCpu(*n)) {
        options.debugf("{}: kept: the model places it on the CPU", label(*n));
        continue;
      }
      Renames renames;
      Status done = Status::ok();
      if (r) {
        done = expandRecurrent(g, n, *r, renames);
      } else if (control || more) {
        Expected<std::vector<Value *>> outs =
            control ? expandControlFlow(g, n, maxSteps) : more->expand(g, n);
        done = outs.status();
        for (int k = 0; outs && k < n->numOutputs() && k < static_cast<int>(outs->size()); ++k)
          if (n->output(k) && (*outs)[static_cast<size_t>(k)])
            replace(g, n->output(k), (*outs)[static_cast<size_t>(k)], renames);
      } else {
        done = expandBatchNorm(g, n, renames);
      }
      DLC_RETURN_IF_ERROR(done.withContext("expand-ops: " + n->describe()));
      options.debugf("{}: expanded", label(*n));
      g.eraseNode(n);
      for (auto &[v, name] : renames)
        g.renameValue(v, name);
      changed = true;
    }
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createExpandOps() { return std::make_unique<ExpandOps>(); }

} // namespace dlc
