// The hand-made package of the package tests (package_test.cc): a graph with symbolic dims
// and large constants, a program with every step kind (and TMA descriptors), and the helpers
// that write, read, checksum and compare them.
#pragma once

#include <gtest/gtest.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstring>
#include <random>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/tensor_text.h"
#include "runtime/package.h"
#include "runtime/package_generated.h"

namespace dlc::rt::package_testing {

namespace fbs = ::dlc::rt::fb;

inline Tensor randomF32(std::vector<int64_t> shape, uint32_t seed) {
  Tensor t = Tensor::zeros(DType::kF32, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.mutableData<float>()[i] = dist(rng);
  return t;
}

// A graph with symbolic dims, large constants (one used twice, one only inside an If branch,
// one a tensor attribute) and small inline ones. Its elided constants are supplied by name.
inline const char *const kModel =
    R"(graph @model(%x: f32[N,32], %c: bool[]) -> (y: f32[N,64], z: f32[N,64]) {
  %w = constant f32[32,64] dense<hash:"w">
  %b = constant f32[64] dense<hash:"b">
  %s = constant f32[2] dense<[1.0, 2.0]>
  %h = matmul(%x, %w) {note.table = f32[4,8] dense<hash:"t">} : f32[N,64]
  %y = add(%h, %b) : f32[N,64]
  %z = if(%c, %y) {else_branch = graph @else(%a: f32[N,64]) -> (r: f32[N,64]) {
    %b2 = constant f32[64] dense<hash:"b">
    %r = sub(%a, %b2) : f32[N,64]
    return %r
  }, then_branch = graph @then(%a: f32[N,64]) -> (r: f32[N,64]) {
    %k = constant f32[256,1024] dense<hash:"k">
    %k1 = constant f32[64] dense<hash:"k1">
    %r = mul(%a, %k1) : f32[N,64]
    return %r
  }} : f32[N,64]
  return %y, %z
})";

inline std::shared_ptr<const Graph> modelGraph() {
  std::map<std::string, Tensor, std::less<>> data = {
      {"w", randomF32({32, 64}, 1)},    {"b", randomF32({64}, 2)},  {"t", randomF32({4, 8}, 3)},
      {"k", randomF32({256, 1024}, 4)}, {"k1", randomF32({64}, 5)},
  };
  ParseOptions opts;
  opts.resolveConstant = [&](std::string_view name) -> const Tensor * {
    auto it = data.find(name);
    return it == data.end() ? nullptr : &it->second;
  };
  auto g = parseGraph(kModel, "model.dlc", opts);
  EXPECT_TRUE(g) << g.status().message();
  return g ? std::shared_ptr<const Graph>(std::move(*g)) : nullptr;
}

inline TensorType typeOf(const char *text) {
  // `f32[N,32]` through the parser: a one-input graph.
  auto g = parseGraph(std::string("graph @t(%v: ") + text + ") -> () {\n  return\n}");
  EXPECT_TRUE(g) << g.status().message();
  return g ? (*g)->inputs()[0]->type() : TensorType();
}

inline const char *const kHostGraph =
    "graph @h(%t: f32[4,8]) -> (u: f32[4,8]) {\n  %u = relu(%t) : f32[4,8]\n"
    "  return %u\n}\n";

