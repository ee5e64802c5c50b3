#include "ir/ops/families.h"

namespace dlc::ops {

std::vector<OpDef> miscOps() { return {}; }

} // namespace dlc::ops
