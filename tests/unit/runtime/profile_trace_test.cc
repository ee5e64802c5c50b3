// The profile as a Chrome/Perfetto trace (runtime/jit/profile_trace.h): the JSON follows the
// Trace Event format (complete events with name, ph, ts, dur, pid, tid; metadata naming the
// tracks), steps are laid end to end in program order, host steps get the host's track, and
// each event names the nodes it ran.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "runtime/jit/profile_trace.h"
#include "unit/runtime/emulated_util.h"

namespace dlc {
namespace {

std::vector<Session::StepProfile> steps() {
  return {{"kernel", "g0_conv", "node 'c' (Conv) + node 'r' (Relu)", 0.25},
          {"copy", "", "copy of %h from gpu:0 to cpu", 0.01},
          {"host", "", "node 'nms' (NonMaxSuppression)", 1.5},
          {"kernel", "g2_add", "node 'a' (Add)", 0.004}};
}

TEST(ProfileTrace, FollowsTheTraceEventFormat) {
  const nlohmann::json t = nlohmann::json::parse(profileTraceJson(steps(), 20, "m.onnx"));
  ASSERT_TRUE(t.contains("traceEvents"));
  const auto &events = t["traceEvents"];
  ASSERT_TRUE(events.is_array());
  std::vector<nlohmann::json> slices, meta;
  for (const auto &e : events) {
    ASSERT_TRUE(e.contains("ph") && e.contains("name") && e.contains("pid")) << e.dump();
    (e["ph"] == "X" ? slices : meta).push_back(e);
  }
  ASSERT_EQ(slices.size(), 4u);
  EXPECT_EQ(meta.size(), 3u); // the process and its two tracks are named
  for (const auto &m : meta)
    EXPECT_EQ(m["ph"], "M");
  double end = 0;
  for (size_t i = 0; i < slices.size(); ++i) {
    const auto &e = slices[i];
    for (const char *key : {"ts", "dur", "tid"})
      ASSERT_TRUE(e.contains(key) && e[key].is_number()) << key << " in " << e.dump();
    EXPECT_NEAR(e["ts"].get<double>(), end, 1e-9) << "step " << i << " starts where the last ended";
    EXPECT_NEAR(e["dur"].get<double>(), steps()[i].ms * 1000.0, 1e-9);
    end = e["ts"].get<double>() + e["dur"].get<double>();
    EXPECT_EQ(e["args"]["nodes"], steps()[i].origin);
  }
  EXPECT_EQ(slices[0]["name"], "g0_conv");
  EXPECT_EQ(slices[1]["name"], "copy");
  EXPECT_NE(slices[2]["tid"], slices[0]["tid"]); // the host step is on the host's track
  EXPECT_EQ(slices[3]["tid"], slices[0]["tid"]);
  EXPECT_NEAR(end, (0.25 + 0.01 + 1.5 + 0.004) * 1000.0, 1e-9);
}

TEST(ProfileTrace, EventsCarryTheKernelsSummary) {
  std::vector<Session::StepProfile> s = steps();
  s[0].detail = "f16 GEMM, batch 1 of 64 x 32 x 16, tile 64x64x32/2x2s4k1";
  const nlohmann::json t = nlohmann::json::parse(profileTraceJson(s, 1, "m.onnx"));
  int withKernel = 0;
  for (const auto &e : t["traceEvents"])
    if (e["ph"] == "X" && e["args"].contains("kernel")) {
      ++withKernel;
      EXPECT_EQ(e["args"]["kernel"], s[0].detail);
    }
  EXPECT_EQ(withKernel, 1); // steps without a summary carry none
}

TEST(KernelSummary, TheLineThatNamesTheKernel) {
  const std::string src = "// dlc kernel g3_matmul\n#include \"prelude.cuh\"\n\n"
                          "// g3_matmul: i8 GEMM, batch 1 of 25088 x 128 x 512, tile "
                          "128x64x64/4x2s4k1\n// g3_matmul: a second line\n"
                          "extern \"C\" __global__ void g3_matmul() {}\n";
  EXPECT_EQ(kernelSummary(src, "g3_matmul"),
            "i8 GEMM, batch 1 of 25088 x 128 x 512, tile 128x64x64/4x2s4k1");
  EXPECT_EQ(kernelSummary(src, "g3"), "");             // a prefix of the name is not the name
  EXPECT_EQ(kernelSummary(src, "g4_add"), "");         // no summary of its own
  EXPECT_EQ(kernelSummary("", "g3_matmul"), "");       // no source
  EXPECT_EQ(kernelSummary("// g3_matmul: x", ""), ""); // no name
}

TEST(KernelSummary, AGemmKernelGivesItsShapeAndTile) {
  // What codegen writes: the GPU program of a matmul (emitted, not compiled) has a summary for
  // its GEMM kernel that names the dtype, the shape and the tile.
  auto g = parseGraph(R"(graph @g(%a: f16[64,32], %b: f16[32,48]) -> (y: ?) {
  %y = matmul(%a, %b) : f16[64,48]
  return %y
})");
  ASSERT_TRUE(g) << g.status().message();
  auto program = jit::compileForGpu(**g, {}, testing::emulatedJitOptions());
  ASSERT_TRUE(program) << program.status().message();
  int gemms = 0;
  for (const rt::Step &step : program->steps) {
    const auto *l = std::get_if<rt::LaunchStep>(&step);
    if (!l)
      continue;
    for (const auto &[name, source] : program->sources)
      if (name == l->kernel) {
        const std::string summary = kernelSummary(source, name);
        EXPECT_NE(summary.find("f16 GEMM, batch 1 of 64 x 48 x 32, tile "), std::string::npos)
            << name << ": '" << summary << "'";
        ++gemms;
      }
  }
  EXPECT_EQ(gemms, 1);
}

} // namespace
} // namespace dlc
