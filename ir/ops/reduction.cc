#include "ir/ops/families.h"

namespace dlc::ops {

std::vector<OpDef> reductionOps() { return {}; }

} // namespace dlc::ops
