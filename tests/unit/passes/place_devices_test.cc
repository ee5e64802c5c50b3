// place-devices with a fake GPU backend answering through the gpuSupport hook.
#include <gtest/gtest.h>

#include "ir/annotations/placement.h"
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

// --- Device specs (ir/annotations/placement.h) ------------------------------------------------

DeviceSpec spec(std::string_view text) {
  Expected<DeviceSpec> s = parseDeviceSpec(text);
  EXPECT_TRUE(s) << text << ": " << s.status().message();
  return s ? *s : DeviceSpec{};
}

std::string specError(std::string_view text) {
  Expected<DeviceSpec> s = parseDeviceSpec(text);
  return s ? "parsed as " + s->str() : s.status().message();
}

TEST(DeviceSpec, ParsesFullPartialAndLegacyForms) {
  EXPECT_EQ(spec("/job:localhost/replica:0/task:0/device:GPU:0").str(), "/device:GPU:0");
  EXPECT_EQ(spec("/device:CPU:0").str(), "/device:CPU:0");
  EXPECT_EQ(spec("/device:GPU:1").str(), "/device:GPU:1");
  EXPECT_EQ(spec("/gpu:0").str(), "/device:GPU:0");
  EXPECT_EQ(spec("/cpu:0").str(), "/device:CPU:0");
  EXPECT_EQ(spec("/GPU:2").str(), "/device:GPU:2");
  EXPECT_EQ(spec("/device:gpu:1").str(), "/device:GPU:1"); // the type is case-insensitive
  EXPECT_EQ(spec("/device:GPU:*").str(), "/device:GPU:*");
  EXPECT_EQ(spec("/device:GPU").str(), "/device:GPU:*");
  EXPECT_EQ(spec("/device:TPU:0").str(), "/device:TPU:0"); // parses; no such device here
  // Job, replica and task are checked and ignored.
  EXPECT_EQ(spec("/job:worker/replica:3/task:7/device:GPU:0").str(), "/device:GPU:0");
  EXPECT_TRUE(spec("/job:localhost").isEmpty());
  EXPECT_TRUE(spec("").isEmpty());
}

TEST(DeviceSpec, MatchesDevices) {
  EXPECT_TRUE(spec("/device:GPU:1").matches(Device::gpu(1)));
  EXPECT_FALSE(spec("/device:GPU:1").matches(Device::gpu(0)));
  EXPECT_TRUE(spec("/gpu:*").matches(Device::gpu(3)));
  EXPECT_FALSE(spec("/gpu:*").matches(Device::cpu()));
  EXPECT_TRUE(spec("/cpu:0").matches(Device::cpu()));
  EXPECT_FALSE(spec("/cpu:1").matches(Device::cpu()));
  EXPECT_FALSE(spec("/device:TPU:0").matches(Device::gpu(0)));
  EXPECT_EQ(tfDeviceName(Device::gpu(2)), "/device:GPU:2");
}

TEST(DeviceSpec, MalformedSpecsSayWhatIsWrong) {
  EXPECT_EQ(specError("gpu:0"),
            "malformed device specification 'gpu:0': expected '/' before each field");
  EXPECT_EQ(specError("/device:GPU:x"),
            "malformed device specification '/device:GPU:x': device index 'x' is not a number");
  EXPECT_EQ(specError("/gpu"), "malformed device specification '/gpu': field 'gpu' is not "
                               "NAME:VALUE");
  EXPECT_EQ(specError("/tpu:0"),
            "malformed device specification '/tpu:0': unknown field 'tpu' (expected job, "
            "replica, task, device, or the legacy cpu and gpu)");
  EXPECT_EQ(specError("/device:GPU:0/device:CPU:0"),
            "malformed device specification '/device:GPU:0/device:CPU:0': the device is given "
            "twice");
  EXPECT_EQ(specError("/job:localhost/task:a"),
            "malformed device specification '/job:localhost/task:a': task 'a' is not a number");
  EXPECT_EQ(specError("/device:GPU:0/"),
            "malformed device specification '/device:GPU:0/': field '' is not NAME:VALUE");
}

// --- Requests, colocation groups and reference edges ---------------------------------------

