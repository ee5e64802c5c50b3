// The target of `dlc compile` when no --gpu-arch is given: the architecture of the GPU present,
// remembered between runs, since asking the driver (cuInit) costs a warm compile a good share
// of its time.
#pragma once

#include <optional>
#include <string>

namespace dlc::tool {

/// What identifies this machine's GPUs for the probe's memo: the driver's version line and
/// each GPU's information file under `procDir` (/proc/driver/nvidia: model, bus location), or,
/// where a container shows no such files, the kernel module's version and each NVIDIA display
/// or 3D controller's PCI address and device id under `sysDir` (/sys); plus
/// CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER, which decide which GPU CUDA calls device 0.
/// nullopt when neither names a driver with a GPU (no NVIDIA driver).
std::optional<std::string> gpuIdentity(const std::string &procDir,
                                       const std::string &sysDir = "/sys");

/// "sm_XY" of CUDA device 0, read from `cacheDir`'s memo for this identity when one was written
/// before, else asked of the driver (CudaDriver::probe) and written there; "sm_90" when there
/// is no GPU. `cacheDir` empty: no memo.
std::string deviceArch(const std::string &cacheDir, const std::string &procDir,
                       const std::string &sysDir = "/sys");

} // namespace dlc::tool
