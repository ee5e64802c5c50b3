// The random sources' helper that ops_math.cc's Floor converter calls (ops_random.cc).
#pragma once

#include "frontend/tf/convert.h"

namespace dlc::tf::detail {

/// TensorFlow's inference dropout builds its mask as `Floor(keep_prob + U)`, U uniform in
/// [0, 1) (RandomUniform, maybe scaled by Mul and shifted by Add constants). When the sum's
/// range lies within one integer step (keep_prob a constant 1), the mask is that integer
/// everywhere: this returns a ConstantOfShape of it for the Floor node `c` converts, or
/// nullptr when the pattern does not match (then Floor is converted as usual). The Floor
/// converter calls it first.
Expected<Value *> foldDropoutMask(NodeConverter &c);

} // namespace dlc::tf::detail
