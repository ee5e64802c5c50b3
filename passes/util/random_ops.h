// Which ops produce random results.
//
// Two evaluations of a random op may differ, so cse must not merge two of them and
// fold-constants must not turn one into a constant. The op table has no column for this
// yet; this small set is the only place passes name these ops.
#pragma once

#include "ir/op.h"

namespace dlc::passes {

/// RandomNormal, RandomUniform, RandomNormalLike, RandomUniformLike, Bernoulli, Multinomial.
bool isRandomOp(Op op);

} // namespace dlc::passes
