// The pass registry: the list in passes/passes.def, as data.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "passes/pass.h"

namespace dlc {

using PassFactory = std::unique_ptr<Pass> (*)();

struct PassInfo {
  std::string_view name;    // kebab-case, as written in pipelines
  std::string_view summary; // one line for --help
  PassFactory create;
};

/// Every pass of passes/passes.def, in its order. Names are unique (checked once).
const std::vector<PassInfo> &registeredPasses();
/// The pass named `name`, or nullptr.
const PassInfo *findPass(std::string_view name);
/// `unknown pass 'foo'; known passes: infer-shapes, fold-constants, ...`
Status unknownPassError(std::string_view name);
/// The `--help` listing: one line per pass (name, summary), each option on an indented line.
std::string passListHelp();

// One factory per pass, defined in the pass's own file (`createDce()` in dce.cc).
#define DLC_PASS(cls, name, summary) std::unique_ptr<Pass> create##cls();
#include "passes/passes.def"
#undef DLC_PASS

} // namespace dlc
