// Fault injection (CudaDriver::injectFault): every CUDA driver call that a GPU session's life
// makes (compile and load, allocate, capture, launch, copy back, free) is made to fail once in
// turn. Each time the session must report an error that carries the driver's error, or (for a
// call whose failure is harmless, such as a release) give the right results; it must leave no
// device memory behind; and the next session must work. Then the failures users meet: out of
// memory, a failed launch, a lost context, and an allocation bigger than the GPU.
#include <gmock/gmock.h>

#include <limits>
#include <optional>

#include "runtime/gpu_session.h"
#include "tests/unit/gpu/gpu_test_util.h"
#include "tests/unit/runtime/concurrency_util.h"

namespace dlc {
namespace {

using rt::CudaDriver;
using rt::DriverFault;
using ::testing::HasSubstr;

DriverFault faultAt(const std::string &function, int64_t nth, CUresult error) {
  DriverFault f;
  f.function = function;
  f.nth = nth;
  f.error = error;
  return f;
}

size_t freeDeviceMemory(const CudaDriver &driver) {
  size_t freeBytes = 0, total = 0;
  EXPECT_EQ(driver.api().memGetInfo(&freeBytes, &total), CUDA_SUCCESS);
  return freeBytes;
}

class DriverFaults : public ::testing::Test {
protected:
  /// One session's life: create, run (compiling the program), destroy.
  Expected<std::map<std::string, Tensor>> sessionLife() {
    SessionOptions options;
    options.backend = Backend::kGpu;
    options.cpuFallback = false;
    options.poison = true;
    auto session = model_->createSession(options);
    if (!session)
      return session.takeStatus();
    return session->run(inputs_);
  }

  void SetUp() override {
    auto model = Model::load(DLC_SOURCE_DIR "/models/mlp.onnx");
    ASSERT_TRUE(model) << model.status().message();
    model_.emplace(std::move(*model));
    inputs_ = testing::inputsOfRun(model_->inputs(), 5);
  }

  std::optional<Model> model_;
  std::map<std::string, Tensor> inputs_;
};

TEST_F(DriverFaults, EveryCallOfASessionsLifeFailingOnce) {
  DLC_REQUIRE_GPU(driver);
  auto want = sessionLife(); // also warms the kernel cache and the driver's own allocations
  ASSERT_TRUE(want) << want.status().message();
  driver->injectFault(faultAt("", std::numeric_limits<int64_t>::max(), CUDA_ERROR_UNKNOWN));
  auto counted = sessionLife();
  const int64_t calls = driver->clearFault().calls;
  ASSERT_TRUE(counted) << counted.status().message();
  ASSERT_GT(calls, 10) << "the hook counted too few calls";

  int failedRuns = 0;
  for (int64_t n = 1; n <= calls; ++n) {
    const size_t freeBefore = freeDeviceMemory(*driver);
    driver->injectFault(faultAt("", n, CUDA_ERROR_UNKNOWN));
    auto got = sessionLife();
    CudaDriver::FaultReport report = driver->clearFault();
    ASSERT_TRUE(report.fired) << "call " << n << " of " << calls << " was never made";
    if (got) {
      EXPECT_EQ(testing::differences(*got, *want), "") << "call " << n << " failed unnoticed";
    } else {
      ++failedRuns;
      EXPECT_THAT(got.status().message(), HasSubstr("CUDA_ERROR_UNKNOWN")) << "call " << n;
    }
    // The driver may return memory freed earlier late, never keep what a session freed.
    EXPECT_GE(freeDeviceMemory(*driver), freeBefore) << "call " << n << " failing leaked memory";
    auto next = sessionLife();
    ASSERT_TRUE(next) << "after call " << n << " failed: " << next.status().message();
    EXPECT_EQ(testing::differences(*next, *want), "") << "after call " << n << " failed";
  }
  EXPECT_GT(failedRuns, calls / 2) << "most driver calls matter to a run";
}

TEST_F(DriverFaults, OutOfMemoryFailedLaunchAndLostContextAreNamed) {
  DLC_REQUIRE_GPU(driver);
  ASSERT_TRUE(sessionLife());
  struct Case {
    DriverFault fault;
    std::string says;
  };
  std::vector<Case> cases(3);
  cases[0].fault = faultAt("cuMemAlloc_v2", 1, CUDA_ERROR_OUT_OF_MEMORY);
  cases[0].says = "device memory for";
  cases[1].fault = faultAt("cuGraphLaunch", 1, CUDA_ERROR_LAUNCH_FAILED);
  cases[1].says = "CUDA_ERROR_LAUNCH_FAILED";
  cases[2].fault = faultAt("cuCtxSetCurrent", 1, CUDA_ERROR_CONTEXT_IS_DESTROYED);
  cases[2].says = "CUDA_ERROR_CONTEXT_IS_DESTROYED";
  for (const Case &c : cases) {
    driver->injectFault(c.fault);
    auto got = sessionLife();
    EXPECT_TRUE(driver->clearFault().fired) << c.fault.function;
    ASSERT_FALSE(got) << c.fault.function << " failing went unnoticed";
    EXPECT_THAT(got.status().message(), HasSubstr(c.says)) << c.fault.function;
    EXPECT_THAT(got.status().message(), HasSubstr(driver->errorText(c.fault.error)));
    ASSERT_TRUE(sessionLife()) << "the session after " << c.fault.function << " failed";
  }
}

TEST(DriverLimits, AnArenaBiggerThanTheGpuIsAClearError) {
  DLC_REQUIRE_GPU(driver);
  rt::testing::ProgramBuilder b;
  b.arena(driver->device().totalMemory + (uint64_t{1} << 30));
  auto program = rt::GpuProgram::create(std::make_shared<rt::Program>(std::move(b.p)));
  ASSERT_TRUE(program) << program.status().message();
  const size_t freeBefore = freeDeviceMemory(*driver);
  auto session = rt::GpuSession::create(*program);
  ASSERT_FALSE(session);
  EXPECT_THAT(session.status().message(), HasSubstr("device memory for the session's arena"));
  EXPECT_THAT(session.status().message(), HasSubstr("CUDA_ERROR_OUT_OF_MEMORY"));
  EXPECT_GE(freeDeviceMemory(*driver), freeBefore);
}

} // namespace
} // namespace dlc
