#include "ir/ops/families.h"

namespace dlc::ops {

std::vector<OpDef> elementwiseOps() { return {}; }

} // namespace dlc::ops
