// expand-ops: RNN, GRU and LSTM unrolled into MatMuls and gate arithmetic, and BatchNormalization
// in training mode (or with statistics given at run time) into ReduceMean and elementwise ops,
// compute what the ops compute on the reference backend (random inputs, every direction,
// layout, optional input and attribute the rewrite handles); what it cannot rewrite stays,
// with the reason in the decision log.
#include <fmt/format.h>

#include <limits>

#include "numerics_util.h"
#include "runtime/tensor_compare.h"

namespace dlc {
namespace {

using testing::after;
using testing::countOps;
using testing::parsed;

struct RecurrentCase {
  std::string op = "lstm"; // rnn, gru, lstm
  std::string direction = "forward";
  int64_t layout = 0, seq = 3, batch = 2, input = 3, hidden = 4;
  bool bias = true, h0 = true, c0 = true, peepholes = false, seqLens = false;
  std::string attrs; // extra attributes, ", name = value" each
};

int64_t gates(const std::string &op) { return op == "rnn" ? 1 : (op == "gru" ? 3 : 4); }

std::string dims(const std::vector<int64_t> &d) {
  return fmt::format("f32[{}]", fmt::join(d, ","));
}

/// The graph of one recurrent node with every input a graph input (sequence_lens a constant
/// equal to the sequence length) and every output returned.
std::string recurrentGraph(const RecurrentCase &c) {
  const int64_t dirs = c.direction == "bidirectional" ? 2 : 1, g = gates(c.op);
  const bool l1 = c.layout == 1;
  const std::vector<int64_t> x = l1 ? std::vector<int64_t>{c.batch, c.seq, c.input}
                                    : std::vector<int64_t>{c.seq, c.batch, c.input};
  const std::vector<int64_t> state = l1 ? std::vector<int64_t>{c.batch, dirs, c.hidden}
                                        : std::vector<int64_t>{dirs, c.batch, c.hidden};
  std::string ins =
      fmt::format("%x: {}, %w: {}, %r: {}", dims(x), dims({dirs, g * c.hidden, c.input}),
                  dims({dirs, g * c.hidden, c.hidden}));
  std::string args = "%x, %w, %r";
  if (c.bias)
    ins += fmt::format(", %b: {}", dims({dirs, 2 * g * c.hidden}));
  args += c.bias ? ", %b" : ", _";
  args += c.seqLens ? ", %lens" : ", _";
  if (c.h0)
    ins += fmt::format(", %h0: {}", dims(state));
  args += c.h0 ? ", %h0" : ", _";
  const bool lstm = c.op == "lstm";
  if (lstm) {
    if (c.c0)
      ins += fmt::format(", %c0: {}", dims(state));
    args += c.c0 ? ", %c0" : ", _";
    if (c.peepholes)
      ins += fmt::format(", %p: {}", dims({dirs, 3 * c.hidden}));
    args += c.peepholes ? ", %p" : ", _";
  }
  while (args.size() > 2 && args.substr(args.size() - 3) == ", _")
    args.resize(args.size() - 3);
  const std::string outs = lstm ? "%y, %yh, %yc" : "%y, %yh";
  std::string text =
      fmt::format("graph @rec({}) -> (y: ?, yh: ?{}) {{\n", ins, lstm ? ", yc: ?" : "");
  if (c.seqLens)
    text += fmt::format("  %lens = constant i32[{}] dense<[{}]>\n", c.batch,
                        fmt::join(std::vector<int64_t>(static_cast<size_t>(c.batch), c.seq), ", "));
  text += fmt::format(
      "  {} = {}({}) {{hidden_size = {}, direction = \"{}\", layout = {}{}}} : {}\n", outs, c.op,
      args, c.hidden, c.direction, c.layout, c.attrs, lstm ? "?, ?, ?" : "?, ?");
  text += fmt::format("  return {}\n}}", outs);
  return text;
}

void expectExpandedMatches(const RecurrentCase &c) {
  const std::string text = recurrentGraph(c);
  SCOPED_TRACE(text);
  std::unique_ptr<Graph> g = parsed(text);
  ASSERT_TRUE(g);
  std::unique_ptr<Graph> typed = after(*g, "infer-shapes");
  std::unique_ptr<Graph> x = after(*typed, "expand-ops,infer-shapes");
  ASSERT_TRUE(x);
  EXPECT_EQ(countOps(*x, Op::kRNN) + countOps(*x, Op::kGRU) + countOps(*x, Op::kLSTM), 0);
  // The recurrent products: one MatMul for the inputs and one (GRU: two) per step, per direction.
  const int64_t dirs = c.direction == "bidirectional" ? 2 : 1;
  EXPECT_EQ(countOps(*x, Op::kMatMul), dirs * (1 + c.seq * (c.op == "gru" ? 2 : 1)));
  for (uint64_t seed : {1, 2})
    testing::expectSameResults(*typed, *x, 2e-5, seed);
}

TEST(ExpandOps, RnnGruLstmMatchTheReferenceInEveryDirectionAndLayout) {
  for (const char *op : {"rnn", "gru", "lstm"})
    for (const char *direction : {"forward", "reverse", "bidirectional"})
      for (int64_t layout : {0, 1}) {
        RecurrentCase c;
        c.op = op;
        c.direction = direction;
        c.layout = layout;
        c.peepholes = std::string(op) == "lstm";
        expectExpandedMatches(c);
      }
}

TEST(ExpandOps, OptionalInputsAndAttributes) {
  RecurrentCase bare; // no bias, no initial state, a constant sequence_lens
  bare.bias = bare.h0 = bare.c0 = false;
  bare.seqLens = true;
  for (const char *op : {"rnn", "gru", "lstm"}) {
    bare.op = op;
    expectExpandedMatches(bare);
  }
  RecurrentCase c;
  c.op = "gru";
  c.attrs = ", linear_before_reset = 1, clip = 0.5";
  expectExpandedMatches(c);
  c.attrs = ", activations = [\"HardSigmoid\", \"Softsign\"], activation_alpha = [0.3], "
            "activation_beta = [0.4]";
  expectExpandedMatches(c);
  c.op = "lstm";
  c.peepholes = true;
  c.attrs = ", input_forget = 1, clip = 0.7";
  expectExpandedMatches(c);
  c.direction = "bidirectional";
  c.attrs = ", activations = [\"Sigmoid\", \"Relu\", \"Tanh\", \"HardSigmoid\", \"Elu\", "
            "\"ScaledTanh\"], activation_alpha = [0.2, 0.9, 1.5], activation_beta = [0.6, 0.5]";
  expectExpandedMatches(c);
  c.op = "rnn";
  c.attrs = ", activations = [\"Affine\", \"LeakyRelu\"], activation_alpha = [0.5, 0.1], "
            "activation_beta = [0.25]";
  expectExpandedMatches(c);
  c.seq = 1;
  c.attrs = ", activations = [\"ThresholdedRelu\", \"Softplus\"]";
  expectExpandedMatches(c);
}

TEST(ExpandOps, WhatCannotBeExpandedStaysWithItsReason) {
  std::unique_ptr<Graph> g = parsed(
      R"(graph @keep(%x: f32[3,2,3], %xl: f32[5,2,3], %w: f32[1,4,3], %r: f32[1,4,4], %lens: i32[2], %xi: i32[3,2,3], %wi: i32[1,4,3], %ri: i32[1,4,4]) -> (a: ?, b: ?, c: ?, d: ?) {
  _, %a = rnn(%x, %w, %r, _, %lens) {hidden_size = 4} : _, ?
  _, %b = rnn(%xl, %w, %r) {hidden_size = 4} : _, ? loc("long")
  _, %c = rnn(%x, %w, %r) {hidden_size = 4, place.request = "/device:CPU:0"} : _, ?
  _, %d = rnn(%xi, %wi, %ri) {hidden_size = 4} : _, ?
  return %a, %b, %c, %d
})");
  ASSERT_TRUE(g);
  std::ostringstream log;
  std::unique_ptr<Graph> x = after(*g, "infer-shapes,expand-ops{max-steps=4}", &log);
  ASSERT_TRUE(x);
  EXPECT_EQ(countOps(*x, Op::kRNN), 4);
  const std::string text = log.str();
  EXPECT_NE(text.find("kept: sequence_lens is not a constant"), std::string::npos) << text;
  EXPECT_NE(text.find("kept: 5 steps; expand-ops unrolls 1 to 4 (max-steps)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("kept: the model places it on the CPU"), std::string::npos) << text;
  EXPECT_NE(text.find("kept: X is i32[3,2,3]; only f32, f16 and bf16 are expanded"),
            std::string::npos)
      << text;
  // A constant sequence_lens shorter than the sequence would need masking: kept too.
  std::unique_ptr<Graph> shorter =
      parsed(R"(graph @short(%x: f32[3,2,3], %w: f32[1,4,3], %r: f32[1,4,4]) -> (a: ?) {
  %lens = constant i32[2] dense<[3, 2]>
  _, %a = rnn(%x, %w, %r, _, %lens) {hidden_size = 4} : _, ?
  return %a
})");
  ASSERT_TRUE(shorter);
  std::ostringstream log2;
  std::unique_ptr<Graph> y = after(*shorter, "infer-shapes,expand-ops", &log2);
  EXPECT_EQ(countOps(*y, Op::kRNN), 1);
  EXPECT_NE(log2.str().find("sequence_lens has 2, not the sequence length 3"), std::string::npos)
      << log2.str();
}

TEST(ExpandOps, BatchNormInTrainingModeAndWithRunTimeStatistics) {
  std::unique_ptr<Graph> g = parsed(
      R"(graph @bn(%x: f32[4,3,5,2], %s: f32[3], %b: f32[3], %m: f32[3], %v: f32[3], %x2: f32[6,3]) -> (y: ?, rm: ?, rv: ?, z: ?, w: ?) {
  %y, %rm, %rv = batch_normalization(%x, %s, %b, %m, %v) {training_mode = 1, momentum = 0.8, epsilon = 0.01} : ?, ?, ?
  %z = batch_normalization(%x2, %s, %b, %m, %v) {training_mode = 1} : ?
  %w = batch_normalization(%x, %s, %b, %m, %v) : ?
  return %y, %rm, %rv, %z, %w
})");
  ASSERT_TRUE(g);
  // Variances must be positive: shift the random statistics' input away from zero.
  std::unique_ptr<Graph> typed = after(*g, "infer-shapes");
  std::unique_ptr<Graph> x = after(*typed, "expand-ops,infer-shapes");
  ASSERT_TRUE(x);
  EXPECT_EQ(countOps(*x, Op::kBatchNormalization), 0);
  EXPECT_EQ(countOps(*x, Op::kReduceMean), 4); // mean and variance of the two training ones
  auto inputs = testing::randomInputs(*typed, 7);
  for (int64_t i = 0; i < 3; ++i)
    inputs["v"].mutableData<float>()[i] = 0.5f + std::abs(inputs["v"].data<float>()[i]);
  auto a = ReferenceExecutor::create(*typed);
  auto b = ReferenceExecutor::create(*x);
  ASSERT_TRUE(a && b);
  auto ra = a->run(inputs);
  auto rb = b->run(inputs);
  ASSERT_TRUE(ra && rb);
  ASSERT_EQ(ra->size(), rb->size());
  for (size_t i = 0; i < ra->size(); ++i) {
    const Tensor &want = (*ra)[i].tensor, &got = (*rb)[i].tensor;
    ASSERT_EQ(want.type(), got.type()) << (*ra)[i].name;
    for (int64_t k = 0; k < want.numElements(); ++k)
      EXPECT_NEAR(got.elementAsDouble(k), want.elementAsDouble(k),
                  1e-5 * (1 + std::abs(want.elementAsDouble(k))))
          << (*ra)[i].name << "[" << k << "]";
  }
  // Inference with constant statistics is fold-batchnorm's: kept.
  std::unique_ptr<Graph> c = parsed(R"(graph @c(%x: f32[2,3,4]) -> (y: ?) {
  %s = constant f32[3] dense<[1.0, 2.0, 3.0]>
  %y = batch_normalization(%x, %s, %s, %s, %s) : ?
  return %y
})");
  ASSERT_TRUE(c);
  EXPECT_EQ(countOps(*after(*c, "infer-shapes,expand-ops"), Op::kBatchNormalization), 1);
}

