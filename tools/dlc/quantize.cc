// `dlc quantize MODEL --calibration DIR -o OUT`: calibrate a float model and write it with the
// measured ranges for the quantization passes.
//
//  1. The model loads as `dlc opt -O1` loads it (the load pipeline); its hash keys the ranges.
//  2. Ranges come from calibration or from a saved table (`--ranges`, refused when made for
//     another graph). Calibration runs every sample of DIR (one subfolder per sample, holding
//     NAME.npy for each input, as `dlc run --save-inputs` writes them; samples in name order)
//     on the CPU reference backend and measures every float input and node output with
//     `--method` (runtime/jit/range_methods.h).
//  3. The ranges go into the graph (quant.ranges, quant.input_ranges), the quantize pipeline
//     runs (runtime/jit/pipelines.h), and OUT is written as text IR with every constant.
#include <unistd.h>

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
};

/// The sample folders of DIR, in name order.
Expected<std::vector<fs::path>> sampleFolders(const std::string &dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return notFound("--calibration '{}': not a directory", dir);
  std::vector<fs::path> out;
  for (const fs::directory_entry &e : fs::directory_iterator(dir, ec))
    if (e.is_directory())
      out.push_back(e.path());
  if (ec)
    return invalidArgument("--calibration '{}': cannot list it: {}", dir, ec.message());
  if (out.empty())
    return invalidArgument("--calibration '{}': no samples (expected one folder per sample, "
                           "each with NAME.npy for every input, as `dlc run --save-inputs` "
                           "writes them)",
                           dir);
  std::sort(out.begin(), out.end());
  return out;
}

/// The inputs of one sample: NAME.npy for every graph input (named as --save-inputs names
/// its files).
Expected<std::map<std::string, Tensor>> readSample(const Graph &g, const fs::path &folder) {
  std::map<std::string, Tensor> inputs;
  std::set<std::string> taken;
  for (const Value *in : g.inputs()) {
    const fs::path file = folder / (outputFileName(in->name(), taken) + ".npy");
    std::error_code ec;
    if (!fs::exists(file, ec))
      return notFound("missing input '{}' ({}): no file {}", in->name(), in->type().str(),
                      file.string());
    DLC_ASSIGN_OR_RETURN(inputs[in->name()], readTensorFile(file.string()));
  }
  return inputs;
}

/// Progress over samples on stderr: a bar redrawn in place on a terminal, else a line at
/// every tenth of the way.
class Progress {
public:
  explicit Progress(int total) : total_(total), tty_(isatty(fileno(stderr)) != 0) {}
  void step(int done) {
    if (tty_) {
      const int width = 30, filled = width * done / total_;
      std::fprintf(stderr, "\rcalibrating [%s%s] %d/%d samples", std::string(filled, '#').c_str(),
                   std::string(width - filled, ' ').c_str(), done, total_);
      if (done == total_)
        std::fprintf(stderr, "\n");
    } else if (10 * done / total_ > 10 * (done - 1) / total_) {
      std::fprintf(stderr, "calibrating: %d/%d samples\n", done, total_);
    }
    std::fflush(stderr);
  }

private:
  int total_;
  bool tty_;
};

Expected<RangeMap> calibrate(const Graph &g, const QuantizeArgs &args, const RangeMethod &method,
                             int &samples) {
  DLC_ASSIGN_OR_RETURN(std::vector<fs::path> folders, sampleFolders(args.calibration));
  DLC_ASSIGN_OR_RETURN(Calibrator cal, Calibrator::create(g, method));
  Progress progress(static_cast<int>(folders.size()));
  for (size_t i = 0; i < folders.size(); ++i) {
    const std::string name = folders[i].filename().string();
    auto inputs = readSample(g, folders[i]);
    Status st = inputs ? cal.addSample(*inputs) : inputs.status();
    if (!st.isOk())
      return st.withContext(fmt::format("calibration sample '{}'", name));
    progress.step(static_cast<int>(i + 1));
  }
  for (const auto &[v, count] : cal.nonFinite())
    std::cerr << fmt::format("dlc: warning: value '{}': skipped {} NaN/Inf element{} "
                             "(not counted in its range)\n",
                             v->name(), count, count == 1 ? "" : "s");
  samples = cal.samples();
  return cal.ranges();
}

Expected<std::string> readFile(const std::string &path, const char *flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return notFound("{} '{}': cannot open it", flag, path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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

  DLC_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, loadGraph(args.model, args.load));
  Graph &g = *graph;
  DLC_ASSIGN_OR_RETURN(std::string loadText, jit::loadPipeline(1));
  DLC_ASSIGN_OR_RETURN(Pipeline load, parsePipeline(loadText));
  DLC_RETURN_IF_ERROR(runPipeline(g, load));

  RangeMap ranges;
  int samples = 0;
  std::string methodName = method.str();
  if (!args.ranges.empty()) {
    DLC_ASSIGN_OR_RETURN(std::string text, readFile(args.ranges, "--ranges"));
    const std::string what = fmt::format("--ranges '{}'", args.ranges);
    DLC_ASSIGN_OR_RETURN(RangeTable table, parseRangeTable(text, what));
    DLC_ASSIGN_OR_RETURN(ranges, rangesForGraph(table, g, what));
    samples = table.samples;
    methodName = table.method;
  } else {
    DLC_ASSIGN_OR_RETURN(ranges, calibrate(g, args, method, samples));
  }
  std::cout << fmt::format("ranges of {} values ({}, {} sample{})\n", ranges.size(), methodName,
                           samples, samples == 1 ? "" : "s");
  if (!args.saveRanges.empty()) {
    DLC_RETURN_IF_ERROR(writeFile(args.saveRanges,
                                  rangeTableJson(makeRangeTable(g, ranges, methodName, samples)),
                                  "--save-ranges"));
    std::cout << fmt::format("wrote {}\n", args.saveRanges);
  }

  writeRanges(g, ranges);
  std::unique_ptr<Graph> floatGraph = args.report ? cloneGraph(g) : nullptr;
  std::string insert =
      fmt::format("range-mismatch={},range-ratio={}", args.rangeMismatch, args.rangeRatio);
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
  DLC_RETURN_IF_ERROR(runPipeline(g, quantize));
  if (floatGraph) {
    std::vector<std::map<std::string, Tensor>> samples;
    DLC_ASSIGN_OR_RETURN(std::vector<fs::path> folders, sampleFolders(args.calibration));
    for (const fs::path &folder : folders) {
      DLC_ASSIGN_OR_RETURN(auto sample, readSample(*floatGraph, folder));
      samples.push_back(std::move(sample));
    }
    DLC_ASSIGN_OR_RETURN(auto layers, jit::compareQuantized(*floatGraph, g, samples));
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
      "quantize", "Calibrate a float model on sample inputs (CPU reference backend) and write it "
                  "quantized: int8 Q/DQ on the Conv/MatMul/Gemm inputs from the measured ranges "
                  "(.dlc with the ranges, or .onnx)");
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
  cmd->add_flag("--report", args->report,
                "Run the float and the quantized model on the --calibration samples and print, "
                "per quantized layer, the SQNR and cosine of its output, worst first, with the "
                "share of clipped inputs and a reason when dlc knows one");
  cmd->callback([args, &exitCode] {
    Status st = runQuantize(*args);
    std::cout.flush();
    exitCode = st.isOk() ? 0 : reportError(st);
  });
}

} // namespace dlc::tool
