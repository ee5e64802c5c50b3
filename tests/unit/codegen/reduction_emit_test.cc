// The reduction family: every op and axis/keepdims/dtype configuration (and every kernel shape:
// thread, warp, block, two-pass rows; columns; row-wise softmax and normalisations) compiles
// with NVRTC for sm_90, many kernels per program; the chosen kernel shape shows in the source;
// refusals carry their exact message; a prologue + epilogue group is fused into one kernel.
#include <gtest/gtest.h>

#include <algorithm>
#include <fmt/format.h>

#include "codegen/cuda_prelude.h"
#include "codegen/emitters.h"
#include "codegen/nvrtc.h"
#include "host_check.h"
#include "ir/parser.h"

namespace dlc::codegen {
namespace {

std::string dims(const std::vector<int64_t> &shape) {
  return fmt::format("[{}]", fmt::join(shape, ","));
}

/// A graph `@g(<inputs>) -> (y) { <body> return %y }`.
std::unique_ptr<Graph> parse(const std::string &inputs, const std::string &body) {
  const std::string text =
      fmt::format("graph @g({}) -> (y: ?) {{\n{}\n  return %y\n}}", inputs, body);
  auto g = parseGraph(text, "test.dlc");
  EXPECT_TRUE(g) << g.status().message() << "\n" << text;
  return g ? std::move(*g) : nullptr;
}

/// Every node of `g` in one group; the anchor is the node without a CUDA expression.
FusedGroup wholeGraph(const Graph &g, const std::string &name) {
  FusedGroup grp;
  grp.name = name;
  for (const Node *n : g.nodes()) {
    grp.nodes.push_back(n);
    if (!elementwiseExpr(n->op()))
      grp.anchor = n;
  }
  for (const Node *n : g.nodes())
    for (const Value *v : n->inputs())
      if (v && !(v->producer() && grp.contains(v->producer())) &&
          std::find(grp.inputs.begin(), grp.inputs.end(), v) == grp.inputs.end())
        grp.inputs.push_back(v);
  for (const auto &o : g.outputs())
    grp.outputs.push_back(o.value);
  return grp;
}

/// Reduce* over `axes` (absent when `axes` is nullopt).
std::string reduceBody(const std::string &op, const std::string &dtype,
                       const std::vector<int64_t> &shape, std::optional<std::vector<int64_t>> axes,
                       bool keepdims, bool noop = false) {
  std::vector<bool> reduced(shape.size(), !axes && !noop);
  std::string body, axesArg = "_";
  if (axes) {
    for (int64_t a : *axes)
      reduced[static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(shape.size()) : a)] = true;
    body = fmt::format("  %axes = constant i64[{}] dense<[{}]>\n", axes->size(),
                       fmt::join(*axes, ", "));
    axesArg = "%axes";
  }
  std::vector<int64_t> out;
  for (size_t d = 0; d < shape.size(); ++d)
    if (!reduced[d])
      out.push_back(shape[d]);
    else if (keepdims)
      out.push_back(1);
  body += fmt::format("  %y = {}(%x, {}) {{keepdims = {}, noop_with_empty_axes = {}}} : {}{}", op,
                      axesArg, keepdims ? 1 : 0, noop ? 1 : 0, dtype, dims(out));
  return body;
}

/// Emits groups and compiles all their kernels as one NVRTC program.
class Batch {
public:
  explicit Batch(std::string name) : name_(std::move(name)), source_(cudaPrelude()) {}

  /// Emits the whole graph as one group; returns its kernels (empty on failure).
  KernelSet add(const std::string &inputs, const std::string &body) {
    auto g = parse(inputs, body);
    if (!g)
      return {};
    const std::string name = fmt::format("{}_{}", name_, count_++);
    auto set = emitGroup(wholeGraph(*g, name), {});
    EXPECT_TRUE(set) << body << "\n" << set.status().message();
    if (!set)
      return {};
    for (const Kernel &k : set->kernels) {
      EXPECT_EQ(k.name.rfind(name, 0), 0u) << k.name;
      EXPECT_NE(k.source.find(fmt::format("extern \"C\" __global__ void __launch_bounds__")),
                std::string::npos);
      EXPECT_GE(k.launch.grid[0], 1u);
      source_ += k.source;
      ++kernels_;
    }
    graphs_.push_back(std::move(g));
    return std::move(*set);
  }

