// `dlc compile`'s target when no --gpu-arch is given (tools/dlc/device_arch.h): the GPU's
// identity from the driver's /proc files (or /sys where a container lacks them), and the memo
// that spares a warm compile cuInit.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "ir/tensor.h"
#include "tools/dlc/device_arch.h"

namespace dlc::tool {
namespace {

namespace fs = std::filesystem;

/// A fake /proc/driver/nvidia with one GPU.
struct FakeProc {
  fs::path root;
  explicit FakeProc(const std::string &model) {
    root =
        fs::temp_directory_path() /
        fmt::format("dlc-proc-{}", ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root);
    fs::create_directories(root / "gpus" / "0000:19:00.0");
    std::ofstream(root / "version") << "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.1\n";
    std::ofstream(root / "gpus" / "0000:19:00.0" / "information")
        << "Model: \t\t " << model << "\nBus Location: \t 0000:19:00.0\n";
  }
  ~FakeProc() { fs::remove_all(root); }
  /// A /sys that names no driver, so that the machine's own does not answer.
  std::string noSys() const { return (root / "no-sys").string(); }
};

/// A fake /sys with the nvidia module and, on its PCI bus, an NVIDIA 3D controller at `gpuAt`
/// (device id `device`), an NVIDIA audio function and another vendor's display controller.
struct FakeSys {
  fs::path root;
  FakeSys(const fs::path &under, const std::string &gpuAt, const std::string &device)
      : root(under / "sys") {
    fs::create_directories(root / "module" / "nvidia");
    std::ofstream(root / "module" / "nvidia" / "version") << "580.1\n";
    auto pci = [&](const std::string &at, const char *vendor, const char *cls,
                   const std::string &dev) {
      const fs::path d = root / "bus" / "pci" / "devices" / at;
      fs::create_directories(d);
      std::ofstream(d / "vendor") << vendor << "\n";
      std::ofstream(d / "class") << cls << "\n";
      std::ofstream(d / "device") << dev << "\n";
    };
    pci(gpuAt, "0x10de", "0x030200", device);
    pci("0000:19:00.1", "0x10de", "0x040300", "0x22a3");
    pci("0000:03:00.0", "0x1a03", "0x030000", "0x2000");
  }
};

TEST(DeviceArch, IdentityNamesTheDriverAndEachGpu) {
  FakeProc proc("NVIDIA H100 80GB HBM3");
  auto id = gpuIdentity(proc.root.string(), proc.noSys());
  ASSERT_TRUE(id);
  EXPECT_NE(id->find("580.1"), std::string::npos);
  EXPECT_NE(id->find("NVIDIA H100 80GB HBM3"), std::string::npos);
  EXPECT_NE(id->find("0000:19:00.0"), std::string::npos);
  // Another visible set is another device 0.
  ::setenv("CUDA_VISIBLE_DEVICES", "1", 1);
  auto other = gpuIdentity(proc.root.string(), proc.noSys());
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  ASSERT_TRUE(other);
  EXPECT_NE(*id, *other);
  // No driver, or a driver without GPUs: no identity (the probe decides).
  EXPECT_FALSE(gpuIdentity((proc.root / "missing").string(), proc.noSys()));
  fs::remove_all(proc.root / "gpus" / "0000:19:00.0");
  EXPECT_FALSE(gpuIdentity(proc.root.string(), proc.noSys()));
}

// A container that shows /sys but not /proc/driver/nvidia: the module's version and the NVIDIA
// display or 3D controllers on the PCI bus identify the GPUs (not the GPU's audio function, not
// another vendor's display); another GPU model in the slot is another identity.
TEST(DeviceArch, WithoutTheDriversProcFilesSysfsIdentifiesTheGpus) {
  FakeProc proc("unused");
  const std::string noProc = (proc.root / "missing").string();
  std::optional<std::string> h100, h200;
  {
    FakeSys sys(proc.root, "0000:19:00.0", "0x2330");
    h100 = gpuIdentity(noProc, sys.root.string());
    ASSERT_TRUE(h100);
    EXPECT_NE(h100->find("580.1"), std::string::npos);
    EXPECT_NE(h100->find("0000:19:00.0 0x2330"), std::string::npos) << *h100;
    EXPECT_EQ(h100->find("0x22a3"), std::string::npos) << *h100;
    EXPECT_EQ(h100->find("0x1a03"), std::string::npos) << *h100;
    EXPECT_EQ(h100->find("0000:03:00.0"), std::string::npos) << *h100;
    fs::remove_all(sys.root);
  }
  {
    FakeSys sys(proc.root, "0000:19:00.0", "0x2335");
    h200 = gpuIdentity(noProc, sys.root.string());
    ASSERT_TRUE(h200);
    EXPECT_NE(*h100, *h200);
    // The driver's /proc files, where present, come first.
    auto fromProc = gpuIdentity(proc.root.string(), sys.root.string());
    ASSERT_TRUE(fromProc);
    EXPECT_NE(fromProc->find("Model:"), std::string::npos);
    // No module, or no NVIDIA GPU on the bus: no identity.
    fs::remove_all(sys.root / "bus" / "pci" / "devices" / "0000:19:00.0");
    EXPECT_FALSE(gpuIdentity(noProc, sys.root.string()));
    fs::remove_all(sys.root / "module");
    EXPECT_FALSE(gpuIdentity(noProc, sys.root.string()));
  }
}

TEST(DeviceArch, AMemoForThisIdentityAnswersWithoutTheDriver) {
  FakeProc proc("NVIDIA Test GPU");
  const fs::path cache = proc.root / "cache";
  auto id = gpuIdentity(proc.root.string(), proc.noSys());
  ASSERT_TRUE(id);
  fs::create_directories(cache / "device");
  std::ofstream(cache / "device" / fmt::format("{:016x}", fnv1a64(id->data(), id->size())))
      << "sm_77";
  EXPECT_EQ(deviceArch(cache.string(), proc.root.string(), proc.noSys()), "sm_77");
  // Another GPU in the same slot is not this memo's: the driver is asked (here, on a machine
  // that may have no GPU, "sm_90" or the real one), never "sm_77".
  std::ofstream(proc.root / "gpus" / "0000:19:00.0" / "information") << "Model: Another GPU\n";
  EXPECT_NE(deviceArch(cache.string(), proc.root.string(), proc.noSys()), "sm_77");
  // A memo that is not an architecture is ignored.
  auto id2 = gpuIdentity(proc.root.string(), proc.noSys());
  std::ofstream(cache / "device" / fmt::format("{:016x}", fnv1a64(id2->data(), id2->size())))
      << "garbage";
  EXPECT_NE(deviceArch(cache.string(), proc.root.string(), proc.noSys()), "garbage");
}

} // namespace
} // namespace dlc::tool
