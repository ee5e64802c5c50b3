// `dlc compile MODEL`: compile a model for the GPU ahead of time.
//
// Runs the default pipeline, specialises symbolic dims (`--dim N=8`; every input dim must end
// up known), runs the GPU pipeline (codegen/jit.h) and compiles every kernel with NVRTC for
// `--gpu-arch` (default sm_90), using the kernel cache ($DLC_CACHE_DIR). It prints what came
// out: kernels, modules, arena and constant sizes, and where each group went.
//   --emit cuda=DIR    writes each kernel as DIR/<kernel>.cu (the prelude as DIR/prelude.cuh)
//   -o model.so        (the shared library with the C API comes with a later release)
#include <filesystem>
#include <fstream>
#include <iostream>

#include "codegen/cuda_prelude.h"
#include "codegen/jit.h"
#include "runtime/model.h"
#include "tools/dlc/commands.h"

namespace dlc::tool {
namespace {

struct CompileArgs {
  std::string model;
  std::string output;
  std::vector<std::string> emits;
  std::vector<std::string> dims;
  std::string gpuArch = "sm_90";
  bool allowTf32 = false;
  bool strict = false;
  int optLevel = 1;
  bool printIrAfterAll = false;
  std::vector<std::string> debugOnly;
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
  DLC_RETURN_IF_ERROR(write("prelude.cuh", codegen::cudaPrelude()));
  for (const auto &[name, source] : p.sources)
    DLC_RETURN_IF_ERROR(
        write(name + ".cu", "// dlc kernel " + name + "\n#include \"prelude.cuh\"\n\n" + source));
  std::cout << fmt::format("wrote {} kernels and prelude.cuh to {}\n", p.sources.size(), dir);
  return Status::ok();
}

Status compileModel(const CompileArgs &args) {
  if (!args.output.empty())
    return unavailable("-o {}: writing a shared library is not available yet; use --emit "
                       "cuda=DIR to see the generated kernels",
                       args.output);
  std::string emitDir;
  for (const std::string &e : args.emits) {
    if (e.rfind("cuda=", 0) != 0 || e.size() == 5)
      return invalidArgument("--emit '{}': expected cuda=DIR", e);
    emitDir = e.substr(5);
  }
  DLC_ASSIGN_OR_RETURN(int sm, parseArch(args.gpuArch));
  DLC_ASSIGN_OR_RETURN(auto dims, parseDims(args.dims));
  DLC_ASSIGN_OR_RETURN(Model model, Model::load(args.model, ModelOptions{args.optLevel}));
  codegen::JitOptions jo;
  jo.lower.nvrtc.smVersion = sm;
  jo.lower.emit.smVersion = sm;
  jo.lower.emit.allowTf32 = args.allowTf32;
  jo.strictPlacement = args.strict;
  jo.pipeline.printIrAfterAll = args.printIrAfterAll;
  jo.pipeline.debugOnly = args.debugOnly;
  DLC_ASSIGN_OR_RETURN(rt::Program program, codegen::compileForGpu(model.graph(), dims, jo));
  std::cout << fmt::format("{}: {} for {}\n", args.model, codegen::describeProgram(program),
                           args.gpuArch);
  if (!emitDir.empty())
    DLC_RETURN_IF_ERROR(writeSources(emitDir, program));
  return Status::ok();
}

} // namespace

void addCompileCommand(CLI::App &app, int &exitCode) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App *cmd = app.add_subcommand(
      "compile", "Compile a model's GPU kernels ahead of time (NVRTC, cached) and report them");
  cmd->add_option("model", args->model, "Model: .onnx/.pb (ONNX) or .dlc (dlc text IR)")
      ->required();
  cmd->add_option("-o,--output", args->output, "Shared library to write (not available yet)");
  cmd->add_option("--emit", args->emits, "cuda=DIR: write every kernel as DIR/<kernel>.cu")
      ->allow_extra_args(false);
  cmd->add_option("--dim", args->dims, "Size of a symbolic input dim, NAME=SIZE")
      ->allow_extra_args(false);
  cmd->add_option("--gpu-arch", args->gpuArch, "Target GPU architecture (default sm_90)");
  cmd->add_flag("--allow-tf32", args->allowTf32, "Let fp32 GEMM/conv use TF32 tensor cores");
  cmd->add_flag("--no-cpu-fallback", args->strict,
                "Fail when a node has no GPU kernel instead of running it on the CPU");
  cmd->add_flag("--print-ir-after-all", args->printIrAfterAll,
                "Print the IR after every pass of the GPU pipeline");
  cmd->add_option("--debug-only", args->debugOnly,
                  "Print the decision log of these passes (e.g. fuse, place-devices)")
      ->allow_extra_args(false);
  cmd->add_option("-O", args->optLevel, "Level of the pipeline run before (0-3; default 1)")
      ->check(CLI::Range(0, 3));
  cmd->callback([args, &exitCode] {
    Status st = compileModel(*args);
    std::cout.flush();
    exitCode = st.isOk() ? 0 : reportError(st);
  });
}

} // namespace dlc::tool
