#include "tools/dlc/compare_precision.h"

#include <iostream>

#include "ir/clone.h"
#include "passes/pass_manager.h"
#include "runtime/jit/pipelines.h"
#include "runtime/jit/quant_report.h"
#include "tools/dlc/calibrate.h"

namespace dlc::tool {

namespace {

/// Q/DQ and FakeQuant nodes of `g`.
int quantNodes(const Graph &g) {
  int count = 0;
  for (const Node *n : g.nodes())
    count += n->op() == Op::kQuantizeLinear || n->op() == Op::kDequantizeLinear ||
             n->op() == Op::kFakeQuant;
  return count;
}

Status runPasses(Graph &g, const std::string &text) {
  DLC_ASSIGN_OR_RETURN(Pipeline p, parsePipeline(text));
  return runPipeline(g, p);
}

} // namespace

Status checkComparePrecisionArgs(const Model &model, const ComparePrecisionArgs &args) {
  const std::string &p = args.precision;
  if (p != "int8" && p != "fp16" && p != "bf16")
    return invalidArgument("--compare-precision '{}': expected int8, fp16 or bf16", p);
  const bool ranges = !args.calibration.empty() || !args.ranges.empty();
  if (p != "int8") {
    if (ranges)
      return invalidArgument("--compare-precision {}: --calibration and --ranges are for int8; "
                             "{} needs no ranges",
                             p, p);
    return Status::ok();
  }
  if (!args.keepFp32.empty())
    return invalidArgument("--compare-precision int8: --keep-fp32 is for fp16/bf16");
  if (const int n = quantNodes(model.graph()); n > 0) {
    if (ranges)
      return invalidArgument("--compare-precision int8: the model is already quantized ({} "
                             "Q/DQ/FakeQuant nodes) and is compared with its Q/DQ removed; "
                             "drop --calibration/--ranges",
                             n);
    return Status::ok();
  }
  if (!args.calibration.empty() && !args.ranges.empty())
    return invalidArgument("--compare-precision int8: give either --calibration DIR or --ranges "
                           "FILE.json, not both");
  if (!ranges)
    return invalidArgument("--compare-precision int8 needs ranges: give --calibration DIR "
                           "(calibrate on its samples) or --ranges FILE.json (a table saved by "
                           "`dlc quantize --save-ranges`)");
  return parseRangeMethod(args.method).status();
}

Status comparePrecision(const Model &model, const std::map<std::string, Tensor> &inputs,
                        const ComparePrecisionArgs &args, Backend backend) {
  DLC_RETURN_IF_ERROR(checkComparePrecisionArgs(model, args));
  const bool gpu = backend != Backend::kCpu && gpuUnavailableReason().empty();
  const char *where = gpu ? "the GPU" : "the CPU reference backend";
  const std::vector<std::map<std::string, Tensor>> samples = {inputs};
  if (args.precision != "int8") {
    std::cout << fmt::format("comparing float32 with {} on {}\n", args.precision, where);
    DLC_ASSIGN_OR_RETURN(
        auto layers,
        jit::compareMixedPrecision(model.graph(), samples, args.precision, args.keepFp32, backend));
    if (layers.empty())
      std::cout << fmt::format("no layer runs in {} (the mixed-precision pass moved no node)\n",
                               args.precision);
    else
      std::cout << jit::formatLayerTable(
          layers, fmt::format("layers in {}, worst first (float32 vs {} output on the inputs):",
                              args.precision, args.precision));
    return Status::ok();
  }

  std::unique_ptr<Graph> floatGraph, quantGraph;
  if (const int n = quantNodes(model.graph()); n > 0) {
    quantGraph = cloneGraph(model.graph());
    DLC_RETURN_IF_ERROR(runPasses(*quantGraph, "infer-shapes,canonicalize-quant"));
    int removed = 0;
    floatGraph = jit::stripQuantization(*quantGraph, &removed);
    std::cout << fmt::format("the model is already quantized: comparing it with its {} Q/DQ "
                             "pair{} removed, on {}\n",
                             removed, removed == 1 ? "" : "s", where);
  } else {
    floatGraph = cloneGraph(model.graph());
    RangeMap ranges;
    int count = 0;
    std::string method;
    if (!args.ranges.empty()) {
      DLC_ASSIGN_OR_RETURN(ranges, loadRanges(*floatGraph, args.ranges, count, method));
    } else {
      DLC_ASSIGN_OR_RETURN(RangeMethod m, parseRangeMethod(args.method));
      method = m.str();
      Backend ranOn = Backend::kCpu;
      DLC_ASSIGN_OR_RETURN(
          ranges, calibrateSamples(*floatGraph, args.calibration, m, backend, count, ranOn));
    }
    std::cout << fmt::format("ranges of {} values ({}, {} sample{}); comparing float32 with "
                             "int8 on {}\n",
                             ranges.size(), method, count, count == 1 ? "" : "s", where);
    writeRanges(*floatGraph, ranges);
    quantGraph = cloneGraph(*floatGraph);
    DLC_RETURN_IF_ERROR(runPasses(*quantGraph, jit::quantizePipeline()));
  }
  DLC_ASSIGN_OR_RETURN(auto layers,
                       jit::compareQuantized(*floatGraph, *quantGraph, samples, backend));
  std::cout << jit::formatQuantReport(layers);
  return Status::ok();
}

} // namespace dlc::tool
