// `dlc compile MODEL`: compile a model for the GPU ahead of time.
//
// Runs the load pipeline, specialises symbolic dims (`--dim N=8`, or a range `--dim
// N=1..64`; every input dim must end up known), runs the GPU pipeline (runtime/jit/compile.h,
// runtime/jit/pipelines.h) and compiles every kernel with NVRTC for each `--gpu-arch` (default:
// the GPU present, else sm_90), using the kernel cache ($DLC_CACHE_DIR). It prints what came out:
// kernels, modules, arena and constant sizes.
//   --emit cuda=DIR    writes each kernel as DIR/<kernel>.cu and DIR/prelude.cuh, the prelude
//                      helpers the kernels use (each .cu includes it)
//   -o model.so        writes a model library: the package (runtime/package.h: the graph for
//                      the reference backend, one GPU program per dim binding and arch) and
//                      the runtime with the C API (dlc/dlc.h); see model_library.h.
// A range compiles GPU programs for its ends and the powers of two between them; sizes in the
// range without a program of their own run on the reference backend (with a warning).
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include "codegen/cuda_prelude.h"
#include "codegen/nvrtc.h"
#include "ir/clone.h"
#include "passes/pass_manager.h"
#include "runtime/cuda_driver.h"
#include "runtime/jit/compile.h"
#include "runtime/jit/model.h"
#include "runtime/jit/pipelines.h"
#include "runtime/package.h"
#include "tools/dlc/commands.h"
#include "tools/dlc/compile_progress.h"
#include "tools/dlc/device_arch.h"
#include "tools/dlc/model_library.h"
#include "tools/dlc/placement_report.h"

