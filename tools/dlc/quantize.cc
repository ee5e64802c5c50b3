// `dlc quantize MODEL --calibration DIR -o OUT`: calibrate a float model and write it with the
// measured ranges for the quantization passes.
//
//  1. The model loads as `dlc opt -O1` loads it (the load pipeline); its hash keys the ranges.
//  2. Ranges come from calibration or from a saved table (`--ranges`, refused when made for
//     another graph). Calibration runs every sample of DIR (one subfolder per sample, holding
//     NAME.npy for each input, as `dlc run --save-inputs` writes them; samples in name order)
//     on the GPU when there is one (`--device auto`, the default; `gpu` insists, `cpu` takes
//     the reference backend) and measures every float input and node output with `--method`
//     (runtime/jit/range_methods.h, tools/dlc/calibrate.h). `--report` runs there too.
//  3. The ranges go into the graph (quant.ranges, quant.input_ranges), the quantize pipeline
//     runs (runtime/jit/pipelines.h), and OUT is written as text IR with every constant.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "frontend/onnx/exporter.h"
#include "ir/clone.h"
#include "ir/printer.h"
#include "passes/pass_manager.h"
#include "runtime/jit/calibration.h"
#include "runtime/jit/pipelines.h"
#include "runtime/jit/quant_report.h"
#include "tools/dlc/calibrate.h"
#include "tools/dlc/commands.h"
#include "tools/dlc/run_util.h"

namespace dlc::tool {

namespace {

namespace fs = std::filesystem;

struct QuantizeArgs {
  std::string model;
  LoadArgs load;
  std::string calibration;
  std::string method = "entropy";
  std::string output;
  std::string saveRanges;
  std::string ranges;
  std::string rangeMismatch = "float";
  double rangeRatio = 64;
  std::vector<std::string> only, exclude;
  bool report = false;
  bool activationProducts = false;
  std::string device = "auto";
  std::vector<std::string> debugOnly;
};

Status writeFile(const std::string &path, const std::string &text, const char *flag) {
  std::ofstream out(path, std::ios::binary);
  if (!out)
    return notFound("{} '{}': cannot open it for writing", flag, path);
  out << text;
  if (!out.flush())
    return invalidArgument("{} '{}': error writing it", flag, path);
  return Status::ok();
}

Status runQuantize(const QuantizeArgs &args) {
  if (args.report && args.calibration.empty())
    return invalidArgument("--report runs the samples of --calibration DIR; give it (with "
                           "--ranges too, to reuse a calibration)");
  if (args.calibration.empty() == args.ranges.empty() && !(args.report && !args.ranges.empty()))
    return invalidArgument("quantize: give either --calibration DIR (calibrate now) or --ranges "
                           "FILE.json (reuse a saved calibration)");
  DLC_ASSIGN_OR_RETURN(RangeMethod method, parseRangeMethod(args.method));
  const Backend backend = args.device == "cpu"   ? Backend::kCpu
                          : args.device == "gpu" ? Backend::kGpu
                                                 : Backend::kAuto;

  DLC_RETURN_IF_ERROR(checkOutputFile("-o", args.output));
  DLC_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, loadGraph(args.model, args.load));
  Graph &g = *graph;
  DLC_ASSIGN_OR_RETURN(std::string loadText, jit::loadPipeline(1));
  DLC_ASSIGN_OR_RETURN(Pipeline load, parsePipeline(loadText));
  DLC_RETURN_IF_ERROR(runPipeline(g, load));

  RangeMap ranges;
  int samples = 0;
  std::string methodName = method.str(), where;
  if (!args.ranges.empty()) {
    DLC_ASSIGN_OR_RETURN(ranges, loadRanges(g, args.ranges, samples, methodName));
  } else {
    Backend ranOn = Backend::kCpu;
    DLC_ASSIGN_OR_RETURN(ranges,
                         calibrateSamples(g, args.calibration, method, backend, samples, ranOn));
    where = ranOn == Backend::kGpu ? " on the GPU" : " on the CPU reference backend";
  }
  std::cout << fmt::format("ranges of {} values ({}, {} sample{}){}\n", ranges.size(), methodName,
                           samples, samples == 1 ? "" : "s", where);
  if (!args.saveRanges.empty()) {
    DLC_RETURN_IF_ERROR(writeFile(args.saveRanges,
                                  rangeTableJson(makeRangeTable(g, ranges, methodName, samples)),
                                  "--save-ranges"));
    std::cout << fmt::format("wrote {}\n", args.saveRanges);
  }

