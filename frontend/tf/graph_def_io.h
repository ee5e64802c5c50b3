// Reading a GraphDef from bytes: binary protobuf or protobuf text format.
#pragma once

#include <string>
#include <string_view>

#include "frontend/tf/graph_def.pb.h"
#include "ir/status.h"

namespace dlc::tf::detail {

/// Parses `bytes` as a binary GraphDef, or as text when `text`. Errors name `displayName` and
/// say what went wrong (a truncated or corrupt file, a text syntax error with its line).
Expected<tfproto::GraphDef> parseGraphDef(std::string_view bytes, bool text,
                                          const std::string &displayName);

/// Reads a whole file (errors name the path).
Expected<std::string> readFileBytes(const std::string &path);

} // namespace dlc::tf::detail