namespace dlc::tool {
namespace {

struct CompileArgs {
  std::string model;
  LoadArgs load;
  std::string output;
  std::vector<std::string> emits;
  std::vector<std::string> dims;
  std::string gpuArch; // empty: the GPU present, else sm_90
  bool noGpu = false;
  codegen::EmitOptions kernels;
  bool fusedAttention = true;
  PrecisionArgs precision;
  bool strict = false;
  int optLevel = 1;
  bool printIrAfterAll = false;
  bool timePasses = false;
  std::vector<std::string> debugOnly;
  std::string placementReport;
};

/// --time-passes beyond the passes: where a compile's time goes, phase by phase, on stderr.
class PhaseTimer {
public:
  explicit PhaseTimer(bool on) : on_(on) {}
  /// Closes the phase running since the last call (or the start) under `name`.
  void lap(std::string name) {
    const auto now = std::chrono::steady_clock::now();
    phases_.push_back(
        {std::move(name), std::chrono::duration<double, std::milli>(now - last_).count()});
    last_ = now;
  }
  /// A phase measured elsewhere (NVRTC inside codegen), shown indented under the previous one.
  void part(std::string name, double ms) { phases_.push_back({"  " + std::move(name), ms, true}); }
  void print() const {
    if (!on_)
      return;
    double total = 0;
    size_t width = 5;
    for (const Phase &p : phases_) {
      total += p.part ? 0 : p.ms;
      width = std::max(width, p.name.size());
    }
    std::cerr << fmt::format("{:<{}}  {:>10}\n", "phase", width, "time (ms)");
    for (const Phase &p : phases_)
      std::cerr << fmt::format("{:<{}}  {:>10.1f}\n", p.name, width, p.ms);
    std::cerr << fmt::format("{:<{}}  {:>10.1f}\n", "total", width, total);
  }

private:
  struct Phase {
    std::string name;
    double ms;
    bool part = false;
  };
  bool on_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  std::vector<Phase> phases_;
};

Expected<int> parseArch(const std::string &arch) {
  int sm = 0;
  if (arch.rfind("sm_", 0) == 0) {
    try {
      size_t used = 0;
      sm = std::stoi(arch.substr(3), &used);
      if (used != arch.size() - 3)
        sm = 0;
    } catch (...) {
      sm = 0;
    }
  }
  if (sm < 70 || sm > 200)
    return invalidArgument("--gpu-arch '{}': expected sm_XY with XY >= 70, e.g. sm_90", arch);
  return sm;
}

/// The dim bindings to compile GPU programs for: every combination of each range's sizes (its
/// ends and the powers of two between).
Expected<std::vector<std::map<std::string, int64_t>>>
bindingsToCompile(const std::vector<rt::DimRange> &ranges) {
  std::vector<std::map<std::string, int64_t>> out(1);
  for (const rt::DimRange &r : ranges) {
    std::vector<int64_t> sizes = {r.min};
    for (int64_t p = 1; p < r.max && p > 0; p *= 2)
      if (p > r.min)
        sizes.push_back(p);
    if (r.max != r.min)
      sizes.push_back(r.max);
    std::vector<std::map<std::string, int64_t>> next;
    for (const auto &b : out)
      for (int64_t size : sizes) {
        auto c = b;
        c[r.name] = size;
        next.push_back(std::move(c));
      }
    out = std::move(next);
    if (out.size() > 64)
      return invalidArgument("--dim: the ranges give {} or more dim combinations to compile; "
                             "narrow them (at most 64)",
                             out.size());
  }
  return out;
}

Status writeSources(const std::string &dir, const rt::Program &p) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return invalidArgument("--emit cuda={}: cannot create the directory: {}", dir, ec.message());
  auto write = [&](const std::string &name, std::string_view text) -> Status {
    std::string path = (std::filesystem::path(dir) / name).string();
    std::ofstream f(path, std::ios::binary);
    f << text;
    if (!f)
      return invalidArgument("--emit cuda={}: cannot write {}", dir, path);
    return Status::ok();
  };
  // The program keeps sources as text: the helpers are the ones the kernels name.
  codegen::HelperSet helpers;
  for (const auto &[name, source] : p.sources)
    helpers.merge(codegen::helpersNamedIn(source));
  DLC_RETURN_IF_ERROR(write("prelude.cuh", codegen::cudaPrelude(helpers)));
  for (const auto &[name, source] : p.sources)
    DLC_RETURN_IF_ERROR(
        write(name + ".cu", "// dlc kernel " + name + "\n#include \"prelude.cuh\"\n\n" + source));
  std::cout << fmt::format("wrote {} kernels and prelude.cuh to {}\n", p.sources.size(), dir);
  return Status::ok();
}

Status compileModel(const CompileArgs &args) {
  std::string emitDir;
  for (const std::string &e : args.emits) {
    if (e.rfind("cuda=", 0) != 0 || e.size() == 5)
      return invalidArgument("--emit '{}': expected cuda=DIR", e);
    emitDir = e.substr(5);
  }
  std::vector<int> sms;
  std::string archText = args.gpuArch;
  if (archText.empty()) // the GPU present (its cubin loads without the driver's JIT), else sm_90
    archText = deviceArch(codegen::defaultCacheDir(), "/proc/driver/nvidia");
  std::stringstream archList(archText);
  for (std::string arch; std::getline(archList, arch, ',');) {
    DLC_ASSIGN_OR_RETURN(int sm, parseArch(arch));
    if (std::find(sms.begin(), sms.end(), sm) == sms.end())
      sms.push_back(sm);
  }
  if (sms.empty())
    return invalidArgument("--gpu-arch '{}': expected sm_XY[,sm_XY...]", archText);
  if (args.noGpu && !emitDir.empty())
    return invalidArgument("--emit cuda=DIR writes GPU kernels; it cannot go with --no-gpu");
  // A library's tools are checked before the (long) compilation.
  std::optional<LibraryToolchain> toolchain;
  if (!args.output.empty()) {
    DLC_RETURN_IF_ERROR(checkOutputFile("-o", args.output));
    DLC_ASSIGN_OR_RETURN(toolchain, findLibraryToolchain());
  }
  DLC_ASSIGN_OR_RETURN(auto ranges, parseDimRanges(args.dims));
  PhaseTimer timer(args.timePasses);
  ModelOptions mo{args.optLevel, {}};
  DLC_ASSIGN_OR_RETURN(mo.load, toLoadOptions(args.load));
  DLC_ASSIGN_OR_RETURN(Model model, Model::load(args.model, mo));
  timer.lap("load (import, load pipeline)");
  std::set<std::string> symbols;
  for (const TensorInfo &in : model.inputs())
    for (int64_t i = 0; in.type.shape.isRanked() && i < in.type.shape.rank(); ++i)
      if (in.type.shape[i].isSymbol())
        symbols.insert(in.type.shape[i].symbolName());
  for (const rt::DimRange &r : ranges)
    if (!symbols.count(r.name)) {
      std::string list;
      for (const std::string &sym : symbols)
        list += (list.empty() ? "'" : ", '") + sym + "'";
      return invalidArgument("--dim {}: the model's inputs have no symbolic dim '{}' (they have "
                             "{})",
                             r.name, r.name, list.empty() ? "none" : list);
    }

  rt::Package package;
  package.dlcVersion = DLC_VERSION_STRING;
  for (const TensorInfo &t : model.inputs())
    package.inputs.push_back({t.name, t.type});
  for (const TensorInfo &t : model.outputs())
    package.outputs.push_back({t.name, t.type});
  package.dimRanges = ranges;
  {
    // The CPU graph has BatchNormalization folded as the GPU pipeline folds it: the programs'
    // folded convolution weights are then the graph's bytes, stored once (package format 3);
    // ResNet-50 fp16's library 99.5 -> 76.2 MiB.
    std::unique_ptr<Graph> g = cloneGraph(model.graph());
    DLC_ASSIGN_OR_RETURN(Pipeline fold, parsePipeline("fold-batchnorm"));
    DLC_RETURN_IF_ERROR(runPipeline(*g, fold));
    package.graph = std::move(g);
  }

  DLC_ASSIGN_OR_RETURN(auto bindings, bindingsToCompile(ranges));
  if (!args.placementReport.empty()) {
    DLC_ASSIGN_OR_RETURN(auto placed, placedGraphForReport(model.graph(), bindings.front(),
                                                           !args.noGpu, args.strict));
    const std::string dims =
        bindings.front().empty() ? "" : ", " + rt::dimBindingText(bindings.front());
    DLC_RETURN_IF_ERROR(writePlacementReport(
        *placed, args.placementReport,
        args.noGpu ? "placement report (--no-gpu: the CPU reference backend runs every node):"
                   : "placement report (the GPU pipeline up to insert-copies" + dims + "):"));
  }
  CompileProgressLine compileProgress;
  if (!args.noGpu) {
    for (const auto &dims : bindings) {
      for (int sm : sms) {
        jit::JitOptions jo;
        jo.lower.nvrtc.smVersion = sm;
        jo.lower.emit = args.kernels;
        jo.lower.emit.smVersion = sm;
        jo.fuseAttention = args.fusedAttention;
        DLC_RETURN_IF_ERROR(precisionOptions(args.precision, jo.precision, jo.keepFp32));
        jo.strictPlacement = args.strict;
        jo.pipeline.printIrAfterAll = args.printIrAfterAll;
        jo.pipeline.timePasses = args.timePasses;
        jo.pipeline.debugOnly = args.debugOnly;
        jo.lower.progress = compileProgress.callback();
        auto program = jit::compileForGpu(model.graph(), dims, jo);
        if (!program)
          return bindings.size() > 1 ? program.status().withContext(rt::dimBindingText(dims))
                                     : program.status();
        timer.lap(fmt::format("GPU pipeline and codegen{}, sm_{}",
                              bindings.size() > 1 ? " " + rt::dimBindingText(dims) : "", sm));
        timer.part("of which NVRTC", program->compileSeconds * 1e3);
        // The modules' arch: sm_90a when the Hopper kernels are in (lower.cc).
        const std::string arch =
            program->modules.empty() ? fmt::format("sm_{}", sm) : program->modules[0].arch;
        std::cout << fmt::format("{}: {}{} for {}\n", args.model,
                                 bindings.size() > 1 ? rt::dimBindingText(dims) + ": " : "",
                                 codegen::describeProgram(*program), arch);
        if (!emitDir.empty() && package.programs.empty())
          DLC_RETURN_IF_ERROR(writeSources(emitDir, *program));
        program->sources.clear(); // kept by --emit; a library does not ship them
        package.programs.push_back(
            {dims, std::make_shared<const rt::Program>(std::move(*program))});
      }
    }
  }
  if (args.output.empty()) {
    timer.print();
    return Status::ok();
  }
  for (const rt::DimRange &r : ranges) // symbols left unbound make the GPU pipeline fail above
    symbols.erase(r.name);
  if (!symbols.empty())
    return invalidArgument("-o {}: give every symbolic input dim a size or range with --dim "
                           "(missing: {})",
                           args.output, *symbols.begin());
  DLC_ASSIGN_OR_RETURN(rt::SerializedPackage bytes, rt::serializePackageParts(package));
  timer.lap("package (serialize)");
  DLC_RETURN_IF_ERROR(writeModelLibrary(bytes, args.output, *toolchain));
  timer.lap(toolchain->fuseLd.empty() ? "link" : "link (ld." + toolchain->fuseLd + ")");
  std::error_code ec;
  const auto size = std::filesystem::file_size(args.output, ec);
  std::string arches;
  for (const std::string &a : package.arches())
    arches += (arches.empty() ? "" : ",") + a;
  std::cout << fmt::format("wrote {} ({:.1f} MiB): {} GPU program{}{}, the graph for the CPU "
                           "reference backend, the runtime and the C API (dlc/dlc.h)\n",
                           args.output, static_cast<double>(size) / (1 << 20),
                           package.programs.size(), package.programs.size() == 1 ? "" : "s",
                           arches.empty() ? "" : " (" + arches + ")");
  timer.print();
  return Status::ok();
}

} // namespace