inline std::shared_ptr<Program> handProgram() {
  auto p = std::make_shared<Program>();
  Module m0;
  m0.arch = "sm_90";
  for (int i = 0; i < 300; ++i)
    m0.cubin.push_back(static_cast<uint8_t>(i * 7 + 3));
  m0.ptx = ".version 8.0\n.target sm_90\n";
  m0.kernels = {"k0", "k1"};
  Module m1;
  m1.arch = "sm_80";
  m1.ptx = ".version 7.0\n";
  m1.kernels = {"k2"};
  Module m2;
  m2.arch = "sm_80";
  m2.cubin = {1, 2, 3};
  m2.kernels = {"k3"};
  p->modules = {m0, m1, m2};
  p->arenaBytes = 4096;
  p->zeroedBytes = 512; // stream-K's flags: the arena's last 512 bytes
  for (int i = 0; i < 512; ++i)
    p->constants.push_back(static_cast<uint8_t>(255 - i % 251));
  p->inputs = {{"x", DType::kF32, {4, 8}, {Space::kArena, 0, 128}}};
  p->outputs = {{"y", DType::kF32, {4, 8}, {Space::kArena, 768, 128}, 1}};
  LaunchStep l;
  l.module = 0;
  l.kernel = "k1";
  l.grid[0] = 2, l.grid[1] = 3, l.grid[2] = 4;
  l.block[0] = 128, l.block[1] = 2, l.block[2] = 1;
  l.sharedBytes = 1024;
  l.args = {{Space::kArena, 0, 128}, {Space::kConstants, 256, 256}, {Space::kArena, 256, 128}};
  l.origin = "add_1 + relu_2";
  l.waitsForGrid = true;
  // Two TMA descriptors after the pointers (format 5): a constant [64, 2] in boxes of 64 x 2
  // rows, and an activation read N-major.
  TensorMapArg w;
  w.buffer = {Space::kConstants, 256, 256};
  w.dtype = DType::kF16;
  w.dims[0] = 64, w.dims[1] = 2, w.pitchBytes = 128, w.box[0] = 64, w.box[1] = 2;
  TensorMapArg x = w;
  x.buffer = {Space::kArena, 256, 128};
  x.dtype = DType::kBF16;
  x.dims[0] = 8, x.dims[1] = 8, x.pitchBytes = 16, x.box[0] = 8, x.box[1] = 4;
  l.tensorMaps = {w, x};
  LaunchStep l2;
  l2.module = 1;
  l2.kernel = "k2";
  CopyStep c{{Space::kArena, 256, 128}, {Space::kArena, 512, 128}, "copy_3"};
  HostStep h{kHostGraph, {{Space::kArena, 512, 128}}, {{Space::kArena, 768, 128}}, "relu_4"};
  p->steps = {l, c, h, l2};
  p->sources = {{"k0", "__global__ void k0() {}"}, {"k1", "__global__ void k1() {}"}};
  p->compileSeconds = 2.5;
  p->cacheHits = 3;
  return p;
}

inline Package modelPackage() {
  Package p;
  p.dlcVersion = "0.1.0";
  p.graph = modelGraph();
  p.inputs = {{"x", typeOf("f32[N,32]")}, {"c", typeOf("bool[]")}};
  p.outputs = {{"y", typeOf("f32[N,?]")}, {"z", typeOf("f32[*]")}};
  p.dimRanges = {{"N", 1, 64}, {"S", 0, 7}};
  p.programs.push_back({{{"N", 4}}, handProgram()});
  auto p2 = std::make_shared<Program>(*handProgram());
  p2->modules[0].arch = "sm_100";
  p.programs.push_back({{{"N", 64}, {"S", 7}}, p2});
  return p;
}

inline std::vector<uint8_t> serialized(const Package &p) {
  auto bytes = serializePackage(p);
  EXPECT_TRUE(bytes) << bytes.status().message();
  return bytes ? *bytes : std::vector<uint8_t>();
}

inline Expected<Package> read(const std::vector<uint8_t> &b, std::string_view source = "m.so") {
  return deserializePackage(b.data(), b.size(), source);
}

inline std::string errorOf(const std::vector<uint8_t> &b) {
  auto p = read(b);
  return p ? "(no error)" : p.status().message();
}

inline void putU64(std::vector<uint8_t> &b, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

/// The checksum PACKAGE_FORMAT.md gives for the header's format: from format 4 XXH3-64 over the
/// payload seeded with XXH3-64 of the header's first 24 bytes; format 3 FNV-1a over those 24
/// bytes, then the payload; formats 1 and 2 FNV-1a over the payload.
inline uint64_t specChecksum(const std::vector<uint8_t> &b) {
  const uint8_t *payload = b.data() + kPackageHeaderBytes;
  const size_t n = b.size() - kPackageHeaderBytes;
  if (b[8] >= 4)
    return XXH3_64bits_withSeed(payload, n, XXH3_64bits(b.data(), 24));
  return fnv1a64(payload, n, b[8] == 3 ? fnv1a64(b.data(), 24) : kFnv1a64Offset);
}

/// Rewrites the header's checksum to match the payload (to reach the checks behind it).
inline void fixChecksum(std::vector<uint8_t> &b) { putU64(b, 24, specChecksum(b)); }

/// The header of serializePackage around a hand-made payload.
inline std::vector<uint8_t> withHeader(const uint8_t *payload, size_t size) {
  std::vector<uint8_t> b = {0x89, 'D', 'L', 'C', 'P', 'K', 'G', '\n', kPackageFormatVersion,
                            0,    0,   0,   0,   0,   0,   0};
  b.resize(kPackageHeaderBytes);
  putU64(b, 16, size);
  b.insert(b.end(), payload, payload + size);
  fixChecksum(b);
  return b;
}

inline void expectSameBuffer(const BufferRef &a, const BufferRef &b, const std::string &what) {
  EXPECT_EQ(a.space, b.space) << what;
  EXPECT_EQ(a.offset, b.offset) << what;
  EXPECT_EQ(a.bytes, b.bytes) << what;
}

inline void expectSameBuffers(const std::vector<BufferRef> &a, const std::vector<BufferRef> &b,
                              const std::string &what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i)
    expectSameBuffer(a[i], b[i], what + " " + std::to_string(i));
}

