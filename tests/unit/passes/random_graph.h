// Random graphs for the fuse and plan-memory tests: static shapes, a mix of elementwise ops,
// anchors (matmul, reductions, softmax, transpose), opaque ops (cumsum), views (reshape) and
// nodes pinned to the CPU, with shape inference run.
#pragma once

#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ir/graph.h"
#include "passes/pass_manager.h"

namespace dlc::testing {

struct RandomGraphOptions {
  int nodes = 24;
  /// Percent of nodes placed on the CPU up front.
  int cpuPercent = 10;
  /// Return a graph input (and sometimes a constant) among the outputs.
  bool returnInputs = true;
};

inline std::unique_ptr<Graph> randomGraph(uint64_t seed, RandomGraphOptions opts = {}) {
  std::mt19937_64 rng(seed);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  auto g = std::make_unique<Graph>("random");
  const Shape wide{4, 8}, col{4, 1}, tall{8, 4};
  std::vector<Value *> values{g->addInput("x0", TensorType(DType::kF32, wide)),
                              g->addInput("x1", TensorType(DType::kF32, wide)),
                              g->addInput("x2", TensorType(DType::kF32, col))};
  auto ofShape = [&](const Shape &s) {
    std::vector<Value *> out;
    for (Value *v : values)
      if (v->shape() == s)
        out.push_back(v);
    return out;
  };
  auto any = [&](const Shape &s) -> Value * {
    std::vector<Value *> c = ofShape(s);
    return c.empty() ? nullptr : c[pick(c.size())];
  };
  std::vector<float> ident(64, 0.0f);
  for (int i = 0; i < 8; ++i)
    ident[static_cast<size_t>(i * 9)] = 0.5f;
  Value *w = g->addConstant("w", Tensor::fromVector<float>(DType::kF32, {8, 8}, ident));
  Value *axis1 = g->addConstant("axis1", Tensor::vectorI64({1}));
  Value *zero = g->addConstant("zero", Tensor::scalarI64(0));
  Value *toTall = g->addConstant("to_tall", Tensor::vectorI64({8, 4}));
  Value *toWide = g->addConstant("to_wide", Tensor::vectorI64({4, 8}));
  const Op unary[] = {Op::kRelu, Op::kTanh, Op::kSigmoid, Op::kNeg, Op::kAbs};
  const Op binary[] = {Op::kAdd, Op::kMul, Op::kSub, Op::kMax};

  // Output types are set as nodes are made, so that later picks by shape are right.
  auto make = [&](Op op, std::vector<Value *> ins, const Shape &out, const std::string &name) {
    Node *n = g->createNode(op, std::move(ins), 1, name);
    n->output(0)->setType(TensorType(DType::kF32, out));
    return n;
  };
  for (int i = 0; i < opts.nodes; ++i) {
    std::string name = "n" + std::to_string(i);
    Node *n = nullptr;
    switch (pick(10)) {
    case 0:
    case 1:
    case 2: {
      Value *a = values[pick(values.size())];
      n = make(unary[pick(5)], {a}, a->shape(), name);
      break;
    }
    case 3:
    case 4: {
      Value *a = values[pick(values.size())];
      Value *b = a->shape() == tall ? any(tall) : any(pick(2) ? wide : col);
      Shape out = a->shape() == col && b->shape() == col ? col : a->shape() == tall ? tall : wide;
      n = make(binary[pick(4)], {a, b}, out, name);
      break;
    }
    case 5:
      n = make(Op::kMatMul, {any(wide), w}, wide, name);
      break;
    case 6:
      n = pick(2) ? make(Op::kReduceSum, {any(wide), axis1}, col, name)
                  : make(Op::kSoftmax, {any(wide)}, wide, name);
      break;
    case 7: {
      Value *a = values[pick(values.size())];
      if (a->shape() == col)
        a = any(wide);
      bool isWide = a->shape() == wide;
      n = make(Op::kReshape, {a, isWide ? toTall : toWide}, isWide ? tall : wide, name);
      break;
    }
    case 8: {
      bool fromWide = pick(2) || ofShape(tall).empty();
      n = make(Op::kTranspose, {any(fromWide ? wide : tall)}, fromWide ? tall : wide, name);
      break;
    }
    default: {
      Value *a = values[pick(values.size())];
      n = make(Op::kCumSum, {a, zero}, a->shape(), name);
      break;
    }
    }
    if (static_cast<int>(pick(100)) < opts.cpuPercent)
      n->setDevice(Device::cpu());
    values.push_back(n->output(0));
  }
  // Outputs: the last value, a few random ones, maybe an input and a constant.
  g->addOutput("out", values.back());
  for (size_t k = 0, extra = pick(3); k < extra; ++k)
    g->addOutput("extra" + std::to_string(k), values[3 + pick(values.size() - 3)]);
  if (opts.returnInputs && pick(2))
    g->addOutput("in", values[pick(3)]);
  if (opts.returnInputs && pick(4) == 0)
    g->addOutput("const", toTall);
  Status st = inferShapes(*g);
  EXPECT_TRUE(st.isOk()) << st.message();
  return g;
}

} // namespace dlc::testing
