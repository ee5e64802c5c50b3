// `--gemm-layer-norm` on the GPU (codegen/gemm_norm.cc): a residual projection and the layer
// norm after it in one Hopper kernel that normalizes its rows in clusters of one CTA per column
// tile, against the reference backend on random data (the GPU's arena poisoned first):
// ViT-B/16's shape (both results used), BERT's (the layer norm's alone: its input in scratch),
// a GEMM whose clusters walk several row tiles (the barriers' two parities), a ragged last
// chunk of columns, a row tile held by one CTA, bf16. Without a GPU, the lowering checks still
// run: each case is one kernel launch.
#include <gtest/gtest.h>

#include "gpu_test_util.h"
#include "runtime/jit/compile.h"
#include "runtime/tensor_compare.h"

namespace dlc {
namespace {

using rt::testing::modelOf;
using rt::testing::randomTensor;

struct Case {
  DType t;
  int64_t rows, n, k;
  bool both; // x2 a graph output too
  const char *what;
};

/// x2 = x w + b + r(x), y = layer_norm(x2): x is [rows, k]; the residual is x's first n
/// columns' worth when k == n, else none (a ReLU instead).
std::string text(const Case &c) {
  const std::string t(dtypeName(c.t));
  const bool residual = c.k == c.n;
  return fmt::format(R"(graph @block(%x: {0}[{1},{3}]) -> (y: ?{4}) {{
  %w = constant {0}[{3},{2}] {5}
  %bias = constant {0}[{2}] {6}
  %g = constant {0}[{2}] {7}
  %beta = constant {0}[{2}] {8}
  %m = matmul(%x, %w) : ?
  %a = add(%m, %bias) : ?
  %x2 = {9} : ?
  %y = layer_normalization(%x2, %g, %beta) {{axis = -1, epsilon = 1e-05}} : ?
  return %y{10}
}})",
                     t, c.rows, c.n, c.k, c.both ? ", x2: ?" : "",
                     rt::testing::denseText(static_cast<size_t>(c.k * c.n), 3),
                     rt::testing::denseText(static_cast<size_t>(c.n), 4),
                     rt::testing::denseText(static_cast<size_t>(c.n), 5),
                     rt::testing::denseText(static_cast<size_t>(c.n), 6),
                     residual ? "add(%a, %x)" : "relu(%a)", c.both ? ", %x2" : "");
}

const Case kCases[] = {
    {DType::kF16, 8 * 197, 768, 768, true, "ViT-B/16 b8: 13 row tiles of 8 CTAs"},
    {DType::kF16, 8 * 128, 768, 768, false, "BERT-base b8: x2 in scratch"},
    {DType::kF16, 5000, 768, 256, true, "40 row tiles: clusters walk several"},
    {DType::kBF16, 300, 200, 64, true, "ragged columns and rows, bf16"},
    {DType::kF16, 1000, 64, 64, false, "one CTA per row tile"},
};

// Without a GPU too: each case lowers to one kernel for sm_90a (the layer norm's is gone).
TEST(GemmNormGpu, EachCaseIsOneKernel) {
  for (const Case &c : kCases) {
    SCOPED_TRACE(c.what);
    auto model = modelOf(text(c));
    ASSERT_TRUE(model) << model.status().message();
    jit::JitOptions jo;
    jo.strictPlacement = true;
    jo.lower.compile = false;
    jo.lower.emit.gemmLayerNorm = true;
    std::ostringstream sink;
    jo.pipeline.out = &sink;
    jo.pipeline.err = &sink;
    auto program = jit::compileForGpu(model->graph(), {}, jo);
    ASSERT_TRUE(program) << program.status().message();
    int launches = 0;
    for (const rt::Step &s : program->steps)
      launches += std::holds_alternative<rt::LaunchStep>(s);
    EXPECT_EQ(launches, 1);
  }
}

TEST(GemmNormGpu, NormalizedRowsMatchTheReference) {
  DLC_REQUIRE_GPU(driver);
  for (const Case &c : kCases) {
    SCOPED_TRACE(c.what);
    auto model = modelOf(text(c));
    ASSERT_TRUE(model) << model.status().message();
    const Tensor x = randomTensor(c.t, {c.rows, c.k}, 11);
    SessionOptions so = rt::testing::gpuAlone(/*poison=*/true);
    so.kernels.gemmLayerNorm = true;
    auto gpu = model->createSession(so);
    ASSERT_TRUE(gpu) << gpu.status().message();
    auto ref = rt::testing::referenceRun(*model, {{"x", x}});
    ASSERT_TRUE(ref) << ref.status().message();
    for (int run = 0; run < 2; ++run) { // the second from the CUDA graph
      auto got = gpu->run({{"x", x}});
      ASSERT_TRUE(got) << got.status().message();
      for (const auto &[name, want] : *ref) {
        SCOPED_TRACE(name + (run ? " (replayed)" : ""));
        rt::testing::expectMatches(got->at(name), want);
      }
    }
  }
}

} // namespace
} // namespace dlc
