// The text form of the IR: parsing. See ir/TEXT_FORMAT.md for the grammar.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "ir/graph.h"

namespace dlc {

/// Parses one graph. Errors read `FILE:LINE:COL: error: expected ..., got ...`.
Expected<std::unique_ptr<Graph>> parseGraph(std::string_view text,
                                            std::string_view filename = "<input>");
/// Reads and parses a `.dlc` file.
Expected<std::unique_ptr<Graph>> parseGraphFile(const std::string &path);

} // namespace dlc
