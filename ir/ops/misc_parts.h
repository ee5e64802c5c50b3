// The parts of the misc family (miscOps() in misc.cc concatenates them), one file each.
#pragma once

#include <vector>

#include "ir/op.h"

namespace dlc::ops {

std::vector<OpDef> rnnOps();      // rnn.cc: RNN, GRU, LSTM
std::vector<OpDef> randomOps();   // random.cc: RandomNormal(Like), RandomUniform(Like), ...
std::vector<OpDef> signalOps();   // signal.cc: windows, DFT, STFT, MelWeightMatrix
std::vector<OpDef> trainingOps(); // training.cc: Adagrad, Adam, Momentum (preview.training)

} // namespace dlc::ops
