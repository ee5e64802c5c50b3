// The text form of the IR: printing. See ir/TEXT_FORMAT.md for the grammar.
#pragma once

#include <ostream>
#include <string>

#include "ir/graph.h"

namespace dlc {

struct PrintOptions {
  /// Print every constant's data (hex bytes) so the text re-parses to an identical graph.
  /// Otherwise constants above `inlineLimit` elements print as a hash reference.
  bool printConstants = false;
  /// Constants with at most this many elements always print their values inline.
  int64_t inlineLimit = 16;
};

void printGraph(const Graph &g, std::ostream &os, const PrintOptions &opts = {});
std::string printGraph(const Graph &g, const PrintOptions &opts = {});
/// One node as it appears in the text form (no indentation, no newline).
std::string printNode(const Node &n);

} // namespace dlc
