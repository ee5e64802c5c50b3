// The C API (dlc/dlc.h) on the CPU: packages made in the test (runtime/package.h) and loaded
// from memory or a file, sessions, bindings, dynamic dims, threads and every error a caller
// can cause, NULL arguments included. Results are compared with the reference executor.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "dlc/dlc.h"
#include "ir/parser.h"
#include "runtime/package.h"
#include "runtime/reference_executor.h"

namespace dlc {
namespace {

// y = relu(x @ w + b) and s = sum over the last axis; x: f32[N,16], N in 1..8.
std::string modelText() {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto dense = [&](int n) {
    std::string s;
    for (int i = 0; i < n; ++i)
      s += fmt::format("{}{}", i ? ", " : "", dist(rng));
    return "dense<[" + s + "]>";
  };
  return fmt::format(R"(graph @m(%x: f32[N,16]) -> (y: f32[N,8], s: f32[N,1]) {{
  %w = constant f32[16,8] {}
  %b = constant f32[8] {}
  %axes = constant i64[1] dense<[1]>
  %m = matmul(%x, %w) : f32[N,8]
  %a = add(%m, %b) : f32[N,8]
  %y = relu(%a) : f32[N,8]
  %s = reduce_sum(%y, %axes) {{keepdims = 1}} : f32[N,1]
  return %y, %s
}})",
                     dense(128), dense(8));
}

std::vector<uint8_t> packageBytes(int64_t lo = 1, int64_t hi = 8) {
  auto g = parseGraph(modelText());
  EXPECT_TRUE(g) << g.status().message();
  rt::Package p;
  p.dlcVersion = "0.1.0";
  for (const Value *v : (*g)->inputs())
    p.inputs.push_back({v->name(), v->type()});
  for (const Graph::Output &o : (*g)->outputs())
    p.outputs.push_back({o.name, o.value->type()});
  p.dimRanges = {{"N", lo, hi}};
  p.graph = std::shared_ptr<const Graph>(std::move(*g));
  auto bytes = rt::serializePackage(p);
  EXPECT_TRUE(bytes) << bytes.status().message();
  return bytes ? *bytes : std::vector<uint8_t>{};
}

dlc_model *load(const std::vector<uint8_t> &bytes) {
  dlc_model *m = nullptr;
  EXPECT_EQ(dlc_model_load_memory(bytes.data(), bytes.size(), "test", &m), DLC_OK)
      << dlc_last_error();
  return m;
}

struct HostTensor {
  std::vector<float> data;
  std::vector<int64_t> shape;
  DLTensor view() {
    DLTensor t{};
    t.data = data.data();
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = {kDLFloat, 32, 1};
    t.shape = shape.data();
    return t;
  }
};

HostTensor randomInput(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  HostTensor t{std::vector<float>(static_cast<size_t>(n * 16)), {n, 16}};
  for (float &v : t.data)
    v = dist(rng);
  return t;
}

/// The reference executor's outputs for `x`, by name.
std::map<std::string, Tensor> reference(const HostTensor &x) {
  static auto g = parseGraph(modelText());
  auto ex = ReferenceExecutor::create(**g);
  EXPECT_TRUE(ex);
  auto out = ex->run({{"x", Tensor::fromVector<float>(DType::kF32, x.shape, x.data)}});
  EXPECT_TRUE(out) << out.status().message();
  std::map<std::string, Tensor> byName;
  for (auto &o : *out)
    byName[o.name] = o.tensor;
  return byName;
}

void expectSame(const DLTensor &got, const Tensor &want, const std::string &what) {
  ASSERT_EQ(got.ndim, want.rank()) << what;
  for (int32_t i = 0; i < got.ndim; ++i)
    ASSERT_EQ(got.shape[i], want.shape()[static_cast<size_t>(i)]) << what;
  const auto *g = static_cast<const float *>(got.data);
  for (int64_t i = 0; i < want.numElements(); ++i)
    ASSERT_EQ(g[i], want.data<float>()[i]) << what << " element " << i;
}

