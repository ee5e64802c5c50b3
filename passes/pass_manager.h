// Pipelines: parsing `infer-shapes,fold-constants{size-limit=65536},dce` and running it with
// the instrumentation `dlc opt` exposes (--print-ir-after-all, --dump-ir, --verify-each,
// --time-passes, --stop-after, --debug-only).
#pragma once

#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/printer.h"
#include "passes/registry.h"

namespace dlc {

/// One step of a pipeline: a pass and the options written after its name.
struct PipelineEntry {
  std::string name;
  PassFactory create;
  PassOptions options; // options.pass == name
};

struct Pipeline {
  std::vector<PipelineEntry> passes;

  /// The text form, which parsePipeline reads back: `cse,fold-constants{size-limit=10}`.
  std::string str() const;
  bool contains(std::string_view name) const;
};

/// Parses comma-separated pass names, each optionally followed by `{key=value,...}`.
/// Whitespace around names, keys and values is ignored; an empty string is an empty
/// pipeline. Errors: `unknown pass 'foo'; known passes: ...`, and, naming the pass,
/// unknown options, ill-formed values, a missing `}`.
Expected<Pipeline> parsePipeline(std::string_view text);

struct PipelineOptions {
  /// After every pass, print `// -----// IR after <pass> (changed|unchanged) //----- //` and
  /// the IR to *out.
  bool printIrAfterAll = false;
  /// The same, only after the passes named here.
  std::vector<std::string> printIrAfter;
  /// When set, create this directory and write `00-input.dlc`, `01-<pass>.dlc`, ... to it.
  std::string dumpIrDir;
  /// Run verifyGraph after every pass: `verifier failed after pass 'X': ...`.
  bool verifyEach = false;
  /// Print a table (pass, ms, % of total) to *err at the end.
  bool timePasses = false;
  /// Stop after the first run of this pass (it must be in the pipeline).
  std::string stopAfter;
  /// Passes whose decision log goes to *err (PassOptions::debug).
  std::vector<std::string> debugOnly;
  /// How IR is printed by the options above.
  PrintOptions print;
  /// The GPU backend's answer to "can the GPU run this node?", handed to every pass
  /// (PassOptions::gpuSupport; see passes/placement.h). Empty: no backend answers.
  DeviceSupportFn gpuSupport;
  std::ostream *out = &std::cout;
  /// Debug logs (--debug-only), pass warnings and --time-passes go here.
  std::ostream *err = &std::cerr;
};

/// Runs the pipeline's passes in order on `g`. A pass's error comes back prefixed with
/// `pass 'X': `. Names in printIrAfter/debugOnly must be known passes.
Status runPipeline(Graph &g, const Pipeline &pipeline, const PipelineOptions &opts = {});

/// Runs `infer-shapes` alone, without printing or verification: the step every consumer of
/// an imported graph (inspect, the conformance runner, later the backends) takes first.
Status inferShapes(Graph &g);

} // namespace dlc