/// One Einsum node over inputs of the given types; every label of size `sizes[label]`.
std::string einsumGraph(const std::string &equation, const std::vector<std::string> &types) {
  std::string ins, args;
  for (size_t i = 0; i < types.size(); ++i) {
    ins += fmt::format("{}%a{}: {}", i ? ", " : "", i, types[i]);
    args += fmt::format("{}%a{}", i ? ", " : "", i);
  }
  return fmt::format("graph @e({}) -> (y: ?) {{\n  %y = einsum({}) {{equation = \"{}\"}} : ?\n"
                     "  return %y\n}}",
                     ins, args, equation);
}

TEST(ExpandOps, EinsumMatchesTheReference) {
  struct Case {
    const char *equation;
    std::vector<std::string> types;
  };
  const Case cases[] = {
      {"bij,bjk->bik", {"f32[2,3,4]", "f32[2,4,5]"}}, // batched MatMul
      {"ij,jk", {"f32[3,4]", "f32[4,2]"}},            // implicit output
      {"i,i", {"f32[5]", "f32[5]"}},                  // inner product: a scalar
      {"i,j->ij", {"f32[3]", "f32[4]"}},              // outer product: nothing contracted
      {"ij->i", {"f32[3,4]"}},
      {"ij->ji", {"f32[3,4]"}},
      {"ii->i", {"f32[4,4]"}},
      {"iii", {"f32[3,3,3]"}},         // a label three times: trace
      {"...ii->...i", {"f64[2,3,3]"}}, // the node test's batch diagonal
      {"bhqd,bhkd->bhqk", {"f32[2,3,4,8]", "f32[2,3,5,8]"}},
      {"abc,cd,de->ae", {"f32[2,3,4]", "f32[4,5]", "f32[5,2]"}},
      {"ij,ij->ij", {"f32[3,4]", "f32[3,4]"}},       // elementwise: everything kept
      {"...j,jk->...k", {"f32[2,3,4]", "f32[4,6]"}}, // an ellipsis on one side only
      {"ij,jk->ik", {"f64[3,4]", "f64[4,2]"}},       // f64: a broadcast product and a sum
      {"bij,bjk->bki", {"f16[2,3,4]", "f16[2,4,5]"}},
  };
  for (const Case &c : cases) {
    const std::string text = einsumGraph(c.equation, c.types);
    SCOPED_TRACE(text);
    std::unique_ptr<Graph> g = parsed(text);
    ASSERT_TRUE(g);
    std::unique_ptr<Graph> typed = after(*g, "infer-shapes");
    std::ostringstream log;
    std::unique_ptr<Graph> x = after(*typed, "expand-ops,infer-shapes", &log);
    ASSERT_TRUE(x);
    EXPECT_EQ(countOps(*x, Op::kEinsum), 0) << log.str();
    const bool half = c.types[0].rfind("f16", 0) == 0;
    testing::expectSameResults(*typed, *x, half ? 2e-3 : 1e-5);
  }
}

