// Numerics checks for rewriting passes: run a graph before and after a pass on the reference
// executor with the same random inputs and compare the outputs.
#pragma once

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "ir/clone.h"
#include "ir/parser.h"
#include "passes/pass_manager.h"
#include "runtime/random_tensor.h"
#include "runtime/reference_executor.h"

namespace dlc::testing {

/// Parses `text` and infers shapes; fails the test on error.
inline std::unique_ptr<Graph> parsed(const std::string &text) {
  auto g = parseGraph(text, "test.dlc");
  EXPECT_TRUE(g) << g.status().message();
  if (!g)
    return nullptr;
  Status st = inferShapes(**g);
  EXPECT_TRUE(st.isOk()) << st.message();
  return std::move(*g);
}

/// Random inputs for every graph input (static shapes), uniform in [-1, 1) for floats.
inline std::map<std::string, Tensor> randomInputs(const Graph &g, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::map<std::string, Tensor> inputs;
  for (const Value *in : g.inputs())
    inputs[in->name()] = randomTensor(in->dtype(), in->shape().sizes(), rng).value();
  return inputs;
}

/// Runs both graphs on the same random inputs (those named in `given` given); every output
/// element must agree within `tol * (1 + |expected|)`.
inline void expectSameResults(const Graph &before, const Graph &after, double tol,
                              uint64_t seed = 1, const std::map<std::string, Tensor> &given = {}) {
  auto inputs = randomInputs(before, seed);
  for (const auto &[name, t] : given)
    inputs[name] = t;
  auto a = ReferenceExecutor::create(before);
  auto b = ReferenceExecutor::create(after);
  ASSERT_TRUE(a && b);
  auto ra = a->run(inputs);
  auto rb = b->run(inputs);
  ASSERT_TRUE(ra) << ra.status().message();
  ASSERT_TRUE(rb) << rb.status().message();
  ASSERT_EQ(ra->size(), rb->size());
  for (size_t i = 0; i < ra->size(); ++i) {
    const Tensor &x = (*ra)[i].tensor, &y = (*rb)[i].tensor;
    ASSERT_EQ(x.type(), y.type()) << (*ra)[i].name;
    double worst = 0;
    for (int64_t k = 0; k < x.numElements(); ++k) {
      double e = x.elementAsDouble(k), got = y.elementAsDouble(k);
      worst = std::max(worst, std::abs(e - got) / (1 + std::abs(e)));
    }
    EXPECT_LE(worst, tol) << "output " << (*ra)[i].name;
  }
}

/// Clones `g`, runs `pipeline` on the clone and returns it; fails the test on error.
inline std::unique_ptr<Graph> after(const Graph &g, const std::string &pipeline,
                                    std::ostream *log = nullptr) {
  std::unique_ptr<Graph> out = cloneGraph(g);
  auto p = parsePipeline(pipeline);
  EXPECT_TRUE(p) << p.status().message();
  PipelineOptions opts;
  opts.verifyEach = true;
  if (log) {
    opts.err = log;
    for (const PipelineEntry &e : p->passes)
      opts.debugOnly.push_back(e.name);
  }
  Status st = runPipeline(*out, *p, opts);
  EXPECT_TRUE(st.isOk()) << st.message();
  return out;
}

/// How many nodes of `g` have op `op`.
inline int countOps(const Graph &g, Op op) {
  int n = 0;
  for (const Node *node : g.nodes())
    n += node->op() == op;
  return n;
}

} // namespace dlc::testing
