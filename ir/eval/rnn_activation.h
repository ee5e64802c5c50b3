// The activation functions of the recurrent ops (RNN, GRU, LSTM), as the ONNX spec lists
// them, and the parsing of the `activations` / `activation_alpha` / `activation_beta`
// attributes.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/status.h"

namespace dlc::eval::rnn {

enum class ActKind {
  kRelu,
  kTanh,
  kSigmoid,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus,
};

struct Activation {
  ActKind kind = ActKind::kTanh;
  float alpha = 0.0f, beta = 0.0f;
};

/// The activations of every direction, `perDirection` each (f for RNN; f, g for GRU; f, g, h
/// for LSTM), forward direction first. `defaults` are the op's defaults for one direction.
/// A list of exactly `perDirection` names is used for both directions of a bidirectional op;
/// a longer list must hold at least perDirection * dirs names (extra ones are ignored).
/// Alpha and beta values are consumed in order by the functions that take them (Affine,
/// LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu); a function whose value is
/// missing uses the default of the ONNX operator of that name.
Expected<std::vector<Activation>> parseActivations(const Node &node, int perDirection, int dirs,
                                                   const std::vector<std::string> &defaults);

/// f(x) for one activation, in the precision of T.
template <typename T> T activate(const Activation &a, T x) {
  const T alpha = static_cast<T>(a.alpha), beta = static_cast<T>(a.beta);
  switch (a.kind) {
  case ActKind::kRelu:
    return x > T(0) ? x : T(0);
  case ActKind::kTanh:
    return std::tanh(x);
  case ActKind::kSigmoid:
    return x >= T(0) ? T(1) / (T(1) + std::exp(-x)) : std::exp(x) / (T(1) + std::exp(x));
  case ActKind::kAffine:
    return alpha * x + beta;
  case ActKind::kLeakyRelu:
    return x >= T(0) ? x : alpha * x;
  case ActKind::kThresholdedRelu:
    return x >= alpha ? x : T(0);
  case ActKind::kScaledTanh:
    return alpha * std::tanh(beta * x);
  case ActKind::kHardSigmoid:
    return std::fmin(std::fmax(alpha * x + beta, T(0)), T(1));
  case ActKind::kElu:
    return x >= T(0) ? x : alpha * (std::exp(x) - T(1));
  case ActKind::kSoftsign:
    return x / (T(1) + std::fabs(x));
  case ActKind::kSoftplus:
    return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
  return x;
}

} // namespace dlc::eval::rnn
