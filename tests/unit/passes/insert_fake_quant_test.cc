// insert-fake-quant, numerically: the Q/DQ graph on the reference backend against the float
// graph. A quantized conv and matmul stay within the error their scales allow (per channel:
// channels of very different magnitude each keep their precision); the range-mismatch policies
// on a feature map added to a mask keep (float, requantize) or erase (ignore) the feature map.
#include <cstdio>

#include <gtest/gtest.h>

#include "ir/annotations/quant_ranges.h"
#include "ir/eval/eval.h"
#include "ir/match.h"
#include "numerics_util.h"
#include "pass_test_util.h"

namespace dlc {
namespace {

using testing::countOps;

/// A tensor of `shape` uniform in [lo, hi).
Tensor uniform(std::vector<int64_t> shape, double lo, double hi, std::mt19937_64 &rng) {
  Tensor t = randomTensor(DType::kF32, shape, rng).value(); // [-1, 1)
  float *p = t.mutableData<float>();
  for (int64_t i = 0; i < t.numElements(); ++i)
    p[i] = static_cast<float>(lo + (hi - lo) * (p[i] + 1) / 2);
  return t;
}

/// Output `name` of `g` run on `inputs`.
Tensor runFor(const Graph &g, const std::map<std::string, Tensor> &inputs,
              const std::string &name) {
  auto exec = ReferenceExecutor::create(g);
  EXPECT_TRUE(exec) << exec.status().message();
  auto out = exec->run(inputs);
  EXPECT_TRUE(out) << out.status().message();
  for (NamedTensor &t : *out)
    if (t.name == name)
      return t.tensor;
  ADD_FAILURE() << "no output " << name;
  return Tensor();
}

/// The dequantized weight the pass gives `node`'s input 1: its dequantize_linear evaluated
/// (fold-constants keeps quantized weights quantized).
Tensor dequantizedWeight(const Graph &quantized, const std::string &node) {
  for (const Node *n : quantized.nodes()) {
    if (n->name() != node)
      continue;
    const Node *dq = n->input(1)->producer();
    if (!dq || dq->op() != Op::kDequantizeLinear)
      break;
    std::vector<Tensor> in;
    for (const Value *v : dq->inputs())
      in.push_back(v && v->isConstant() ? v->constant() : Tensor());
    auto out = eval::evaluate(*dq, in);
    EXPECT_TRUE(out) << out.status().message();
    return out ? (*out)[0] : Tensor();
  }
  ADD_FAILURE() << node << " has no dequantized constant weight";
  return Tensor();
}

// conv (4 output channels whose weights differ by 10x each) -> relu -> reshape -> matmul
// (columns differing by 10x each). Each output element's error is bounded by its dot
// product's terms: sum |w| * sx/2 + |x| * sw/2 + sx * sw/4 (sx: the activation's scale, sw: its
// channel's weight scale); one scale for all channels would break the bound on the small ones.
TEST(InsertFakeQuantNumerics, ConvAndMatMulWithinQuantizationError) {
  std::mt19937_64 rng(11);
  Graph g("g");
  Value *x = g.addInput("x", testing::f32({1, 3, 4, 4}));
  Tensor w = uniform({4, 3, 3, 3}, -1, 1, rng);
  for (int64_t i = 0; i < w.numElements(); ++i)
    w.mutableData<float>()[i] *= static_cast<float>(std::pow(10.0, i / 27 - 2)); // 0.01 .. 10
  Tensor w2 = uniform({16, 3}, -1, 1, rng);
  for (int64_t i = 0; i < w2.numElements(); ++i)
    w2.mutableData<float>()[i] *= static_cast<float>(std::pow(10.0, i % 3 - 1)); // 0.1 .. 10
  Node *conv = g.createNode(
      Op::kConv, {x, g.addConstant("w", w), g.addConstant("b", uniform({4}, -1, 1, rng))}, 1,
      "conv");
  Node *relu = g.createNode(Op::kRelu, {conv->output(0)}, 1, "relu");
  Node *flat = g.createNode(Op::kReshape,
                            {relu->output(0), g.addConstant("shape", Tensor::vectorI64({1, 16}))},
                            1, "flatten");
  Node *mm = g.createNode(Op::kMatMul, {flat->output(0), g.addConstant("w2", w2)}, 1, "fc");
  g.addOutput("y", mm->output(0));
  g.addOutput("c", conv->output(0));
  g.addOutput("f", flat->output(0));
  ASSERT_TRUE(inferShapes(g).isOk());

  // Calibrate on the inputs the test runs: the ranges are those of this very data.
  std::map<std::string, Tensor> inputs = {{"x", uniform({1, 3, 4, 4}, -1, 1, rng)}};
  Tensor f = runFor(g, inputs, "f");
  float fmax = 0;
  for (int64_t i = 0; i < f.numElements(); ++i)
    fmax = std::max(fmax, f.data<float>()[i]);
  writeRanges(g, {{x, {-1, 1}}, {flat->output(0), {0, fmax}}, {relu->output(0), {0, fmax}}});

  auto q = testing::after(g, "insert-fake-quant");
  EXPECT_EQ(countOps(*q, Op::kQuantizeLinear), 2);
  EXPECT_EQ(countOps(*q, Op::kDequantizeLinear), 4);

  // The conv: 3 x 3 x 3 terms per output, the input scale 1/127.
  const double sx = 1.0 / 127;
  Tensor cf = runFor(g, inputs, "c"), cq = runFor(*q, inputs, "c");
  const float *xv = inputs["x"].data<float>();
  double worstConv = 0;
  for (int64_t o = 0; o < 4; ++o) {
    double wmax = 0;
    for (int64_t k = 0; k < 27; ++k)
      wmax = std::max(wmax, std::abs(static_cast<double>(w.data<float>()[o * 27 + k])));
    const double sw = wmax / 127;
    for (int64_t oy = 0; oy < 2; ++oy)
      for (int64_t ox = 0; ox < 2; ++ox) {
        double bound = 0;
        for (int64_t c = 0; c < 3; ++c)
          for (int64_t ky = 0; ky < 3; ++ky)
            for (int64_t kx = 0; kx < 3; ++kx) {
              double wv = w.data<float>()[((o * 3 + c) * 3 + ky) * 3 + kx];
              double in = xv[(c * 4 + oy + ky) * 4 + ox + kx];
              bound += std::abs(wv) * sx / 2 + std::abs(in) * sw / 2 + sx * sw / 4;
            }
        int64_t at = (o * 2 + oy) * 2 + ox;
        double err = std::abs(cq.elementAsDouble(at) - cf.elementAsDouble(at));
        EXPECT_LE(err, bound * 1.001 + 1e-6) << "conv output channel " << o;
        worstConv = std::max(worstConv, err / (wmax * 27));
      }
  }
  EXPECT_GT(worstConv, 0.0) << "the conv was not quantized";

  // The matmul: 16 terms per output, the input scale fmax/127; the weight per column.
  const double sf = fmax / 127.0;
  Tensor yf = runFor(g, inputs, "y"), yq = runFor(*q, inputs, "y");
  Tensor fq = runFor(*q, inputs, "f"); // the float activation the matmul's Q/DQ sees
  Tensor w2dq = dequantizedWeight(*q, "fc");
  for (int64_t j = 0; j < 3; ++j) {
    double wmax = 0;
    for (int64_t k = 0; k < 16; ++k)
      wmax = std::max(wmax, std::abs(static_cast<double>(w2.data<float>()[k * 3 + j])));
    const double sw = wmax / 127;
    double bound = 0, exact = 0;
    for (int64_t k = 0; k < 16; ++k) {
      double wv = w2.data<float>()[k * 3 + j];
      // Weights: within half a step of their column's scale (round to nearest).
      EXPECT_LE(std::abs(w2dq.elementAsDouble(k * 3 + j) - wv), sw / 2 * 1.0001)
          << "w2[" << k << "," << j << "]";
      bound += std::abs(wv) * sf / 2 + std::abs(fq.elementAsDouble(k)) * sw / 2 + sf * sw / 4;
      exact += wv * fq.elementAsDouble(k);
    }
    // Against the matmul of the quantized graph's own float input, so that the conv's error
    // upstream does not count here.
    EXPECT_LE(std::abs(yq.elementAsDouble(j) - exact), bound * 1.001 + 1e-6) << "column " << j;
  }
  double worst = 0;
  for (int64_t j = 0; j < 3; ++j)
    worst = std::max(worst, std::abs(yq.elementAsDouble(j) - yf.elementAsDouble(j)));
  EXPECT_GT(worst, 0.0) << "the matmul was not quantized";
}

// The feature map %x in [-50, 50] added to the mask %m in [0, 10000] (half the positions 0,
// half 10000), then a matmul. The feature map's contribution to the add is
// sum(x, m) - sum(0, m) with `sum` the add's own result; its error against the float graph's,
// under each policy:
//   float:      the add computes in float: exactly 0;
//   requantize: x has its own scale 50/127: within one step (0.39);
//   ignore:     x shares 10050/127 = 79 with the mask: one or two levels, the feature map
//               erased (RMS error comparable to the feature map's own RMS).
class RangeMismatchTest : public ::testing::Test {
protected:
  Graph g{"mask"};
  std::map<std::string, Tensor> inputs, zeroed;