TEST(ExpandOps, EinsumThatCannotBeExpandedStays) {
  struct Case {
    const char *equation;
    std::vector<std::string> types;
    const char *why;
  };
  const Case cases[] = {
      {"ij,jk->ik", {"f32[3,1]", "f32[4,2]"}, "axes labelled 'j' have sizes 1 and 4"},
      {"ij->i", {"i32[3,4]"}, "input 0 is i32[3,4]; only f32, f16, bf16 and f64 are expanded"},
      {"ij,jk,kl->il",
       {"f64[64,64]", "f64[64,64]", "f64[64,64]"},
       "f64 has no GEMM kernel, and the product over every label has 16777216 elements"},
  };
  for (const Case &c : cases) {
    std::unique_ptr<Graph> g = parsed(einsumGraph(c.equation, c.types));
    ASSERT_TRUE(g);
    std::ostringstream log;
    std::unique_ptr<Graph> x = after(*g, "infer-shapes,expand-ops", &log);
    EXPECT_EQ(countOps(*x, Op::kEinsum), 1) << c.equation;
    EXPECT_NE(log.str().find(c.why), std::string::npos) << log.str();
  }
}

TEST(ExpandOps, DropoutBecomesItsInputOrItsDraws) {
  std::unique_ptr<Graph> g = parsed(
      R"(graph @d(%x: f32[20,30], %t: bool[]) -> (a: ?, am: ?, b: ?, bm: ?, c: ?, cm: ?, d: ?) {
  %zero = constant f32[] dense<[0.0]>
  %half = constant f32[] dense<[0.5]>
  %yes = constant bool[] dense<[true]>
  %a, %am = dropout(%x) : ?, ?
  %b, %bm = dropout(%x, %zero, %yes) : ?, ?
  %c, %cm = dropout(%x, %half, %yes) {seed = 9} : ?, ?
  %d = dropout(%x, %half, %t) : ?
  return %a, %am, %b, %bm, %c, %cm, %d
})");
  ASSERT_TRUE(g);
  std::unique_ptr<Graph> typed = after(*g, "infer-shapes");
  std::ostringstream log;
  std::unique_ptr<Graph> x = after(*typed, "expand-ops,infer-shapes", &log);
  ASSERT_TRUE(x);
  // %d's training_mode is only known at run time.
  EXPECT_EQ(countOps(*x, Op::kDropout), 1) << log.str();
  EXPECT_NE(log.str().find("training_mode is not a constant"), std::string::npos) << log.str();
  EXPECT_EQ(countOps(*x, Op::kRandomUniformLike), 1) << log.str(); // %c's draws
  auto inputs = testing::randomInputs(*typed, 3);
  auto ra = ReferenceExecutor::create(*typed)->run(inputs);
  auto rb = ReferenceExecutor::create(*x)->run(inputs);
  ASSERT_TRUE(ra && rb);
  for (size_t i = 0; i < 7; ++i) { // the same types; the same values (c: within a rounding)
    const Tensor &want = (*ra)[i].tensor, &got = (*rb)[i].tensor;
    EXPECT_EQ(want.type(), got.type()) << (*ra)[i].name;
    if ((*ra)[i].name == "c")
      EXPECT_TRUE(compareTensors(got, want, {2.5e-7, 0}).match);
    else
      EXPECT_TRUE(want.identical(got)) << (*ra)[i].name;
  }
  // Half the elements dropped, roughly, and the kept ones scaled by 2.
  const Tensor &mask = (*rb)[5].tensor;
  int kept = 0;
  for (int64_t i = 0; i < mask.numElements(); ++i)
    kept += mask.data<bool>()[i];
  EXPECT_GT(kept, 240);
  EXPECT_LT(kept, 360);
}

