// `dlc run MODEL`: run a model now and look at (or save, or check) its outputs.
//
// Inputs come from tensor files (`--input x=x.npy`, `.npy` or ONNX `.pb`) or, with --random,
// are made up (seeded) for every input not given; symbolic dims of random inputs take their
// sizes from `--dim N=8` or from the inputs given as files. Each output is summarised
// (type, min/max/mean, first values), written to `--output-dir` as NAME.npy, and compared with
// `--compare NAME=expected.npy` (floats within --rtol/--atol, NaN equal to NaN, integers and
// bools exactly); any difference makes the exit status 3 (kExitMismatch).
//
// `--device auto` (default) runs on the GPU when there is one (driver and device), else on the
// CPU reference backend; `--device gpu` insists, `--device cpu` forces the reference backend.
// `--verify` runs the reference backend beside the GPU and names the first node whose output
// diverges. `--benchmark N` times N more runs (on the GPU: inputs already on the device).
// `--profile` times every kernel of the GPU program and prints where the time goes.
// `--compare-precision int8|fp16|bf16` runs the float model and its lower-precision form side
// by side instead and prints the per-layer error table (tools/dlc/compare_precision.h).
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include <nlohmann/json.hpp>

#include "runtime/jit/model.h"
#include "runtime/jit/pipelines.h"
#include "runtime/jit/profile_trace.h"
#include "runtime/jit/verify.h"
#include "runtime/random_tensor.h"
#include "runtime/reference_executor.h"
#include "runtime/tensor_compare.h"
#include "runtime/tensor_io.h"
#include "tools/dlc/commands.h"
#include "tools/dlc/compare_precision.h"
#include "tools/dlc/compile_progress.h"
#include "tools/dlc/placement_report.h"
#include "tools/dlc/run_util.h"