TEST(CApi, NullArgumentsAreErrorsNotCrashes) {
  std::vector<uint8_t> bytes = packageBytes();
  dlc_model *m = load(bytes);
  ASSERT_TRUE(m);
  dlc_session *s = nullptr;
  ASSERT_EQ(dlc_session_create(m, DLC_DEVICE_CPU, &s), DLC_OK) << dlc_last_error();
  int32_t n = 0;
  int64_t lo = 0, hi = 0;
  const char *text = nullptr;
  dlc_tensor_info info{};
  const DLTensor *out = nullptr;
  dlc_model *m2 = nullptr;
  dlc_session *s2 = nullptr;
  dlc_device dev;
  const std::vector<std::pair<const char *, dlc_status>> calls = {
      {"load path", dlc_model_load(nullptr, &m2)},
      {"load out", dlc_model_load("x.so", nullptr)},
      {"memory data", dlc_model_load_memory(nullptr, 10, "x", &m2)},
      {"memory out", dlc_model_load_memory(bytes.data(), bytes.size(), "x", nullptr)},
      {"embedded out", dlc_model_load_embedded(nullptr)},
      {"version", dlc_model_compiler_version(nullptr, &text)},
      {"version out", dlc_model_compiler_version(m, nullptr)},
      {"num arches", dlc_model_num_arches(nullptr, &n)},
      {"arch", dlc_model_arch(m, 0, &text)}, // no arches: index 0 is out of range
      {"num inputs", dlc_model_num_inputs(nullptr, &n)},
      {"num outputs", dlc_model_num_outputs(m, nullptr)},
      {"input", dlc_model_input(m, 5, &info)},
      {"input out", dlc_model_input(m, 0, nullptr)},
      {"output", dlc_model_output(nullptr, 0, &info)},
      {"output index", dlc_model_output(m, -1, &info)},
      {"dim range", dlc_model_dim_range(m, nullptr, &lo, &hi)},
      {"dim range name", dlc_model_dim_range(m, "Q", &lo, &hi)},
      {"session model", dlc_session_create(nullptr, DLC_DEVICE_CPU, &s2)},
      {"session out", dlc_session_create(m, DLC_DEVICE_CPU, nullptr)},
      {"session device", dlc_session_create(m, static_cast<dlc_device>(9), &s2)},
      {"device", dlc_session_device(nullptr, &dev)},
      {"set input session", dlc_session_set_input(nullptr, "x", nullptr)},
      {"set input name", dlc_session_set_input(s, nullptr, nullptr)},
      {"set input tensor", dlc_session_set_input(s, "x", nullptr)},
      {"set output", dlc_session_set_output(s, "y", nullptr)},
      {"run", dlc_session_run(nullptr)},
      {"run unbound", dlc_session_run(s)},
      {"run async", dlc_session_run_async(s, nullptr)},
      {"get output", dlc_session_get_output(s, nullptr, &out)},
      {"get output out", dlc_session_get_output(s, "y", nullptr)},
      {"get output before run", dlc_session_get_output(s, "y", &out)},
  };
  for (const auto &[what, status] : calls) {
    EXPECT_NE(status, DLC_OK) << what;
    EXPECT_STRNE(dlc_last_error(), "") << what;
  }
  EXPECT_EQ(m2, nullptr);
  EXPECT_EQ(s2, nullptr);
  dlc_session_free(nullptr); // no-ops
  dlc_model_free(nullptr);
  dlc_session_free(s);
  dlc_model_free(m);
  EXPECT_STREQ(dlc_status_name(DLC_ERROR_CORRUPT), "DLC_ERROR_CORRUPT");
}

