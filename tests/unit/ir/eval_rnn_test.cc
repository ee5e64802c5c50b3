// Reference evaluation of RNN, GRU and LSTM against a straightforward per-batch, per-step
// implementation of the ONNX equations (written independently of the evaluator: batch-major
// loops, explicit sums, f64), over directions, layouts, sequence lengths, initial states,
// peepholes, clip, linear_before_reset, input_forget and activation lists.
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include "eval_tensor_test_util.h"

namespace dlc::evaltest {
namespace {

struct Act {
  std::string name;
  double alpha = 0, beta = 0;
};

double applyAct(const Act &a, double x) {
  if (a.name == "Sigmoid")
    return 1 / (1 + std::exp(-x));
  if (a.name == "Tanh")
    return std::tanh(x);
  if (a.name == "Relu")
    return std::max(x, 0.0);
  if (a.name == "LeakyRelu")
    return x >= 0 ? x : a.alpha * x;
  if (a.name == "HardSigmoid")
    return std::min(std::max(a.alpha * x + a.beta, 0.0), 1.0);
  if (a.name == "ScaledTanh")
    return a.alpha * std::tanh(a.beta * x);
  if (a.name == "Affine")
    return a.alpha * x + a.beta;
  if (a.name == "Elu")
    return x >= 0 ? x : a.alpha * (std::exp(x) - 1);
  if (a.name == "Softsign")
    return x / (1 + std::fabs(x));
  if (a.name == "Softplus")
    return std::log(1 + std::exp(x));
  ADD_FAILURE() << "no activation " << a.name;
  return 0;
}

struct Case {
  Op op = Op::kLSTM;
  std::string direction = "forward";
  int layout = 0;
  int64_t seq = 3, batch = 2, input = 3, hidden = 4;
  bool bias = true, initial = false, peepholes = false;
  std::vector<int32_t> lens;            // empty: full length
  std::vector<std::string> activations; // the attribute (empty: absent)
  std::vector<float> alphas, betas;     // the attributes
  std::vector<Act> acts;                // what the test expects them to mean, all directions
  std::optional<float> clip;
  int linearBeforeReset = 0, inputForget = 0;
  DType dtype = DType::kF32;
};

int gates(Op op) { return op == Op::kRNN ? 1 : (op == Op::kGRU ? 3 : 4); }

struct Data {
  std::vector<double> x, w, r, b, h0, c0, p;
};

struct Result {
  std::vector<double> y, yh, yc; // layout of the case
};

/// The straightforward implementation.
Result reference(const Case &c, const Data &d) {
  const int64_t S = c.seq, B = c.batch, I = c.input, H = c.hidden, G = gates(c.op);
  const int64_t D = c.direction == "bidirectional" ? 2 : 1;
  const bool l1 = c.layout == 1;
  auto X = [&](int64_t t, int64_t b, int64_t i) {
    return d.x[static_cast<size_t>(l1 ? (b * S + t) * I + i : (t * B + b) * I + i)];
  };
  auto stateAt = [&](int64_t dir, int64_t b, int64_t j) {
    return static_cast<size_t>(l1 ? (b * D + dir) * H + j : (dir * B + b) * H + j);
  };
  Result res;
  res.y.assign(static_cast<size_t>(S * D * B * H), 0.0);
  res.yh.assign(static_cast<size_t>(D * B * H), 0.0);
  res.yc = res.yh;
  const size_t perDir = c.op == Op::kRNN ? 1 : static_cast<size_t>(G - 1);
  for (int64_t dir = 0; dir < D; ++dir) {
    const bool reverse = c.direction == "reverse" || dir == 1;
    const Act *act = c.acts.data() + dir * static_cast<int64_t>(perDir);
    auto W = [&](int64_t row, int64_t i) {
      return d.w[static_cast<size_t>((dir * G * H + row) * I + i)];
    };
    auto R = [&](int64_t row, int64_t k) {
      return d.r[static_cast<size_t>((dir * G * H + row) * H + k)];
    };
    auto Wb = [&](int64_t row) {
      return c.bias ? d.b[static_cast<size_t>(dir * 2 * G * H + row)] : 0.0;
    };
    auto Rb = [&](int64_t row) {
      return c.bias ? d.b[static_cast<size_t>(dir * 2 * G * H + G * H + row)] : 0.0;
    };
    auto P = [&](int64_t row) {
      return c.peepholes ? d.p[static_cast<size_t>(dir * 3 * H + row)] : 0.0;
    };
    auto cl = [&](double v) {
      return c.clip ? std::clamp(v, -double(*c.clip), double(*c.clip)) : v;
    };
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> h(static_cast<size_t>(H), 0.0), cs(static_cast<size_t>(H), 0.0);
      for (int64_t j = 0; j < H && c.initial; ++j) {
        h[static_cast<size_t>(j)] = d.h0[stateAt(dir, b, j)];
        cs[static_cast<size_t>(j)] = d.c0[stateAt(dir, b, j)];
      }
      const int64_t len = c.lens.empty() ? S : c.lens[static_cast<size_t>(b)];
      for (int64_t s = 0; s < len; ++s) {
        const int64_t t = reverse ? len - 1 - s : s;
        auto xw = [&](int64_t row) {
          double v = 0;
          for (int64_t i = 0; i < I; ++i)
            v += X(t, b, i) * W(row, i);
          return v + Wb(row);
        };
        auto hr = [&](int64_t row, const std::vector<double> &hv) {
          double v = 0;
          for (int64_t k = 0; k < H; ++k)
            v += hv[static_cast<size_t>(k)] * R(row, k);
          return v;
        };
        std::vector<double> hn(static_cast<size_t>(H)), cn = cs;
        if (c.op == Op::kRNN) {
          for (int64_t j = 0; j < H; ++j)
            hn[static_cast<size_t>(j)] = applyAct(act[0], cl(xw(j) + hr(j, h) + Rb(j)));
        } else if (c.op == Op::kGRU) {
          std::vector<double> z(static_cast<size_t>(H)), r(static_cast<size_t>(H)),
              rh(static_cast<size_t>(H));
          for (int64_t j = 0; j < H; ++j) {
            z[static_cast<size_t>(j)] = applyAct(act[0], cl(xw(j) + hr(j, h) + Rb(j)));
            r[static_cast<size_t>(j)] = applyAct(act[0], cl(xw(H + j) + hr(H + j, h) + Rb(H + j)));
            rh[static_cast<size_t>(j)] = r[static_cast<size_t>(j)] * h[static_cast<size_t>(j)];
          }
          for (int64_t j = 0; j < H; ++j) {
            const size_t u = static_cast<size_t>(j);
            const double pre = c.linearBeforeReset
                                   ? xw(2 * H + j) + r[u] * (hr(2 * H + j, h) + Rb(2 * H + j))
                                   : xw(2 * H + j) + hr(2 * H + j, rh) + Rb(2 * H + j);
            const double ht = applyAct(act[1], cl(pre));
            hn[u] = (1 - z[u]) * ht + z[u] * h[u];
          }
        } else {
          for (int64_t j = 0; j < H; ++j) {
            const size_t u = static_cast<size_t>(j);
            const double i = applyAct(act[0], cl(xw(j) + hr(j, h) + Rb(j) + P(j) * cs[u]));
            const double f = c.inputForget
                                 ? 1 - i
                                 : applyAct(act[0], cl(xw(2 * H + j) + hr(2 * H + j, h) +
                                                       Rb(2 * H + j) + P(2 * H + j) * cs[u]));
            const double g = applyAct(act[1], cl(xw(3 * H + j) + hr(3 * H + j, h) + Rb(3 * H + j)));
            cn[u] = f * cs[u] + i * g;
            const double o =
                applyAct(act[0], cl(xw(H + j) + hr(H + j, h) + Rb(H + j) + P(H + j) * cn[u]));
            hn[u] = o * applyAct(act[2], cn[u]);
          }
        }
        h = hn;
        cs = cn;
        for (int64_t j = 0; j < H; ++j) {
          const size_t at = static_cast<size_t>(l1 ? ((b * S + t) * D + dir) * H + j
                                                   : ((t * D + dir) * B + b) * H + j);
          res.y[at] = h[static_cast<size_t>(j)];
        }
      }
      for (int64_t j = 0; j < H; ++j) {
        res.yh[stateAt(dir, b, j)] = h[static_cast<size_t>(j)];
        res.yc[stateAt(dir, b, j)] = cs[static_cast<size_t>(j)];
      }
    }
  }
  return res;
}

std::vector<double> randomValues(int64_t n, uint32_t seed, float scale) {
  std::vector<double> v;
  for (float f : randomFloats(n, seed, -scale, scale))
    v.push_back(f);
  return v;
}

Value *constant(Graph &g, DType dtype, std::vector<int64_t> shape, std::vector<double> &v) {
  Tensor t = Tensor::fromVector<double>(DType::kF64, std::move(shape), v).castTo(dtype);
  v = values<double>(t.castTo(DType::kF64)); // what the evaluator sees
  return g.addConstant("c", t);
}

/// Builds the node for `c` with seeded data, evaluates it and compares all three outputs.
void check(const Case &c, double tol) {
  SCOPED_TRACE(std::string(opName(c.op)) + " " + c.direction + " layout " +
               std::to_string(c.layout));
  Graph g;
  const int64_t S = c.seq, B = c.batch, I = c.input, H = c.hidden, G = gates(c.op);
  const int64_t D = c.direction == "bidirectional" ? 2 : 1;
  Data d;
  d.x = randomValues(S * B * I, 1, 1.0f);
  d.w = randomValues(D * G * H * I, 2, 0.6f);
  d.r = randomValues(D * G * H * H, 3, 0.6f);
  d.b = randomValues(D * 2 * G * H, 4, 0.4f);
  d.h0 = randomValues(D * B * H, 5, 0.8f);
  d.c0 = randomValues(D * B * H, 6, 0.8f);
  d.p = randomValues(D * 3 * H, 7, 0.5f);
  const std::vector<int64_t> state =
      c.layout ? std::vector<int64_t>{B, D, H} : std::vector<int64_t>{D, B, H};
  std::vector<Value *> in{
      constant(g, c.dtype, c.layout ? std::vector<int64_t>{B, S, I} : std::vector<int64_t>{S, B, I},
               d.x),
      constant(g, c.dtype, {D, G * H, I}, d.w),
      constant(g, c.dtype, {D, G * H, H}, d.r),
      c.bias ? constant(g, c.dtype, {D, 2 * G * H}, d.b) : nullptr,
      c.lens.empty() ? nullptr : i32(g, {B}, c.lens),
      c.initial ? constant(g, c.dtype, state, d.h0) : nullptr};
  if (c.op == Op::kLSTM) {
    in.push_back(c.initial ? constant(g, c.dtype, state, d.c0) : nullptr);
    in.push_back(c.peepholes ? constant(g, c.dtype, {D, 3 * H}, d.p) : nullptr);
  }
  Node *n = g.createNode(c.op, in, c.op == Op::kLSTM ? 3 : 2, "rnn");
  n->setAttr("direction", c.direction);
  n->setAttr("layout", c.layout);
  n->setAttr("hidden_size", H);
  if (!c.activations.empty())
    n->setAttr("activations", c.activations);
  if (!c.alphas.empty())
    n->setAttr("activation_alpha", c.alphas);
  if (!c.betas.empty())
    n->setAttr("activation_beta", c.betas);
  if (c.clip)
    n->setAttr("clip", *c.clip);
  if (c.op == Op::kGRU)
    n->setAttr("linear_before_reset", c.linearBeforeReset);
  if (c.op == Op::kLSTM)
    n->setAttr("input_forget", c.inputForget);
  std::vector<Tensor> out = evalAll(n);
  Result want = reference(c, d);
  ASSERT_EQ(out[0].type().str(), Shape::fromSizes(c.layout ? std::vector<int64_t>{B, S, D, H}
                                                           : std::vector<int64_t>{S, D, B, H})
                                     .str()
                                     .insert(0, std::string(dtypeName(c.dtype))));
  expectClose(asF64(out[0]), want.y, tol, tol);
  expectClose(asF64(out[1]), want.yh, tol, tol);
  if (c.op == Op::kLSTM)
    expectClose(asF64(out[2]), want.yc, tol, tol);
}

std::vector<Act> repeat(std::vector<Act> acts, int times) {
  std::vector<Act> out;
  for (int i = 0; i < times; ++i)
    out.insert(out.end(), acts.begin(), acts.end());
  return out;
}

TEST(EvalRnn, ForwardDefaults) {
  Case c;
  c.op = Op::kRNN;
  c.bias = false;
  c.acts = {{"Tanh"}};
  check(c, 1e-5);
}

TEST(EvalRnn, BidirectionalLayout1WithLensAndActivations) {
  Case c;
  c.op = Op::kRNN;
  c.direction = "bidirectional";
  c.layout = 1;
  c.seq = 4;
  c.batch = 3;
  c.lens = {4, 2, 0};
  c.initial = true;
  c.activations = {"Relu", "LeakyRelu"};
  c.alphas = {0.25f};
  c.acts = {{"Relu"}, {"LeakyRelu", 0.25}};
  check(c, 1e-5);
}

TEST(EvalGru, ForwardWithBias) {
  Case c;
  c.op = Op::kGRU;
  c.acts = {{"Sigmoid"}, {"Tanh"}};
  check(c, 1e-5);
}

TEST(EvalGru, ReverseLinearBeforeResetLensAndClip) {
  Case c;
  c.op = Op::kGRU;
  c.direction = "reverse";
  c.linearBeforeReset = 1;
  c.lens = {2, 3};
  c.initial = true;
  c.clip = 0.5f;
  c.acts = {{"Sigmoid"}, {"Tanh"}};
  check(c, 1e-5);
}

TEST(EvalGru, BidirectionalLayout1OneActivationListForBoth) {
  Case c;
  c.op = Op::kGRU;
  c.direction = "bidirectional";
  c.layout = 1;
  c.initial = true;
  c.activations = {"HardSigmoid", "Softsign"};
  c.alphas = {0.3f};
  c.acts = repeat({{"HardSigmoid", 0.3, 0.5}, {"Softsign"}}, 2);
  check(c, 1e-5);
}

TEST(EvalLstm, ForwardPeepholesAndInitialState) {
  Case c;
  c.initial = true;
  c.peepholes = true;
  c.acts = {{"Sigmoid"}, {"Tanh"}, {"Tanh"}};
  check(c, 1e-5);
}

TEST(EvalLstm, BidirectionalEverything) {
  Case c;
  c.direction = "bidirectional";
  c.seq = 5;
  c.batch = 3;
  c.lens = {5, 1, 3};
  c.initial = true;
  c.peepholes = true;
  c.clip = 0.7f;
  c.inputForget = 1;
  // Alphas and betas are consumed in order by the functions that take them.
  c.activations = {"Sigmoid", "ScaledTanh", "Elu", "HardSigmoid", "Affine", "Softplus"};
  c.alphas = {0.9f, 0.7f, 0.25f, 1.5f};
  c.betas = {1.2f, 0.4f, -0.1f};
  c.acts = {{"Sigmoid"},           {"ScaledTanh", 0.9, 1.2},
            {"Elu", 0.7},          {"HardSigmoid", 0.25, 0.4},
            {"Affine", 1.5, -0.1}, {"Softplus"}};
  check(c, 1e-5);
}

TEST(EvalLstm, ReverseLayout1InF64) {
  Case c;
  c.direction = "reverse";
  c.layout = 1;
  c.initial = true;
  c.dtype = DType::kF64;
  c.acts = {{"Sigmoid"}, {"Tanh"}, {"Tanh"}};
  check(c, 1e-12);
}

TEST(EvalGru, HalfInputsComputeInF32) {
  Case c;
  c.op = Op::kGRU;
  c.dtype = DType::kF16;
  c.acts = {{"Sigmoid"}, {"Tanh"}};
  check(c, 2e-3);
}

TEST(EvalLstm, AbsentOutputsAreEmpty) {
  Graph g;
  Value *x = randomF32(g, {2, 1, 3}, 1);
  Value *w = randomF32(g, {1, 8, 3}, 2), *r = randomF32(g, {1, 8, 2}, 3);
  Node *n = g.createNode(Op::kLSTM, {x, w, r}, 3, "lstm");
  n->removeOutput(0);
  n->removeOutput(1);
  std::vector<Tensor> out = evalAll(n);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(out[0].empty());
  EXPECT_TRUE(out[1].empty());
  EXPECT_EQ(out[2].type().str(), "f32[1,1,2]");
}

TEST(EvalRecurrent, Errors) {
  Graph g;
  Value *x = randomF32(g, {3, 2, 3}, 1);
  Value *w = randomF32(g, {1, 4, 3}, 2), *r = randomF32(g, {1, 4, 1}, 3);
  Node *lens = g.createNode(Op::kLSTM, {x, w, r, nullptr, i32(g, {2}, {3, 4})}, 1, "lstm");
  EXPECT_EQ(evalError(lens),
            "node 'lstm' (LSTM): sequence_lens[1] = 4 is out of range for a sequence of 3");
  Node *act =
      g.createNode(Op::kRNN, {x, randomF32(g, {1, 2, 3}, 4), randomF32(g, {1, 2, 2}, 5)}, 1, "rnn");
  act->setAttr("activations", std::vector<std::string>{"Swish"});
  EXPECT_EQ(evalError(act), "node 'rnn' (RNN): unknown activation 'Swish'");
  Node *few =
      g.createNode(Op::kGRU, {x, randomF32(g, {2, 3, 3}, 4), randomF32(g, {2, 3, 1}, 5)}, 1, "gru");
  few->setAttr("direction", "bidirectional");
  few->setAttr("activations", std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"});
  EXPECT_EQ(evalError(few), "node 'gru' (GRU): attribute 'activations' has 3 entries; direction "
                            "'bidirectional' needs 4");
  Node *cols =
      g.createNode(Op::kRNN, {x, randomF32(g, {1, 2, 5}, 4), randomF32(g, {1, 2, 2}, 5)}, 1, "rnn");
  EXPECT_EQ(evalError(cols), "node 'rnn' (RNN): input W is f32[1,2,5] but should be f32[1,2,3]");
}

} // namespace
} // namespace dlc::evaltest
