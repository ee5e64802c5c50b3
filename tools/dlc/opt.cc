// `dlc opt INPUT -p PIPELINE`: run passes over a model and show what each did.
#include <fstream>
#include <iostream>

#include "frontend/onnx/exporter.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/pass_manager.h"
#include "runtime/jit/compile.h"
#include "runtime/jit/pipelines.h"
#include "tools/dlc/commands.h"
#include "tools/dlc/picture.h"
#include "tools/dlc/placement_report.h"

namespace dlc::tool {

namespace {

struct OptArgs {
  std::string input;
  std::string pipeline;
  int optLevel = -1;
  std::string output;
  bool printIrAfterAll = false;
  std::vector<std::string> printIrAfter;
  std::string dumpIrDir;
  bool verifyEach = false;
  bool noVerifyEach = false;
  bool timePasses = false;
  std::string stopAfter;
  std::vector<std::string> debugOnly;
  bool printConstants = false;
  LoadArgs load;
  bool listPasses = false;
  bool printPipeline = false;
  std::string placementReport;
  std::string dot, svg, dotScope;
  std::vector<std::string> dims;
};

/// Above this many nodes a whole-graph picture is hard to read: --dot-scope is suggested.
constexpr int64_t kLargePicture = 1500;

#ifdef NDEBUG
constexpr bool kVerifyEachDefault = false;
#else
constexpr bool kVerifyEachDefault = true;
#endif

int runOpt(const OptArgs &args) {
  if (args.listPasses) {
    // Each pass, then its options as a pipeline takes them: `place-devices{strict=true}`.
    for (const PassInfo &p : registeredPasses()) {
      std::cout << fmt::format("  {:<18} {}\n", p.name, p.summary);
      for (const PassOptionSpec &o : p.create()->options()) {
        const char *kind = o.kind == PassOptionSpec::Kind::kInt    ? "int"
                           : o.kind == PassOptionSpec::Kind::kBool ? "bool"
                                                                   : "string";
        std::cout << fmt::format("    {{{}={}}}  {}\n", o.name, kind, o.help);
      }
    }
    return 0;
  }
  if (!args.pipeline.empty() && args.optLevel >= 0)
    return reportError(invalidArgument("opt: give either -p PIPELINE or -O LEVEL, not both"));
  const int level = args.optLevel < 0 ? 1 : args.optLevel;
  if (args.printPipeline) {
    if (!args.pipeline.empty()) {
      auto p = parsePipeline(args.pipeline);
      if (!p)
        return reportError(p.status());
      std::cout << "-p: " << p->str() << "   (this run)\n";
    }
    std::cout << jit::describePipelines(args.pipeline.empty() ? level : -1);
    return 0;
  }
  if (args.input.empty())
    return reportError(invalidArgument("opt: an input model is required"));
  std::string pipelineText = args.pipeline;
  const bool gpuPipeline = pipelineText == "gpu";
  if (pipelineText.empty()) {
    auto load = jit::loadPipeline(level);
    if (!load)
      return reportError(load.status());
    pipelineText = *load;
  } else if (pipelineText == "gpu") {
    // What `dlc run --device gpu` runs: the load pipeline, then the GPU pipeline.
    pipelineText = jit::loadAndGpuPipeline();
  }
  auto pipelineOr = parsePipeline(pipelineText);
  if (!pipelineOr)
    return reportError(pipelineOr.status());

  for (const auto &[flag, path] : {std::pair<const char *, const std::string &>{"-o", args.output},
                                   {"--dot", args.dot},
                                   {"--svg", args.svg}})
    if (!path.empty())
      if (Status out = checkOutputFile(flag, path); !out.isOk())
        return reportError(out);
  auto graphOr = loadGraph(args.input, args.load);
  if (!graphOr)
    return reportError(graphOr.status());
  auto dims = parseDims(args.dims);
  if (!dims)
    return reportError(dims.status());
  if (gpuPipeline || !dims->empty()) {
    // The GPU pipeline plans memory, so every input needs static sizes (as `dlc run` binds).
    auto specialized = jit::specializeGraph(**graphOr, *dims);
    if (!specialized)
      return reportError(specialized.status().withContext(
          gpuPipeline ? "-p gpu needs static input shapes (--dim NAME=SIZE)" : "--dim"));
    *graphOr = std::move(*specialized);
  }
  Graph &g = **graphOr;

  PipelineOptions po;
  po.printIrAfterAll = args.printIrAfterAll;
  po.printIrAfter = args.printIrAfter;
  po.dumpIrDir = args.dumpIrDir;
  po.verifyEach = args.noVerifyEach ? false : (args.verifyEach || kVerifyEachDefault);
  po.timePasses = args.timePasses;
  po.stopAfter = args.stopAfter;
  po.debugOnly = args.debugOnly;
  po.print.printConstants = args.printConstants;
  po.out = &std::cout;
  po.err = &std::cerr;
  if (gpuPipeline) // placement asks the GPU backend, as `dlc run` does
    po.gpuSupport = jit::codegenSupports;
  if (Status st = runPipeline(g, *pipelineOr, po); !st.isOk())
    return reportError(st);
  if (!args.placementReport.empty())
    if (Status st =
            writePlacementReport(g, args.placementReport, "placement report (after the pipeline):");
        !st.isOk())
      return reportError(st);

  if (!args.dot.empty() || !args.svg.empty()) {
    DotOptions dot;
    dot.scope = args.dotScope;
    dot.title = fmt::format("{} after {}", args.input,
                            args.stopAfter.empty() ? std::string("the pipeline")
                                                   : "'" + args.stopAfter + "'");
    const int64_t drawn = dotNodeCount(g, dot);
    if (!args.dotScope.empty() && drawn == 0)
      return reportError(
          invalidArgument("--dot-scope '{}': no node's name starts with it", args.dotScope));
    if (drawn > kLargePicture)
      std::cerr << fmt::format("dlc: warning: the picture has {} nodes; --dot-scope PREFIX draws "
                               "only the nodes whose name starts with PREFIX\n",
                               drawn);
    if (Status st = writePictures(g, args.dot, args.svg, dot); !st.isOk())
      return reportError(st);
  }

  if (args.output.ends_with(".onnx")) {
    // An ONNX model (opset 21): what other tools load, e.g. a TensorFlow graph converted.
    Status written = onnx::exportModelFile(g, args.output, "dlc opt");
    if (!written.isOk())
      return reportError(written);
  } else if (!args.output.empty()) {
    PrintOptions full;
    full.printConstants = true; // a written file must re-parse to the same graph
    std::ofstream out(args.output, std::ios::binary);
    if (!out)
      return reportError(notFound("cannot open '{}' for writing", args.output));
    printGraph(g, out, full);
    if (!out.flush())
      return reportError(invalidArgument("error writing '{}'", args.output));
  } else if (!args.printIrAfterAll && args.printIrAfter.empty() && args.dot.empty() &&
             args.svg.empty()) {
    printGraph(g, std::cout, po.print);
  }
  return 0;
}

} // namespace

void addOptCommand(CLI::App &app, int &exitCode) {
  auto args = std::make_shared<OptArgs>();
  CLI::App *cmd = app.add_subcommand(
      "opt", "Run a pass pipeline over a model (ONNX, TensorFlow GraphDef or text IR .dlc) and "
             "print the IR");
  cmd->add_option(
      "input", args->input,
      "Model: ONNX (.onnx/.pb), TensorFlow GraphDef (.pb/.pbtxt) or dlc text IR (.dlc)");
  addLoadFlags(cmd, args->load);
  cmd->add_option("-p,--pipeline", args->pipeline,
                  "Comma-separated passes, e.g. 'infer-shapes,fold-constants,simplify,cse,dce'; "
                  "options as name{key=value}; 'gpu': the load and GPU pipelines `dlc run` runs "
                  "(see --print-pipeline)");
  cmd->add_option("-O", args->optLevel,
                  "Run the load pipeline of this level: 0 infer-shapes only, 1 (default) the "
                  "cleanup (see --print-pipeline)")
      ->check(CLI::Range(0, jit::kMaxOptLevel));
  cmd->add_option("-o,--output", args->output,
                  "Write the final IR (with all constant data) to this .dlc file, or, for a name "
                  "ending in .onnx, as an ONNX model (opset 21)");
  cmd->add_flag("--print-ir-after-all", args->printIrAfterAll, "Print the IR after every pass");
  cmd->add_option("--print-ir-after", args->printIrAfter, "Print the IR after the named pass")
      ->delimiter(',');
  cmd->add_option(
      "--dump-ir", args->dumpIrDir,
      "Write the IR before the first pass and after each pass to numbered files in DIR");
  cmd->add_flag("--verify-each", args->verifyEach,
                "Verify the IR after every pass (default on in debug builds)");
  cmd->add_flag("--no-verify-each", args->noVerifyEach, "Do not verify after every pass");
  cmd->add_flag("--time-passes", args->timePasses, "Print the time spent in each pass");
  cmd->add_option("--stop-after", args->stopAfter, "Stop after the named pass");
  cmd->add_option("--debug-only", args->debugOnly,
                  "Print the decision log of the named passes (comma-separated)")
      ->delimiter(',');
  cmd->add_flag("--print-constants", args->printConstants,
                "Print all constant data instead of a hash for large constants");
  cmd->add_flag("--keep-initializers-as-inputs", args->load.keepInitializersAsInputs,
                "Keep ONNX graph inputs that have initializers as inputs");
  cmd->add_flag("--placement-report{-}", args->placementReport,
                "After the pipeline, print where each node runs and why (name, op, requested "
                "and assigned device, colocation group, reason: what place-devices left) to "
                "stderr; --placement-report=FILE.json writes it as JSON");
  cmd->add_option("--dim", args->dims,
                  "Size of a symbolic input dim, NAME=SIZE (repeatable); -p gpu needs every one")
      ->delimiter(',');
  cmd->add_option("--dot", args->dot,
                  "Write the graph after the pipeline (or --stop-after PASS) as Graphviz DOT: "
                  "fused groups as clusters, devices as colours, copies between devices in "
                  "orange, value types on the edges (the IR is then not printed)");
  cmd->add_option("--svg", args->svg,
                  "Render the same picture to SVG with Graphviz's 'dot' program (package "
                  "graphviz)");
  cmd->add_option("--dot-scope", args->dotScope,
                  "Draw only the nodes whose name starts with this prefix (one block of a large "
                  "model); values crossing its border are drawn as stubs");
  cmd->add_flag("--list-passes", args->listPasses,
                "List the available passes with their options and exit");
  cmd->add_flag("--print-pipeline", args->printPipeline,
                "Print every pipeline dlc runs (load at each -O level, CPU, GPU), marking the "
                "one this command would run, and exit");
  cmd->callback([args, &exitCode] { exitCode = runOpt(*args); });
}

} // namespace dlc::tool