TEST(CApi, InterfaceQueries) {
  dlc_model *m = load(packageBytes(2, 6));
  ASSERT_TRUE(m);
  const char *version = nullptr;
  ASSERT_EQ(dlc_model_compiler_version(m, &version), DLC_OK);
  EXPECT_STREQ(version, "0.1.0");
  EXPECT_STRNE(dlc_version(), "");
  int32_t n = -1;
  ASSERT_EQ(dlc_model_num_arches(m, &n), DLC_OK);
  EXPECT_EQ(n, 0);
  ASSERT_EQ(dlc_model_num_inputs(m, &n), DLC_OK);
  EXPECT_EQ(n, 1);
  dlc_tensor_info info{};
  ASSERT_EQ(dlc_model_input(m, 0, &info), DLC_OK);
  EXPECT_STREQ(info.name, "x");
  EXPECT_EQ(info.dtype.code, kDLFloat);
  EXPECT_EQ(info.dtype.bits, 32);
  ASSERT_EQ(info.ndim, 2);
  EXPECT_EQ(info.shape[0], -1);
  EXPECT_STREQ(info.dim_names[0], "N");
  EXPECT_EQ(info.shape[1], 16);
  EXPECT_EQ(info.dim_names[1], nullptr);
  ASSERT_EQ(dlc_model_num_outputs(m, &n), DLC_OK);
  ASSERT_EQ(n, 2);
  ASSERT_EQ(dlc_model_output(m, 1, &info), DLC_OK);
  EXPECT_STREQ(info.name, "s");
  int64_t lo = 0, hi = 0;
  ASSERT_EQ(dlc_model_dim_range(m, "N", &lo, &hi), DLC_OK);
  EXPECT_EQ(lo, 2);
  EXPECT_EQ(hi, 6);
  dlc_model_free(m);
}

TEST(CApi, CpuRunsMatchTheReferenceWithinTheDimRange) {
  dlc_model *m = load(packageBytes(1, 8));
  ASSERT_TRUE(m);
  dlc_session *s = nullptr;
  ASSERT_EQ(dlc_session_create(m, DLC_DEVICE_CPU, &s), DLC_OK) << dlc_last_error();
  dlc_device where;
  ASSERT_EQ(dlc_session_device(s, &where), DLC_OK);
  EXPECT_EQ(where, DLC_DEVICE_CPU);
  for (int64_t n : {1, 5, 8}) {
    HostTensor x = randomInput(n, 10 + static_cast<uint32_t>(n));
    DLTensor xv = x.view();
    // y bound to caller memory, s kept by the session.
    HostTensor y{std::vector<float>(static_cast<size_t>(n * 8), -9.0f), {n, 8}};
    DLTensor yv = y.view();
    ASSERT_EQ(dlc_session_set_input(s, "x", &xv), DLC_OK) << dlc_last_error();
    ASSERT_EQ(dlc_session_set_output(s, "y", &yv), DLC_OK) << dlc_last_error();
    ASSERT_EQ(dlc_session_run(s), DLC_OK) << dlc_last_error();
    auto want = reference(x);
    const DLTensor *got = nullptr;
    ASSERT_EQ(dlc_session_get_output(s, "y", &got), DLC_OK);
    EXPECT_EQ(got->data, y.data.data()) << "a bound output is the caller's tensor";
    expectSame(*got, want.at("y"), "y");
    ASSERT_EQ(dlc_session_get_output(s, "s", &got), DLC_OK);
    expectSame(*got, want.at("s"), "s");
  }
  // Outside the range: a clear error, and the session still works afterwards.
  HostTensor big = randomInput(9, 1);
  DLTensor bv = big.view();
  ASSERT_EQ(dlc_session_set_input(s, "x", &bv), DLC_OK);
  EXPECT_EQ(dlc_session_run(s), DLC_ERROR_OUT_OF_RANGE);
  EXPECT_NE(std::string(dlc_last_error()).find("'N' = 9 is outside the range 1..8"),
            std::string::npos)
      << dlc_last_error();
  dlc_session_free(s);
  dlc_model_free(m);
}

