// The profile as a Chrome/Perfetto trace (runtime/jit/profile_trace.h): the JSON follows the
// Trace Event format (complete events with name, ph, ts, dur, pid, tid; metadata naming the
// tracks), steps are laid end to end in program order, host steps get the host's track, and
// each event names the nodes it ran.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "runtime/jit/profile_trace.h"

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

} // namespace
} // namespace dlc
