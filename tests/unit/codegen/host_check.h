// Emitted kernels against the reference backend, on the host (host_emulator.h): each case is a
// small graph that becomes one fused group; its kernels run on distinct input data with poisoned
// outputs, and every group output is compared with the reference evaluation of the graph.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "emit_test_util.h"
#include "host_emulator.h"
#include "ir/eval/eval.h"
#include "tests/unit/ir/eval_nn_test_util.h"

namespace dlc::codegen::testing {

struct HostCase {
  std::string text;
  /// Data for graph inputs by name (others get distinctData, or boundedData with `bounded`).
  std::map<std::string, Tensor> given = {};
  /// Relative tolerance for float outputs; 0 compares bytes.
  double tolerance = 0;
  EmitOptions options = {};
  /// Float inputs not given get values in [-1, 1) instead of distinctData's ramps, which a
  /// half-precision product overflows to inf.
  bool bounded = false;
  /// The expected outputs are inf or NaN by design (a mean over nothing): not a sign that the
  /// data overflowed.
  bool nonFiniteExpected = false;
};

/// Values in [-1, 1) for float types (nntest::randomTensor), distinctData otherwise.
inline Tensor boundedData(const TensorType &t, uint32_t seed) {
  return isFloat(t.dtype) ? nntest::randomTensor(t.shape.sizes(), seed, t.dtype) : distinctData(t);
}

/// The graph evaluated node by node with the reference kernels.
inline std::map<const Value *, Tensor>
evalGraph(const Graph &g, const std::map<std::string, Tensor> &given, bool bounded = false) {
  std::map<const Value *, Tensor> values;
  uint32_t seed = 0;
  for (const Value *v : g.inputs())
    values[v] = given.count(v->name()) ? given.at(v->name())
                : bounded              ? boundedData(v->type(), ++seed)
                                       : distinctData(v->type());
  for (const Value *c : g.constants())
    values[c] = c->constant();
  for (const Node *n : g.nodes()) {
    std::vector<Tensor> in;
    for (const Value *v : n->inputs())
      in.push_back(v ? values.at(v) : Tensor());
    auto out = eval::evaluate(*n, in);
    EXPECT_TRUE(out) << out.status().message();
    if (!out)
      return values;
    for (int i = 0; i < n->numOutputs(); ++i)
      if (n->output(i))
        values[n->output(i)] = (*out)[static_cast<size_t>(i)];
  }
  return values;
}

/// Compares a kernel output with the reference, naming the first element that differs.
inline void expectClose(const Tensor &got, const Tensor &want, double tol, const std::string &what,
                        bool nonFiniteExpected = false) {
  ASSERT_EQ(got.numElements(), want.numElements()) << what;
  if (tol == 0 || !isFloat(want.dtype())) {
    for (int64_t i = 0; i < want.numElements(); ++i)
      ASSERT_TRUE(sameElement(got, i, want, i))
          << what << ": element " << i << " is " << got.elementAsDouble(i) << ", expected "
          << want.elementAsDouble(i);
    return;
  }
  int64_t nonFinite = 0;
  for (int64_t i = 0; i < want.numElements(); ++i)
    nonFinite += std::isfinite(want.elementAsDouble(i)) ? 0 : 1;
  if (!nonFiniteExpected) {
    EXPECT_LT(nonFinite * 2, std::max<int64_t>(want.numElements(), 1))
        << what << ": " << nonFinite << " of " << want.numElements()
        << " expected values are inf or NaN: the test data overflows the dtype, so the comparison "
           "says little";
  }
  for (int64_t i = 0; i < want.numElements(); ++i) {
    const double g = got.elementAsDouble(i), w = want.elementAsDouble(i);
    if (std::isnan(w) || std::isinf(w)) {
      ASSERT_TRUE(std::isnan(w) ? std::isnan(g) : g == w)
          << what << ": element " << i << " is " << g << ", expected " << w;
      continue;
    }
    ASSERT_LE(std::abs(g - w), tol * std::max(1.0, std::abs(w)))
        << what << ": element " << i << " is " << g << ", expected " << w;
  }
}

inline void expectHostRunsMatchReference(const std::vector<HostCase> &cases) {
  std::vector<std::unique_ptr<Graph>> graphs;
  std::vector<KernelSet> sets;
  std::string source;
  for (size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE(cases[c].text);
    graphs.push_back(parseInfer(cases[c].text));
    ASSERT_TRUE(graphs.back());
    KernelSet set;
    source +=
        emitSource(wholeGraph(*graphs.back(), fmt::format("case{}", c)), &set, cases[c].options);
    ASSERT_FALSE(set.kernels.empty());
    sets.push_back(std::move(set));
  }
  auto module = HostModule::build(source);
  ASSERT_TRUE(module) << module.status().message();
  for (size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE(cases[c].text);
    const Graph &g = *graphs[c];
    std::map<const Value *, Tensor> ref = evalGraph(g, cases[c].given, cases[c].bounded);
    std::map<const Value *, Tensor> buffers;
    // The group's scratch buffers, poisoned like outputs, shared by its kernels.
    std::vector<std::vector<unsigned char>> scratch;
    for (uint64_t bytes : sets[c].scratchBytes)
      scratch.emplace_back(static_cast<size_t>(std::max<uint64_t>(bytes, 1)), 0xA5);
    for (const Kernel &k : sets[c].kernels) {
      std::vector<void *> ptrs;
      for (const KernelParam &p : k.params) {
        if (!p.value) {
          ASSERT_LT(static_cast<size_t>(p.scratch), scratch.size());
          ptrs.push_back(scratch[static_cast<size_t>(p.scratch)].data());
          continue;
        }
        auto it = buffers.find(p.value);
        if (it == buffers.end()) {
          Tensor t;
          if (p.written) {
            t = Tensor::zeros(p.value->dtype(), p.value->shape().sizes());
            std::memset(t.mutableRaw(), 0xA5, static_cast<size_t>(t.byteSize())); // poison
          } else {
            t = ref.at(p.value).clone();
          }
          it = buffers.emplace(p.value, std::move(t)).first;
        }
        ptrs.push_back(it->second.mutableRaw());
      }
      Status s = (*module)->run(k, ptrs);
      ASSERT_TRUE(s.isOk()) << s.message();
    }
    for (const auto &o : g.outputs())
      expectClose(buffers.at(o.value), ref.at(o.value), cases[c].tolerance,
                  fmt::format("case{} output '{}'", c, o.name), cases[c].nonFiniteExpected);
  }
}

} // namespace dlc::codegen::testing