namespace dlc::tool {

namespace {

struct RunArgs {
  std::string model;
  LoadArgs load;
  std::vector<std::string> inputs;
  bool random = false;
  uint64_t seed = 0;
  std::vector<std::string> dims;
  std::string outputDir;
  std::string saveInputs;
  std::string device = "auto";
  std::vector<std::string> compares;
  double rtol = Tolerance().rtol;
  double atol = Tolerance().atol;
  int optLevel = 1;
  int benchmark = 0;
  std::string benchmarkJson;
  bool noCudaGraph = false;
  bool noCpuFallback = false;
  codegen::EmitOptions kernels;
  bool fusedAttention = true;
  PrecisionArgs precision;
  bool verify = false;
  bool profile = false;
  int profileRuns = 20;
  std::string profileJson;
  std::string trace;
  std::string placementReport;
  ComparePrecisionArgs comparePrecision;
};

/// The flags --compare-precision cannot be combined with: it runs the model its own way.
Status checkCompareFlags(const RunArgs &args, const Model &model, const std::string &keepFp32) {
  const std::vector<std::pair<bool, const char *>> conflicts = {
      {args.precision.precision != "fp32", "--precision"},
      {args.verify, "--verify"},
      {args.benchmark > 0, "--benchmark"},
      {args.profile, "--profile"},
      {!args.compares.empty(), "--compare"},
      {!args.outputDir.empty(), "--output-dir"}};
  for (const auto &[given, name] : conflicts)
    if (given)
      return invalidArgument("--compare-precision runs the float and the {} model side by side "
                             "and prints a table; it does not take {}",
                             args.comparePrecision.precision, name);
  ComparePrecisionArgs cmp = args.comparePrecision;
  cmp.keepFp32 = keepFp32;
  return checkComparePrecisionArgs(model, cmp);
}

std::string quotedNames(const std::vector<TensorInfo> &infos) {
  std::string s;
  for (const TensorInfo &i : infos)
    s += (s.empty() ? "'" : ", '") + i.name + "'";
  return s.empty() ? "(none)" : s;
}

const TensorInfo *findInfo(const std::vector<TensorInfo> &infos, const std::string &name) {
  for (const TensorInfo &i : infos)
    if (i.name == name)
      return &i;
  return nullptr;
}

/// `--dim` names must be symbolic dims of the inputs and agree with the inputs given as files;
/// returns the sizes every symbol has so far (from --dim first, then from the files).
Expected<DimBindings> bindDims(const Model &model, const std::map<std::string, int64_t> &dims,
                               const std::map<std::string, Tensor> &given) {
  std::set<std::string> symbols;
  for (const TensorInfo &in : model.inputs())
    for (const Dim &d : in.type.shape.dims())
      if (d.isSymbol())
        symbols.insert(d.symbolName());
  for (const auto &[name, size] : dims) {
    if (!symbols.count(name)) {
      std::string known;
      for (const std::string &s : symbols)
        known += (known.empty() ? "" : ", ") + s;
      return invalidArgument("--dim {}: no input of the model has a dim named '{}' ({})", name,
                             name, known.empty() ? "its inputs have no symbolic dims" : known);
    }
  }
  DimBindings bound(dims.begin(), dims.end());
  for (const auto &[name, t] : given) {
    const TensorInfo *info = findInfo(model.inputs(), name);
    if (!info || !info->type.shape.isRanked() || info->type.shape.rank() != t.rank())
      continue; // the session reports these
    for (int64_t i = 0; i < t.rank(); ++i) {
      const Dim &d = info->type.shape[i];
      int64_t size = t.shape()[static_cast<size_t>(i)];
      if (!d.isSymbol())
        continue;
      auto [it, fresh] = bound.emplace(d.symbolName(), size);
      if (!fresh && it->second != size && dims.count(d.symbolName()))
        return invalidArgument("--dim {}={}, but input '{}' has {} = {}", d.symbolName(),
                               it->second, name, d.symbolName(), size);
    }
  }
  return bound;
}

/// The static shape of a random input.
Expected<std::vector<int64_t>> randomShape(const TensorInfo &in, const DimBindings &bound) {
  if (in.type.dtype == DType::kUnknown || !in.type.shape.isRanked())
    return invalidArgument("--random: input '{}' has type {}; random inputs need a dtype and a "
                           "rank",
                           in.name, in.type.str());
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < in.type.shape.rank(); ++i) {
    const Dim &d = in.type.shape[i];
    if (d.isKnown()) {
      shape.push_back(d.value());
    } else if (d.isSymbol() && bound.count(d.symbolName())) {
      shape.push_back(bound.at(d.symbolName()));
    } else if (d.isSymbol()) {
      return invalidArgument("--random: input '{}' ({}): dim {} is '{}'; give its size with "
                             "--dim {}=SIZE",
                             in.name, in.type.str(), i, d.symbolName(), d.symbolName());
    } else {
      return invalidArgument("--random: input '{}' ({}): dim {} is unknown; random inputs need "
                             "every dim known or named",
                             in.name, in.type.str(), i);
    }
  }
  return shape;
}

/// `--device`: cpu, gpu, gpu:N or auto; the GPU's ordinal goes to `*gpu`.
Expected<Backend> parseDevice(const std::string &device, int *gpu) {
  *gpu = 0;
  if (device == "auto")
    return Backend::kAuto;
  if (device == "cpu")
    return Backend::kCpu;
  if (device == "gpu")
    return Backend::kGpu;
  if (device.rfind("gpu:", 0) == 0 && device.size() > 4 && device.size() < 8 &&
      device.find_first_not_of("0123456789", 4) == std::string::npos) {
    *gpu = std::stoi(device.substr(4));
    return Backend::kGpu;
  }
  return invalidArgument("--device '{}': expected cpu, gpu, gpu:N (a GPU's number) or auto",
                         device);
}

/// Writes every output to `dir` as NAME.npy.
/// Writes tensors as DIR/NAME.npy (`flag` names the option in errors).
Status writeTensors(const std::string &dir, const std::vector<NamedTensor> &outputs,
                    const char *flag) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return invalidArgument("{} '{}': cannot create the directory: {}", flag, dir, ec.message());
  std::set<std::string> taken;
  for (const NamedTensor &o : outputs) {
    std::string path = (std::filesystem::path(dir) / (outputFileName(o.name, taken) + ".npy"));
    bool bf16 = o.tensor.dtype() == DType::kBF16; // NumPy has no bf16
    DLC_RETURN_IF_ERROR(writeNpy(path, bf16 ? o.tensor.castTo(DType::kF32) : o.tensor));
    std::cout << fmt::format("wrote {}{}\n", path, bf16 ? " (bf16 converted to f32)" : "");
  }
  return Status::ok();
}

