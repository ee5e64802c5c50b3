// place-devices with a fake GPU backend answering through the gpuSupport hook.
#include <gtest/gtest.h>

#include "numerics_util.h"
#include "pass_test_util.h"

namespace dlc {
namespace {

constexpr const char *kGraph = R"(
graph @place(%x: f32[1,2,4,4], %v: f32[2,2,4,4,4]) -> (a: ?, b: ?, c: ?, d: ?) {
  %w = constant f32[2,2,1,1] dense<[1.0, 0.0, 0.0, 1.0]>
  %w3 = constant f32[2,2,1,1,1] dense<[1.0, 0.0, 0.0, 1.0]>
  %c2 = conv(%x, %w) : f32[1,2,4,4] loc("conv2d")
  %c3 = conv(%v, %w3) : f32[2,2,4,4,4] loc("conv3d")
  %r = relu(%c2) : f32[1,2,4,4] @cpu loc("relu")
  %e = exp(%c3) : f32[2,2,4,4,4] loc("exp")
  return %c2, %r, %e, %c3
}
)";

/// A GPU backend that cannot run 3-D convolutions.
bool fakeGpu(const Node &n, std::string *why) {
  if (n.op() == Op::kConv && n.input(0)->shape().rank() == 5) {
    *why = "Conv: 3-D convolution has no GPU kernel yet";
    return false;
  }
  return true;
}

Status place(Graph &g, const std::string &pipeline, std::ostream &err) {
  auto p = parsePipeline(pipeline);
  EXPECT_TRUE(p) << p.status().message();
  PipelineOptions opts;
  opts.gpuSupport = fakeGpu;
  opts.err = &err;
  return runPipeline(g, *p, opts);
}

Device deviceOf(const Graph &g, std::string_view name) {
  return g.findValue(name)->producer()->device();
}

TEST(PlaceDevices, AsksTheBackendAndFallsBackToTheCpuWithAWarning) {
  auto g = testing::parsed(kGraph);
  ASSERT_TRUE(g);
  std::ostringstream err;
  Status st = place(*g, "place-devices", err);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(deviceOf(*g, "c2"), Device::gpu(0));
  EXPECT_EQ(deviceOf(*g, "c3"), Device::cpu());
  EXPECT_EQ(deviceOf(*g, "r"), Device::cpu()); // set before: stays
  EXPECT_EQ(deviceOf(*g, "e"), Device::gpu(0));
  EXPECT_EQ(err.str(), "warning: [place-devices] node 'conv3d' (Conv): runs on cpu: Conv: 3-D "
                       "convolution has no GPU kernel yet\n");
}

TEST(PlaceDevices, StrictListsEveryNodeTheGpuCannotRunAndPlacesNothing) {
  auto g = testing::parsed(kGraph);
  ASSERT_TRUE(g);
  std::ostringstream err;
  Status st = place(*g, "place-devices{strict=true,gpu-unsupported=exp}", err);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.message(), "pass 'place-devices': 2 node(s) cannot run on the GPU and strict=true "
                          "forbids the CPU fallback:\n"
                          "  node 'conv3d' (Conv): Conv: 3-D convolution has no GPU kernel yet\n"
                          "  node 'exp' (Exp): op 'exp' is listed in gpu-unsupported");
  EXPECT_EQ(err.str(), "");
}

TEST(PlaceDevices, WithoutAHookTheFakeGpuRunsEverything) {
  auto g = testing::parsed(kGraph);
  ASSERT_TRUE(g);
  Expected<bool> changed = testing::runPass(*g, "place-devices");
  ASSERT_TRUE(changed);
  EXPECT_TRUE(*changed);
  EXPECT_EQ(deviceOf(*g, "c3"), Device::gpu(0));
  EXPECT_EQ(deviceOf(*g, "r"), Device::cpu());
  Expected<bool> again = testing::runPass(*g, "place-devices");
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again);
}

TEST(PlaceDevices, SmallIntegerShapeArithmeticGoesToTheCpu) {
  auto g = testing::parsed(R"(
graph @shapes(%x: f32[2,3], %big: i64[65], %n: i64[2]) -> (a: ?, b: ?, c: ?, d: ?) {
  %one = constant i64[] dense<[1]>
  %s = shape(%x) : i64[2]
  %t = add(%s, %one) : i64[2]
  %u = add(%big, %one) : i64[65]
  %f = cast(%n) {to = f32} : f32[2]
  return %t, %u, %f, %s
}
)");
  ASSERT_TRUE(g);
  std::ostringstream err;
  ASSERT_TRUE(place(*g, "place-devices", err).isOk());
  EXPECT_EQ(deviceOf(*g, "s"), Device::cpu());
  EXPECT_EQ(deviceOf(*g, "t"), Device::cpu());
  EXPECT_EQ(deviceOf(*g, "u"), Device::gpu(0)); // 65 elements: not small
  EXPECT_EQ(deviceOf(*g, "f"), Device::gpu(0)); // a float result
  EXPECT_EQ(err.str(), "");
}

} // namespace
} // namespace dlc
