// The pooling family without a GPU:
//  * the window arithmetic the kernels print (PoolAxis::tap, paddedCount), evaluated on the host
//    the way the kernel loops over it, reproduces the reference pooling for every attribute
//    combination (pads, auto_pad, strides, dilations, ceil_mode, count_include_pad, 1-D to 3-D);
//  * every pool kernel compiles with NVRTC for sm_90, with and without an epilogue;
//  * refusals carry their reason.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "codegen/pool_plan.h"
#include "emit_test_util.h"
#include "host_check.h"
#include "ir/eval/eval.h"

namespace dlc::codegen {
namespace {

using namespace dlc::codegen::testing;

std::string pool(const std::string &x, const std::string &op, const std::string &attrs) {
  return "graph @g(%x: " + x + ") -> (y: ?) {\n  %y = " + op + "(%x) " + attrs +
         " : ?\n  return %y\n}";
}

/// Pools X on the host exactly as the kernel walks the window: taps from PoolAxis::tap, the
/// ones outside the input skipped; the average's divisor is the taps read or, with
/// count_include_pad, the product of PoolAxis::paddedCount.
void checkWindows(const std::string &text) {
  SCOPED_TRACE(text);
  auto g = parseInfer(text);
  ASSERT_TRUE(g);
  const Node *n = anchorOf(*g);
  std::vector<Tensor> in = nodeInputs(*n, {});
  // Signed, non-monotonic data so that max and average depend on which taps are read.
  Tensor x = in[0].castTo(DType::kF64);
  for (int64_t i = 0; i < x.numElements(); ++i)
    x.mutableData<double>()[i] = std::sin(static_cast<double>(i) * 1.7) * 10;
  in[0] = x.castTo(in[0].dtype());
  auto ref = eval::evaluate(*n, in);
  ASSERT_TRUE(ref) << ref.status().message();
  auto axes = poolAxes(*n);
  ASSERT_TRUE(axes) << axes.status().message();
  const Tensor y = (*ref)[0].castTo(DType::kF64);
  const size_t r = axes->size();
  int64_t inPlane = 1, outPlane = 1;
  for (const PoolAxis &a : *axes) {
    inPlane *= a.in;
    outPlane *= a.out;
  }
  ASSERT_EQ(y.numElements() % outPlane, 0);
  const bool isMax = n->op() == Op::kMaxPool;
  const bool includePad = n->op() == Op::kAveragePool && n->getInt("count_include_pad") != 0;
  for (int64_t i = 0; i < y.numElements(); ++i) {
    const int64_t plane = i / outPlane;
    std::vector<int64_t> o(r);
    for (size_t d = r, rest = static_cast<size_t>(i % outPlane); d-- > 0;) {
      o[d] = static_cast<int64_t>(rest % static_cast<size_t>((*axes)[d].out));
      rest /= static_cast<size_t>((*axes)[d].out);
    }
    double acc = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
    int64_t count = 0, padded = 1;
    IndexExpr::Env env;
    for (size_t d = 0; d < r; ++d) {
      env.vars["o"] = o[d];
      padded *= (*axes)[d].paddedCount(IndexExpr::var("o")).eval(env);
    }
    // All windows taps, row-major, as nested loops.
    std::vector<int64_t> k(r, 0);
    while (true) {
      bool inside = true;
      int64_t off = 0;
      for (size_t d = 0; d < r; ++d) {
        env.vars["o"] = o[d];
        env.vars["k"] = k[d];
        const int64_t t = (*axes)[d].tap(IndexExpr::var("o"), IndexExpr::var("k")).eval(env);
        inside = inside && t >= 0 && t < (*axes)[d].in;
        off = off * (*axes)[d].in + t;
      }
      if (inside) {
        const double v = x.data<double>()[plane * inPlane + off];
        acc = isMax ? std::max(acc, v) : acc + v;
        ++count;
      }
      size_t d = r;
      while (d-- > 0 && ++k[d] == (*axes)[d].kernel)
        k[d] = 0;
      if (d == static_cast<size_t>(-1))
        break;
    }
    const double got = isMax ? acc : acc / static_cast<double>(includePad ? padded : count);
    const double want = y.data<double>()[i];
    if (std::isinf(want) || std::isnan(want)) {
      EXPECT_TRUE(std::isnan(want) ? std::isnan(got) : got == want) << "element " << i;
      continue;
    }
    ASSERT_NEAR(got, want, 1e-5 * std::max(1.0, std::abs(want))) << "element " << i;
  }
}

TEST(PoolPlan, WindowsMatchTheReference) {
  const std::string x2 = "f32[2,3,7,8]";
  for (const char *op : {"max_pool", "average_pool"}) {
    checkWindows(pool(x2, op, "{kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]}"));
    checkWindows(pool(x2, op,
                      "{kernel_shape = [3, 2], strides = [2, 3], pads = [1, 0, 2, 1], "
                      "ceil_mode = 1}"));
    checkWindows(pool(x2, op, "{kernel_shape = [2, 3], dilations = [2, 2], pads = [1, 1, 0, 2]}"));
    checkWindows(
        pool(x2, op, "{kernel_shape = [3, 3], strides = [2, 2], auto_pad = \"SAME_UPPER\"}"));
    checkWindows(
        pool(x2, op, "{kernel_shape = [4, 3], strides = [3, 2], auto_pad = \"SAME_LOWER\"}"));
    checkWindows(pool(x2, op,
                      "{kernel_shape = [2, 2], auto_pad = \"VALID\", ceil_mode = 1, "
                      "strides = [3, 3]}"));
    checkWindows(pool("f32[1,2,11]", op, "{kernel_shape = [4], strides = [3], pads = [2, 2]}"));
    checkWindows(pool("f32[1,2,5,6,4]", op,
                      "{kernel_shape = [2, 3, 2], strides = [2, 2, 1], "
                      "pads = [1, 1, 0, 1, 1, 1], ceil_mode = 1}"));
  }
  checkWindows(pool(x2, "average_pool",
                    "{kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, "
                    "1, 1], count_include_pad = 1}"));
  checkWindows(pool(x2, "average_pool",
                    "{kernel_shape = [3, 2], strides = [2, 3], pads = [1, 0, 2, "
                    "1], ceil_mode = 1, count_include_pad = 1}"));
  checkWindows(pool(x2, "average_pool",
                    "{kernel_shape = [2, 2], dilations = [2, 3], pads = [2, 2, "
                    "2, 2], count_include_pad = 1}"));
  // A window wholly in the padding: max gives -inf, average 0/0.
  checkWindows(pool("f32[1,1,2,2]", "max_pool",
                    "{kernel_shape = [1, 1], pads = [2, 2, 2, 2], "
                    "strides = [2, 2]}"));
}

TEST(PoolEmit, EveryPoolCompilesForSm90) {
  const std::vector<std::string> texts = {
      pool("f32[1,4,9,9]", "max_pool",
           "{kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, "
           "1]}"),
      pool("f16[1,4,9,9]", "max_pool", "{kernel_shape = [3, 3], strides = [2, 2], ceil_mode = 1}"),
      pool("i8[1,4,9]", "max_pool", "{kernel_shape = [2], dilations = [2]}"),
      pool("u8[1,4,6,6,6]", "max_pool", "{kernel_shape = [2, 2, 2], strides = [2, 2, 2]}"),
      pool("bf16[2,3,8,8]", "average_pool",
           "{kernel_shape = [2, 2], pads = [1, 1, 1, 1], "
           "count_include_pad = 1}"),
      pool("f64[2,3,8,8]", "average_pool", "{kernel_shape = [3, 3], auto_pad = \"SAME_UPPER\"}"),
      pool("f32[2,3,8,8]", "lp_pool", "{kernel_shape = [2, 2], p = 2}"),
      pool("f32[2,3,8,8]", "lp_pool", "{kernel_shape = [2, 2], p = 3}"),
      pool("f16[2,64,7,7]", "global_average_pool", ""),
      pool("f32[2,8,64,64]", "global_average_pool", ""),
      pool("f32[2,8,5,5]", "global_max_pool", ""),
      pool("bf16[1,8,100,100]", "global_max_pool", ""),
      pool("f64[2,8,3]", "global_lp_pool", "{p = 3}"),
      pool("f16[2,7,7,2048]", "global_average_pool", "{channels_last = 1}"),
      pool("f32[2,3,3,40]", "global_max_pool", "{channels_last = 1}"),
      pool("f32[1,16,13,13]", "lrn", "{size = 5, alpha = 0.0001, beta = 0.75, bias = 2.0}"),
      pool("f16[2,6,4]", "lrn", "{size = 2}"),
  };
  std::string source;
  int count = 0;
  for (const std::string &t : texts) {
    SCOPED_TRACE(t);
    auto g = parseInfer(t);
    ASSERT_TRUE(g);
    std::string why;
    ASSERT_TRUE(gpuSupports(*anchorOf(*g), &why)) << why;
    source += emitSource(wholeGraph(*g, fmt::format("pool{}", count++)));
  }
  expectCompiles(source, "pools");
}

TEST(PoolEmit, MaxPoolSourceShowsTheWindow) {
  auto g = parseInfer(pool("f16[1,4,9,9]", "max_pool",
                           "{kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]}"));
  ASSERT_TRUE(g);
  const std::string src = emitSource(wholeGraph(*g, "mp"));
  EXPECT_NE(src.find("float acc = __int_as_float(0xff800000);"), std::string::npos) << src;
  EXPECT_NE(src.find("const int u0 = (((o0 * 2) - 1) + k0);"), std::string::npos) << src;
  // Every tap loads from its clamped index; a tap in the padding counts as -inf.
  EXPECT_NE(src.find("const bool ok1 = u1 >= 0 && u1 < 9;"), std::string::npos) << src;
  EXPECT_NE(src.find("const int t1 = u1 < 0 ? 0 : u1 >= 9 ? 8 : u1;"), std::string::npos) << src;
  EXPECT_NE(src.find("const float v = ok0 && ok1 ? raw : __int_as_float(0xff800000);"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("acc = dlc_max(acc, v);"), std::string::npos) << src;
  EXPECT_NE(src.find("out0[i] = dlc_store<__half>(y);"), std::string::npos) << src;
}

// Where the innermost output axis divides by 8, 4 or 2, a thread computes that many outputs
// from the columns they share: ResNet-50's stem pool (112 -> 56, 3x3, stride 2) loads 17
// columns per window row for 8 outputs. Its windows all overlap the input, so a tap in the
// padding reads the clamped element with no select; windows wholly in the padding keep it.
TEST(PoolEmit, MaxPoolRowsShareTheirColumns) {
  auto g = parseInfer(pool("i8[32,64,112,112]", "max_pool",
                           "{kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]}"));
  ASSERT_TRUE(g);
  std::string src = emitSource(wholeGraph(*g, "stem"));
  EXPECT_NE(src.find("i < 802816;"), std::string::npos) << src; // 6422528 outputs / 8
  EXPECT_NE(src.find("const int o1 = (r % 7) * 8;"), std::string::npos) << src;
  EXPECT_NE(src.find("signed char m[17];"), std::string::npos) << src;
  EXPECT_NE(src.find("m[c] = dlc_max(m[c], raw);"), std::string::npos) << src;
  EXPECT_EQ(src.find("colOk"), std::string::npos) << src;
  EXPECT_NE(src.find("out0[e] = dlc_store<signed char>(y);"), std::string::npos) << src;
  g = parseInfer(pool("u8[1,2,8,16]", "max_pool",
                      "{kernel_shape = [2, 2], strides = [2, 2], pads = [2, 2, 2, 2]}"));
  ASSERT_TRUE(g);
  src = emitSource(wholeGraph(*g, "padded"));
  EXPECT_NE(src.find("const int o1 = (r % 5) * 2;"), std::string::npos) << src; // 10 columns
  EXPECT_NE(src.find("ok0 && colOk[c] ? raw : (unsigned char)0"), std::string::npos) << src;
  // 16-bit and wider inputs keep one output per thread (slower in rows on an H100).
  g = parseInfer(pool("f16[32,64,112,112]", "max_pool",
                      "{kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]}"));
  ASSERT_TRUE(g);
  src = emitSource(wholeGraph(*g, "stem16"));
  EXPECT_EQ(src.find("m[17]"), std::string::npos) << src;
  EXPECT_NE(src.find("i < 6422528;"), std::string::npos) << src;
}

TEST(PoolEmit, AveragePoolIncludingPadDividesByThePaddedWindow) {
  auto g = parseInfer(pool("f32[1,1,5,5]", "average_pool",
                           "{kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], "
                           "count_include_pad = 1, ceil_mode = 1}"));
  ASSERT_TRUE(g);
  const std::string src = emitSource(wholeGraph(*g, "ap"));
  EXPECT_NE(src.find("dlc_imin(3, dlc_imax((7 - (o0 * 2)), 0))"), std::string::npos) << src;
  EXPECT_EQ(src.find("cnt +="), std::string::npos) << src;
}

TEST(PoolEmit, GlobalAveragePoolWithEpilogue) {
  // ResNet's head: global average pool, then a bias and relu fused on the pooled value.
  auto g = parseInfer(R"(graph @g(%x: f16[2,64,7,7], %b: f16[1,64,1,1]) -> (y: ?) {
  %p = global_average_pool(%x) : ?
  %s = add(%p, %b) : ?
  %y = relu(%s) : ?
  return %y
})");
  ASSERT_TRUE(g);
  KernelSet set;
  const std::string src = emitSource(wholeGraph(*g, "gap"), &set);
  EXPECT_NE(src.find("for (int j = lane; j < 49; j += 32)"), std::string::npos) << src;
  EXPECT_NE(src.find("__shfl_xor_sync(0xffffffffu, acc, s)"), std::string::npos) << src;
  EXPECT_NE(src.find("const float y = acc / (float)(49);"), std::string::npos) << src;
  EXPECT_NE(src.find("dlc_load(in1[(((p) % 64LL))])"), std::string::npos) << src;
  EXPECT_NE(src.find("out0[p] = dlc_store<__half>(v1);"), std::string::npos) << src;
  EXPECT_EQ(set.kernels[0].launch.grid[0], 16u); // 128 planes, 8 per block
  expectCompiles(src, "gap");

  auto big = parseInfer(pool("f32[1,4,100,100]", "global_average_pool", ""));
  ASSERT_TRUE(big);
  KernelSet bigSet;
  const std::string bigSrc = emitSource(wholeGraph(*big, "gapbig"), &bigSet);
  EXPECT_NE(bigSrc.find("__shared__ float part[8];"), std::string::npos) << bigSrc;
  EXPECT_NE(bigSrc.find("for (int j = threadIdx.x; j < 10000; j += 256)"), std::string::npos)
      << bigSrc;
  EXPECT_EQ(bigSet.kernels[0].launch.grid[0], 4u);
}

TEST(PoolEmit, RefusalsSayWhy) {
  auto g = parseInfer(R"(graph @g(%x: f32[1,1,4,4]) -> (y: ?, i: ?) {
  %y, %i = max_pool(%x) {kernel_shape = [2, 2]} : ?, ?
  return %y, %i
})");
  ASSERT_TRUE(g);
  std::string why;
  EXPECT_TRUE(gpuSupports(*anchorOf(*g), &why)) << why; // Indices are computed
  auto order = parseInfer(R"(graph @g(%x: f32[1,1,4,4]) -> (y: ?, i: ?) {
  %y, %i = max_pool(%x) {kernel_shape = [2, 2], storage_order = 2} : ?, ?
  return %y, %i
})");
  if (order) { // shape inference may refuse it first
    EXPECT_FALSE(gpuSupports(*anchorOf(*order), &why));
    EXPECT_EQ(why, "attribute 'storage_order' must be 0 or 1, got 2");
  }