/// Compares the outputs named by --compare with their files; returns how many differ.
Expected<int> compareOutputs(const RunArgs &args, const Model &model,
                             const std::vector<NamedTensor> &outputs) {
  Tolerance tol{args.rtol, args.atol};
  int differ = 0;
  for (const std::string &spec : args.compares) {
    DLC_ASSIGN_OR_RETURN(auto kv, splitAssignment(spec, "--compare", "FILE"));
    auto it = std::find_if(outputs.begin(), outputs.end(),
                           [&](const NamedTensor &o) { return o.name == kv.first; });
    if (it == outputs.end())
      return invalidArgument("--compare '{}': the model has no output '{}'; its outputs are {}",
                             spec, kv.first, quotedNames(model.outputs()));
    DLC_ASSIGN_OR_RETURN(Tensor expected, readTensorFile(kv.second));
    Comparison c = compareTensors(it->tensor, expected, tol);
    std::cout << fmt::format("compare '{}': {}: {}\n", kv.first, c.match ? "ok" : "MISMATCH",
                             c.str(it->tensor, expected));
    differ += !c.match;
  }
  return differ;
}

/// Runs the session `runs` more times on the same inputs and prints the time per run: on the
/// GPU launch + wait with the inputs on the device, on the CPU the host wall time.
Status benchmarkRuns(const Session &session, const std::map<std::string, Tensor> &inputs, int runs,
                     const std::string &jsonPath, double firstRunSeconds) {
  std::vector<double> ms;
  const bool gpu = session.backend() == Backend::kGpu;
  if (gpu) {
    DLC_ASSIGN_OR_RETURN(ms, session.benchmarkGpu(inputs, runs));
  } else {
    for (int i = 0; i < runs; ++i) {
      auto start = std::chrono::steady_clock::now();
      DLC_ASSIGN_OR_RETURN(auto ignored, session.runOrdered(inputs));
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    }
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  double mean = 0;
  for (double m : ms)
    mean += m / static_cast<double>(ms.size());
  const char *what = gpu ? "GPU: launch and wait, inputs on the device"
                         : "CPU: host wall time, inputs and outputs on the host";
  std::cout << fmt::format("benchmark: {} run{} after the first: median {:.3f} ms, min {:.3f} ms, "
                           "mean {:.3f} ms ({})\n",
                           runs, runs == 1 ? "" : "s", sorted[sorted.size() / 2], sorted.front(),
                           mean, what);
  if (!jsonPath.empty()) {
    std::ofstream f(jsonPath);
    f << fmt::format("{{\"backend\": \"{}\", \"runs\": {}, \"median_ms\": {}, \"min_ms\": {}, "
                     "\"mean_ms\": {}, \"first_run_s\": {}}}\n",
                     gpu ? "gpu" : "cpu", runs, sorted[sorted.size() / 2], sorted.front(), mean,
                     firstRunSeconds);
    if (!f)
      return invalidArgument("--benchmark-json {}: cannot write the file", jsonPath);
  }
  return Status::ok();
}

/// The kind of a profiled step: for a kernel, the op of the first node it came from ("MatMul",
/// "Conv", "LayerNormalization"...; "MatMul split-K sum" for the second kernel of a split-K
/// GEMM); for other steps, their kind ("copy", "host"). The op is read from the origin text
/// that codegen writes for each step (codegen/lower.cc `origin`: "node 'a' (MatMul) + ...").
std::string stepKind(const Session::StepProfile &s) {
  if (s.kind != "kernel")
    return s.kind;
  const size_t open = s.origin.find("' (");
  const size_t close = open == std::string::npos ? open : s.origin.find(')', open);
  std::string kind =
      close == std::string::npos ? s.name : s.origin.substr(open + 3, close - open - 3);
  if (s.name.ends_with("_splitk"))
    kind += " split-K sum";
  return kind;
}

/// --profile: every step of the GPU program timed with events; the slowest steps and the time
/// per kind of step (stepKind).
Status profileRuns(const Session &session, const std::map<std::string, Tensor> &inputs, int runs,
                   const std::string &jsonPath, const std::string &tracePath,
                   const std::string &title) {
  if (session.backend() != Backend::kGpu)
    return invalidArgument("--profile times the GPU program's kernels, but this run is on the CPU");
  DLC_ASSIGN_OR_RETURN(auto steps, session.profileGpu(inputs, runs));
  double total = 0;
  std::map<std::string, std::pair<double, int>> byKind;
  for (const Session::StepProfile &s : steps) {
    total += s.ms;
    const std::string kind = stepKind(s);
    byKind[kind].first += s.ms;
    byKind[kind].second += 1;
  }
  std::cout << fmt::format("profile: {} steps, {:.3f} ms in all (mean of {} run{}, step by step "
                           "with an event around each: no CUDA graph)\n",
                           steps.size(), total, runs, runs == 1 ? "" : "s");
  std::vector<std::pair<std::string, std::pair<double, int>>> kinds(byKind.begin(), byKind.end());
  std::sort(kinds.begin(), kinds.end(),
            [](const auto &a, const auto &b) { return a.second.first > b.second.first; });
  std::cout << "  by kind:\n";
  for (const auto &[kind, v] : kinds)
    std::cout << fmt::format("    {:>9.3f} ms {:>5.1f}%  {:>4} x {}\n", v.first,
                             total > 0 ? 100 * v.first / total : 0.0, v.second, kind);
  std::vector<size_t> order(steps.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return steps[a].ms > steps[b].ms; });
  constexpr size_t kTop = 25;
  std::cout << fmt::format("  slowest {} steps:\n", std::min(kTop, order.size()));
  for (size_t k = 0; k < order.size() && k < kTop; ++k) {
    const Session::StepProfile &s = steps[order[k]];
    std::string origin = s.origin.size() > 90 ? s.origin.substr(0, 87) + "..." : s.origin;
    std::cout << fmt::format("    {:>9.3f} ms {:>5.1f}%  #{:<4} {} {}\n", s.ms,
                             total > 0 ? 100 * s.ms / total : 0.0, order[k],
                             s.name.empty() ? s.kind : s.name, origin);
    if (!s.detail.empty())
      std::cout << fmt::format("{:>33}{}\n", "", s.detail);
  }
  if (!jsonPath.empty()) {
    nlohmann::ordered_json j;
    j["runs"] = runs;
    j["total_ms"] = total;
    j["steps"] = nlohmann::json::array();
    for (const Session::StepProfile &s : steps)
      j["steps"].push_back({{"kind", s.kind},
                            {"kernel", s.name},
                            {"origin", s.origin},
                            {"detail", s.detail},
                            {"ms", s.ms}});
    std::ofstream f(jsonPath);
    f << j.dump(1) << "\n";
    if (!f)
      return invalidArgument("--profile-json {}: cannot write the file", jsonPath);
  }
  if (!tracePath.empty()) {
    std::ofstream f(tracePath);
    f << profileTraceJson(steps, runs, title);
    if (!f.flush())
      return invalidArgument("--trace {}: cannot write the file", tracePath);
  }
  return Status::ok();
}