  void compile() {
    auto mod = compileCuda(source_, name_);
    ASSERT_TRUE(mod) << mod.status().message();
    EXPECT_FALSE(mod->cubin.empty());
    std::printf("[ %s ] %d kernels compiled for sm_90\n", name_.c_str(), kernels_);
    EXPECT_EQ(mod->log.find("warning"), std::string::npos) << mod->log;
  }

private:
  std::string name_, source_;
  int count_ = 0, kernels_ = 0;
  std::vector<std::unique_ptr<Graph>> graphs_;
};

const char *kReduceOps[] = {
    "reduce_sum", "reduce_mean", "reduce_max",     "reduce_min",         "reduce_prod",
    "reduce_l1",  "reduce_l2",   "reduce_log_sum", "reduce_log_sum_exp", "reduce_sum_square"};

struct ReduceConfig {
  std::vector<int64_t> shape;
  std::optional<std::vector<int64_t>> axes;
  bool keepdims = true;
  bool noop = false;
};

// One of each kernel shape (see reduction.cc's header).
const ReduceConfig kConfigs[] = {
    {{8, 5}, std::vector<int64_t>{1}, true},             // thread per output
    {{64, 300}, std::vector<int64_t>{-1}, false},        // warp per row, vector loads
    {{4, 5000}, std::vector<int64_t>{1}, true},          // block per row
    {{2, 100000}, std::vector<int64_t>{1}, false},       // two-pass rows
    {{64, 100, 50}, std::vector<int64_t>{1}, true},      // columns
    {{10000, 64}, std::vector<int64_t>{0}, false},       // two-pass columns
    {{4, 6, 8, 10}, std::vector<int64_t>{0, 2}, false},  // non-contiguous, innermost kept
    {{4, 6, 8, 10}, std::vector<int64_t>{1, 3}, true},   // non-contiguous, innermost reduced
    {{32, 64}, std::nullopt, false},                     // all axes
    {{3, 4}, std::nullopt, true, true},                  // noop_with_empty_axes
    {{3, 0}, std::vector<int64_t>{1}, true},             // empty sets
    {{1, 7, 1, 9}, std::vector<int64_t>{0, 1, 2}, true}, // size-1 dims dropped
};

TEST(ReductionEmit, EveryReduceOpAndAxisConfigurationCompiles) {
  Batch b("reduce_f32");
  for (const char *op : kReduceOps)
    for (const ReduceConfig &c : kConfigs)
      b.add(fmt::format("%x: f32{}", dims(c.shape)),
            reduceBody(op, "f32", c.shape, c.axes, c.keepdims, c.noop));
  b.compile();
}

TEST(ReductionEmit, ReduceDtypesCompile) {
  Batch b("reduce_dtypes");
  const std::vector<int64_t> rows = {16, 300}, columns = {2, 70, 40};
  for (const char *dtype : {"f16", "bf16", "f64", "i32", "i64", "u8", "i8"})
    for (const char *op : kReduceOps)
      b.add(fmt::format("%x: {}{}", dtype, dims(rows)),
            reduceBody(op, dtype, rows, std::vector<int64_t>{1}, true));
  for (const char *dtype : {"f16", "i64"})
    for (const char *op : kReduceOps)
      b.add(fmt::format("%x: {}{}", dtype, dims(columns)),
            reduceBody(op, dtype, columns, std::vector<int64_t>{1}, false));
  for (const auto &shape : {rows, columns})
    for (const char *op : {"reduce_max", "reduce_min"})
      b.add(fmt::format("%x: bool{}", dims(shape)),
            reduceBody(op, "bool", shape, std::vector<int64_t>{1}, false));
  b.compile();
}

TEST(ReductionEmit, ArgReductionsCompile) {
  Batch b("arg");
  auto add = [&](const char *op, const char *dtype, std::vector<int64_t> shape, int last) {
    std::vector<int64_t> out = shape;
    out[1] = 1;
    b.add(fmt::format("%x: {}{}", dtype, dims(shape)),
          fmt::format("  %y = {}(%x) {{axis = 1, keepdims = 1, select_last_index = {}}} : i64{}",
                      op, last, dims(out)));
  };
  const std::vector<int64_t> shapes[] = {{8, 5}, {16, 300}, {4, 5000}, {2, 100000}, {4, 70, 30}};
  for (const char *op : {"argmax", "argmin"}) {
    for (const auto &shape : shapes)
      for (int last : {0, 1})
        add(op, "f32", shape, last);
    for (const char *dtype : {"f16", "i32", "u8"}) {
      add(op, dtype, {16, 300}, 0);
      add(op, dtype, {4, 70, 30}, 1);
    }
  }
  b.add("%x: f64[6,7,8]", "  %y = argmax(%x) {axis = -1, keepdims = 0} : i64[6,7]");
  b.compile();
}

TEST(ReductionEmit, SoftmaxFamilyCompiles) {
  Batch b("softmax");
  const std::pair<std::vector<int64_t>, int> configs[] = {
      {{64, 4}, -1},    // thread per row
      {{32, 197}, -1},  // warp per row, scalar (197 is odd)
      {{16, 768}, 1},   // warp per row, vector loads and stores
      {{4, 3000}, -1},  // block per row, cached
      {{2, 50000}, -1}, // block per row, reloaded (online softmax)
      {{2, 10, 7}, 1},  // columns: the axis is not innermost
      {{5, 1, 9}, 1},   // a size-1 axis
      {{2, 12, 128, 128}, -1},
  };
  for (const char *op : {"softmax", "log_softmax", "hardmax"}) {
    for (const auto &[shape, axis] : configs)
      b.add(fmt::format("%x: f32{}", dims(shape)),
            fmt::format("  %y = {}(%x) {{axis = {}}} : f32{}", op, axis, dims(shape)));
    b.add("%x: f16[4,12,197,197]",
          fmt::format("  %y = {}(%x) {{axis = -1}} : f16[4,12,197,197]", op));
    b.add("%x: f16[8,3000]", fmt::format("  %y = {}(%x) : f16[8,3000]", op));
  }
  b.add("%x: bf16[8,1000]", "  %y = softmax(%x) : bf16[8,1000]");
  b.add("%x: f64[8,1000]", "  %y = log_softmax(%x) : f64[8,1000]");
  b.compile();
}

TEST(ReductionEmit, NormalizationsCompile) {
  Batch b("norm");
  b.add("%x: f32[16,768], %s: f32[768], %b: f32[768]",
        "  %y = layer_normalization(%x, %s, %b) {axis = -1, epsilon = 1e-12} : f32[16,768]");
  b.add("%x: f16[8,197,768], %s: f16[768]", "  %y = layer_normalization(%x, %s) : f16[8,197,768]");
  b.add("%x: f32[4,8,64], %s: f32[64], %b: f32[8,64]",
        "  %y = layer_normalization(%x, %s, %b) {axis = 1} : f32[4,8,64]");
  b.add("%x: bf16[2,6000], %s: bf16[6000]", "  %y = layer_normalization(%x, %s) : bf16[2,6000]");
  b.add("%x: f32[2,40000], %s: f32[40000]", "  %y = layer_normalization(%x, %s) : f32[2,40000]");
  b.add("%x: f64[3,5], %s: f64[5]", "  %y = layer_normalization(%x, %s) : f64[3,5]");
  b.add("%x: f32[2,3,5,7], %s: f32[3], %b: f32[3]",
        "  %y = instance_normalization(%x, %s, %b) : f32[2,3,5,7]");
  b.add("%x: f16[2,64,56,56], %s: f16[64], %b: f16[64]",
        "  %y = instance_normalization(%x, %s, %b) : f16[2,64,56,56]");
  b.add("%x: f32[2,8,4,4], %s: f32[8], %b: f32[8]",
        "  %y = group_normalization(%x, %s, %b) {num_groups = 4} : f32[2,8,4,4]");
  b.add("%x: f32[1,64,32,32], %s: f32[64], %b: f32[64]",
        "  %y = group_normalization(%x, %s, %b) {num_groups = 32} : f32[1,64,32,32]");
  for (int p : {1, 2}) {
    b.add("%x: f32[16,300]",
          fmt::format("  %y = lp_normalization(%x) {{axis = -1, p = {}}} : f32[16,300]", p));
    b.add("%x: f32[4,30,20]",
          fmt::format("  %y = lp_normalization(%x) {{axis = 1, p = {}}} : f32[4,30,20]", p));
  }
  b.compile();
}

// --- Kernel shapes visible in the source ---------------------------------------------------------

Expected<KernelSet> emitOne(const std::string &inputs, const std::string &body,
                            std::unique_ptr<Graph> &keep) {
  keep = parse(inputs, body);
  if (!keep)
    return invalidArgument("parse failed");
  return emitGroup(wholeGraph(*keep, "r"), {});
}

TEST(ReductionEmit, WarpRowsUseVectorLoadsWhenAligned) {
  std::unique_ptr<Graph> g;
  auto set = emitOne("%x: f32[64,300]",
                     reduceBody("reduce_sum", "f32", {64, 300}, std::vector<int64_t>{1}, true), g);
  ASSERT_TRUE(set) << set.status().message();
  ASSERT_EQ(set->kernels.size(), 1u);
  const Kernel &k = set->kernels[0];
  EXPECT_NE(k.source.find("const bool aligned = reinterpret_cast<unsigned long long>(in0) % 16 "
                          "== 0;"),
            std::string::npos)
      << k.source;
  EXPECT_NE(k.source.find("const r_vec<float, 4> t0 = *reinterpret_cast<const r_vec<float, 4> "
                          "*>(in0 + (base + c));"),
            std::string::npos)
      << k.source;
  EXPECT_NE(k.source.find("a = r_warp(a);"), std::string::npos);
  EXPECT_NE(k.source.find("const int base = (o * 300);"), std::string::npos) << k.source;
  EXPECT_EQ(k.launch.block[0], 256u);
  EXPECT_EQ(k.launch.grid[0], 8u); // 64 rows, 8 per block
  EXPECT_TRUE(set->scratchBytes.empty());
}

TEST(ReductionEmit, LongRowsWithFewOutputsReduceInTwoPasses) {
  std::unique_ptr<Graph> g;
  auto set =
      emitOne("%x: f32[2,100000]",
              reduceBody("reduce_mean", "f32", {2, 100000}, std::vector<int64_t>{1}, false), g);
  ASSERT_TRUE(set) << set.status().message();
  ASSERT_EQ(set->kernels.size(), 2u);
  EXPECT_EQ(set->kernels[0].name, "r_partial");
  EXPECT_EQ(set->kernels[1].name, "r_finish");
  // 2 outputs x 12 chunks of 8336 elements, one float partial each.
  EXPECT_NE(set->kernels[0].source.find("const int c0 = (int)(blockIdx.x % 12) * 8336;"),
            std::string::npos)
      << set->kernels[0].source;
  ASSERT_EQ(set->scratchBytes.size(), 1u);
  EXPECT_EQ(set->scratchBytes[0], 2u * 12u * 4u);
  EXPECT_EQ(set->kernels[0].launch.grid[0], 24u);
  // The scratch buffer is the last parameter: written by the first kernel, read by the second.
  EXPECT_EQ(set->kernels[0].params.back().scratch, 0);
  EXPECT_TRUE(set->kernels[0].params.back().written);
  EXPECT_EQ(set->kernels[1].params.back().scratch, 0);
  EXPECT_FALSE(set->kernels[1].params.back().written);
  EXPECT_NE(
      set->kernels[1].source.find("out0[o] = dlc_store<float>((float)(a.v / (float)100000));"),
      std::string::npos)
      << set->kernels[1].source;
}

TEST(ReductionEmit, MiddleAxisReducesByColumns) {
  std::unique_ptr<Graph> g;
  auto set =
      emitOne("%x: f16[64,100,50]",
              reduceBody("reduce_max", "f16", {64, 100, 50}, std::vector<int64_t>{1}, true), g);
  ASSERT_TRUE(set) << set.status().message();
  const Kernel &k = set->kernels[0];
  EXPECT_NE(k.source.find("__shared__ r_acc sh[8][32];"), std::string::npos) << k.source;
  // Output o = (outer, inner) reads base + r * 50.
  EXPECT_NE(k.source.find("const int base = ((o / 50) * 5000 + (o % 50));"), std::string::npos)
      << k.source;
  EXPECT_NE(k.source.find("const int idx = base + (r * 50);"), std::string::npos) << k.source;
  EXPECT_EQ(k.launch.block[0], 32u);
  EXPECT_EQ(k.launch.block[1], 8u);
  EXPECT_EQ(k.launch.grid[0], 100u); // 3200 outputs / 32
  // NaN wins in Max, and the empty-set identity is -inf.
  EXPECT_NE(k.source.find("v = dlc_max(v, (float)x);"), std::string::npos);
  EXPECT_NE(k.source.find("return {__int_as_float(0xff800000)};"), std::string::npos);
}

TEST(ReductionEmit, ArgMaxTieBreaksFollowSelectLastIndex) {
  for (int last : {0, 1}) {
    std::unique_ptr<Graph> g;
    auto set = emitOne("%x: f32[16,300]",
                       fmt::format("  %y = argmax(%x) {{axis = 1, select_last_index = {}}} : "
                                   "i64[16,1]",
                                   last),
                       g);
    ASSERT_TRUE(set) << set.status().message();
    const std::string &src = set->kernels[0].source;
    const char *tie = last ? "j > i" : "j < i";
    EXPECT_NE(src.find(fmt::format("return x > v || (x == v && {});", tie)), std::string::npos)
        << src;
    EXPECT_NE(src.find(fmt::format("return v == v || {};", tie)), std::string::npos) << src;
    EXPECT_NE(src.find("out0[o] = dlc_store<long long>(a.i);"), std::string::npos) << src;
  }
}

TEST(ReductionEmit, LayerNormCachesTheRowAndUsesTwoPassStatistics) {
  std::unique_ptr<Graph> g;
  auto set = emitOne("%x: f32[16,768], %s: f32[768], %b: f32[768]",
                     "  %y = layer_normalization(%x, %s, %b) : f32[16,768]", g);
  ASSERT_TRUE(set) << set.status().message();
  const std::string &src = set->kernels[0].source;
  EXPECT_NE(src.find("float xc[24];"), std::string::npos) << src; // 768 / 32 lanes
  EXPECT_NE(src.find("const float mean = total.v / 768.0f;"), std::string::npos) << src;
  EXPECT_NE(src.find("dev.add((xc[k * 4 + j] - mean) * (xc[k * 4 + j] - mean));"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("const float invStd = 1.0f / sqrt(dev.v / 768.0f + 9.99999975e-06f);"),
            std::string::npos)
      << src;
  // The vector path loads the scale and bias with the row, before the statistics; the scalar
  // path (unaligned buffers) reads them after.
  EXPECT_NE(src.find("% 16 == 0 && reinterpret_cast<unsigned long long>(in1) % 16 == 0 && "
                     "reinterpret_cast<unsigned long long>(in2) % 16 == 0) {"),
            std::string::npos)
      << src;
  const size_t prefetch = src.find("ga[k] = *reinterpret_cast<const r_vec<float, 4> *>(in1 + c);");
  EXPECT_NE(prefetch, std::string::npos) << src;
  EXPECT_LT(prefetch, src.find("const float mean")) << src;
  EXPECT_NE(src.find("be[k] = *reinterpret_cast<const r_vec<float, 4> *>(in2 + c);"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("const float y = (xc[k * 4 + j] - mean) * invStd * dlc_load(ga[k].v[j]) + "
                     "dlc_load(be[k].v[j]);"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("const float y = (xc[k * 1 + j] - mean) * invStd * dlc_load(in1[(c + j)]) + "
                     "dlc_load(in2[(c + j)]);"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("*reinterpret_cast<r_vec<float, 4> *>(out0 + (base + c)) = o0;"),
            std::string::npos)
      << src;
}

TEST(ReductionEmit, SoftmaxOverAMiddleAxisUsesColumns) {
  std::unique_ptr<Graph> g;
  auto set = emitOne("%x: f32[2,10,7]", "  %y = softmax(%x) {axis = 1} : f32[2,10,7]", g);
  ASSERT_TRUE(set) << set.status().message();
  const std::string &src = set->kernels[0].source;
  EXPECT_NE(src.find("const int base = (row / 7) * 70 + row % 7;"), std::string::npos) << src;
  EXPECT_NE(src.find("const int idx = base + (int)k * 7;"), std::string::npos) << src;
  EXPECT_NE(src.find("out0[idx] = dlc_store<float>(exp(x - st.v) / st.s);"), std::string::npos)
      << src;
  EXPECT_EQ(set->kernels[0].launch.grid[0], 1u); // 14 columns
}

TEST(ReductionEmit, SameGroupGivesIdenticalSource) {
  std::unique_ptr<Graph> g1, g2;
  const std::string body =
      reduceBody("reduce_log_sum_exp", "f32", {4, 6, 8, 10}, std::vector<int64_t>{0, 2}, false);
  auto a = emitOne("%x: f32[4,6,8,10]", body, g1);
  auto b = emitOne("%x: f32[4,6,8,10]", body, g2);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->kernels[0].source, b->kernels[0].source);
}

// --- Fused prologue and epilogue ----------------------------------------------------------------

TEST(ReductionEmit, AttentionSoftmaxFusesScaleMaskAndCast) {
  Batch batch("fused_softmax");
  const KernelSet set = batch.add("%x: f32[2,4,64,64], %m: f32[2,1,1,64], %c: f32[]",
                                  "  %s = mul(%x, %c) : f32[2,4,64,64]\n"
                                  "  %t = add(%s, %m) : f32[2,4,64,64]\n"
                                  "  %p = softmax(%t) {axis = -1} : f32[2,4,64,64]\n"
                                  "  %y = cast(%p) {to = f16} : f16[2,4,64,64]");
  ASSERT_EQ(set.kernels.size(), 1u);
  const std::string &src = set.kernels[0].source;
  // Prologue: the scale is a scalar, the mask broadcast over heads and query rows; only the
  // full-shape input x is loaded as vectors.
  EXPECT_NE(src.find("const float p0 = ((float)(__fmul_rn(dlc_load(t0.v[j]), dlc_load(in1[0]))));"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("dlc_load(in2[(((idx) / 16384LL) * 64LL + ((idx) % 64LL))])"),
            std::string::npos)
      << src;
  // Epilogue: the cast runs on each softmax value. Vectors of 2: the f32 input allows 4, but
  // 64 columns / 4 would leave half the warp idle.
  EXPECT_NE(src.find("o0.v[j] = dlc_store<__half>(e0);"), std::string::npos) << src;
  EXPECT_NE(
      src.find("*reinterpret_cast<fused_softmax_0_vec<__half, 2> *>(out0 + (base + c)) = o0;"),
      std::string::npos)
      << src;
  batch.compile();
}

TEST(ReductionEmit, ReduceMeanWithPrologueAndEpilogueFuses) {
  Batch batch("fused_reduce");
  const KernelSet set = batch.add("%x: f16[8,197,768], %mu: f16[8,197,1], %eps: f32[]",
                                  "  %a = constant i64[1] dense<[-1]>\n"
                                  "  %c = cast(%x) {to = f32} : f32[8,197,768]\n"
                                  "  %mf = cast(%mu) {to = f32} : f32[8,197,1]\n"
                                  "  %d = sub(%c, %mf) : f32[8,197,768]\n"
                                  "  %q = mul(%d, %d) : f32[8,197,768]\n"
                                  "  %v = reduce_mean(%q, %a) : f32[8,197,1]\n"
                                  "  %e = add(%v, %eps) : f32[8,197,1]\n"
                                  "  %y = sqrt(%e) : f32[8,197,1]");
  ASSERT_EQ(set.kernels.size(), 1u);
  const std::string &src = set.kernels[0].source;
  // The f16 input is the full-shape leaf: 8-wide loads; the mean is read once per row element.
  EXPECT_NE(src.find("fused_reduce_0_vec<__half, 8>"), std::string::npos) << src;
  EXPECT_NE(src.find("dlc_load(in1[(((idx) / 151296LL) * 197LL + (((idx) / 768LL) % 197LL))])"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("dlc_load(in3[0])"), std::string::npos) << src;
  EXPECT_NE(src.find("out0[o] = dlc_store<float>(e1);"), std::string::npos) << src;
  batch.compile();
}

TEST(ReductionEmit, ArgMaxWithCastEpilogueFuses) {
  Batch batch("fused_argmax");
  batch.add("%x: f32[4,70,30]", "  %i = argmax(%x) {axis = 1, keepdims = 0} : i64[4,30]\n"
                                "  %y = cast(%i) {to = i32} : i32[4,30]");
  batch.compile();
}

// --- Refusals ------------------------------------------------------------------------------------

std::string refusal(const std::string &inputs, const std::string &body, const char *op) {
  auto g = parse(inputs, body);
  if (!g)
    return "parse failed";
  for (const Node *n : g->nodes())
    if (n->opName() == op) {
      std::string why;
      EXPECT_FALSE(gpuSupports(*n, &why));
      return why;
    }
  return "no such node";
}

TEST(ReductionEmit, RefusalsSayWhy) {
  EXPECT_EQ(
      refusal("%x: f32[4,8], %a: i64[1]", "  %y = reduce_sum(%x, %a) : f32[4,1]", "reduce_sum"),
      "reduce_sum: axes input 'a' is not a constant");
  EXPECT_EQ(refusal("%x: bool[2,4]", "  %y = argmax(%x) {axis = 1} : i64[2,1]", "argmax"),
            "argmax: bool input has no GPU kernel");
  EXPECT_EQ(refusal("%x: f32[2,0]", "  %y = argmin(%x) {axis = 1} : i64[2,1]", "argmin"),
            "argmin: axis 1 is empty");
  EXPECT_EQ(refusal("%x: i32[2,0]",
                    "  %a = constant i64[1] dense<[1]>\n"
                    "  %y = reduce_mean(%x, %a) : i32[2,1]",
                    "reduce_mean"),
            "reduce_mean: the integer mean of an empty set is undefined");
  EXPECT_EQ(
      refusal("%x: bool[2,4]", "  %y = reduce_sum(%x, _) {keepdims = 0} : bool[]", "reduce_sum"),
      "reduce_sum: bool input has no GPU kernel");
  EXPECT_EQ(refusal("%x: i32[2,4]", "  %y = softmax(%x) : i32[2,4]", "softmax"),
            "softmax: i32 input has no GPU kernel");
}

// LayerNormalization's Mean and InvStdDev (stash type float32) come from the same kernel as Y,
// run on the host emulator: rows of a thread (5 elements), of a warp (64), of a block (3000,
// vectorized), an f16 input, a normalized block of two axes, only one statistic used.
TEST(ReductionEmit, LayerNormStatisticsMatchTheReference) {
  std::vector<testing::HostCase> cases;
  auto add = [&](const std::string &sig, const std::string &node, const std::string &outs) {
    cases.push_back({fmt::format("graph @ln({}) -> ({}) {{\n{}\n  return {}\n}}", sig, outs, node,
                                 outs == "y: ?, m: ?, r: ?" ? "%y, %m, %r" : "%y, %r"),
                     {},
                     1e-4});
  };
  add("%x: f32[6,5], %s: f32[5], %b: f32[5]",
      "  %y, %m, %r = layer_normalization(%x, %s, %b) : f32[6,5], f32[6,1], f32[6,1]",
      "y: ?, m: ?, r: ?");
  add("%x: f32[3,7,64], %s: f32[64]",
      "  %y, %m, %r = layer_normalization(%x, %s) : f32[3,7,64], f32[3,7,1], f32[3,7,1]",
      "y: ?, m: ?, r: ?");
  add("%x: f32[2,3000], %s: f32[3000]",
      "  %y, %m, %r = layer_normalization(%x, %s) : f32[2,3000], f32[2,1], f32[2,1]",
      "y: ?, m: ?, r: ?");
  add("%x: f32[4,8,12], %s: f32[8,12]",
      "  %y, _, %r = layer_normalization(%x, %s) {axis = 1} : f32[4,8,12], _, f32[4,1,1]",
      "y: ?, r: ?");
  cases.push_back({"graph @ln16(%x: f16[5,96], %s: f16[96]) -> (y: ?, m: ?, r: ?) {\n"
                   "  %y, %m, %r = layer_normalization(%x, %s) : f16[5,96], f32[5,1], f32[5,1]\n"
                   "  return %y, %m, %r\n}",
                   {},
                   1e-2});
  testing::expectHostRunsMatchReference(cases);
}

TEST(ReductionEmit, EpilogueOfAnotherShapeIsAnError) {
  std::unique_ptr<Graph> g;
  auto set = emitOne("%x: f32[4,8]",
                     "  %a = constant i64[1] dense<[1]>\n"
                     "  %r = reduce_sum(%x, %a) : f32[4,1]\n"
                     "  %y = sub(%x, %r) : f32[4,8]",
                     g);
  ASSERT_FALSE(set);
  EXPECT_NE(set.status().message().find(
                "epilogue value 'y' has shape [4,8], not the shape [4,1] of the anchor's output"),
            std::string::npos)
      << set.status().message();
}

} // namespace
} // namespace dlc::codegen