  auto unused = parseInfer(R"(graph @g(%x: f32[1,1,4,4]) -> (y: ?) {
  %y, %i = max_pool(%x) {kernel_shape = [2, 2]} : ?, ?
  return %y
})");
  ASSERT_TRUE(unused);
  EXPECT_TRUE(gpuSupports(*anchorOf(*unused), &why)) << why;

  auto ints = parseInfer(pool("i32[1,1,4,4]", "average_pool", "{kernel_shape = [2, 2]}"));
  ASSERT_TRUE(ints);
  EXPECT_FALSE(gpuSupports(*anchorOf(*ints), &why));
  EXPECT_EQ(why, "average_pool of i32 is not supported");
}

/// MaxPool returning its Indices too.
std::string withIndices(const std::string &x, const std::string &attrs) {
  return "graph @g(%x: " + x + ") -> (y: ?, i: ?) {\n  %y, %i = max_pool(%x) " + attrs +
         " : ?, ?\n  return %y, %i\n}";
}

TEST(PoolHostRun, MaxPoolIndicesMatchTheReference) {
  // Ties (a constant plane), NaNs (numpy's max: the first NaN wins), and windows wholly in the
  // padding (-inf and index -1).
  Tensor ties = Tensor::zeros(DType::kF32, {1, 2, 5, 5});
  Tensor nans = Tensor::zeros(DType::kF32, {1, 1, 4, 6});
  for (int64_t i = 0; i < nans.numElements(); ++i)
    nans.mutableData<float>()[i] =
        i % 7 == 3 ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(i % 5);
  const std::vector<HostCase> cases = {
      {withIndices("f32[2,3,7,8]",
                   "{kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]}")},
      {withIndices("f32[2,3,7,8]", "{kernel_shape = [3, 2], strides = [2, 1], pads = [1, 0, 1, 1], "
                                   "storage_order = 1}")},
      {withIndices("f16[1,2,6,5]", "{kernel_shape = [2, 3], dilations = [2, 1], ceil_mode = 1, "
                                   "strides = [2, 2]}")},
      {withIndices("i8[1,2,9]", "{kernel_shape = [2], pads = [2, 2]}")}, // padding-only windows
      {withIndices("f32[1,2,4,5,6]", "{kernel_shape = [2, 2, 2], strides = [2, 2, 1], "
                                     "storage_order = 1}")},
      {withIndices("f32[1,2,5,5]", "{kernel_shape = [3, 3], pads = [1, 1, 1, 1]}"), {{"x", ties}}},
      {withIndices("f32[1,1,4,6]", "{kernel_shape = [2, 3], strides = [1, 2]}"), {{"x", nans}}},
      {withIndices("f32[1,1,2,2]",
                   "{kernel_shape = [2, 2], pads = [2, 2, 0, 0], strides = [2, 2]}")},
  };
  expectHostRunsMatchReference(cases);
}