void addCompileCommand(CLI::App &app, int &exitCode) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App *cmd = app.add_subcommand(
      "compile", "Compile a model ahead of time: its GPU kernels (NVRTC, cached) and, with -o, a "
                 "model library (.so) with the runtime and the C API");
  addLoadFlags(cmd, args->load);
  cmd->add_option("model", args->model,
                  "Model: ONNX (.onnx/.pb), TensorFlow GraphDef (.pb/.pbtxt) or dlc text IR (.dlc)")
      ->required();
  cmd->add_option("-o,--output", args->output,
                  "Write a model library (.so): the compiled model, its weights and the runtime "
                  "with the C API (dlc/dlc.h)");
  cmd->add_flag("--no-gpu", args->noGpu,
                "With -o: put no GPU program in the library (it runs on the CPU reference "
                "backend only)");
  cmd->add_option("--emit", args->emits, "cuda=DIR: write every kernel as DIR/<kernel>.cu")
      ->allow_extra_args(false);
  cmd->add_option("--dim", args->dims,
                  "Size of a symbolic input dim, NAME=SIZE, or its range NAME=MIN..MAX (GPU "
                  "programs for the ends and the powers of two between)")
      ->allow_extra_args(false);
  cmd->add_option("--gpu-arch", args->gpuArch,
                  "Target GPU architectures, comma-separated (default: the GPU present, else "
                  "sm_90; the driver is asked once per GPU and driver version, the answer kept "
                  "in the cache directory); PTX is kept too");
  addKernelFlags(cmd, args->kernels);
  cmd->add_flag("--fused-attention,!--no-fused-attention", args->fusedAttention,
                "Run attention (MatMul, scale, mask, Softmax, MatMul) as one flash-attention "
                "kernel (the fuse-attention pass; f16/bf16, head size 64 or 128; on by default, "
                "--no-fused-attention keeps the products and the softmax apart)");
  addPrecisionFlags(cmd, args->precision);
  cmd->add_flag("--no-cpu-fallback", args->strict,
                "Fail when a node has no GPU kernel instead of running it on the CPU");
  cmd->add_flag("--print-ir-after-all", args->printIrAfterAll,
                "Print the IR after every pass of the GPU pipeline");
  cmd->add_flag("--time-passes", args->timePasses,
                "Print the time of each pass of the GPU pipeline, then of each phase (loading, "
                "the GPU pipeline with codegen and NVRTC, packaging, linking) on stderr");
  cmd->add_option("--debug-only", args->debugOnly,
                  "Print the decision log of these passes (e.g. fuse, place-devices)")
      ->allow_extra_args(false);
  cmd->add_flag("--placement-report{-}", args->placementReport,
                "Print where each node runs and why (name, op, requested and assigned device, "
                "colocation group, reason) to stderr, as the GPU pipeline places it for the "
                "first --dim binding; --placement-report=FILE.json writes it as JSON");
  cmd->add_option("-O", args->optLevel,
                  "Load pipeline level: 0 infer-shapes only, 1 (default) the cleanup "
                  "(`dlc opt --print-pipeline`)")
      ->check(CLI::Range(0, jit::kMaxOptLevel));
  cmd->callback([args, &exitCode] {
    Status st = compileModel(*args);
    std::cout.flush();
    exitCode = st.isOk() ? 0 : reportError(st);
  });
}

} // namespace dlc::tool