TEST(ExpandOps, OneHotWithFloatIndicesTruncatesAndSkipsNaN) {
  std::unique_ptr<Graph> g = parsed(R"(graph @o(%i: f32[2,5]) -> (y: ?) {
  %depth = constant f32[] dense<[4.0]>
  %values = constant f32[2] dense<[-1.0, 3.0]>
  %y = one_hot(%i, %depth, %values) {axis = 1} : ?
  return %y
})");
  ASSERT_TRUE(g);
  std::unique_ptr<Graph> typed = after(*g, "infer-shapes");
  std::unique_ptr<Graph> x = after(*typed, "expand-ops,infer-shapes");
  ASSERT_TRUE(x);
  ASSERT_EQ(countOps(*x, Op::kOneHot), 1);
  ASSERT_EQ(countOps(*x, Op::kCast), 1); // the one left reads int64 indices
  const float nan = std::numeric_limits<float>::quiet_NaN(),
              inf = std::numeric_limits<float>::infinity();
  // Fractions truncate toward zero, negatives wrap, out of range / NaN / inf give an off row.
  Tensor ind = Tensor::fromVector<float>(
      DType::kF32, {2, 5}, {0.7f, -1.5f, 3.99f, 4.0f, nan, -4.0f, -4.5f, inf, -0.9f, 2e9f});
  auto ra = ReferenceExecutor::create(*typed)->run({{"i", ind}});
  auto rb = ReferenceExecutor::create(*x)->run({{"i", ind}});
  ASSERT_TRUE(ra && rb);
  EXPECT_TRUE((*ra)[0].tensor.identical((*rb)[0].tensor));
  // Integer indices have a kernel: kept.
  std::unique_ptr<Graph> ints = parsed(R"(graph @o(%i: i64[3]) -> (y: ?) {
  %depth = constant i64[] dense<[4]>
  %values = constant f32[2] dense<[0.0, 1.0]>
  %y = one_hot(%i, %depth, %values) : ?
  return %y
})");
  ASSERT_TRUE(ints);
  EXPECT_EQ(countOps(*after(*ints, "infer-shapes,expand-ops"), Op::kCast), 0);
}

TEST(ExpandOps, TheExpandedGraphKeepsTheModelsValueNames) {
  RecurrentCase c;
  c.op = "gru";
  std::unique_ptr<Graph> g = parsed(recurrentGraph(c));
  ASSERT_TRUE(g);
  std::unique_ptr<Graph> x = after(*g, "infer-shapes,expand-ops");
  ASSERT_TRUE(x);
  for (const char *name : {"y", "yh"}) {
    const Value *v = x->findValue(name);
    ASSERT_NE(v, nullptr) << name;
    ASSERT_NE(v->producer(), nullptr) << name;
    EXPECT_NE(v->producer()->op(), Op::kGRU);
  }
}

} // namespace
} // namespace dlc
