// Program validation and input checks: everything the GPU runtime refuses before it touches a
// device (runs everywhere).
#include <gtest/gtest.h>

#include "gpu_test_util.h"
#include "runtime/gpu_program.h"

namespace dlc::rt {
namespace {

using testing::ProgramBuilder;

/// y = vadd(a, b) with a fake module (validation never loads it).
ProgramBuilder vaddProgram() {
  ProgramBuilder b;
  BufferRef a = b.input("a", {2, 8});
  BufferRef x = b.input("b", {2, 8});
  BufferRef y = b.output("y", {2, 8});
  Module m;
  m.arch = "sm_90";
  m.ptx = ".version 8.0\n.target sm_90\n";
  m.kernels = {"vadd"};
  b.p.modules.push_back(m);
  b.launch(0, "vadd", 1, 16, {a, x, y});
  return b;
}

std::string validationError(const Program &p) {
  Status st = validateProgram(p);
  EXPECT_FALSE(st.isOk());
  return st.message();
}

TEST(ProgramCheck, ValidProgramPasses) {
  ProgramBuilder b = vaddProgram();
  Status st = validateProgram(b.p);
  EXPECT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(describeStep(b.p, 0), "step 0 (kernel 'vadd', from vadd_node)");
}

TEST(ProgramCheck, LaunchErrorsNameTheStep) {
  ProgramBuilder b = vaddProgram();
  std::get<LaunchStep>(b.p.steps[0]).module = 3;
  EXPECT_EQ(validationError(b.p),
            "step 0 (kernel 'vadd', from vadd_node): module 3 does not exist (the program has 1)");

  b = vaddProgram();
  std::get<LaunchStep>(b.p.steps[0]).kernel = "vsub";
  EXPECT_EQ(validationError(b.p), "step 0 (kernel 'vsub', from vadd_node): module 0 has no "
                                  "kernel 'vsub' (kernels vadd)");

  b = vaddProgram();
  std::get<LaunchStep>(b.p.steps[0]).block[1] = 128; // 16 x 128 = 2048 threads
  EXPECT_EQ(validationError(b.p), "step 0 (kernel 'vadd', from vadd_node): a block of 2048 "
                                  "threads exceeds CUDA's 1024");

  b = vaddProgram();
  std::get<LaunchStep>(b.p.steps[0]).grid[2] = 0;
  EXPECT_EQ(validationError(b.p), "step 0 (kernel 'vadd', from vadd_node): invalid launch shape "
                                  "grid 1x1x0, block 16x1x1");

  b = vaddProgram();
  std::get<LaunchStep>(b.p.steps[0]).args[2].offset = b.p.arenaBytes - 32;
  EXPECT_EQ(validationError(b.p),
            "step 0 (kernel 'vadd', from vadd_node), argument 2: bytes [736, 800) lie outside "
            "the arena of 768 bytes");

  b = vaddProgram();
  std::get<LaunchStep>(b.p.steps[0]).args[0] = {Space::kConstants, 0, 4};
  EXPECT_EQ(validationError(b.p),
            "step 0 (kernel 'vadd', from vadd_node), argument 0: bytes [0, 4) lie outside the "
            "constant pool of 0 bytes");
}

// A TMA descriptor argument must be one cuTensorMapEncodeTiled takes, over its buffer.
TEST(ProgramCheck, TensorMapErrorsNameTheStep) {
  auto withMap = [](auto edit) {
    ProgramBuilder b = vaddProgram();
    auto &l = std::get<LaunchStep>(b.p.steps[0]);
    TensorMapArg m; // input a (2 x 8 f32, 64 bytes) read as 2 rows of 16 f16
    m.buffer = l.args[0];
    m.dtype = DType::kF16;
    m.dims[0] = 16, m.dims[1] = 2, m.pitchBytes = 32, m.box[0] = 16, m.box[1] = 2;
    edit(m);
    l.tensorMaps.push_back(m);
    return b;
  };
  ProgramBuilder ok = withMap([](TensorMapArg &) {});
  EXPECT_TRUE(validateProgram(ok.p).isOk()) << validateProgram(ok.p).message();
  const std::string step = "step 0 (kernel 'vadd', from vadd_node), tensor map 0: ";
  EXPECT_EQ(validationError(withMap([](TensorMapArg &m) { m.dtype = DType::kF32; }).p),
            step + "element type f32 (f16, bf16 or i8)");
  EXPECT_EQ(validationError(withMap([](TensorMapArg &m) { m.box[0] = 12; }).p),
            step + "box 12 x 2 (inner 16 to 128 bytes in 16-byte steps, outer at most 256)");
  EXPECT_EQ(validationError(withMap([](TensorMapArg &m) { m.pitchBytes = 16; }).p),
            step + "dims 16 x 2 with rows 16 bytes apart (16-byte multiples, each row inside "
                   "its pitch)");
  EXPECT_EQ(validationError(withMap([](TensorMapArg &m) { m.dims[1] = 3; }).p),
            step + "16 x 3 elements, rows 32 bytes apart, exceed the buffer's 64 bytes");
}

TEST(ProgramCheck, ModuleAndTensorErrors) {
  ProgramBuilder b = vaddProgram();
  b.p.modules[0].ptx.clear();
  EXPECT_EQ(validationError(b.p), "module 0 (kernels vadd): holds neither a cubin nor PTX");

  b = vaddProgram();
  b.p.modules[0].arch = "hopper";
  EXPECT_EQ(validationError(b.p),
            "module 0 (kernels vadd): arch 'hopper' is not of the form sm_XX");

  b = vaddProgram();
  b.p.outputs[0].shape = {2, 9};
  EXPECT_EQ(validationError(b.p), "output 'y': f32[2,9] needs 72 bytes but its buffer holds 64");

  b = vaddProgram();
  b.p.inputs[1].name = "a";
  EXPECT_EQ(validationError(b.p), "input 'a': the name is used twice");

  b = vaddProgram();
  b.p.inputs[0].buffer.space = Space::kConstants;
  EXPECT_EQ(validationError(b.p), "input 'a': must live in the arena");
}

TEST(ProgramCheck, CopyAndHostSteps) {
  ProgramBuilder b = vaddProgram();
  BufferRef extra = b.arena(64);
  b.p.steps.push_back(
      CopyStep{b.p.outputs[0].buffer, BufferRef{Space::kArena, extra.offset, 32}, "copy_y"});
  EXPECT_EQ(validationError(b.p), "step 1 (device copy, from copy_y): copies 64 bytes into 32");

  b = vaddProgram();
  BufferRef t = b.arena(64);
  HostStep h;
  h.graphText = R"(graph @h(%t: f32[2,8]) -> (u: f32[2,8]) {
  %ax = constant i64[] dense<[1]>
  %u = cumsum(%t, %ax) : f32[2,8]
  return %u
})";
  h.inputs = {b.p.outputs[0].buffer};
  h.outputs = {t};
  h.origin = "cumsum_1";
  b.p.steps.push_back(h);
  Status ok = validateProgram(b.p);
  EXPECT_TRUE(ok.isOk()) << ok.message();