TEST(PoolHostRun, KernelsMatchTheReference) {
  const std::string x = "f32[2,3,7,8]";
  const std::vector<HostCase> cases = {
      {pool(x, "max_pool", "{kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]}")},
      {pool("f16[2,3,7,8]", "max_pool",
            "{kernel_shape = [3, 2], strides = [2, 3], pads = [1, 0, 2, "
            "1], ceil_mode = 1, dilations = [1, 2]}")},
      {pool("i8[1,2,9]", "max_pool", "{kernel_shape = [2], dilations = [2], pads = [1, 1]}")},
      {pool("u8[1,2,4,5,6]", "max_pool", "{kernel_shape = [2, 2, 2], strides = [2, 2, 1]}")},
      // Several outputs per thread (MaxPoolRowsShareTheirColumns): 8 with every window on the
      // input, 2 with windows wholly in the padding, 8 with a dilated outer axis (selects), a
      // ceil_mode window past the end, 1-D and 3-D.
      {pool("i8[2,3,10,16]", "max_pool", "{kernel_shape = [3, 3], pads = [1, 1, 1, 1]}")},
      {pool("u8[2,3,10,16]", "max_pool",
            "{kernel_shape = [2, 2], strides = [2, 2], pads = [2, 2, 2, 2]}")},
      {pool("i8[1,2,6,16]", "max_pool",
            "{kernel_shape = [3, 3], dilations = [2, 1], pads = [2, 1, 2, 1]}")},
      {pool("u8[1,2,10,16]", "max_pool",
            "{kernel_shape = [3, 3], strides = [2, 2], ceil_mode = 1}")},
      {pool("i8[1,2,32]", "max_pool", "{kernel_shape = [4], strides = [4]}")},
      {pool("u8[1,2,4,6,8]", "max_pool", "{kernel_shape = [2, 2, 3], pads = [0, 0, 1, 0, 0, 1]}")},
      // 9 window rows of 10 columns: the rows loop (past 64 loads unrolled).
      {pool("i8[1,2,5,6,16]", "max_pool", "{kernel_shape = [3, 3, 3], pads = [1, 1, 1, 1, 1, 1]}")},
      {pool(x, "average_pool", "{kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]}"),
       {},
       1e-6},
      {pool(x, "average_pool",
            "{kernel_shape = [3, 2], strides = [2, 3], pads = [1, 0, 2, 1], "
            "ceil_mode = 1, count_include_pad = 1}"),
       {},
       1e-6},
      {pool("bf16[2,3,7,8]", "average_pool",
            "{kernel_shape = [4, 3], strides = [3, 2], auto_pad = "
            "\"SAME_LOWER\", count_include_pad = 1}"),
       {},
       1e-2},
      {pool(x, "lp_pool", "{kernel_shape = [2, 2], p = 2}"), {}, 1e-6},
      {pool(x, "lp_pool", "{kernel_shape = [2, 3], p = 3, strides = [1, 2]}"), {}, 1e-5},
      {pool("f16[2,64,7,7]", "global_average_pool", ""), {}, 1e-3},
      {pool("f32[1,4,50,60]", "global_average_pool", ""), {}, 1e-6},
      {pool("f32[2,8,5,5]", "global_max_pool", ""), {}, 0},
      {pool("f32[1,3,70,40]", "global_max_pool", ""), {}, 0},
      {pool("f64[2,8,3]", "global_lp_pool", "{p = 3}"), {}, 1e-12},
      // Channels-last global pools (the layout pass's form of ResNet's head): a partial last
      // group of 32 channels, more pixels than warps, fewer pixels than warps, Lp's partial
      // sums combined as sums.
      {pool("f32[2,5,7,40]", "global_average_pool", "{channels_last = 1}"), {}, 1e-6},
      {pool("f16[3,2,2,64]", "global_max_pool", "{channels_last = 1}"), {}, 0},
      {pool("f32[1,6,33]", "global_lp_pool", "{p = 2, channels_last = 1}"), {}, 1e-5},
      // LRN: odd and even windows (the even one reaches one channel further after), clipped at
      // both ends; alpha large enough that the window's squares matter.
      {pool("f32[2,7,3,4]", "lrn", "{size = 5, alpha = 0.5, beta = 0.75, bias = 2.0}"), {}, 1e-5},
      {pool("f32[1,6,5]", "lrn", "{size = 2, alpha = 1.0, beta = 0.5, bias = 1.0}"), {}, 1e-5},
      {pool("f16[1,5,2,2]", "lrn", "{size = 3, alpha = 0.3}"), {}, 1e-2},
      {R"(graph @g(%x: f16[2,16,7,7], %b: f16[1,16,1,1]) -> (y: ?) {
  %p = global_average_pool(%x) : ?
  %s = add(%p, %b) : ?
  %y = relu(%s) : ?
  return %y
})",
       {},
       1e-3},
      {R"(graph @g(%x: f32[1,4,9,9], %r: f32[1,4,5,5]) -> (y: ?) {
  %p = max_pool(%x) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]} : ?
  %y = add(%p, %r) : ?
  return %y
})",
       {},
       1e-6},
      {R"(graph @g(%x: f16[2,7,7,96], %b: f16[1,96,1,1]) -> (y: ?) {
  %p = global_average_pool(%x) {channels_last = 1} : ?
  %s = add(%p, %b) : ?
  %y = relu(%s) : ?
  return %y
})",
       {},
       1e-3},
      {R"(graph @g(%x: i8[1,4,9,16], %r: f32[1,4,5,8]) -> (y: ?) {
  %p = max_pool(%x) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]} : ?
  %c = cast(%p) {to = f32} : ?
  %y = add(%c, %r) : ?
  return %y
})",
       {},
       1e-6},
  };
  expectHostRunsMatchReference(cases);
}

} // namespace
} // namespace dlc::codegen