  writeRanges(g, ranges);
  std::unique_ptr<Graph> floatGraph = args.report ? cloneGraph(g) : nullptr;
  std::string insert =
      fmt::format("range-mismatch={},range-ratio={}{}", args.rangeMismatch, args.rangeRatio,
                  args.activationProducts ? ",activation-products=true" : "");
  for (const auto &[flag, names] : {std::pair{"only", &args.only}, {"exclude", &args.exclude}}) {
    std::string joined;
    for (const std::string &n : *names) {
      if (n.empty() || n.find_first_of(",{}=|") != std::string::npos)
        return invalidArgument("--{} '{}': a node or op name without , {{ }} = or |", flag, n);
      joined += (joined.empty() ? "" : "|") + n;
    }
    if (!joined.empty())
      insert += fmt::format(",{}={}", flag, joined);
  }
  DLC_ASSIGN_OR_RETURN(Pipeline quantize, parsePipeline(jit::quantizePipeline(insert)));
  PipelineOptions po;
  po.debugOnly = args.debugOnly;
  DLC_RETURN_IF_ERROR(runPipeline(g, quantize, po));
  if (floatGraph) {
    std::vector<std::map<std::string, Tensor>> samples;
    DLC_ASSIGN_OR_RETURN(std::vector<fs::path> folders, sampleFolders(args.calibration));
    for (const fs::path &folder : folders) {
      DLC_ASSIGN_OR_RETURN(auto sample, readSample(*floatGraph, folder));
      samples.push_back(std::move(sample));
    }
    DLC_ASSIGN_OR_RETURN(auto layers, jit::compareQuantized(*floatGraph, g, samples, backend));
    std::cout << jit::formatQuantReport(layers);
  }
  if (args.output.ends_with(".onnx")) {
    // ONNX's QDQ form, which ONNX Runtime and TensorRT load; the ranges (annotations) stay out.
    DLC_RETURN_IF_ERROR(onnx::exportModelFile(g, args.output, "dlc quantize"));
  } else {
    PrintOptions full;
    full.printConstants = true; // the file re-parses to the same graph
    DLC_RETURN_IF_ERROR(writeFile(args.output, printGraph(g, full), "-o"));
  }
  std::cout << fmt::format("wrote {}\n", args.output);
  return Status::ok();
}

} // namespace

void addQuantizeCommand(CLI::App &app, int &exitCode) {
  auto args = std::make_shared<QuantizeArgs>();
  CLI::App *cmd = app.add_subcommand(
      "quantize", "Calibrate a float model on sample inputs (on the GPU when there is one, else "
                  "the CPU reference backend) and write it quantized: int8 Q/DQ on the "
                  "Conv/MatMul/Gemm inputs from the measured ranges (.dlc with the ranges, or "
                  ".onnx)");
  cmd->add_option("model", args->model,
                  "Model: ONNX (.onnx/.pb), TensorFlow GraphDef (.pb/.pbtxt) or dlc text IR (.dlc)")
      ->required();
  addLoadFlags(cmd, args->load);
  cmd->add_option("--calibration", args->calibration,
                  "DIR with one subfolder per sample, each holding NAME.npy for every input (as "
                  "`dlc run --save-inputs` writes them)");
  cmd->add_option(
      "--method", args->method,
      "How ranges are measured: minmax, percentile=P (P-th percentile of |x|: [-a, a], or "
      "[0, a] for a non-negative value) or entropy (TensorRT's KL divergence; the default); "
      "ignored with --ranges");
  cmd->add_option("-o,--output", args->output,
                  "Write the quantized model: .dlc (text IR with every constant and the ranges) "
                  "or .onnx (opset 21, QDQ: what ONNX Runtime and TensorRT load)")
      ->required();
  cmd->add_option("--save-ranges", args->saveRanges,
                  "Also write the ranges as a JSON table keyed by the graph's hash");
  cmd->add_option("--ranges", args->ranges,
                  "Use a table written by --save-ranges instead of calibrating (refused when it "
                  "was made for another graph)");
  cmd->add_option("--range-mismatch", args->rangeMismatch,
                  "An Add/Concat/Mul whose inputs' ranges differ by more than --range-ratio: "
                  "float (keep it in float, the default), requantize (each input its own "
                  "scale) or ignore (one shared scale anyway); each case is warned about")
      ->check(CLI::IsMember({"float", "requantize", "ignore"}));
  cmd->add_option("--range-ratio", args->rangeRatio,
                  "The ratio of the larger input range to the smaller beyond which "
                  "--range-mismatch applies (default 64)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--only", args->only,
                  "Quantize only these compute nodes (names) or ops (text names); repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--exclude", args->exclude,
                  "Leave these compute nodes (names) or ops (text names) in float; repeatable")
      ->allow_extra_args(false);
  cmd->add_flag("--quantize-activation-products", args->activationProducts,
                "Quantize MatMul/Gemm of two activations too (attention's Q x K^T and P x V); "
                "by default they stay float, for the fused attention kernel");
  cmd->add_option("--debug-only", args->debugOnly,
                  "Print the decision log of these passes (insert-fake-quant: what each node "
                  "got and why; canonicalize-quant, fold-batchnorm)")
      ->allow_extra_args(false);
  cmd->add_flag("--report", args->report,
                "Run the float and the quantized model on the --calibration samples and print, "
                "per quantized layer, the SQNR and cosine of its output, worst first, with the "
                "share of clipped inputs and a reason when dlc knows one");
  cmd->add_option("--device", args->device,
                  "Where calibration and --report run: cpu (the reference backend), gpu, or auto "
                  "(the default: the GPU when there is one, else the CPU)")
      ->check(CLI::IsMember({"cpu", "gpu", "auto"}));
  cmd->callback([args, &exitCode] {
    Status st = runQuantize(*args);
    std::cout.flush();
    exitCode = st.isOk() ? 0 : reportError(st);
  });
}

} // namespace dlc::tool
