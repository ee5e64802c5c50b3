// `dlc export MODEL -o OUT.onnx [--after PASS]`: the graph as dlc's GPU pipeline leaves it,
// written back as an ONNX model, so that a viewer such as Netron shows what dlc made of the
// model: BatchNorm folded, constants folded, the copies between devices (Identity), and on
// every node its fused group and device (doc strings; frontend/onnx/exporter.h).
#include <iostream>

#include "frontend/onnx/exporter.h"
#include "passes/pass_manager.h"
#include "runtime/jit/compile.h"
#include "runtime/jit/pipelines.h"
#include "tools/dlc/commands.h"

namespace dlc::tool {

namespace {

struct ExportArgs {
  std::string input, output;
  std::string after = "fuse";
  std::vector<std::string> dims;
  LoadArgs load;
};

int runExport(const ExportArgs &args) {
  if (!args.output.ends_with(".onnx"))
    return reportError(
        invalidArgument("export: -o must name an .onnx file, got '{}'", args.output));
  if (Status out = checkOutputFile("-o", args.output); !out.isOk())
    return reportError(out);
  auto graph = loadGraph(args.input, args.load);
  if (!graph)
    return reportError(graph.status());
  auto dims = parseDims(args.dims);
  if (!dims)
    return reportError(dims.status());
  bool symbolic = false;
  for (const Value *in : (*graph)->inputs())
    symbolic |= !in->shape().isStatic();
  if (symbolic || !dims->empty()) {
    auto specialized = jit::specializeGraph(**graph, *dims);
    if (!specialized)
      return reportError(specialized.status().withContext(
          "export places and fuses for static shapes: bind every symbolic dim (--dim NAME=SIZE)"));
    *graph = std::move(*specialized);
  }
  // What `dlc run --device gpu` runs, up to --after; placement asks the GPU backend.
  auto pipeline = parsePipeline(jit::loadAndGpuPipeline());
  if (!pipeline)
    return reportError(pipeline.status());
  PipelineOptions po;
  po.stopAfter = args.after;
  po.out = &std::cout;
  po.err = &std::cerr;
  po.gpuSupport = jit::codegenSupports;
  if (Status st = runPipeline(**graph, *pipeline, po); !st.isOk())
    return reportError(st);
  if (Status st = onnx::exportModelFile(**graph, args.output, "dlc export"); !st.isOk())
    return reportError(st);
  std::cerr << fmt::format("dlc: wrote {} (the graph after '{}')\n", args.output, args.after);
  return 0;
}

} // namespace

void addExportCommand(CLI::App &app, int &exitCode) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App *cmd = app.add_subcommand(
      "export", "Write the model as dlc's GPU pipeline leaves it back to ONNX (for Netron and "
                "other tools): fused groups and devices in each node's doc string");
  cmd->add_option("input", args->input, "Model: ONNX, TensorFlow GraphDef or dlc text IR")
      ->required();
  cmd->add_option("-o,--output", args->output, "The ONNX file to write")->required();
  cmd->add_option("--after", args->after,
                  "The pass of the GPU pipeline after which to export (default fuse; see dlc "
                  "opt --print-pipeline)");
  cmd->add_option("--dim", args->dims, "Size of a symbolic input dim, NAME=SIZE (repeatable)")
      ->delimiter(',');
  addLoadFlags(cmd, args->load);
  cmd->callback([args, &exitCode] { exitCode = runExport(*args); });
}

} // namespace dlc::tool
