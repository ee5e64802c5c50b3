#include "tools/dlc/device_arch.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "ir/tensor.h"
#include "runtime/cuda_driver.h"

namespace dlc::tool {

namespace fs = std::filesystem;

namespace {

std::optional<std::string> readFile(const fs::path &p) {
  std::ifstream in(p);
  if (!in)
    return std::nullopt;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool isArch(const std::string &s) {
  return s.size() >= 5 && s.rfind("sm_", 0) == 0 &&
         std::all_of(s.begin() + 3, s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

} // namespace

std::optional<std::string> gpuIdentity(const std::string &procDir) {
  auto version = readFile(fs::path(procDir) / "version");
  if (!version)
    return std::nullopt;
  std::error_code ec;
  std::vector<fs::path> gpus;
  for (const auto &e : fs::directory_iterator(fs::path(procDir) / "gpus", ec))
    gpus.push_back(e.path());
  if (ec || gpus.empty())
    return std::nullopt;
  std::sort(gpus.begin(), gpus.end());
  std::string id = *version;
  for (const fs::path &g : gpus) {
    auto info = readFile(g / "information");
    if (!info)
      return std::nullopt;
    id += g.filename().string() + "\n" + *info;
  }
  for (const char *env : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"}) {
    const char *v = std::getenv(env);
    id += fmt::format("{}={}\n", env, v ? v : "(unset)");
  }
  return id;
}

std::string deviceArch(const std::string &cacheDir, const std::string &procDir) {
  const std::optional<std::string> id = gpuIdentity(procDir);
  fs::path memo;
  if (id && !cacheDir.empty()) {
    memo = fs::path(cacheDir) / "device" / fmt::format("{:016x}", fnv1a64(id->data(), id->size()));
    if (auto known = readFile(memo); known && isArch(*known))
      return *known;
  }
  auto device = rt::CudaDriver::probe(); // no context: compiling runs nothing on the GPU
  if (!device)
    return "sm_90";
  const std::string arch = device->arch();
  if (!memo.empty()) {
    std::error_code ec;
    fs::create_directories(memo.parent_path(), ec);
    // Written aside and renamed: a reader never sees half a file.
    const fs::path tmp = memo.string() + fmt::format(".{}", ::getpid());
    if (std::ofstream(tmp) << arch)
      fs::rename(tmp, memo, ec);
    fs::remove(tmp, ec);
  }
  return arch;
}

} // namespace dlc::tool
