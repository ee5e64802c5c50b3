#include "ir/ops/families.h"

namespace dlc::ops {

std::vector<OpDef> tensorOps() { return {}; }

} // namespace dlc::ops
