// What several fuzz targets do with a graph once a frontend has made one.
#pragma once

#include "ir/graph.h"

namespace dlc::fuzz {

/// Runs infer-shapes with the verifier after it (errors are fine: bad models are refused),
/// then checks that the graph's text form reads back and prints the same (a mismatch is a
/// finding: fail()).
void inferAndRoundTrip(Graph &g);

/// Prints `g`, parses the text, prints again: the two texts must be equal.
void checkTextRoundTrip(const Graph &g);

} // namespace dlc::fuzz
