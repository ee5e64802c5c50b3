// The data-movement family without a GPU:
//  * index plans evaluated on the host pick exactly the elements the reference op produces
//    (the same expression trees the kernels print);
//  * Resize's tap tables, combined as the kernel combines them, match the reference;
//  * every op's kernel compiles with NVRTC for sm_90; key expressions are in the source;
//  * refusals carry their reason.
#include <gtest/gtest.h>

#include <cmath>

#include "codegen/data_movement_plan.h"
#include "codegen/index_expr.h"
#include "emit_test_util.h"
#include "host_check.h"
#include "ir/eval/eval.h"
#include "ir/ops/resize_plan.h"

namespace dlc::codegen {
namespace {

using namespace dlc::codegen::testing;

/// One single-op graph: `inputs` is the parameter list, `body` the statements.
std::string graph(const std::string &inputs, const std::string &body) {
  return "graph @g(" + inputs + ") -> (y: ?) {\n" + body + "\n  return %y\n}";
}

/// The plan of the graph's anchor, evaluated at every output element, copies exactly the
/// elements the reference evaluation produces.
void checkPlan(const std::string &text, const std::map<std::string, Tensor> &given = {}) {
  SCOPED_TRACE(text);
  auto g = parseInfer(text);
  ASSERT_TRUE(g);
  const Node *n = anchorOf(*g);
  ASSERT_NE(n, nullptr);
  std::vector<Tensor> in = nodeInputs(*n, given);
  auto ref = eval::evaluate(*n, in);
  ASSERT_TRUE(ref) << ref.status().message();
  auto plan = planMove(*n);
  ASSERT_TRUE(plan) << plan.status().message();
  std::map<const Value *, const Tensor *> data;
  for (int i = 0; i < n->numInputs(); ++i)
    if (n->input(i))
      data[n->input(i)] = &in[static_cast<size_t>(i)];
  auto load = [&](int b, int64_t off) {
    return data.at(plan->buffers[static_cast<size_t>(b)])->elementAsInt64(off);
  };
  const Tensor &want = (*ref)[0];
  ASSERT_GT(want.numElements(), 0);
  for (int64_t i = 0; i < want.numElements(); ++i) {
    MovePick pick = evalMove(*plan, i, load);
    ASSERT_NE(pick.source, nullptr) << "element " << i;
    if (pick.source->buffer < 0) {
      ASSERT_TRUE(sameElement(want, i, pick.source->literal, 0)) << "element " << i;
      continue;
    }
    const Tensor &src = *data.at(plan->buffers[static_cast<size_t>(pick.source->buffer)]);
    ASSERT_GE(pick.offset, 0) << "element " << i;
    ASSERT_LT(pick.offset, src.numElements()) << "element " << i;
    ASSERT_TRUE(sameElement(want, i, src, pick.offset))
        << "element " << i << " took offset " << pick.offset;
  }
}

TEST(IndexExpr, FoldsPrintsAndEvaluates) {
  const IndexExpr c = IndexExpr::var("c0");
  EXPECT_EQ((c * 1 + 0).str(), "c0");
  EXPECT_EQ((IndexExpr(3) * 4 + 1).str(), "13");
  EXPECT_EQ((c * 0 + 7).str(), "7");
  EXPECT_EQ((c % 1).str(), "0");
  EXPECT_EQ((c * 3000000000LL).str(), "(c0 * 3000000000LL)");
  const IndexExpr e = IndexExpr::select(c < 0, c + 5, IndexExpr::min(c, 4)) - 1;
  EXPECT_EQ(e.str(), "(((c0 < 0) ? (c0 + 5) : dlc_imin(c0, 4)) - 1)");
  IndexExpr::Env env;
  env.vars["c0"] = -2;
  EXPECT_EQ(e.eval(env), 2);
  env.vars["c0"] = 9;
  EXPECT_EQ(e.eval(env), 3);
  env.vars["c0"] = -7; // C semantics: -7 % 3 == -1
  EXPECT_EQ((c % 3).eval(env), -1);
  const IndexExpr l = IndexExpr::load("in1", c + 1);
  EXPECT_EQ(l.str(), "((long long)in1[(c0 + 1)])");
  env.load = [](const std::string &b, int64_t off) { return b == "in1" ? off * 10 : -1; };
  EXPECT_EQ(l.eval(env), -60);
}

TEST(DataMovementPlan, Transpose) {
  checkPlan(graph("%x: f32[3,4]", "  %y = transpose(%x) : ?"));
  checkPlan(graph("%x: f32[2,3,4,5]", "  %y = transpose(%x) {perm = [0, 2, 1, 3]} : ?"));
  checkPlan(graph("%x: f16[2,3,4,5]", "  %y = transpose(%x) {perm = [0, 2, 3, 1]} : ?"));
  checkPlan(graph("%x: i64[2,3,4,5]", "  %y = transpose(%x) {perm = [3, 0, 1, 2]} : ?"));
  checkPlan(graph("%x: bool[1,5,1,3]", "  %y = transpose(%x) {perm = [3, 1, 0, 2]} : ?"));
}

TEST(DataMovementPlan, CanonicalTransposeMergesAndDrops) {
  // [N, C, H, W] -> [N, H, W, C]: H and W stay adjacent.
  auto [dims, perm] = canonicalTranspose({2, 3, 4, 5}, {0, 2, 3, 1});
  EXPECT_EQ(dims, (std::vector<int64_t>{2, 3, 20}));
  EXPECT_EQ(perm, (std::vector<int64_t>{0, 2, 1}));
  auto [d2, p2] = canonicalTranspose({1, 6, 1, 7}, {2, 3, 0, 1});
  EXPECT_EQ(d2, (std::vector<int64_t>{6, 7}));
  EXPECT_EQ(p2, (std::vector<int64_t>{1, 0}));
  auto [d3, p3] = canonicalTranspose({2, 3, 4}, {0, 1, 2});
  EXPECT_EQ(d3, (std::vector<int64_t>{24}));
  EXPECT_EQ(p3, (std::vector<int64_t>{0}));
}

TEST(DataMovementPlan, Slice) {
  const std::string in = "%x: f32[5,6,7]";
  checkPlan(graph(in,
                  "  %s = constant i64[2] dense<[1, -5]>\n  %e = constant i64[2] dense<[4, 100]>"
                  "\n  %y = slice(%x, %s, %e) : ?"));
  checkPlan(graph(in, "  %s = constant i64[2] dense<[-1, 5]>\n  %e = constant i64[2] dense<[-100, "
                      "0]>\n  %a = constant i64[2] dense<[2, 0]>\n  %t = constant i64[2] "
                      "dense<[-2, -1]>\n  %y = slice(%x, %s, %e, %a, %t) : ?"));
  checkPlan(graph(in, "  %s = constant i32[1] dense<[0]>\n  %e = constant i32[1] dense<[7]>\n  %a "
                      "= constant i32[1] dense<[-1]>\n  %t = constant i32[1] dense<[3]>\n  %y = "
                      "slice(%x, %s, %e, %a, %t) : ?"));
}

TEST(DataMovementPlan, Concat) {
  checkPlan(graph("%a: f32[2,3,4], %b: f32[2,1,4], %c: f32[2,5,4]",
                  "  %y = concat(%a, %b, %c) {axis = 1} : ?"));
  checkPlan(graph("%a: i32[2,3], %b: i32[2,0], %c: i32[2,2]",
                  "  %y = concat(%a, %b, %c, %a) {axis = -1} : ?"));
  checkPlan(graph("%a: f16[2,3], %b: f16[4,3]", "  %y = concat(%a, %b) {axis = 0} : ?"));
}

TEST(DataMovementPlan, GatherWrapsNegativeIndices) {
  checkPlan(graph("%x: f32[5,4], %i: i64[3]", "  %y = gather(%x, %i) : ?"),
            {{"i", Tensor::vectorI64({4, -1, 0})}});
  checkPlan(graph("%x: f32[3,5,4], %i: i32[2,3]", "  %y = gather(%x, %i) {axis = 1} : ?"),
            {{"i", Tensor::fromVector<int32_t>(DType::kI32, {2, 3}, {0, -5, 4, 2, -1, 3})}});
  checkPlan(graph("%x: bf16[3,5,4], %i: i64[]", "  %y = gather(%x, %i) {axis = -1} : ?"),
            {{"i", Tensor::scalarI64(-3)}});
  checkPlan(graph("%x: f32[3,4], %i: i64[3,2]", "  %y = gather_elements(%x, %i) {axis = 1} : ?"),
            {{"i", Tensor::fromVector<int64_t>(DType::kI64, {3, 2}, {0, 3, -1, 2, -4, 1})}});
}

TEST(DataMovementPlan, PadEveryMode) {
  const std::string in = "%x: f32[3,4]";
  for (const char *mode : {"constant", "reflect", "edge", "wrap"}) {
    checkPlan(
        graph(in, "  %p = constant i64[4] dense<[1, 2, 2, 3]>\n  %y = pad(%x, %p) {mode = \"" +
                      std::string(mode) + "\"} : ?"));
    // Pads longer than the axis repeat (reflect, wrap) or clamp (edge).
    checkPlan(
        graph(in, "  %p = constant i64[4] dense<[0, 9, 7, 0]>\n  %y = pad(%x, %p) {mode = \"" +
                      std::string(mode) + "\"} : ?"));
    // Negative pads crop first.
    checkPlan(graph(in, "  %p = constant i64[4] dense<[-1, 2, 1, -2]>\n  %y = pad(%x, %p) {mode "
                        "= \"" +
                            std::string(mode) + "\"} : ?"));
  }
  checkPlan(graph(in, "  %p = constant i64[2] dense<[2, 1]>\n  %v = constant f32[] dense<[7.5]>\n "
                      " %a = constant i64[1] dense<[-1]>\n  %y = pad(%x, %p, %v, %a) : ?"));
  checkPlan(graph("%x: i64[1,5]", "  %p = constant i64[4] dense<[0, 3, 0, 4]>\n  %y = pad(%x, %p) "
                                  "{mode = \"reflect\"} : ?"));
}

TEST(DataMovementPlan, ExpandTileAndLayouts) {
  checkPlan(
      graph("%x: f32[3,1]", "  %s = constant i64[3] dense<[2, 3, 4]>\n  %y = expand(%x, %s) : ?"));
  checkPlan(graph("%x: u8[2,3]", "  %r = constant i64[2] dense<[2, 3]>\n  %y = tile(%x, %r) : ?"));
  checkPlan(graph("%x: f32[2,8,2,3]", "  %y = depth_to_space(%x) {blocksize = 2} : ?"));
  checkPlan(
      graph("%x: f32[2,8,2,3]", "  %y = depth_to_space(%x) {blocksize = 2, mode = \"CRD\"} : ?"));
  checkPlan(graph("%x: f32[2,3,4,6]", "  %y = space_to_depth(%x) {blocksize = 2} : ?"));
  checkPlan(graph("%x: f32[5,4]", "  %s = constant i64[2] dense<[2, 7]>\n  %y = "
                                  "center_crop_pad(%x, %s) : ?"));
}

TEST(DataMovementPlan, GeneratedTensors) {
  checkPlan(graph("%x: f32[2,4,5]", "  %k = constant i64[] dense<[1]>\n  %y = trilu(%x, %k) : ?"));
  checkPlan(graph("%x: f32[4,5]",
                  "  %k = constant i64[] dense<[-1]>\n  %y = trilu(%x, %k) {upper = 0} : ?"));
  checkPlan(graph("%x: f32[3,5]", "  %y = eye_like(%x) {k = 2, dtype = f16} : ?"));
  checkPlan(graph("%x: f32[4,3]", "  %y = eye_like(%x) {k = -1} : ?"));
  checkPlan(graph("", "  %s = constant i64[2] dense<[2, 3]>\n  %y = constant_of_shape(%s) {value "
                      "= i32[1] dense<[7]>} : ?"));
  checkPlan(graph("%i: i64[2,3]", "  %d = constant i64[] dense<[4]>\n  %v = constant f32[2] "
                                  "dense<[0.5, 2.0]>\n  %y = one_hot(%i, %d, %v) : ?"),
            {{"i", Tensor::fromVector<int64_t>(DType::kI64, {2, 3}, {0, -1, 3, 4, -5, -4})}});
  checkPlan(graph("%i: i32[3]", "  %d = constant i64[] dense<[3]>\n  %v = constant i64[2] "
                                "dense<[0, 9]>\n  %y = one_hot(%i, %d, %v) {axis = 0} : ?"),
            {{"i", Tensor::fromVector<int32_t>(DType::kI32, {3}, {2, 0, -2})}});
}

TEST(DataMovementPlan, SplitCoversEveryOutputOnce) {
  auto g = parseInfer(R"(graph @g(%x: f32[2,9,3]) -> (a: ?, b: ?, c: ?) {
  %s = constant i64[3] dense<[2, 3, 4]>
  %a, %b, %c = split(%x, %s) {axis = 1} : ?, ?, ?
  return %a, %b, %c
})");
  ASSERT_TRUE(g);
  const Node *n = anchorOf(*g);
  std::vector<Tensor> in = nodeInputs(*n, {});
  auto ref = eval::evaluate(*n, in);
  ASSERT_TRUE(ref) << ref.status().message();
  auto plan = planSplit(*n);
  ASSERT_TRUE(plan) << plan.status().message();
  std::map<std::pair<int, int64_t>, int> hits;
  for (int64_t i = 0; i < in[0].numElements(); ++i) {
    auto [t, off] = evalSplit(*plan, i);
    ASSERT_NE(t, nullptr);
    const int k = t->output->producerIndex();
    ASSERT_TRUE(sameElement((*ref)[static_cast<size_t>(k)], off, in[0], i)) << "element " << i;
    ++hits[{k, off}];
  }
  size_t total = 0;
  for (const Tensor &t : *ref)
    total += static_cast<size_t>(t.numElements());
  EXPECT_EQ(hits.size(), total);
}

/// Resize as the kernel computes it from the plan: per output element, the product of the
/// resized axes' tap weights over the taps' input elements; extrapolation_value when any
/// resized axis extrapolates.
void checkResize(const std::string &attrs, const std::string &shape, const std::string &consts,
                 const std::string &args) {
  const std::string text = graph("%x: f32[" + shape + "]",
                                 consts + "\n  %y = resize(%x, " + args + ") " + attrs + " : ?");
  SCOPED_TRACE(text);
  auto g = parseInfer(text);
  ASSERT_TRUE(g);
  const Node *n = anchorOf(*g);
  std::vector<Tensor> in = nodeInputs(*n, {});
  auto ref = eval::evaluate(*n, in);
  ASSERT_TRUE(ref) << ref.status().message();
  const std::vector<int64_t> xs = in[0].shape(), ys = (*ref)[0].shape();
  auto plan = ops::planResize(*n, xs, ys, in);
  ASSERT_TRUE(plan) << plan.status().message();
  std::string why;
  ASSERT_TRUE(gpuSupports(*n, &why)) << why;
  std::vector<int64_t> st(xs.size(), 1);
  for (size_t d = xs.size(); d-- > 1;)
    st[d - 1] = st[d] * xs[d];
  const Tensor x = in[0].castTo(DType::kF64), y = (*ref)[0].castTo(DType::kF64);
  for (int64_t i = 0; i < y.numElements(); ++i) {
    IndexExpr::Env env = coordinateEnv(ys, i);
    std::vector<std::pair<int64_t, double>> taps{{0, 1.0}};
    bool outside = false;
    for (size_t a = 0; a < xs.size(); ++a) {
      const size_t c = static_cast<size_t>(env.vars[fmt::format("c{}", a)]);
      const ops::ResizeAxisPlan &ap = plan->axes[a];
      if (ap.identity) {
        for (auto &t : taps)
          t.first += static_cast<int64_t>(c) * st[a];
        continue;
      }
      outside = outside || ap.extrapolate[c];
      if (outside)
        break;
      std::vector<std::pair<int64_t, double>> next;
      for (auto &t : taps)
        for (size_t k = ap.begin[c]; k < ap.begin[c + 1]; ++k)
          next.emplace_back(t.first + ap.index[k] * st[a], t.second * ap.weight[k]);
      taps = std::move(next);
    }
    double v = plan->extrapolation;
    if (!outside) {
      v = 0;
      for (auto &[off, w] : taps)
        v += w * x.data<double>()[off];
    }
    const double want = y.data<double>()[i];
    ASSERT_NEAR(v, want, 1e-4 * std::max(1.0, std::abs(want))) << "element " << i;
  }
}

TEST(DataMovementPlan, ResizeTapsMatchTheReference) {
  const std::string up = "  %s = constant f32[4] dense<[1.0, 1.0, 2.0, 1.5]>";
  for (const char *nm : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
    for (const char *ct : {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"})
      checkResize(fmt::format("{{mode = \"nearest\", nearest_mode = \"{}\", "
                              "coordinate_transformation_mode = \"{}\"}}",
                              nm, ct),
                  "1,2,3,4", up, "_, %s");
  for (const char *ct : {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
                         "half_pixel_symmetric"}) {
    checkResize(fmt::format("{{mode = \"linear\", coordinate_transformation_mode = \"{}\"}}", ct),
                "1,2,3,4", up, "_, %s");
    checkResize(fmt::format("{{mode = \"cubic\", coordinate_transformation_mode = \"{}\"}}", ct),
                "1,2,3,4", up, "_, %s");
  }
  // Sizes instead of scales, a downscale with antialias, exclude_outside, and
  // tf_crop_and_resize with extrapolation.
  checkResize("{mode = \"linear\"}", "1,1,5,7", "  %z = constant i64[4] dense<[1, 1, 3, 9]>",
              "_, _, %z");
  checkResize("{mode = \"linear\", antialias = 1}", "1,1,8,8",
              "  %z = constant i64[4] dense<[1, 1, 3, 5]>", "_, _, %z");
  checkResize("{mode = \"cubic\", exclude_outside = 1, cubic_coeff_a = -0.5}", "1,1,4,4",
              "  %s = constant f32[4] dense<[1.0, 1.0, 1.5, 2.0]>", "_, %s");
  checkResize("{mode = \"linear\", coordinate_transformation_mode = \"tf_crop_and_resize\", "
              "extrapolation_value = 9.0}",
              "1,1,4,4",
              "  %r = constant f32[8] dense<[0.0, 0.0, -0.2, 0.3, 1.0, 1.0, 0.6, 1.3]>\n  %z = "
              "constant i64[4] dense<[1, 1, 3, 3]>",
              "%r, _, %z");
}

TEST(DataMovementEmit, EveryOpCompilesForSm90) {
  const std::vector<std::string> texts = {
      graph("%x: f32[3,4]", "  %y = transpose(%x) : ?"),
      graph("%x: f16[2,64,12,64]", "  %y = transpose(%x) {perm = [0, 2, 3, 1]} : ?"),
      graph("%x: i64[2,3,4,5]", "  %y = transpose(%x) {perm = [0, 2, 1, 3]} : ?"),
      graph("%x: f32[5,6,7]", "  %s = constant i64[1] dense<[-1]>\n  %e = constant i64[1] "
                              "dense<[-100]>\n  %a = constant i64[1] dense<[1]>\n  %t = constant "
                              "i64[1] dense<[-2]>\n  %y = slice(%x, %s, %e, %a, %t) : ?"),
      graph("%a: bf16[2,3], %b: bf16[2,5]", "  %y = concat(%a, %b) {axis = 1} : ?"),
      graph("%x: f32[50,8], %i: i32[4,7]", "  %y = gather(%x, %i) : ?"),
      graph("%x: f32[3,4], %i: i64[3,2]", "  %y = gather_elements(%x, %i) {axis = 1} : ?"),
      graph("%x: f16[2,3,4]", "  %p = constant i64[6] dense<[0, 1, 2, 0, 1, 2]>\n  %y = pad(%x, "
                              "%p) {mode = \"reflect\"} : ?"),
      graph("%x: f32[3,4]", "  %p = constant i64[4] dense<[1, 1, 1, 1]>\n  %v = constant f32[] "
                            "dense<[2.0]>\n  %y = pad(%x, %p, %v) : ?"),
      graph("%x: u8[3,4]", "  %p = constant i64[4] dense<[1, 1, 1, 1]>\n  %y = pad(%x, %p) {mode "
                           "= \"wrap\"} : ?"),
      graph("%x: bool[3,1]", "  %s = constant i64[2] dense<[3, 4]>\n  %y = expand(%x, %s) : ?"),
      graph("%x: i32[2,3]", "  %r = constant i64[2] dense<[2, 2]>\n  %y = tile(%x, %r) : ?"),
      graph("%x: f32[1,8,2,3]", "  %y = depth_to_space(%x) {blocksize = 2} : ?"),
      graph("%x: f32[1,2,4,4]", "  %y = space_to_depth(%x) {blocksize = 2} : ?"),
      graph("%x: f32[4,5]", "  %k = constant i64[] dense<[1]>\n  %y = trilu(%x, %k) : ?"),
      graph("%x: f32[3,5]", "  %y = eye_like(%x) {k = 1, dtype = bf16} : ?"),
      graph("", "  %s = constant i64[1] dense<[5]>\n  %y = constant_of_shape(%s) {value = i64[1] "
                "dense<[-9223372036854775808]>} : ?"),
      graph("%i: i64[4]", "  %d = constant i64[] dense<[3]>\n  %v = constant f16[2] dense<[0.0, "
                          "1.0]>\n  %y = one_hot(%i, %d, %v) : ?"),
      graph("%x: f16[1,3,4,4]", "  %s = constant f32[4] dense<[1.0, 1.0, 2.0, 2.0]>\n  %y = "
                                "resize(%x, _, %s) : ?"),
      graph("%x: f32[1,3,4,4]", "  %s = constant f32[4] dense<[1.0, 1.0, 2.0, 2.0]>\n  %y = "
                                "resize(%x, _, %s) {mode = \"linear\"} : ?"),
      graph("%x: f64[1,1,4,4]", "  %r = constant f32[8] dense<[0.0, 0.0, 0.1, 0.1, 1.0, 1.0, 0.9, "
                                "1.2]>\n  %z = constant i64[4] dense<[1, 1, 3, 3]>\n  %y = "
                                "resize(%x, %r, _, %z) {mode = \"cubic\", "
                                "coordinate_transformation_mode = \"tf_crop_and_resize\"} : ?"),
      graph("%s: f32[], %l: f32[], %d: f32[]", "  %y = range(%s, %l, %d) : f32[7]"),
      graph("%s: i64[], %l: i64[], %d: i64[]", "  %y = range(%s, %l, %d) : i64[5]"),
  };
  std::string source;
  int count = 0;
  for (const std::string &t : texts) {
    SCOPED_TRACE(t);
    auto g = parseInfer(t);
    ASSERT_TRUE(g);
    std::string why;
    ASSERT_TRUE(gpuSupports(*anchorOf(*g), &why)) << why;
    source += emitSource(wholeGraph(*g, fmt::format("dm{}", count++)));
  }
  expectCompiles(source, "data_movement_ops");
}

TEST(DataMovementEmit, TransposeMovingTheInnerAxisUsesTiles) {
  // BERT's key transpose [B, H, S, D] -> [B, H, D, S], with a scale and bias epilogue.
  auto g = parseInfer(R"(graph @g(%x: f16[2,12,128,64], %b: f16[128]) -> (y: ?) {
  %t = transpose(%x) {perm = [0, 1, 3, 2]} : ?
  %y = add(%t, %b) : ?
  return %y
})");
  ASSERT_TRUE(g);
  KernelSet set;
  const std::string src = emitSource(wholeGraph(*g, "kt"), &set);
  ASSERT_EQ(set.kernels.size(), 1u);
  EXPECT_NE(src.find("__shared__ __half tile[32][33];"), std::string::npos) << src;
  EXPECT_NE(src.find("tile[ty + j][tx] = in0[inBase + a + b * 64];"), std::string::npos) << src;
  // The bias broadcasts along the output's last axis (S = 128): offset o % 128.
  EXPECT_NE(src.find("dlc_load(in1[(((o) % 128LL))])"), std::string::npos) << src;
  EXPECT_EQ(set.kernels[0].launch.block[0], 32u);
  EXPECT_EQ(set.kernels[0].launch.block[1], 8u);
  EXPECT_EQ(set.kernels[0].launch.grid[0], 2u * 12 * 2 * 4);
  EXPECT_EQ(set.kernels[0].params.size(), 3u);
  expectCompiles(src, "kt");
}

TEST(DataMovementEmit, TransposeKeepingTheInnerAxisMovesChunks) {
  // ViT's patch extraction: [8, 3, 14, 16, 14, 16] -> [8, 14, 14, 3, 16, 16]; each row of 16
  // halves is two 16-byte chunks.
  auto g = parseInfer(R"(graph @g(%x: f16[8,3,14,16,14,16]) -> (y: ?) {
  %y = transpose(%x) {perm = [0, 2, 4, 1, 3, 5]} : ?
  return %y
})");
  ASSERT_TRUE(g);
  KernelSet set;
  const std::string src = emitSource(wholeGraph(*g, "patches"), &set);
  ASSERT_EQ(set.kernels.size(), 1u);
  EXPECT_NE(src.find("const uint4 *src = reinterpret_cast<const uint4 *>(in0);"), std::string::npos)
      << src;
  EXPECT_NE(src.find("i < 150528;"), std::string::npos) << src; // 8 * 3 * 224 * 224 / 8
  EXPECT_NE(src.find("dst[i] = src[0 + c5 * 1 + c3 * 28 + c1 * 6272 + c4 * 2 + c2 * 448 + "
                     "c0 * 18816];"),
            std::string::npos)
      << src;
  expectCompiles(src, "patches");
  // An odd run of 4-byte elements, or an epilogue, keeps the element-wise kernel.
  for (const std::string &text :
       {graph("%x: f32[3,4,5]", "  %y = transpose(%x) {perm = [1, 0, 2]} : ?"),
        std::string(R"(graph @g(%x: f16[4,6,8]) -> (y: ?) {
  %t = transpose(%x) {perm = [1, 0, 2]} : ?
  %y = relu(%t) : ?
  return %y
})")}) {
    SCOPED_TRACE(text);
    auto h = parseInfer(text);
    ASSERT_TRUE(h);
    EXPECT_EQ(emitSource(wholeGraph(*h, "plain")).find("reinterpret_cast"), std::string::npos);
  }
}

TEST(DataMovementEmit, EpilogueRunsOnTheMovedElement) {
  auto g = parseInfer(R"(graph @g(%x: f32[4,6], %b: f32[4]) -> (y: ?) {
  %t = transpose(%x) : ?
  %s = add(%t, %b) : ?
  %y = relu(%s) : ?
  return %y
})");
  ASSERT_TRUE(g);
  const std::string src = emitSource(wholeGraph(*g, "t_add_relu"));
  EXPECT_NE(src.find("const float e = in0[(c0 + (c1 * 6))];"), std::string::npos) << src;
  EXPECT_NE(src.find("const float va = dlc_load(e);"), std::string::npos) << src;
  EXPECT_NE(src.find("dlc_relu("), std::string::npos) << src;
  EXPECT_NE(src.find("out0[i] = dlc_store<float>(v1);"), std::string::npos) << src;
  expectCompiles(src, "t_add_relu");
}

TEST(DataMovementEmit, SplitWritesEveryOutputInOneKernel) {
  auto g = parseInfer(R"(graph @g(%x: f16[2,9,3]) -> (a: ?, r: ?, c: ?) {
  %s = constant i64[3] dense<[2, 3, 4]>
  %a, %b, %c = split(%x, %s) {axis = 1} : ?, ?, ?
  %r = relu(%b) : ?
  return %a, %r, %c
})");
  ASSERT_TRUE(g);
  KernelSet set;
  const std::string src = emitSource(wholeGraph(*g, "split3"), &set);
  ASSERT_EQ(set.kernels.size(), 1u);
  EXPECT_NE(src.find("if ((c1 < 2)) {"), std::string::npos) << src;
  EXPECT_NE(src.find("} else if ((c1 < 5)) {"), std::string::npos) << src;
  EXPECT_NE(src.find("out0[o] = e;"), std::string::npos) << src;
  EXPECT_NE(src.find("dlc_relu("), std::string::npos) << src;
  EXPECT_NE(src.find("out2[o] = e;"), std::string::npos) << src;
  EXPECT_EQ(set.kernels[0].params.size(), 4u);
  expectCompiles(src, "split3");
}

