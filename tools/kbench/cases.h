// kbench's cases: one line of a case file (or the command line) parsed into a one-node graph
// plus the epilogue asked for, and emitted as the kernel group codegen makes of it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "codegen/emitters.h"
#include "codegen/nvrtc.h"
#include "ir/graph.h"

namespace dlc::kbench {

/// One case: what its line says, the group emitted for it, and (filled by the caller) its
/// compiled module, timing notes and error.
struct Case {
  std::string line;
  std::string kind;
  DType dtype = DType::kF16;
  std::unique_ptr<Graph> graph;
  codegen::FusedGroup group;
  codegen::KernelSet set;
  std::string source;
  codegen::CompiledModule mod;
  double flops = 0;
  std::string error;
  std::string info; // per kernel: registers, local bytes, resident blocks per SM
  std::map<std::string, std::string> flags;
  std::vector<int64_t> args; // numeric positional arguments
  bool has(const std::string &f) const { return flags.count(f) != 0; }
  std::string flag(const std::string &f, const std::string &def) const {
    auto it = flags.find(f);
    return it == flags.end() ? def : it->second;
  }
};

/// Parses one case line: positional words, then --flags (a flag takes the next word as its
/// value unless that is another flag or the line ends). False with c.error set otherwise.
bool parseCase(Case &c, const std::vector<std::string> &words);

/// Builds the case's graph and group and emits its kernels with `opts` (or the tile its --tile
/// names): c.set, c.source (the prelude and every kernel), c.flops. False with c.error set.
bool prepare(Case &c, const codegen::EmitOptions &opts);

} // namespace dlc::kbench
