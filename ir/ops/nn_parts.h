// The parts of the nn family (nnOps() in nn.cc concatenates them), one file each.
#pragma once

#include <vector>

#include "ir/op.h"

namespace dlc::ops {

std::vector<OpDef> convOps();     // conv.cc: Conv, ConvInteger, ConvTranspose
std::vector<OpDef> poolOps();     // pool.cc: windowed, global, unpool and RoI pooling
std::vector<OpDef> normOps();     // norm.cc: batch/instance/group/layer norm, LRN, Dropout, ...
std::vector<OpDef> samplingOps(); // resize.cc: Resize, GridSample, Col2Im
std::vector<OpDef> lossOps();     // loss.cc: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss

} // namespace dlc::ops