TEST(CApi, TakenOutputsBelongToTheCaller) {
  dlc_model *m = load(packageBytes(1, 8));
  ASSERT_TRUE(m);
  dlc_session *s = nullptr;
  ASSERT_EQ(dlc_session_create(m, DLC_DEVICE_CPU, &s), DLC_OK) << dlc_last_error();
  HostTensor x = randomInput(3, 77);
  DLTensor xv = x.view();
  HostTensor y{std::vector<float>(3 * 8, -9.0f), {3, 8}};
  DLTensor yv = y.view();
  ASSERT_EQ(dlc_session_set_input(s, "x", &xv), DLC_OK) << dlc_last_error();
  ASSERT_EQ(dlc_session_set_output(s, "y", &yv), DLC_OK) << dlc_last_error();
  ASSERT_EQ(dlc_session_run(s), DLC_OK) << dlc_last_error();
  auto want = reference(x);
  DLManagedTensor *taken = nullptr;
  ASSERT_EQ(dlc_session_take_output(s, "s", &taken), DLC_OK) << dlc_last_error();
  ASSERT_NE(taken, nullptr);
  EXPECT_EQ(taken->dl_tensor.device.device_type, kDLCPU);
  // The session forgets it: asked again, it is gone; a bound output cannot be taken.
  DLManagedTensor *again = nullptr;
  EXPECT_EQ(dlc_session_take_output(s, "s", &again), DLC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(again, nullptr);
  EXPECT_EQ(dlc_session_take_output(s, "y", &again), DLC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(dlc_session_take_output(s, "nope", &again), DLC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dlc_last_error()).find("'nope'"), std::string::npos);
  // It outlives the next run and the session.
  ASSERT_EQ(dlc_session_run(s), DLC_OK) << dlc_last_error();
  dlc_session_free(s);
  dlc_model_free(m);
  expectSame(taken->dl_tensor, want.at("s"), "s");
  taken->deleter(taken);
}

TEST(CApi, WrongBindingsNameTheTensor) {
  dlc_model *m = load(packageBytes());
  ASSERT_TRUE(m);
  dlc_session *s = nullptr;
  ASSERT_EQ(dlc_session_create(m, DLC_DEVICE_CPU, &s), DLC_OK);
  HostTensor x = randomInput(2, 4);
  auto expectError = [&](DLTensor t, const char *name, const std::string &needle) {
    EXPECT_EQ(dlc_session_set_input(s, name, &t), DLC_ERROR_INVALID_ARGUMENT) << needle;
    EXPECT_NE(std::string(dlc_last_error()).find(needle), std::string::npos) << dlc_last_error();
  };
  DLTensor t = x.view();
  t.dtype = {kDLFloat, 16, 1};
  expectError(t, "x", "input 'x' must be f32");
  t = x.view();
  t.ndim = 1;
  expectError(t, "x", "must have rank 2");
  t = x.view();
  std::vector<int64_t> wrong = {2, 15};
  t.shape = wrong.data();
  expectError(t, "x", "dim 1 must be 16");
  t = x.view();
  expectError(t, "z", "no input 'z'; its inputs are 'x'");
  t = x.view();
  t.data = nullptr;
  expectError(t, "x", "NULL data");
  t = x.view();
  std::vector<int64_t> strides = {1, 2};
  t.strides = strides.data();
  expectError(t, "x", "not compact row-major");
  t = x.view();
  t.device = {kDLOpenCL, 0};
  expectError(t, "x", "device type");
  // A byte_offset (or size) no mapping can hold: refused, where the run used to segfault.
  t = x.view();
  t.byte_offset = uint64_t{1} << 62;
  expectError(t, "x", "lies past any address a process can map");
  t = x.view();
  t.byte_offset = ~uint64_t{0} - 8; // wraps the address
  expectError(t, "x", "lies past any address a process can map");
  // An output bound with the wrong shape for these inputs fails at run.
  t = x.view();
  ASSERT_EQ(dlc_session_set_input(s, "x", &t), DLC_OK);
  HostTensor y{std::vector<float>(24), {3, 8}};
  DLTensor yv = y.view();
  ASSERT_EQ(dlc_session_set_output(s, "y", &yv), DLC_OK);
  EXPECT_EQ(dlc_session_run(s), DLC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dlc_last_error()).find("output 'y' is f32[2,8]"), std::string::npos)
      << dlc_last_error();
  dlc_session_free(s);
  dlc_model_free(m);
}

