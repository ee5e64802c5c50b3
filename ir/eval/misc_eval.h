// Reference evaluation of the misc family (ops of ir/ops/rnn.cc, random.cc, signal.cc, misc.cc;
// listed in misc_eval.cc).
// Internal to ir/eval: the kernel table (families.h) refers to these.
#pragma once

#include <cstdint>
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
/// Draw n of the stream started at `state`: uniform in [0, 1). Dropout in training uses it.
double uniformDraw(uint64_t state, uint64_t n);

// signal_eval.cc
MiscEvalResult evalBlackmanWindow(const Node &node, const std::vector<Tensor> &in);
MiscEvalResult evalHammingWindow(const Node &node, const std::vector<Tensor> &in);
MiscEvalResult evalHannWindow(const Node &node, const std::vector<Tensor> &in);
MiscEvalResult evalDft(const Node &node, const std::vector<Tensor> &in);
MiscEvalResult evalStft(const Node &node, const std::vector<Tensor> &in);
MiscEvalResult evalMelWeightMatrix(const Node &node, const std::vector<Tensor> &in);

// nms_eval.cc
MiscEvalResult evalNonMaxSuppression(const Node &node, const std::vector<Tensor> &in);

// training_eval.cc: the ai.onnx.preview.training optimizers
MiscEvalResult evalAdagrad(const Node &node, const std::vector<Tensor> &in);
MiscEvalResult evalAdam(const Node &node, const std::vector<Tensor> &in);
MiscEvalResult evalMomentum(const Node &node, const std::vector<Tensor> &in);

// tfidf_eval.cc
MiscEvalResult evalTfIdfVectorizer(const Node &node, const std::vector<Tensor> &in);

} // namespace dlc::eval
