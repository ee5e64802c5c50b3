#include "passes/util/random_ops.h"

namespace dlc::passes {

bool isRandomOp(Op op) {
  switch (op) {
  case Op::kRandomNormal:
  case Op::kRandomUniform:
  case Op::kRandomNormalLike:
  case Op::kRandomUniformLike:
  case Op::kBernoulli:
  case Op::kMultinomial:
    return true;
  default:
    return false;
  }
}

} // namespace dlc::passes