  auto &hs = std::get<HostStep>(b.p.steps[1]);
  hs.outputs[0].bytes = 32;
  EXPECT_EQ(validationError(b.p), "step 1 (host step, from cumsum_1), output 'u': f32[2,8] needs "
                                  "64 bytes but its buffer holds 32");
  hs.outputs[0].bytes = 64;
  hs.inputs.push_back(t);
  EXPECT_EQ(validationError(b.p), "step 1 (host step, from cumsum_1): the graph has 1 inputs but "
                                  "the step lists 2 buffers");
  hs.inputs.pop_back();
  hs.graphText = "graph @h(%t: f32[2,8]) -> (u: f32[2,8]) {\n  %u = relu(%t) : f32[2,8]\n  "
                 "%v = relu(%u) : f32[2,8]\n  return %v\n}";
  EXPECT_EQ(validationError(b.p), "step 1 (host step, from cumsum_1): the graph must hold "
                                  "exactly one node, it has 2");
  hs.graphText = "graph @h(%t: f32[N]) -> (u: f32[N]) {\n  %u = relu(%t) : f32[N]\n  return %u\n}";
  EXPECT_EQ(validationError(b.p), "step 1 (host step, from cumsum_1), input 't': type f32[N] is "
                                  "not static");
  hs.graphText = "graph @h(%t: f32[2,8]) -> (u: f32[2,8]) {\n  %u = relu(%t : f32[2,8]\n}";
  std::string parseError = validationError(b.p);
  EXPECT_EQ(parseError.rfind("step 1 (host step, from cumsum_1): host step 1:2:", 0), 0u)
      << parseError;
}

TEST(ProgramCheck, InputsAreCheckedByName) {
  ProgramBuilder b = vaddProgram();
  const Program &p = b.p;
  Tensor good = Tensor::zeros(DType::kF32, {2, 8});
  EXPECT_TRUE(checkInputs(p, {{"a", good}, {"b", good}}).isOk());

  Status st = checkInputs(p, {{"a", good}});
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_EQ(st.message(), "missing input 'b' (f32[2,8])");

  st = checkInputs(p, {{"a", good}, {"b", good}, {"c", good}});
  EXPECT_EQ(st.message(), "unknown input 'c'; the program's inputs are a: f32[2,8], b: f32[2,8]");

  st = checkInputs(p, {{"a", good}, {"b", Tensor::zeros(DType::kF16, {2, 8})}});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "input 'b': expected f32[2,8], got f16[2,8]");

  st = checkInputs(p, {{"a", Tensor::zeros(DType::kF32, {8, 2})}, {"b", good}});
  EXPECT_EQ(st.message(), "input 'a': expected f32[2,8], got f32[8,2]");

  st = checkInputs(p, {{"a", Tensor()}, {"b", good}});
  EXPECT_EQ(st.message(), "input 'a': the tensor is empty (no dtype, no data)");
}

TEST(ProgramCheck, CreateValidatesBeforeLookingForAGpu) {
  ProgramBuilder b = vaddProgram();
  b.p.modules[0].arch = "";
  auto gp = GpuProgram::create(std::make_shared<Program>(b.p));
  ASSERT_FALSE(gp);
  EXPECT_EQ(gp.status().message(), "module 0 (kernels vadd): arch '' is not of the form sm_XX");

  EXPECT_FALSE(GpuProgram::create(nullptr));

  // A valid program on a machine without a GPU: the driver's reason.
  if (auto driver = CudaDriver::get(); !driver) {
    auto none = GpuProgram::create(std::make_shared<Program>(vaddProgram().p));
    ASSERT_FALSE(none);
    EXPECT_EQ(none.status().message(), driver.status().message());
    EXPECT_EQ(none.status().code(), StatusCode::kUnavailable);
  }
}

} // namespace
} // namespace dlc::rt