TEST(CApi, SessionsKeepTheirModelAlive) {
  // Running a session after dlc_model_free read freed memory; the session now holds the model
  // (ASan checks the reads), and the model goes with the last session.
  dlc_model *m = load(packageBytes(1, 8));
  ASSERT_TRUE(m);
  dlc_session *a = nullptr, *b = nullptr;
  ASSERT_EQ(dlc_session_create(m, DLC_DEVICE_CPU, &a), DLC_OK) << dlc_last_error();
  ASSERT_EQ(dlc_session_create(m, DLC_DEVICE_CPU, &b), DLC_OK) << dlc_last_error();
  dlc_model_free(m);
  HostTensor x = randomInput(3, 5);
  auto want = reference(x);
  for (dlc_session *s : {a, b}) {
    DLTensor xv = x.view();
    ASSERT_EQ(dlc_session_set_input(s, "x", &xv), DLC_OK) << dlc_last_error();
    ASSERT_EQ(dlc_session_run(s), DLC_OK) << dlc_last_error();
    const DLTensor *y = nullptr;
    ASSERT_EQ(dlc_session_get_output(s, "y", &y), DLC_OK);
    expectSame(*y, want.at("y"), "y");
    dlc_session_free(s);
  }
  dlc_session_free(nullptr); // a no-op, as free(NULL)
}

TEST(CApi, TwoSessionsOnTwoThreads) {
  dlc_model *m = load(packageBytes());
  ASSERT_TRUE(m);
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      dlc_session *s = nullptr;
      if (dlc_session_create(m, DLC_DEVICE_CPU, &s) != DLC_OK) {
        errors[t] = dlc_last_error();
        return;
      }
      for (int run = 0; run < 20 && errors[t].empty(); ++run) {
        HostTensor x = randomInput(1 + (run + t) % 8, static_cast<uint32_t>(100 * t + run));
        DLTensor xv = x.view();
        const DLTensor *y = nullptr;
        if (dlc_session_set_input(s, "x", &xv) != DLC_OK || dlc_session_run(s) != DLC_OK ||
            dlc_session_get_output(s, "y", &y) != DLC_OK) {
          errors[t] = dlc_last_error();
          break;
        }
        Tensor want = reference(x).at("y");
        for (int64_t i = 0; i < want.numElements(); ++i)
          if (static_cast<const float *>(y->data)[i] != want.data<float>()[i])
            errors[t] = fmt::format("run {} element {} differs", run, i);
      }
      dlc_session_free(s);
    });
  for (auto &th : threads)
    th.join();
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  dlc_model_free(m);
}

