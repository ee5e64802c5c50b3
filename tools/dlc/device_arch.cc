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

/// The driver's own account: /proc/driver/nvidia's version and each GPU's information file.
std::optional<std::string> procIdentity(const fs::path &proc) {
  auto version = readFile(proc / "version");
  if (!version)
    return std::nullopt;
  std::error_code ec;
  std::vector<fs::path> gpus;
  for (const auto &e : fs::directory_iterator(proc / "gpus", ec))
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
  return id;
}

/// The kernel's account, for containers that mount /sys but not /proc/driver/nvidia: the
/// nvidia module's version and each NVIDIA (vendor 0x10de) display or 3D controller (class
/// 0x0300xx, 0x0302xx) on the PCI bus, by address and device id.
std::optional<std::string> sysfsIdentity(const fs::path &sys) {
  auto version = readFile(sys / "module" / "nvidia" / "version");
  if (!version)
    return std::nullopt;
  std::error_code ec;
  std::vector<std::string> gpus;
  for (const auto &e : fs::directory_iterator(sys / "bus" / "pci" / "devices", ec)) {
    auto vendor = readFile(e.path() / "vendor"), cls = readFile(e.path() / "class"),
         device = readFile(e.path() / "device");
    if (vendor && device && cls && vendor->rfind("0x10de", 0) == 0 &&
        (cls->rfind("0x0300", 0) == 0 || cls->rfind("0x0302", 0) == 0))
      gpus.push_back(e.path().filename().string() + " " + *device);
  }
  if (ec || gpus.empty())
    return std::nullopt;
  std::sort(gpus.begin(), gpus.end());
  std::string id = "sysfs nvidia " + *version;
  for (const std::string &g : gpus)
    id += g;
  return id;
}

} // namespace

std::optional<std::string> gpuIdentity(const std::string &procDir, const std::string &sysDir) {
  std::optional<std::string> found = procIdentity(procDir);
  if (!found)
    found = sysfsIdentity(sysDir);
  if (!found)
    return std::nullopt;
  std::string id = std::move(*found);
  for (const char *env : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"}) {
    const char *v = std::getenv(env);
    id += fmt::format("{}={}\n", env, v ? v : "(unset)");
  }
  return id;
}

std::string deviceArch(const std::string &cacheDir, const std::string &procDir,
                       const std::string &sysDir) {
  const std::optional<std::string> id = gpuIdentity(procDir, sysDir);
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