std::string placeError(Graph &g, const std::string &pipeline) {
  std::ostringstream err;
  Status st = place(g, pipeline, err);
  return st.isOk() ? "ok" : st.message();
}

std::string reasonOf(const Graph &g, std::string_view value) {
  const Attribute *a = g.findValue(value)->producer()->findAttr(kPlaceReasonAttr);
  return a ? a->s() : "";
}

std::optional<int64_t> groupOf(const Graph &g, std::string_view value) {
  const Attribute *a = g.findValue(value)->producer()->findAttr(kPlaceGroupAttr);
  return a ? std::optional<int64_t>(a->i()) : std::nullopt;
}

constexpr const char *kRequests = R"(
graph @requests(%x: f32[4,8]) -> (a: ?, b: ?, c: ?) {
  %a = relu(%x) {place.request = "/device:GPU:1"} : f32[4,8] loc("a")
  %b = exp(%x) {place.request = "/job:localhost/replica:0/task:0/device:CPU:0"} : f32[4,8] loc("b")
  %c = neg(%x) {place.request = "/gpu:0"} : f32[4,8] loc("c")
  return %a, %b, %c
}
)";

TEST(PlaceDevices, HonoursRequestsForDevicesThatExist) {
  auto g = testing::parsed(kRequests);
  ASSERT_TRUE(g);
  std::ostringstream err;
  ASSERT_TRUE(place(*g, "place-devices{gpus=2}", err).isOk());
  EXPECT_EQ(deviceOf(*g, "a"), Device::gpu(1));
  EXPECT_EQ(deviceOf(*g, "b"), Device::cpu());
  EXPECT_EQ(deviceOf(*g, "c"), Device::gpu(0));
  EXPECT_EQ(reasonOf(*g, "a"), "honours its request '/device:GPU:1'");
  EXPECT_EQ(err.str(), "");
}

TEST(PlaceDevices, SoftPlacementDropsARequestForADeviceThatDoesNotExist) {
  auto g = testing::parsed(kRequests);
  ASSERT_TRUE(g);
  std::ostringstream err;
  ASSERT_TRUE(place(*g, "place-devices", err).isOk());
  EXPECT_EQ(deviceOf(*g, "a"), Device::gpu(0));
  EXPECT_EQ(err.str(), "warning: [place-devices] node 'a' (Relu): requested '/device:GPU:1', "
                       "placed on gpu:0: no devices matching that specification are registered "
                       "in this process; available devices: /device:CPU:0, /device:GPU:0\n");
}

TEST(PlaceDevices, StrictReportsEveryUnmetRequestAtOnce) {
  auto g = testing::parsed(kRequests);
  ASSERT_TRUE(g);
  EXPECT_EQ(placeError(*g, "place-devices{strict=true,gpu-unsupported=neg}"),
            "pass 'place-devices': 2 placement constraint(s) cannot be met and strict=true "
            "forbids soft placement:\n"
            "  Cannot assign a device for operation 'a': Could not satisfy explicit device "
            "specification '/device:GPU:1' because no devices matching that specification are "
            "registered in this process; available devices: /device:CPU:0, /device:GPU:0\n"
            "  Cannot assign a device for operation 'c': Could not satisfy explicit device "
            "specification '/gpu:0' because no supported kernel for GPU devices is available: "
            "op 'neg' is listed in gpu-unsupported");
}

TEST(PlaceDevices, MalformedRequestNamesTheNode) {
  auto g = testing::parsed(R"(
graph @bad(%x: f32[4]) -> (a: ?) {
  %a = relu(%x) {place.request = "/device:GPU:zero"} : f32[4] loc("a")
  return %a
}
)");
  ASSERT_TRUE(g);
  EXPECT_EQ(placeError(*g, "place-devices"),
            "pass 'place-devices': node 'a' (Relu): malformed device specification "
            "'/device:GPU:zero': device index 'zero' is not a number");
}

constexpr const char *kColocated = R"(
graph @colocated(%x: f32[4,8]) -> (a: ?, v: ?, i: ?, z: ?) {
  %k = constant i64[1] dense<[2]>
  %a = relu(%x) {place.request = "/device:GPU:0"} : f32[4,8] loc("a")
  %v, %i = top_k(%a, %k) {axis = -1, place.colocate = ["a"]} : f32[4,2], i64[4,2] loc("t")
  %z = exp(%x) {place.colocate = ["k", "t"]} : f32[4,8] loc("z")
  %w = neg(%x) : f32[4,8] loc("w")
  return %a, %v, %i, %z
}
)";