inline void expectSameTensors(const std::vector<ProgramTensor> &a,
                              const std::vector<ProgramTensor> &b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].dtype, b[i].dtype);
    EXPECT_EQ(a[i].shape, b[i].shape);
    expectSameBuffer(a[i].buffer, b[i].buffer, a[i].name);
    EXPECT_EQ(a[i].firstStep, b[i].firstStep) << a[i].name;
  }
}

inline void expectSamePrograms(const Program &a, const Program &b) {
  ASSERT_EQ(a.modules.size(), b.modules.size());
  for (size_t i = 0; i < a.modules.size(); ++i) {
    EXPECT_EQ(a.modules[i].arch, b.modules[i].arch);
    EXPECT_EQ(a.modules[i].cubin, b.modules[i].cubin);
    EXPECT_EQ(a.modules[i].ptx, b.modules[i].ptx);
    EXPECT_EQ(a.modules[i].kernels, b.modules[i].kernels);
  }
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    ASSERT_EQ(a.steps[i].index(), b.steps[i].index()) << "step " << i;
    std::string what = "step " + std::to_string(i);
    if (const auto *l = std::get_if<LaunchStep>(&a.steps[i])) {
      const auto &m = std::get<LaunchStep>(b.steps[i]);
      EXPECT_EQ(l->module, m.module);
      EXPECT_EQ(l->kernel, m.kernel);
      for (int d = 0; d < 3; ++d) {
        EXPECT_EQ(l->grid[d], m.grid[d]);
        EXPECT_EQ(l->block[d], m.block[d]);
      }
      EXPECT_EQ(l->sharedBytes, m.sharedBytes);
      expectSameBuffers(l->args, m.args, what);
      EXPECT_EQ(l->origin, m.origin);
      EXPECT_EQ(l->waitsForGrid, m.waitsForGrid) << what;
      ASSERT_EQ(l->tensorMaps.size(), m.tensorMaps.size()) << what;
      for (size_t j = 0; j < l->tensorMaps.size(); ++j) {
        const TensorMapArg &u = l->tensorMaps[j], &v = m.tensorMaps[j];
        expectSameBuffer(u.buffer, v.buffer, what);
        EXPECT_EQ(u.dtype, v.dtype);
        EXPECT_EQ(u.pitchBytes, v.pitchBytes);
        for (int d = 0; d < 2; ++d) {
          EXPECT_EQ(u.dims[d], v.dims[d]) << what;
          EXPECT_EQ(u.box[d], v.box[d]) << what;
        }
      }
    } else if (const auto *c = std::get_if<CopyStep>(&a.steps[i])) {
      const auto &d = std::get<CopyStep>(b.steps[i]);
      expectSameBuffer(c->src, d.src, what);
      expectSameBuffer(c->dst, d.dst, what);
      EXPECT_EQ(c->origin, d.origin);
    } else {
      const auto &h = std::get<HostStep>(a.steps[i]);
      const auto &k = std::get<HostStep>(b.steps[i]);
      EXPECT_EQ(h.graphText, k.graphText);
      expectSameBuffers(h.inputs, k.inputs, what);
      expectSameBuffers(h.outputs, k.outputs, what);
      EXPECT_EQ(h.origin, k.origin);
    }
  }
  EXPECT_EQ(a.arenaBytes, b.arenaBytes);
  EXPECT_EQ(a.zeroedBytes, b.zeroedBytes);
  EXPECT_EQ(a.constants, b.constants);
  expectSameTensors(a.inputs, b.inputs);
  expectSameTensors(a.outputs, b.outputs);
  EXPECT_EQ(a.sources, b.sources);
}

} // namespace dlc::rt::package_testing
