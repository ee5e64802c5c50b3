// LowerOptions::progress: what `dlc compile` and `dlc run` draw while NVRTC works (tools/dlc/
// compile_progress.h). NVRTC runs on this machine without a GPU; the cache is a fresh
// directory, so the modules really compile.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "codegen/lower.h"
#include "runtime/jit/compile.h"
#include "runtime/jit/model.h"

namespace dlc {
namespace {

namespace fs = std::filesystem;

TEST(CompileProgress, CountsEveryKernelOnceAndNamesTheSlowestModule) {
  auto m = Model::load(std::string(DLC_SOURCE_DIR) + "/models/tiny_cnn.onnx");
  ASSERT_TRUE(m) << m.status().message();
  const fs::path cache =
      fs::temp_directory_path() / ("dlc-progress-test-" + std::to_string(std::random_device{}()));
  jit::JitOptions jo;
  jo.lower.nvrtc.cacheDir = cache.string();
  jo.lower.jobs = 2;
  std::vector<codegen::KernelProgress> reports;
  jo.lower.progress = [&](const codegen::KernelProgress &p) { reports.push_back(p); };
  auto program = jit::compileForGpu(m->graph(), {{"N", 2}}, jo);
  fs::remove_all(cache);
  ASSERT_TRUE(program) << program.status().message();
  size_t kernels = 0;
  for (const rt::Module &mod : program->modules)
    kernels += mod.kernels.size();
  ASSERT_EQ(reports.size(), program->modules.size() + 1) << "a start, then one per module";
  EXPECT_EQ(reports.front().kernelsDone, 0u);
  EXPECT_EQ(reports.front().modulesDone, 0u);
  for (size_t i = 1; i < reports.size(); ++i) {
    EXPECT_EQ(reports[i].kernelsTotal, kernels);
    EXPECT_EQ(reports[i].modulesDone, i);
    EXPECT_GT(reports[i].kernelsDone, reports[i - 1].kernelsDone);
    EXPECT_GE(reports[i].elapsed, reports[i - 1].elapsed);
  }
  const codegen::KernelProgress &last = reports.back();
  EXPECT_EQ(last.kernelsDone, kernels);
  EXPECT_EQ(last.modulesDone, last.modulesTotal);
  // Compiled, not cached: the slowest module is named by one of its kernels.
  EXPECT_GT(last.slowestSeconds, 0.0);
  bool named = false;
  for (const rt::Module &mod : program->modules)
    named |= last.slowestKernels.rfind(mod.kernels.front(), 0) == 0;
  EXPECT_TRUE(named) << last.slowestKernels;
}

} // namespace
} // namespace dlc