/// --verify: the GPU against the reference backend, value by value.
Status verifyAgainstReference(const Model &model, const std::map<std::string, Tensor> &inputs,
                              const SessionOptions &opts) {
  DLC_ASSIGN_OR_RETURN(VerifyReport report, verifyGpuAgainstReference(model, inputs, opts));
  std::cout << report.summary << "\n";
  if (!report.divergence.empty())
    return invalidArgument("--verify: {}", report.divergence);
  return Status::ok();
}

/// `*mismatch` is set when the run succeeded but --compare found outputs that differ.
Status runModel(const RunArgs &args, bool *mismatch) {
  int gpuOrdinal = 0;
  DLC_ASSIGN_OR_RETURN(Backend backend, parseDevice(args.device, &gpuOrdinal));
  DLC_ASSIGN_OR_RETURN(auto dims, parseDims(args.dims));
  if (!(args.rtol >= 0) || !(args.atol >= 0))
    return invalidArgument("--rtol and --atol must be non-negative");
  ModelOptions mo{args.optLevel, {}};
  DLC_ASSIGN_OR_RETURN(mo.load, toLoadOptions(args.load));
  DLC_ASSIGN_OR_RETURN(Model model, Model::load(args.model, mo));
  if (args.benchmark == 0 && !args.benchmarkJson.empty())
    return invalidArgument("--benchmark-json needs --benchmark N");
  if (!args.profile && !args.profileJson.empty())
    return invalidArgument("--profile-json needs --profile");
  if (!args.profile && !args.trace.empty())
    return invalidArgument("--trace needs --profile");
  CompileProgressLine compileProgress; // outlives the session, which compiles on first run
  SessionOptions so;
  so.backend = backend;
  so.device = gpuOrdinal;
  so.compileProgress = compileProgress.callback();
  so.cudaGraph = !args.noCudaGraph;
  so.cpuFallback = !args.noCpuFallback;
  so.kernels = args.kernels;
  so.fusedAttention = args.fusedAttention;
  const bool compare = !args.comparePrecision.precision.empty();
  std::string compareKeep; // --keep-fp32 for --compare-precision fp16|bf16
  if (compare) {
    PrecisionArgs keep = args.precision; // --precision itself is refused by checkCompareFlags
    keep.precision = "fp16";             // only to check and join the --keep-fp32 names
    std::string ignored;
    DLC_RETURN_IF_ERROR(precisionOptions(keep, ignored, compareKeep));
    DLC_RETURN_IF_ERROR(checkCompareFlags(args, model, compareKeep));
  } else {
    DLC_RETURN_IF_ERROR(precisionOptions(args.precision, so.precision, so.keepFp32));
  }
  if (!compare &&
      (!args.comparePrecision.calibration.empty() || !args.comparePrecision.ranges.empty()))
    return invalidArgument("--calibration and --ranges are for --compare-precision int8");
  so.poison = args.verify;
  DLC_ASSIGN_OR_RETURN(Session session, model.createSession(so));
  if (!so.precision.empty() && session.backend() == Backend::kCpu)
    note(fmt::format("--precision {} applies to the GPU; the CPU reference backend runs the "
                     "model's own types",
                     so.precision));
  if (backend == Backend::kAuto && session.backend() == Backend::kCpu)
    note(fmt::format("running on the CPU reference backend: {}", gpuUnavailableReason()));
  if (args.profile && session.backend() != Backend::kGpu)
    return invalidArgument("--profile times the GPU program's kernels, but this run is on the "
                           "CPU");
  if (args.verify && session.backend() != Backend::kGpu)
    return invalidArgument("--verify compares the GPU with the reference backend, but this run "
                           "is on the CPU");

  std::map<std::string, Tensor> inputs;
  std::map<std::string, std::string> source;
  for (const std::string &spec : args.inputs) {
    DLC_ASSIGN_OR_RETURN(auto kv, splitAssignment(spec, "--input", "FILE"));
    if (!findInfo(model.inputs(), kv.first))
      return notFound("--input {}: unknown input '{}'; the model's inputs are {}", spec, kv.first,
                      quotedNames(model.inputs()));
    if (inputs.count(kv.first))
      return invalidArgument("--input: input '{}' is given twice", kv.first);
    DLC_ASSIGN_OR_RETURN(inputs[kv.first], readTensorFile(kv.second));
    source[kv.first] = kv.second;
  }
  DLC_ASSIGN_OR_RETURN(DimBindings bound, bindDims(model, dims, inputs));
  std::vector<std::string> missing;
  std::mt19937_64 rng(args.seed);
  for (const TensorInfo &in : model.inputs()) {
    if (inputs.count(in.name))
      continue;
    if (!args.random) {
      missing.push_back(fmt::format("'{}' ({})", in.name, in.type.str()));
      continue;
    }
    DLC_ASSIGN_OR_RETURN(auto shape, randomShape(in, bound));
    auto random = randomTensor(in.type.dtype, shape, rng);
    if (!random)
      return random.status().withContext(
          fmt::format("--random: input '{}' ({})", in.name, Shape::fromSizes(shape).str()));
    inputs[in.name] = std::move(*random);
    source[in.name] = "random";
  }
  if (!missing.empty()) {
    std::string list;
    for (const std::string &m : missing)
      list += (list.empty() ? "" : ", ") + m;
    return invalidArgument("missing input{} {}; give --input NAME=FILE (.npy or .pb) or --random",
                           missing.size() == 1 ? "" : "s", list);
  }
  for (const TensorInfo &in : model.inputs())
    std::cout << fmt::format("input '{}': {} ({})\n", in.name, summarizeTensor(inputs[in.name]),
                             source[in.name]);

  if (!args.saveInputs.empty()) {
    std::vector<NamedTensor> given;
    for (const TensorInfo &in : model.inputs())
      given.push_back({in.name, inputs[in.name]});
    DLC_RETURN_IF_ERROR(writeTensors(args.saveInputs, given, "--save-inputs"));
  }
  if (compare) {
    ComparePrecisionArgs cmp = args.comparePrecision;
    cmp.keepFp32 = compareKeep;
    return comparePrecision(model, inputs, cmp, session.backend());
  }
  if (!args.placementReport.empty()) {
    const bool gpu = session.backend() == Backend::kGpu;
    std::map<std::string, std::vector<int64_t>> shapes;
    for (const auto &[name, t] : inputs)
      shapes.emplace(name, t.shape());
    DLC_ASSIGN_OR_RETURN(DimBindings runDims, bindInputShapes(model.graph(), shapes));
    DLC_ASSIGN_OR_RETURN(auto placed,
                         placedGraphForReport(model.graph(), runDims, gpu, args.noCpuFallback));
    DLC_RETURN_IF_ERROR(writePlacementReport(
        *placed, args.placementReport,
        gpu ? "placement report (the GPU pipeline up to insert-copies):"
            : "placement report (the CPU reference backend runs every node):"));
  }
  auto firstStart = std::chrono::steady_clock::now();
  DLC_ASSIGN_OR_RETURN(std::vector<NamedTensor> outputs, session.runOrdered(inputs));
  const double firstRun =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - firstStart).count();
  if (session.backend() == Backend::kGpu)
    std::cout << fmt::format("ran on the GPU in {:.3f} s (compilation included)\n", firstRun);
  if (args.verify)
    DLC_RETURN_IF_ERROR(verifyAgainstReference(model, inputs, so));
  if (args.benchmark > 0)
    DLC_RETURN_IF_ERROR(
        benchmarkRuns(session, inputs, args.benchmark, args.benchmarkJson, firstRun));
  if (args.profile)
    DLC_RETURN_IF_ERROR(
        profileRuns(session, inputs, args.profileRuns, args.profileJson, args.trace, args.model));
  for (const NamedTensor &o : outputs)
    std::cout << fmt::format("output '{}': {}\n", o.name, summarizeTensor(o.tensor));
  if (!args.outputDir.empty())
    DLC_RETURN_IF_ERROR(writeTensors(args.outputDir, outputs, "--output-dir"));
  DLC_ASSIGN_OR_RETURN(int differ, compareOutputs(args, model, outputs));
  *mismatch = differ > 0;
  if (differ > 0)
    return invalidArgument("{} of {} compared output{} differ from the expected values (rtol "
                           "{:g}, atol {:g})",
                           differ, args.compares.size(), args.compares.size() == 1 ? "" : "s",
                           args.rtol, args.atol);
  return Status::ok();
}

} // namespace

