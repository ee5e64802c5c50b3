#include "ir/ops/families.h"

namespace dlc::ops {

std::vector<OpDef> linalgOps() { return {}; }

} // namespace dlc::ops