TEST(PlaceDevices, AColocationGroupGoesWhereEveryMemberCanRun) {
  auto g = testing::parsed(kColocated);
  ASSERT_TRUE(g);
  std::ostringstream err, log;
  auto p = parsePipeline("place-devices{gpu-unsupported=top_k}");
  ASSERT_TRUE(p);
  PipelineOptions opts;
  opts.err = &err;
  opts.debugOnly = {"place-devices"};
  ASSERT_TRUE(runPipeline(*g, *p, opts).isOk());
  // a, t and z form one group (z names the constant k too: no constraint); top_k has no GPU
  // kernel, so the group goes to the CPU and a's request is dropped with a warning.
  EXPECT_EQ(deviceOf(*g, "a"), Device::cpu());
  EXPECT_EQ(deviceOf(*g, "v"), Device::cpu());
  EXPECT_EQ(deviceOf(*g, "z"), Device::cpu());
  EXPECT_EQ(deviceOf(*g, "w"), Device::gpu(0));
  EXPECT_EQ(groupOf(*g, "a"), 0);
  EXPECT_EQ(groupOf(*g, "z"), 0);
  EXPECT_EQ(groupOf(*g, "w"), std::nullopt);
  EXPECT_NE(err.str().find("[place-devices] node 'z' (Exp): place.colocate names 'k', which is "
                           "no node of the graph"),
            std::string::npos)
      << err.str();
  EXPECT_NE(err.str().find("warning: [place-devices] node 'a' (Relu): requested '/device:GPU:0', "
                           "placed on cpu: 't' (TopK) is colocated with it and has no supported "
                           "kernel for GPU devices: op 'top_k' is listed in gpu-unsupported\n"
                           "warning: [place-devices] node 't' (TopK): runs on cpu: op 'top_k' "
                           "is listed in gpu-unsupported\n"),
            std::string::npos)
      << err.str();
}

TEST(PlaceDevices, StrictNamesTheColocatedNodesAndTheConstraint) {
  auto g = testing::parsed(kColocated);
  ASSERT_TRUE(g);
  EXPECT_EQ(placeError(*g, "place-devices{strict=true,gpu-unsupported=top_k}"),
            "pass 'place-devices': 2 placement constraint(s) cannot be met and strict=true "
            "forbids soft placement:\n"
            "  Cannot colocate nodes 'a' and 't': Could not satisfy explicit device "
            "specification '/device:GPU:0' of 'a' because 't' (TopK) is colocated with it and "
            "has no supported kernel for GPU devices: op 'top_k' is listed in gpu-unsupported; "
            "colocation group: 'a', 't', 'z' (place.colocate of 't' names 'a'; place.colocate "
            "of 'z' names 't')\n"
            "  node 't' (TopK): op 'top_k' is listed in gpu-unsupported");
}

TEST(PlaceDevices, ConflictingRequestsInAGroup) {
  auto g = testing::parsed(R"(
graph @conflict(%x: f32[4]) -> (a: ?, b: ?) {
  %a = relu(%x) {place.request = "/device:GPU:0"} : f32[4] loc("a")
  %b = exp(%x) {place.colocate = ["a"], place.request = "/cpu:0"} : f32[4] loc("b")
  return %a, %b
}
)");
  ASSERT_TRUE(g);
  auto copy = testing::parsed(printGraph(*g));
  EXPECT_EQ(placeError(*g, "place-devices{strict=true}"),
            "pass 'place-devices': Cannot colocate nodes 'a' and 'b': Cannot merge devices with "
            "incompatible types: '/device:GPU:0' and '/device:CPU:0'; colocation group: 'a', "
            "'b' (place.colocate of 'b' names 'a')");
  std::ostringstream err;
  ASSERT_TRUE(place(*copy, "place-devices", err).isOk());
  EXPECT_EQ(deviceOf(*copy, "a"), Device::gpu(0));
  EXPECT_EQ(deviceOf(*copy, "b"), Device::gpu(0));
  EXPECT_EQ(err.str(), "warning: [place-devices] node 'b' (Exp): requested '/cpu:0', placed on "
                       "gpu:0: it is colocated with 'a', which requests '/device:GPU:0' (Cannot "
                       "merge devices with incompatible types: '/device:GPU:0' and "
                       "'/device:CPU:0')\n");
}

