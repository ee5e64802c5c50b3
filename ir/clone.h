// A deep copy of a graph: same names, types, attributes (bodies copied in turn), devices and
// node order. Constants share their buffers with the original (tensors are immutable once in
// a graph).
#pragma once

#include <memory>

#include "ir/graph.h"

namespace dlc {

std::unique_ptr<Graph> cloneGraph(const Graph &g);

} // namespace dlc