  void SetUp() override {
    std::mt19937_64 rng(5);
    Value *x = g.addInput("x", testing::f32({1, 64}));
    Value *m = g.addInput("m", testing::f32({1, 64}));
    Node *add = g.createNode(Op::kAdd, {x, m}, 1, "mask_add");
    Node *mm = g.createNode(
        Op::kMatMul, {add->output(0), g.addConstant("w", uniform({64, 8}, -1, 1, rng))}, 1, "fc");
    g.addOutput("z", mm->output(0));
    g.addOutput("sum", add->output(0));
    ASSERT_TRUE(inferShapes(g).isOk());
    writeRanges(g, {{x, {-50, 50}},
                    {m, {0, 10000}},
                    {add->output(0), {-50, 10050}},
                    {mm->output(0), {-5000, 5000}}});
    Tensor mask = Tensor::zeros(DType::kF32, {1, 64});
    for (int64_t i = 0; i < 64; i += 2)
      mask.mutableData<float>()[i] = 10000;
    inputs = {{"x", uniform({1, 64}, -50, 50, rng)}, {"m", mask}};
    zeroed = {{"x", Tensor::zeros(DType::kF32, {1, 64})}, {"m", mask}};
  }

  /// The feature map's contribution to output `out`: out(x, m) - out(0, m).
  std::vector<double> contribution(const Graph &graph, const std::string &out) {
    Tensor a = runFor(graph, inputs, out), b = runFor(graph, zeroed, out);
    std::vector<double> c;
    for (int64_t i = 0; i < a.numElements(); ++i)
      c.push_back(a.elementAsDouble(i) - b.elementAsDouble(i));
    return c;
  }

