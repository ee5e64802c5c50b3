// Reference evaluation of the ai.onnx.preview.training optimizers, ONNX's update rules
// computed in double and rounded once to each tensor's type. With G' = norm_coefficient * X + G:
//   Adagrad:  r = R / (1 + T * decay_factor); H' = H + G'^2;
//             X' = X - r * G' / (sqrt(H') + epsilon).
//   Adam:     V' = alpha * V + (1 - alpha) * G'; H' = beta * H + (1 - beta) * G'^2;
//             r = R * sqrt(1 - beta^T) / (1 - alpha^T) when T > 0, else R;
//             X' = (1 - norm_coefficient_post) * (X - r * V' / (sqrt(H') + epsilon)).
//   Momentum: V' = alpha * V + b * G', b = beta when T > 0, else 1;
//             X' = X - R * V' (standard) or X - R * (G' + alpha * V') (nesterov).
#include <array>
#include <cmath>

#include "ir/eval/eval_util.h"
#include "ir/eval/misc_eval.h"

namespace dlc::eval {

namespace {

/// Runs `rule(k, x, g, states..., outs...)` per element of every optimized tensor, where the
/// node has `groups` per-tensor input kinds (X, G, then states) and writes X' and the new
/// states. `rule` gets the element's inputs as doubles and returns the new values in order.
template <int Groups, typename Rule>
MiscEvalResult optimize(const Node &node, const std::vector<Tensor> &in, Rule rule) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, in));
  const int n = (static_cast<int>(in.size()) - 2) / Groups;
  if (in[0].numElements() != 1 || in[1].numElements() != 1)
    return invalidArgument("R and T must hold one element each");
  const double r = in[0].elementAsDouble(0);
  const int64_t t = in[1].elementAsInt64(0);
  std::vector<Tensor> out(static_cast<size_t>((Groups - 1) * n));
  for (int i = 0; i < n; ++i) {
    const Tensor &x = in[static_cast<size_t>(2 + i)];
    for (int g = 1; g < Groups; ++g)
      if (in[static_cast<size_t>(2 + g * n + i)].shape() != x.shape())
        return invalidArgument(
            "input {} has shape {}, the tensor it belongs to (input {}) {}", 2 + g * n + i,
            Shape::fromSizes(in[static_cast<size_t>(2 + g * n + i)].shape()).str(), 2 + i,
            Shape::fromSizes(x.shape()).str());
    std::vector<Tensor *> news;
    for (int g = 0; g < Groups - 1; ++g) {
      out[static_cast<size_t>(g * n + i)] = Tensor::zeros(DType::kF64, x.shape());
      news.push_back(&out[static_cast<size_t>(g * n + i)]);
    }
    for (int64_t e = 0; e < x.numElements(); ++e) {
      std::array<double, Groups> v;
      for (int g = 0; g < Groups; ++g)
        v[static_cast<size_t>(g)] = in[static_cast<size_t>(2 + g * n + i)].elementAsDouble(e);
      std::array<double, Groups - 1> w = rule(r, t, v);
      for (int g = 0; g < Groups - 1; ++g)
        news[static_cast<size_t>(g)]->mutableData<double>()[e] = w[static_cast<size_t>(g)];
    }
  }
  for (size_t k = 0; k < out.size(); ++k)
    out[k] = castTensor(out[k], types[k].dtype);
  return out;
}

} // namespace

MiscEvalResult evalAdagrad(const Node &node, const std::vector<Tensor> &in) {
  const double decay = node.getFloat("decay_factor"), eps = node.getFloat("epsilon");
  const double norm = node.getFloat("norm_coefficient");
  return optimize<3>(node, in, [&](double r, int64_t t, const std::array<double, 3> &v) {
    const double lr = r / (1.0 + static_cast<double>(t) * decay);
    const double g = norm * v[0] + v[1], h = v[2] + g * g;
    return std::array<double, 2>{v[0] - lr * g / (std::sqrt(h) + eps), h};
  });
}

MiscEvalResult evalAdam(const Node &node, const std::vector<Tensor> &in) {
  const double alpha = node.getFloat("alpha"), beta = node.getFloat("beta");
  const double eps = node.getFloat("epsilon"), norm = node.getFloat("norm_coefficient");
  const double post = node.getFloat("norm_coefficient_post");
  return optimize<4>(node, in, [&](double r, int64_t t, const std::array<double, 4> &v) {
    const double g = norm * v[0] + v[1];
    const double m = alpha * v[2] + (1.0 - alpha) * g, h = beta * v[3] + (1.0 - beta) * g * g;
    const double td = static_cast<double>(t);
    const double lr =
        t > 0 ? r * std::sqrt(1.0 - std::pow(beta, td)) / (1.0 - std::pow(alpha, td)) : r;
    return std::array<double, 3>{(1.0 - post) * (v[0] - lr * m / (std::sqrt(h) + eps)), m, h};
  });
}

MiscEvalResult evalMomentum(const Node &node, const std::vector<Tensor> &in) {
  const double alpha = node.getFloat("alpha"), beta = node.getFloat("beta");
  const double norm = node.getFloat("norm_coefficient");
  const std::string &mode = node.getString("mode");
  if (mode != "standard" && mode != "nesterov")
    return invalidArgument("mode must be 'standard' or 'nesterov', got '{}'", mode);
  const bool nesterov = mode == "nesterov";
  return optimize<3>(node, in, [&](double r, int64_t t, const std::array<double, 3> &v) {
    const double g = norm * v[0] + v[1];
    const double m = alpha * v[2] + (t > 0 ? beta : 1.0) * g;
    return std::array<double, 2>{nesterov ? v[0] - r * (g + alpha * m) : v[0] - r * m, m};
  });
}

} // namespace dlc::eval
