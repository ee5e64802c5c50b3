#include "codegen/nvrtc.h"

#include <dlfcn.h>
#include <nvrtc.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

namespace dlc::codegen {
namespace {

std::string nvrtcLibDir() {
  Dl_info info{};
  // dladdr on a function of libnvrtc gives the library's path.
  if (dladdr(reinterpret_cast<void *>(&::nvrtcGetErrorString), &info) == 0 || !info.dli_fname)
    return {};
  return std::filesystem::path(info.dli_fname).parent_path().string();
}

Status nvrtcError(nvrtcResult r, const std::string &what, const std::string &name) {
  return internalError("NVRTC {} failed for '{}': {}", what, name, nvrtcGetErrorString(r));
}

} // namespace

int nvrtcVersion() {
  int major = 0, minor = 0;
  if (::nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
    return 0;
  return major * 1000 + minor * 10;
}

Expected<std::string> cudaIncludeDir() {
  static const Expected<std::string> cached = []() -> Expected<std::string> {
    std::vector<std::string> tried;
    auto check = [&](const std::string &dir) {
      if (dir.empty())
        return false;
      tried.push_back(dir);
      std::error_code ec;
      return std::filesystem::exists(std::filesystem::path(dir) / "cuda_fp16.h", ec);
    };
    for (const char *env : {"CUDA_HOME", "CUDA_PATH"})
      if (const char *v = std::getenv(env); v && *v)
        if (check(std::string(v) + "/include"))
          return tried.back();
#ifdef DLC_CUDA_INCLUDE_DIR
    if (check(DLC_CUDA_INCLUDE_DIR))
      return tried.back();
#endif
    if (std::string lib = nvrtcLibDir(); !lib.empty()) {
      for (const char *rel : {"/../include", "/../../include", "/../targets/x86_64-linux/include"})
        if (check(std::filesystem::weakly_canonical(lib + rel).string()))
          return tried.back();
    }
    if (check("/usr/local/cuda/include"))
      return tried.back();
    std::string list;
    for (const auto &t : tried)
      list += "\n  " + t;
    return notFound("CUDA headers (cuda_fp16.h) not found; set CUDA_HOME to the CUDA toolkit. "
                    "Tried:{}",
                    list);
  }();
  return cached;
}

Expected<std::vector<std::string>> nvrtcArguments(const NvrtcOptions &opts) {
  DLC_ASSIGN_OR_RETURN(std::string include, cudaIncludeDir());
  std::vector<std::string> options = {"--std=c++17",
                                      "--gpu-architecture=sm_" + std::to_string(opts.smVersion) +
                                          (opts.archSpecific ? "a" : ""),
                                      "--include-path=" + include, "-default-device"};
  if (opts.lineInfo)
    options.push_back("-lineinfo");
  options.insert(options.end(), opts.extra.begin(), opts.extra.end());
  return options;
}

Expected<CompiledModule> compileCuda(const std::string &source, const std::string &name,
                                     const NvrtcOptions &opts) {
  DLC_ASSIGN_OR_RETURN(std::vector<std::string> options, nvrtcArguments(opts));
  nvrtcProgram prog = nullptr;
  nvrtcResult r =
      nvrtcCreateProgram(&prog, source.c_str(), (name + ".cu").c_str(), 0, nullptr, nullptr);
  if (r != NVRTC_SUCCESS)
    return nvrtcError(r, "create", name);
  std::unique_ptr<nvrtcProgram, void (*)(nvrtcProgram *)> guard(
      &prog, [](nvrtcProgram *p) { nvrtcDestroyProgram(p); });
  std::vector<const char *> argv;
  for (const auto &o : options)
    argv.push_back(o.c_str());
  r = nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  size_t logSize = 0;
  nvrtcGetProgramLogSize(prog, &logSize);
  std::string log(logSize, '\0');
  if (logSize)
    nvrtcGetProgramLog(prog, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
    log.pop_back();
  if (r != NVRTC_SUCCESS)
    return invalidArgument("NVRTC failed to compile '{}' for sm_{}{}:\n{}", name, opts.smVersion,
                           opts.archSpecific ? "a" : "", log);
  CompiledModule out;
  out.log = std::move(log);
  size_t size = 0;
  if ((r = nvrtcGetPTXSize(prog, &size)) != NVRTC_SUCCESS)
    return nvrtcError(r, "PTX size", name);
  out.ptx.resize(size);
  if ((r = nvrtcGetPTX(prog, out.ptx.data())) != NVRTC_SUCCESS)
    return nvrtcError(r, "PTX", name);
  while (!out.ptx.empty() && out.ptx.back() == '\0')
    out.ptx.pop_back();
  if ((r = nvrtcGetCUBINSize(prog, &size)) != NVRTC_SUCCESS)
    return nvrtcError(r, "cubin size", name);
  out.cubin.resize(size);
  if ((r = nvrtcGetCUBIN(prog, reinterpret_cast<char *>(out.cubin.data()))) != NVRTC_SUCCESS)
    return nvrtcError(r, "cubin", name);
  return out;
}

} // namespace dlc::codegen
