// `dlc opt INPUT -p PIPELINE`: run passes over a model and show what each did.
#include <fstream>
#include <iostream>

#include "frontend/onnx/exporter.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/pass_manager.h"
#include "runtime/jit/pipelines.h"
#include "tools/dlc/commands.h"
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
};

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
  if (pipelineText.empty()) {
    auto load = jit::loadPipeline(level);
    if (!load)
      return reportError(load.status());
    pipelineText = *load;
  }
  auto pipelineOr = parsePipeline(pipelineText);
  if (!pipelineOr)
    return reportError(pipelineOr.status());

  auto graphOr = loadGraph(args.input, args.load);
  if (!graphOr)
    return reportError(graphOr.status());
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
  if (Status st = runPipeline(g, *pipelineOr, po); !st.isOk())
    return reportError(st);
  if (!args.placementReport.empty())
    if (Status st =
            writePlacementReport(g, args.placementReport, "placement report (after the pipeline):");
        !st.isOk())
      return reportError(st);

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
  } else if (!args.printIrAfterAll && args.printIrAfter.empty()) {
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
                  "options as name{key=value}");
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
  cmd->add_flag("--list-passes", args->listPasses,
                "List the available passes with their options and exit");
  cmd->add_flag("--print-pipeline", args->printPipeline,
                "Print every pipeline dlc runs (load at each -O level, CPU, GPU), marking the "
                "one this command would run, and exit");
  cmd->callback([args, &exitCode] { exitCode = runOpt(*args); });
}

} // namespace dlc::tool