TEST(DataMovementEmit, NearestResizeCopiesThroughTables) {
  auto g = parseInfer(graph("%x: i32[1,2,3,4]", "  %s = constant f32[4] dense<[1.0, 1.0, 2.0, "
                                                "2.0]>\n  %y = resize(%x, _, %s) : ?"));
  ASSERT_TRUE(g);
  const std::string src = emitSource(wholeGraph(*g, "up"));
  EXPECT_NE(src.find("static __device__ const int up_i2[6] = {0, 0, 4, 4, 8, 8};"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("const int e = in0[base + up_i2[c2] + up_i3[c3]];"), std::string::npos) << src;
  expectCompiles(src, "up");
}

/// Why the family refuses the graph's anchor (asked directly: a parameter that is not a
/// constant also leaves the output shape dynamic, which gpuSupports reports first).
std::string refusal(const std::string &text) {
  auto g = parseInfer(text);
  if (!g)
    return "parse failed";
  std::string why;
  EXPECT_FALSE(dataMovementFamily().supports(*anchorOf(*g), &why));
  return why;
}

TEST(DataMovementEmit, RefusalsSayWhy) {
  EXPECT_EQ(refusal(graph("%x: f32[5], %s: i64[1], %e: i64[1]", "  %y = slice(%x, %s, %e) : ?")),
            "input 'starts' of slice is not a constant");
  EXPECT_EQ(refusal(graph("%x: f32[5], %p: i64[2]", "  %y = pad(%x, %p) : f32[9]")),
            "input 'pads' of pad is not a constant");
  EXPECT_EQ(
      refusal(graph("%x: f32[1,1,2,2], %s: f32[4]", "  %y = resize(%x, _, %s) : f32[1,1,4,4]")),
      "input 'scales' of resize is not a constant");
  EXPECT_EQ(refusal(graph("%x: i32[1,1,2,2]", "  %s = constant f32[4] dense<[1.0, 1.0, 2.0, "
                                              "2.0]>\n  %y = resize(%x, _, %s) {mode = \"linear\"} "
                                              ": ?")),
            "mode 'linear' on i32 data is not supported (float types only)");
  EXPECT_EQ(refusal(graph("%i: f32[3]", "  %d = constant i64[] dense<[3]>\n  %v = constant f32[2] "
                                        "dense<[0.0, 1.0]>\n  %y = one_hot(%i, %d, %v) : ?")),
            "f32 indices are not supported (integer indices only)");
  EXPECT_EQ(refusal(graph("%x: f32[1,4]", "  %p = constant i64[4] dense<[0, 1, 0, -5]>\n  %y = "
                                          "pad(%x, %p) {mode = \"edge\"} : ?")),
            "pads (1, -5) crop more than axis 1 of size 4 holds");
  // roi matters only to tf_crop_and_resize.
  auto roi = parseInfer(graph("%x: f32[1,1,2,2], %r: f32[8]",
                              "  %s = constant f32[4] dense<[1.0, 1.0, 2.0, 2.0]>\n  %y = "
                              "resize(%x, %r, %s) : ?"));
  ASSERT_TRUE(roi);
  std::string reason;
  EXPECT_TRUE(dataMovementFamily().supports(*anchorOf(*roi), &reason)) << reason;
  EXPECT_EQ(refusal(graph("%x: f32[1,1,2,2], %r: f32[8]",
                          "  %s = constant f32[4] dense<[1.0, 1.0, 2.0, 2.0]>\n  %y = "
                          "resize(%x, %r, %s) {coordinate_transformation_mode = "
                          "\"tf_crop_and_resize\"} : ?")),
            "input 'roi' of resize is not a constant");
  // Views are lowering's business: the family claims nothing for them.
  auto g = parseInfer(graph("%x: f32[2,3]", "  %s = constant i64[1] dense<[6]>\n  %y = "
                                            "reshape(%x, %s) : ?"));
  ASSERT_TRUE(g);
  EXPECT_FALSE(dataMovementFamily().claims(g->nodes().back()));
}

TEST(DataMovementHostRun, KernelsMatchTheReference) {
  const std::string pads = "  %p = constant i64[6] dense<[0, 1, 2, 0, 1, 2]>\n";
  const std::vector<HostCase> cases = {
      {graph("%x: f32[3,4]", "  %y = transpose(%x) : ?")},
      {graph("%x: f16[2,40,3,24]", "  %y = transpose(%x) {perm = [0, 2, 3, 1]} : ?")},
      {graph("%x: f32[2,33,3,50]", "  %y = transpose(%x) {perm = [3, 1, 2, 0]} : ?")},
      {graph("%x: i64[2,3,4,5]", "  %y = transpose(%x) {perm = [0, 2, 1, 3]} : ?")},
      // The innermost run moved in 16-, 8- and 4-byte chunks (emitVectorTranspose).
      {graph("%x: f16[2,3,4,16,4,16]", "  %y = transpose(%x) {perm = [0, 2, 4, 1, 3, 5]} : ?")},
      {graph("%x: f32[3,5,6]", "  %y = transpose(%x) {perm = [1, 0, 2]} : ?")},
      {graph("%x: i8[2,3,8]", "  %y = transpose(%x) {perm = [1, 0, 2]} : ?")},
      {graph("%x: u8[4,5,12]", "  %y = transpose(%x) {perm = [1, 0, 2]} : ?")},
      {graph("%x: f16[3,4,5]", "  %y = transpose(%x) {perm = [1, 2, 0]} : ?")},
      {graph("%x: f16[3,4,5,2]", "  %y = transpose(%x) {perm = [2, 0, 1, 3]} : ?")},
      {graph("%x: f32[5,6,7]", "  %s = constant i64[2] dense<[-1, 1]>\n  %e = constant i64[2] "
                               "dense<[-100, 6]>\n  %a = constant i64[2] dense<[1, 2]>\n  %t = "
                               "constant i64[2] dense<[-2, 2]>\n  %y = slice(%x, %s, %e, %a, %t) : "
                               "?")},
      {graph("%a: bf16[2,3], %b: bf16[2,5], %c: bf16[2,1]",
             "  %y = concat(%a, %b, %c) {axis = 1} : ?")},
      {graph("%x: f32[50,8], %i: i32[4,7]", "  %y = gather(%x, %i) : ?"),
       {{"i", Tensor::fromVector<int32_t>(
                  DType::kI32, {4, 7}, {0,  1,  2,  49, -1, -50, 7,  8,  9,  10, 11, 12, 13, 14, 15,
                                        16, 17, 18, 19, 20, 21,  22, 23, 24, 25, 26, 27, -3})}}},
      {graph("%x: f32[3,4], %i: i64[3,2]", "  %y = gather_elements(%x, %i) {axis = 1} : ?"),
       {{"i", Tensor::fromVector<int64_t>(DType::kI64, {3, 2}, {0, 3, -1, 2, -4, 1})}}},
      {graph("%x: f16[2,3,4]", pads + "  %y = pad(%x, %p) {mode = \"reflect\"} : ?")},
      {graph("%x: f16[2,3,4]", pads + "  %y = pad(%x, %p) {mode = \"edge\"} : ?")},
      {graph("%x: f16[2,3,4]", pads + "  %y = pad(%x, %p) {mode = \"wrap\"} : ?")},
      {graph("%x: f32[3,4]", "  %p = constant i64[4] dense<[1, -1, 2, 1]>\n  %v = constant f32[] "
                             "dense<[2.5]>\n  %y = pad(%x, %p, %v) : ?")},
      {graph("%x: bool[3,1]",
             "  %s = constant i64[3] dense<[2, 3, 4]>\n  %y = expand(%x, %s) : ?")},
      {graph("%x: i32[2,3]", "  %r = constant i64[2] dense<[2, 2]>\n  %y = tile(%x, %r) : ?")},
      {graph("%x: f32[1,8,2,3]", "  %y = depth_to_space(%x) {blocksize = 2, mode = \"CRD\"} : ?")},
      {graph("%x: f32[1,2,4,4]", "  %y = space_to_depth(%x) {blocksize = 2} : ?")},
      {graph("%x: f32[5,4]",
             "  %s = constant i64[2] dense<[2, 7]>\n  %y = center_crop_pad(%x, %s) : ?")},
      {graph("%x: f32[2,4,5]", "  %k = constant i64[] dense<[-1]>\n  %y = trilu(%x, %k) : ?")},
      {graph("%x: f32[3,5]", "  %y = eye_like(%x) {k = 1, dtype = bf16} : ?")},
      {graph("", "  %s = constant i64[1] dense<[5]>\n  %y = constant_of_shape(%s) {value = "
                 "i64[1] dense<[-9223372036854775808]>} : ?")},
      {graph("%i: i64[4]", "  %d = constant i64[] dense<[3]>\n  %v = constant f16[2] dense<[0.5, "
                           "1.5]>\n  %y = one_hot(%i, %d, %v) : ?"),
       {{"i", Tensor::vectorI64({0, -1, 3, 2})}}},
      {graph("%x: i32[1,2,3,4]", "  %s = constant f32[4] dense<[1.0, 1.0, 2.0, 1.5]>\n  %y = "
                                 "resize(%x, _, %s) {nearest_mode = \"ceil\"} : ?")},
      {graph("%s: f32[], %l: f32[], %d: f32[]", "  %y = range(%s, %l, %d) : f32[7]"),
       {{"s", Tensor::scalarF32(1.5f)},
        {"l", Tensor::scalarF32(12.0f)},
        {"d", Tensor::scalarF32(1.5f)}}},
  };
  expectHostRunsMatchReference(cases);
}

TEST(DataMovementHostRun, InterpolationAndEpilogues) {
  const std::vector<HostCase> cases = {
      {graph("%x: f32[1,2,4,4]", "  %s = constant f32[4] dense<[1.0, 1.0, 2.0, 1.5]>\n  %y = "
                                 "resize(%x, _, %s) {mode = \"linear\"} : ?"),
       {},
       1e-5},
      {graph("%x: f32[1,1,4,5]", "  %s = constant f32[4] dense<[1.0, 1.0, 1.5, 2.0]>\n  %y = "
                                 "resize(%x, _, %s) {mode = \"cubic\", "
                                 "coordinate_transformation_mode = \"align_corners\"} : ?"),
       {},
       1e-5},
      {graph("%x: f64[1,1,4,4]", "  %r = constant f32[8] dense<[0.0, 0.0, -0.2, 0.3, 1.0, 1.0, "
                                 "0.6, 1.3]>\n  %z = constant i64[4] dense<[1, 1, 3, 3]>\n  %y = "
                                 "resize(%x, %r, _, %z) {mode = \"linear\", "
                                 "coordinate_transformation_mode = \"tf_crop_and_resize\", "
                                 "extrapolation_value = 7.0} : ?"),
       {},
       1e-9},
      {R"(graph @g(%x: f16[2,40,3,24], %b: f16[40]) -> (y: ?) {
  %t = transpose(%x) {perm = [0, 2, 3, 1]} : ?
  %s = add(%t, %b) : ?
  %y = relu(%s) : ?
  return %y
})",
       {},
       1e-3},
      {R"(graph @g(%x: f32[2,9,3]) -> (a: ?, r: ?, c: ?) {
  %s = constant i64[3] dense<[2, 3, 4]>
  %a, %b, %c = split(%x, %s) {axis = 1} : ?, ?, ?
  %n = neg(%b) : ?
  %r = cast(%n) {to = f16} : ?
  return %a, %r, %c
})",
       {},
       1e-3},
  };
  expectHostRunsMatchReference(cases);
}

} // namespace
} // namespace dlc::codegen
