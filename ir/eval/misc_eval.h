// Reference evaluation of the misc family (ops of ir/ops/rnn.cc, random.cc, signal.cc, misc.cc;
// listed in misc_eval.cc).
// Internal to ir/eval: the kernel table (families.h) refers to these.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "ir/status.h"
#include "ir/tensor.h"

namespace dlc::eval {

using MiscEvalResult = Expected<std::vector<Tensor>>;

// rnn_eval.cc: one-layer recurrent networks, all directions and layouts.
MiscEvalResult evalRnn(const Node &node, const std::vector<Tensor> &in);
MiscEvalResult evalGru(const Node &node, const std::vector<Tensor> &in);
MiscEvalResult evalLstm(const Node &node, const std::vector<Tensor> &in);

// random_eval.cc: deterministic generators (see the file header for the stream).
MiscEvalResult evalRandomNormal(const Node &node, const std::vector<Tensor> &in);
MiscEvalResult evalRandomUniform(const Node &node, const std::vector<Tensor> &in);
MiscEvalResult evalBernoulli(const Node &node, const std::vector<Tensor> &in);
MiscEvalResult evalMultinomial(const Node &node, const std::vector<Tensor> &in);

// signal_eval.cc
MiscEvalResult evalBlackmanWindow(const Node &node, const std::vector<Tensor> &in);
MiscEvalResult evalHammingWindow(const Node &node, const std::vector<Tensor> &in);
MiscEvalResult evalHannWindow(const Node &node, const std::vector<Tensor> &in);
MiscEvalResult evalDft(const Node &node, const std::vector<Tensor> &in);
MiscEvalResult evalStft(const Node &node, const std::vector<Tensor> &in);
MiscEvalResult evalMelWeightMatrix(const Node &node, const std::vector<Tensor> &in);

// nms_eval.cc
MiscEvalResult evalNonMaxSuppression(const Node &node, const std::vector<Tensor> &in);

} // namespace dlc::eval
