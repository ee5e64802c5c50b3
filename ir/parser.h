// The text form of the IR: parsing. See ir/TEXT_FORMAT.md for the grammar.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "ir/graph.h"

namespace dlc {

/// How deep graph attributes (If/Loop/Scan bodies) may nest in the text form.
inline constexpr int kMaxGraphNesting = 64;

struct ParseOptions {
  /// Supplies the data of an elided constant, `dense<hash:"...">`, by its printed hash (see
  /// text::formatHash); nullptr when unknown. The tensor is shared, not copied, and must have
  /// the literal's dtype and shape. Without a resolver (or for an unknown hash) such a literal
  /// is an error that asks for --print-constants.
  std::function<const Tensor *(std::string_view hash)> resolveConstant;
};

/// Parses one graph. Errors read `FILE:LINE:COL: error: expected ..., got ...`.
Expected<std::unique_ptr<Graph>> parseGraph(std::string_view text,
                                            std::string_view filename = "<input>");
Expected<std::unique_ptr<Graph>> parseGraph(std::string_view text, std::string_view filename,
                                            const ParseOptions &opts);
/// Reads and parses a `.dlc` file.
Expected<std::unique_ptr<Graph>> parseGraphFile(const std::string &path);

} // namespace dlc