void addRunCommand(CLI::App &app, int &exitCode) {
  auto args = std::make_shared<RunArgs>();
  CLI::App *cmd = app.add_subcommand(
      "run", "Run a model (ONNX, TensorFlow GraphDef or .dlc) on given or random inputs");
  cmd->add_option("model", args->model,
                  "Model: ONNX (.onnx/.pb), TensorFlow GraphDef (.pb/.pbtxt) or dlc text IR (.dlc)")
      ->required();
  addLoadFlags(cmd, args->load);
  cmd->add_option("-i,--input", args->inputs, "An input from a tensor file, NAME=FILE (.npy/.pb)")
      ->allow_extra_args(false);
  cmd->add_flag("--random", args->random,
                "Fill every input not given with random values (floats in [-1,1), ints in [0,8))");
  cmd->add_option("--seed", args->seed, "Seed of --random (default 0)");
  cmd->add_option("--dim", args->dims, "Size of a symbolic dim for --random, NAME=SIZE")
      ->allow_extra_args(false);
  cmd->add_option("-o,--output-dir", args->outputDir, "Write each output to DIR/NAME.npy");
  cmd->add_option("--save-inputs", args->saveInputs,
                  "Write each input (given or random) to DIR/NAME.npy, to rerun or share them");
  cmd->add_option("--device", args->device,
                  "cpu, gpu, gpu:N (GPU number N, as CUDA numbers them) or auto (default: the "
                  "GPU when there is one, else the CPU)");
  cmd->add_option("--compare", args->compares,
                  "Compare an output with a tensor file, NAME=FILE; exit status 3 on a mismatch")
      ->allow_extra_args(false);
  cmd->add_option("--rtol", args->rtol, "Relative tolerance of --compare (default 1e-4)");
  cmd->add_option("--atol", args->atol, "Absolute tolerance of --compare (default 1e-5)");
  cmd->add_option("--benchmark", args->benchmark,
                  "After the first run, run N more times and print the median/min/mean time")
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--benchmark-json", args->benchmarkJson,
                  "With --benchmark: also write the figures to FILE as JSON");
  cmd->add_flag("--profile", args->profile,
                "GPU: time every kernel (events around each step) and print where the time goes");
  cmd->add_option("--profile-runs", args->profileRuns,
                  "With --profile: average over N runs (default 20)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--profile-json", args->profileJson,
                  "With --profile: also write every step's time to FILE as JSON (kind, "
                  "kernel, origin nodes, detail: a GEMM's shape and tile, ms)");
  cmd->add_option("--trace", args->trace,
                  "With --profile: write the steps as a timeline to FILE.json (Chrome's Trace "
                  "Event format; open it in ui.perfetto.dev or chrome://tracing)");
  cmd->add_flag("--verify", args->verify,
                "GPU: run the reference backend beside it and name the first node whose output "
                "diverges");
  cmd->add_flag("--no-cuda-graph", args->noCudaGraph,
                "GPU: launch kernels one by one instead of replaying a CUDA graph");
  cmd->add_flag("--no-cpu-fallback", args->noCpuFallback,
                "GPU: fail when a node has no GPU kernel instead of running it on the CPU");
  addKernelFlags(cmd, args->kernels);
  cmd->add_flag("--fused-attention,!--no-fused-attention", args->fusedAttention,
                "GPU: run attention (MatMul, scale, mask, Softmax, MatMul) as one flash-attention "
                "kernel (the fuse-attention pass; f16/bf16, head size 64 or 128; on by default, "
                "--no-fused-attention keeps the products and the softmax apart)");
  addPrecisionFlags(cmd, args->precision);
  cmd->add_option("--compare-precision", args->comparePrecision.precision,
                  "Instead of a plain run: run the float model and its int8, fp16 or bf16 form "
                  "side by side on the inputs (where --device says) and print, per layer, the "
                  "SQNR and cosine of its output, worst first, with a reason when dlc knows one. "
                  "int8 needs --calibration or --ranges unless the model is already quantized "
                  "(then: against itself with its Q/DQ removed); fp16/bf16 take --keep-fp32")
      ->check(CLI::IsMember({"int8", "fp16", "bf16"}));
  cmd->add_option("--calibration", args->comparePrecision.calibration,
                  "With --compare-precision int8: calibrate on DIR's samples (one folder per "
                  "sample, NAME.npy per input), as `dlc quantize --calibration` does");
  cmd->add_option("--ranges", args->comparePrecision.ranges,
                  "With --compare-precision int8: the ranges of a table saved by `dlc quantize "
                  "--save-ranges`");
  cmd->add_option("--method", args->comparePrecision.method,
                  "With --compare-precision int8 --calibration: minmax, percentile=P or entropy "
                  "(the default), as `dlc quantize --method`");
  cmd->add_flag("--placement-report{-}", args->placementReport,
                "Print where each node runs and why (name, op, requested and assigned device, "
                "colocation group, reason) to stderr before the first run: on the GPU as the "
                "GPU pipeline places it, on the CPU every node on cpu; "
                "--placement-report=FILE.json writes it as JSON");
  cmd->add_option("-O", args->optLevel,
                  "Load pipeline level: 0 infer-shapes only, 1 (default) the cleanup "
                  "(`dlc opt --print-pipeline`)")
      ->check(CLI::Range(0, jit::kMaxOptLevel));
  cmd->callback([args, &exitCode] {
    bool mismatch = false;
    Status st = runModel(*args, &mismatch);
    std::cout.flush(); // what was printed comes before the error
    exitCode = st.isOk() ? 0 : reportError(st);
    if (mismatch) // the run went through; --compare's verdict has a status of its own
      exitCode = kExitMismatch;
  });
}

} // namespace dlc::tool
