// Loading the CUDA driver: the errors on machines without one (runs everywhere), and the
// device description where there is one.
#include <gtest/gtest.h>

#include "runtime/cuda_driver.h"

namespace dlc::rt {
namespace {

TEST(CudaDriver, MissingLibraryIsAClearError) {
  auto d = CudaDriver::load("libdlc_no_such_driver.so.1");
  ASSERT_FALSE(d);
  EXPECT_EQ(d.status().code(), StatusCode::kUnavailable);
  const std::string &msg = d.status().message();
  EXPECT_EQ(msg.rfind("no CUDA driver: libdlc_no_such_driver.so.1 could not be loaded (", 0), 0u)
      << msg;
  // dlerror's reason is kept.
  EXPECT_NE(msg.find("libdlc_no_such_driver.so.1: cannot open shared object file"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("); the GPU backend needs the NVIDIA driver"), std::string::npos) << msg;
}

TEST(CudaDriver, LibraryWithoutTheEntryPointsIsRefused) {
  auto d = CudaDriver::load("libc.so.6");
  ASSERT_FALSE(d);
  EXPECT_EQ(d.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(d.status().message(),
            "no usable CUDA driver: libc.so.6 lacks cuInit, cuDriverGetVersion, cuGetErrorName, "
            "cuGetErrorString, cuDeviceGetCount, ... (42 more); the GPU backend needs an NVIDIA "
            "driver for CUDA 12.8 or newer");
}

TEST(CudaDriver, ProcessDriverOrTheReasonThereIsNone) {
  auto d = CudaDriver::get();
  if (!d) {
    // This machine has no driver (CI, development machines): the message says so, and the
    // failure is remembered.
    const std::string &msg = d.status().message();
    EXPECT_TRUE(msg.rfind("no CUDA driver: libcuda.so.1 could not be loaded (", 0) == 0 ||
                msg.rfind("no CUDA device: ", 0) == 0)
        << msg;
    EXPECT_EQ(CudaDriver::get().status().message(), msg);
    GTEST_SKIP() << "no CUDA device: " << msg;
  }
  const DeviceInfo &info = (*d)->device();
  EXPECT_FALSE(info.name.empty());
  EXPECT_GE(info.major, 5);
  EXPECT_GT(info.smCount, 0);
  EXPECT_GT(info.totalMemory, 1ull << 30);
  EXPECT_GE(info.sharedPerBlock, 48 * 1024);
  EXPECT_GE(info.sharedPerBlockOptin, info.sharedPerBlock);
  EXPECT_GE(info.driverVersion, 12000);
  EXPECT_EQ(info.arch(), "sm_" + std::to_string(info.major * 10 + info.minor));
  EXPECT_NE(info.describe().find(info.arch()), std::string::npos);
  EXPECT_EQ(CudaDriver::get().value(), *d) << "one driver per process";
  std::printf("device: %s\n", info.describe().c_str());

  // Errors carry the driver's name and description of the code.
  EXPECT_EQ((*d)->errorText(CUDA_ERROR_OUT_OF_MEMORY), "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  Status st = (*d)->check(CUDA_ERROR_INVALID_VALUE, "doing something");
  EXPECT_EQ(st.message(), "doing something: CUDA_ERROR_INVALID_VALUE (invalid argument)");
  EXPECT_TRUE((*d)->check(CUDA_SUCCESS, "fine").isOk());
}

TEST(CudaDriver, ProbeDescribesTheDeviceGetDoes) {
  // probe() asks without a context; it fails as get() does and otherwise describes the same GPU.
  auto probed = CudaDriver::probe();
  auto d = CudaDriver::get();
  ASSERT_EQ(probed.hasValue(), d.hasValue())
      << (probed ? d.status().message() : probed.status().message());
  if (!d) {
    EXPECT_EQ(probed.status().message(), d.status().message());
    GTEST_SKIP() << "no CUDA device: " << d.status().message();
  }
  const DeviceInfo &info = (*d)->device();
  EXPECT_EQ(probed->name, info.name);
  EXPECT_EQ(probed->arch(), info.arch());
  EXPECT_EQ(probed->smCount, info.smCount);
  EXPECT_EQ(probed->totalMemory, info.totalMemory);
  EXPECT_EQ(CudaDriver::probe(99).status().code(), StatusCode::kUnavailable);
}

TEST(CudaDriver, MemoryHandlesRoundTrip) {
  auto d = CudaDriver::get();
  if (!d)
    GTEST_SKIP() << "no CUDA device: " << d.status().message();
  const CudaDriver &drv = **d;
  auto mem = allocateDevice(drv, 4096, "a test buffer");
  ASSERT_TRUE(mem) << mem.status().message();
  EXPECT_TRUE(static_cast<bool>(*mem));
  std::vector<uint8_t> in(4096), out(4096, 0);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<uint8_t>(i * 7);
  ASSERT_TRUE(drv.check(drv.api().memcpyHtoD(mem->get(), in.data(), in.size()), "up").isOk());
  ASSERT_TRUE(drv.check(drv.api().memcpyDtoH(out.data(), mem->get(), out.size()), "down").isOk());
  EXPECT_EQ(in, out);
  auto none = allocateDevice(drv, 0, "nothing");
  ASSERT_TRUE(none);
  EXPECT_FALSE(static_cast<bool>(*none));
  auto huge = allocateDevice(drv, size_t{1} << 50, "a petabyte");
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.status().message().find("allocating 1125899906842624 bytes of device memory "
                                         "for a petabyte"),
            std::string::npos)
      << huge.status().message();
  EXPECT_NE(huge.status().message().find("CUDA_ERROR_OUT_OF_MEMORY"), std::string::npos);
}

} // namespace
} // namespace dlc::rt