TEST(CApi, DamagedPackagesAreRefused) {
  const std::vector<uint8_t> good = packageBytes();
  ASSERT_GT(good.size(), 64u);
  dlc_model *m = nullptr;
  // Truncated anywhere.
  for (size_t cut : {size_t{0}, size_t{7}, size_t{31}, good.size() / 2, good.size() - 1}) {
    EXPECT_EQ(dlc_model_load_memory(good.data(), cut, "cut", &m), DLC_ERROR_CORRUPT) << cut;
    EXPECT_EQ(m, nullptr);
  }
  // One byte of the payload altered: the checksum catches it.
  std::vector<uint8_t> altered = good;
  altered[altered.size() - 20] ^= 0x40;
  EXPECT_EQ(dlc_model_load_memory(altered.data(), altered.size(), "altered", &m),
            DLC_ERROR_CORRUPT);
  EXPECT_NE(std::string(dlc_last_error()).find("checksum"), std::string::npos) << dlc_last_error();
  // Another format version: incompatible, and the message says both versions.
  std::vector<uint8_t> future = good;
  future[8] = static_cast<uint8_t>(rt::kPackageFormatVersion + 1); // u32 after the 8-byte magic
  EXPECT_EQ(dlc_model_load_memory(future.data(), future.size(), "future", &m),
            DLC_ERROR_INCOMPATIBLE)
      << dlc_last_error();
  // Not a package at all.
  const char junk[] = "not a model at all, just some bytes";
  EXPECT_EQ(dlc_model_load_memory(junk, sizeof junk, "junk", &m), DLC_ERROR_CORRUPT);
  // Random byte flips never crash: each load fails cleanly or (rarely) succeeds.
  std::mt19937 rng(5);
  for (int i = 0; i < 200; ++i) {
    std::vector<uint8_t> b = good;
    b[rng() % b.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
    if (dlc_model_load_memory(b.data(), b.size(), "flipped", &m) == DLC_OK)
      dlc_model_free(m);
    m = nullptr;
  }
}

TEST(CApi, FilesAndTheEmbeddedModel) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("dlc-capi-{}", ::getpid());
  fs::create_directories(dir);
  const std::vector<uint8_t> bytes = packageBytes();
  const fs::path raw = dir / "model.dlcpkg";
  std::ofstream(raw, std::ios::binary)
      .write(reinterpret_cast<const char *>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  dlc_model *m = nullptr;
  EXPECT_EQ(dlc_model_load(raw.c_str(), &m), DLC_OK) << dlc_last_error();
  dlc_model_free(m);
  m = nullptr;
  EXPECT_EQ(dlc_model_load((dir / "missing.so").c_str(), &m), DLC_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(dlc_last_error()).find("missing.so"), std::string::npos);
  // An ELF file without a package section (this test binary's own libc will do).
  EXPECT_EQ(dlc_model_load("/proc/self/exe", &m), DLC_ERROR_NOT_FOUND) << dlc_last_error();
  EXPECT_NE(std::string(dlc_last_error()).find("no .dlc_package section"), std::string::npos);
  // This test binary is not a model library.
  EXPECT_EQ(dlc_model_load_embedded(&m), DLC_ERROR_NOT_FOUND);
  // A directory said "out of host memory"; it is named for what it is.
  EXPECT_NE(dlc_model_load(dir.c_str(), &m), DLC_OK);
  EXPECT_EQ(std::string(dlc_last_error()), dir.string() + ": is a directory");
  fs::remove_all(dir);
}

TEST(CApi, AGpuByNumberMustExist) {
  dlc_model *m = load(packageBytes());
  ASSERT_TRUE(m);
  dlc_session *s = nullptr;
  EXPECT_EQ(dlc_session_create_on_gpu(m, DLC_DEVICE_GPU, -1, &s), DLC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(s, nullptr);
  // No machine here has 4096 GPUs: refused, also with DLC_DEVICE_AUTO (no CPU fallback when a
  // GPU is named), with the driver's reason.
  EXPECT_EQ(dlc_session_create_on_gpu(m, DLC_DEVICE_AUTO, 4096, &s), DLC_ERROR_UNAVAILABLE);
  EXPECT_EQ(s, nullptr);
  const std::string why = dlc_last_error();
  EXPECT_TRUE(why.find("gpu:4096") != std::string::npos || why.find("no CUDA") != std::string::npos)
      << why;
  // The CPU ignores the number.
  ASSERT_EQ(dlc_session_create_on_gpu(m, DLC_DEVICE_CPU, 4096, &s), DLC_OK) << dlc_last_error();
  dlc_session_free(s);
  dlc_model_free(m);
}

TEST(CApi, GpuWithoutAGpuIsUnavailable) {
  dlc_model *m = load(packageBytes());
  ASSERT_TRUE(m);
  dlc_session *s = nullptr;
  // The package has no GPU program, so a GPU session is refused whether or not there is a GPU.
  EXPECT_EQ(dlc_session_create(m, DLC_DEVICE_GPU, &s), DLC_ERROR_UNAVAILABLE);
  EXPECT_EQ(s, nullptr);
  // Auto falls back to the CPU.
  ASSERT_EQ(dlc_session_create(m, DLC_DEVICE_AUTO, &s), DLC_OK) << dlc_last_error();
  dlc_device where;
  ASSERT_EQ(dlc_session_device(s, &where), DLC_OK);
  EXPECT_EQ(where, DLC_DEVICE_CPU);
  dlc_session_free(s);
  dlc_model_free(m);
}

TEST(CApi, NpyArraysRoundTripThroughDlcsReader) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / fmt::format("dlc_capi_npy_{}", getpid());
  fs::create_directories(dir);
  std::string path = (dir / "a.npy").string();
  std::vector<int16_t> data = {1, -2, 3, -4, 5, -6};
  std::vector<int64_t> shape = {2, 3};
  DLTensor t{};
  t.data = data.data();
  t.device = {kDLCPU, 0};
  t.ndim = 2;
  t.dtype = {kDLInt, 16, 1};
  t.shape = shape.data();
  ASSERT_EQ(dlc_array_write_npy(path.c_str(), &t), DLC_OK) << dlc_last_error();
  dlc_array *a = nullptr;
  ASSERT_EQ(dlc_array_read_npy(path.c_str(), &a), DLC_OK) << dlc_last_error();
  const DLTensor *back = dlc_array_tensor(a);
  ASSERT_EQ(back->ndim, 2);
  EXPECT_EQ(back->shape[0], 2);
  EXPECT_EQ(back->shape[1], 3);
  EXPECT_EQ(back->dtype.code, kDLInt);
  EXPECT_EQ(back->dtype.bits, 16);
  EXPECT_EQ(std::memcmp(back->data, data.data(), data.size() * 2), 0);
  dlc_array_free(a);

  // What cannot be written is refused, naming the file.
  t.device = {kDLCUDA, 0};
  EXPECT_EQ(dlc_array_write_npy(path.c_str(), &t), DLC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dlc_last_error()).find("host memory"), std::string::npos);
  t.device = {kDLCPU, 0};
  t.dtype = {kDLFloat, 8, 1};
  EXPECT_EQ(dlc_array_write_npy(path.c_str(), &t), DLC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dlc_last_error()).find("no dtype for DLPack type float8"),
            std::string::npos)
      << dlc_last_error();
  t.dtype = {kDLInt, 16, 1};
  std::vector<int64_t> strides = {1, 2}; // column-major
  t.strides = strides.data();
  EXPECT_EQ(dlc_array_write_npy(path.c_str(), &t), DLC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dlc_last_error()).find("not compact"), std::string::npos);
  // Reading: the messages are readNpy's (`dlc run` says the same).
  std::ofstream(dir / "bad.npy") << "not numpy";
  EXPECT_EQ(dlc_array_read_npy((dir / "bad.npy").c_str(), &a), DLC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(a, nullptr);
  EXPECT_EQ(std::string(dlc_last_error()),
            (dir / "bad.npy").string() + ": not a .npy file (it does not start with \\x93NUMPY)");
  EXPECT_EQ(dlc_array_read_npy(dir.c_str(), &a), DLC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(dlc_last_error()), dir.string() + ": is a directory");
  EXPECT_EQ(dlc_array_read_npy(nullptr, &a), DLC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(dlc_array_tensor(nullptr), nullptr);
  dlc_array_free(nullptr);
  fs::remove_all(dir);
}

} // namespace
} // namespace dlc