TEST(PlaceDevices, AReferenceEdgePullsTheConsumerToItsProducer) {
  auto g = testing::parsed(R"(
graph @refs(%x: f32[4]) -> (u: ?, y: ?) {
  %c = constant f32[4] dense<[1.0, 2.0, 3.0, 4.0]>
  %v = relu(%x) : f32[4] @cpu loc("var")
  %u = add(%v, %x) {place.ref_inputs = [0]} : f32[4] loc("assign")
  %y = add(%c, %x) {place.ref_inputs = [0]} : f32[4] loc("from_const")
  return %u, %y
}
)");
  ASSERT_TRUE(g);
  std::ostringstream err;
  ASSERT_TRUE(place(*g, "place-devices", err).isOk());
  EXPECT_EQ(deviceOf(*g, "u"), Device::cpu());
  EXPECT_EQ(reasonOf(*g, "u"), "colocated with 'var', placed on cpu before");
  EXPECT_EQ(groupOf(*g, "u"), 0);
  EXPECT_EQ(deviceOf(*g, "y"), Device::gpu(0)); // a constant's edge constrains nothing
  EXPECT_EQ(err.str(), "");
}

TEST(PlaceDevices, RefInputIndexOutOfRangeIsAnError) {
  auto g = testing::parsed(R"(
graph @refs(%x: f32[4]) -> (u: ?) {
  %u = relu(%x) {place.ref_inputs = [1]} : f32[4] loc("u")
  return %u
}
)");
  ASSERT_TRUE(g);
  EXPECT_EQ(placeError(*g, "place-devices"),
            "pass 'place-devices': node 'u' (Relu): annotation 'place.ref_inputs' names input 1, "
            "but the node has 1 input(s)");
}

TEST(PlaceDevices, NodesReadingOnlyConstantsFollowTheirConsumer) {
  auto g = testing::parsed(R"(
graph @gen(%x: f32[5]) -> (y: ?, s: ?, m: ?) {
  %c0 = constant i64[] dense<[0]>
  %c5 = constant i64[] dense<[5]>
  %c1 = constant i64[] dense<[1]>
  %r = range(%c0, %c5, %c1) : i64[5] loc("range")
  %f = cast(%r) {to = f32} : f32[5] loc("cast")
  %y = add(%f, %x) : f32[5] loc("y")
  %q = range(%c0, %c5, %c1) : i64[5] loc("range2")
  %s = add(%q, %c1) : i64[5] loc("shape_math")
  %n = random_uniform() {shape = [5]} : f32[5] loc("noise")
  %m = mul(%n, %x) : f32[5] @cpu loc("pinned")
  return %y, %s, %m
}
)");
  ASSERT_TRUE(g);
  std::ostringstream err;
  ASSERT_TRUE(place(*g, "place-devices", err).isOk());
  EXPECT_EQ(deviceOf(*g, "r"), Device::gpu(0)); // with its consumer, not as shape arithmetic
  EXPECT_EQ(reasonOf(*g, "r"), "follows its consumer 'cast'");
  EXPECT_EQ(deviceOf(*g, "q"), Device::cpu()); // its consumer is shape arithmetic
  EXPECT_EQ(deviceOf(*g, "s"), Device::cpu());
  EXPECT_EQ(deviceOf(*g, "n"), Device::cpu());
  EXPECT_EQ(reasonOf(*g, "n"), "follows its consumer 'pinned'");
}

TEST(PlaceDevices, RunningAgainChangesNothing) {
  auto g = testing::parsed(kColocated);
  ASSERT_TRUE(g);
  std::ostringstream err;
  ASSERT_TRUE(place(*g, "place-devices{gpu-unsupported=top_k}", err).isOk());
  const std::string once = printGraph(*g);
  Expected<bool> again = testing::runPass(*g, "place-devices");
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again);
  EXPECT_EQ(printGraph(*g), once);
}

} // namespace
} // namespace dlc
