// The nn family: convolution, pooling, normalisation, resampling and loss ops. The rows live in
// one file per topic (see nn_parts.h); this file gathers them.
#include "ir/ops/families.h"
#include "ir/ops/nn_parts.h"

namespace dlc::ops {

std::vector<OpDef> nnOps() {
  std::vector<OpDef> all;
  for (auto part : {convOps, poolOps, normOps, samplingOps, lossOps})
    for (OpDef &d : part())
      all.push_back(std::move(d));
  return all;
}

} // namespace dlc::ops
