// What the TensorFlow importer refuses, and why: the ops an inference compiler cannot run.
#pragma once

#include <set>
#include <string>

#include "frontend/tf/graph_def.pb.h"

namespace dlc::tf::detail {

/// Why `node` cannot be imported, or "" when it can (its op has a converter, or the importer
/// handles it itself). `functions` are the names the graph's `library` defines (a node whose op
/// is one of them calls that function). A Switch is judged elsewhere (its predicate decides).
std::string refusalReason(const tfproto::NodeDef &node, const std::set<std::string> &functions);

/// The hint printed once after the list when variables were refused.
extern const char *const kFreezeHint;

} // namespace dlc::tf::detail
