#include "ir/ops/families.h"

namespace dlc::ops {

std::vector<OpDef> quantOps() { return {}; }

} // namespace dlc::ops
