// `--dot FILE` and `--svg FILE` of `dlc opt`: the graph after the pipeline as a picture
// (ir/dot.h draws it). The SVG is rendered by Graphviz's `dot` program, run directly (no
// shell); without Graphviz installed, --svg says so and --dot still works.
#pragma once

#include <string>

#include "ir/dot.h"
#include "ir/graph.h"
#include "ir/status.h"

namespace dlc::tool {

/// Writes the DOT text to `dotPath` and/or renders it to `svgPath` (either may be empty).
Status writePictures(const Graph &g, const std::string &dotPath, const std::string &svgPath,
                     const DotOptions &opts);

} // namespace dlc::tool
