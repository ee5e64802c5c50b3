// `dlc compile`'s target when no --gpu-arch is given (tools/dlc/device_arch.h): the GPU's
// identity from the driver's /proc files, and the memo that spares a warm compile cuInit.
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
};

TEST(DeviceArch, IdentityNamesTheDriverAndEachGpu) {
  FakeProc proc("NVIDIA H100 80GB HBM3");
  auto id = gpuIdentity(proc.root.string());
  ASSERT_TRUE(id);
  EXPECT_NE(id->find("580.1"), std::string::npos);
  EXPECT_NE(id->find("NVIDIA H100 80GB HBM3"), std::string::npos);
  EXPECT_NE(id->find("0000:19:00.0"), std::string::npos);
  // Another visible set is another device 0.
  ::setenv("CUDA_VISIBLE_DEVICES", "1", 1);
  auto other = gpuIdentity(proc.root.string());
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  ASSERT_TRUE(other);
  EXPECT_NE(*id, *other);
  // No driver, or a driver without GPUs: no identity (the probe decides).
  EXPECT_FALSE(gpuIdentity((proc.root / "missing").string()));
  fs::remove_all(proc.root / "gpus" / "0000:19:00.0");
  EXPECT_FALSE(gpuIdentity(proc.root.string()));
}

TEST(DeviceArch, AMemoForThisIdentityAnswersWithoutTheDriver) {
  FakeProc proc("NVIDIA Test GPU");
  const fs::path cache = proc.root / "cache";
  auto id = gpuIdentity(proc.root.string());
  ASSERT_TRUE(id);
  fs::create_directories(cache / "device");
  std::ofstream(cache / "device" / fmt::format("{:016x}", fnv1a64(id->data(), id->size())))
      << "sm_77";
  EXPECT_EQ(deviceArch(cache.string(), proc.root.string()), "sm_77");
  // Another GPU in the same slot is not this memo's: the driver is asked (here, on a machine
  // that may have no GPU, "sm_90" or the real one), never "sm_77".
  std::ofstream(proc.root / "gpus" / "0000:19:00.0" / "information") << "Model: Another GPU\n";
  EXPECT_NE(deviceArch(cache.string(), proc.root.string()), "sm_77");
  // A memo that is not an architecture is ignored.
  auto id2 = gpuIdentity(proc.root.string());
  std::ofstream(cache / "device" / fmt::format("{:016x}", fnv1a64(id2->data(), id2->size())))
      << "garbage";
  EXPECT_NE(deviceArch(cache.string(), proc.root.string()), "garbage");
}

} // namespace
} // namespace dlc::tool
