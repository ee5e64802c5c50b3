#include "ir/ops/families.h"

namespace dlc::ops {

std::vector<OpDef> nnOps() { return {}; }

} // namespace dlc::ops