  struct Errors {
    double max = 0, rms = 0;
  };
  /// The error of the quantized graph's contribution against the float graph's.
  Errors error(const Graph &quantized, const std::string &out) {
    std::vector<double> want = contribution(g, out), got = contribution(quantized, out);
    Errors e;
    for (size_t i = 0; i < want.size(); ++i) {
      double d = std::abs(got[i] - want[i]);
      e.max = std::max(e.max, d);
      e.rms += d * d;
    }
    e.rms = std::sqrt(e.rms / static_cast<double>(want.size()));
    return e;
  }

  Errors run(const std::string &policy) {
    std::ostringstream log;
    auto q = testing::after(g, "insert-fake-quant{range-mismatch=" + policy + "}", &log);
    EXPECT_NE(log.str().find("node 'mask_add' (Add): input ranges %x [-50, 50] and %m [0, "
                             "10000] differ by a factor of 200 (more than range-ratio=64)"),
              std::string::npos)
        << log.str();
    Errors e = error(*q, "sum"), z = error(*q, "z");
    std::printf("range-mismatch=%s: error in the feature map's contribution to the add: max "
                "%.6g, rms %.6g; to the matmul after it: max %.6g\n",
                policy.c_str(), e.max, e.rms, z.max);
    return e;
  }

  double featureRms() const {
    double s = 0;
    const Tensor &x = inputs.at("x");
    for (int64_t i = 0; i < x.numElements(); ++i)
      s += x.elementAsDouble(i) * x.elementAsDouble(i);
    return std::sqrt(s / static_cast<double>(x.numElements()));
  }
};

TEST_F(RangeMismatchTest, FloatKeepsTheFeatureMapExactly) {
  Errors e = run("float");
  EXPECT_EQ(e.max, 0.0);
}

TEST_F(RangeMismatchTest, RequantizeKeepsItWithinOneStepOfItsOwnScale) {
  Errors e = run("requantize");
  EXPECT_GT(e.max, 0.0);
  EXPECT_LE(e.max, 50.0 / 127);
}

TEST_F(RangeMismatchTest, IgnoreErasesIt) {
  Errors e = run("ignore");
  EXPECT_GT(e.max, 25.0);               // half the feature map's range
  EXPECT_GT(e.rms, 0.5 * featureRms()); // comparable to its own magnitude
}

} // namespace
} // namespace dlc
