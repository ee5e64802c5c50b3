// planMemory: on random graphs, no two values alive at the same step share bytes, views share
// their root's memory, fused intermediates get none; and a simulated run that keeps every
// value only in a byte arena at its planned offset reproduces the reference executor.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "ir/eval/eval.h"
#include "numerics_util.h"
#include "pass_test_util.h"
#include "passes/plan_memory.h"
#include "random_graph.h"

namespace dlc {
namespace {

using testing::parsed;

const ArenaBuffer *bufferOf(const MemoryPlan &plan, const Value *v) {
  while (true) {
    auto it = plan.slots.find(v);
    if (it == plan.slots.end())
      return nullptr;
    if (it->second.buffer >= 0)
      return &plan.buffers[static_cast<size_t>(it->second.buffer)];
    if (!it->second.aliasOf)
      return nullptr;
    v = it->second.aliasOf;
  }
}

/// Invariants that do not need running anything.
void checkPlan(const Graph &g, const MemoryPlan &plan) {
  const int end = static_cast<int>(plan.steps.size());
  for (const ArenaBuffer &b : plan.buffers) {
    EXPECT_EQ(b.offset % kArenaAlignment, 0u) << b.value->name();
    EXPECT_LE(b.offset + b.bytes, plan.arenaBytes) << b.value->name();
    EXPECT_LE(b.first, b.last) << b.value->name();
  }
  // Overlap freedom: buffers alive at a common step occupy disjoint bytes.
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    for (size_t j = i + 1; j < plan.buffers.size(); ++j) {
      const ArenaBuffer &a = plan.buffers[i], &b = plan.buffers[j];
      bool together = a.first <= b.last && b.first <= a.last;
      bool disjoint = a.offset + a.bytes <= b.offset || b.offset + b.bytes <= a.offset ||
                      a.bytes == 0 || b.bytes == 0;
      EXPECT_TRUE(!together || disjoint)
          << "%" << a.value->name() << " [" << a.first << ".." << a.last << "] at " << a.offset
          << " and %" << b.value->name() << " [" << b.first << ".." << b.last << "] at "
          << b.offset;
    }
  // Lifetimes cover every read and write, computed independently from the steps.
  for (int s = 0; s < end; ++s) {
    const NodeGroup &step = plan.steps[static_cast<size_t>(s)];
    std::set<const Node *> here(step.nodes.begin(), step.nodes.end());
    for (const Node *n : step.nodes) {
      for (const Value *in : n->inputs()) {
        if (!in || in->isConstant() || (in->producer() && here.count(in->producer())))
          continue;
        const ArenaBuffer *b = bufferOf(plan, in);
        if (!b) { // a view of a constant
          EXPECT_TRUE(plan.slots.count(in) && plan.slots.at(in).aliasOf) << in->name();
          continue;
        }
        EXPECT_LE(b->first, s) << in->name();
        EXPECT_GE(b->last, s) << in->name();
      }
      for (const Value *out : n->outputs()) {
        bool internal = out->hasUses() && !g.isOutput(out);
        for (const Use &u : out->uses())
          internal &= here.count(u.node) > 0 && step.nodes.size() > 1;
        const Slot &slot = plan.slots.at(out);
        if (internal) {
          EXPECT_EQ(plan.offsetOf(out), -1) << out->name();
        } else if (slot.aliasOf) {
          EXPECT_EQ(plan.offsetOf(out), plan.offsetOf(slot.aliasOf)) << out->name();
        } else {
          ASSERT_GE(slot.buffer, 0) << out->name();
          EXPECT_EQ(plan.buffers[static_cast<size_t>(slot.buffer)].first, s) << out->name();
        }
      }
    }
  }
  ASSERT_EQ(plan.outputBuffers.size(), g.outputs().size());
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const ArenaBuffer &b = plan.buffers[static_cast<size_t>(plan.outputBuffers[i])];
    EXPECT_EQ(b.last, end) << g.outputs()[i].name;
    const ArenaBuffer *root = bufferOf(plan, g.outputs()[i].value);
    bool fromInputOrConstant = !root || root->value->isInput();
    EXPECT_EQ(b.copyFrom != nullptr, fromInputOrConstant) << g.outputs()[i].name;
  }
}

/// Runs the graph step by step keeping every value that has a buffer only in one byte arena
/// (values internal to a step live in a local map until the step ends). Returns the outputs.
std::vector<Tensor> simulate(const Graph &g, const MemoryPlan &plan,
                             const std::map<std::string, Tensor> &inputs) {
  std::vector<uint8_t> arena(plan.arenaBytes, 0xCD);
  auto store = [&](const Value *v, const Tensor &t) {
    int64_t at = plan.offsetOf(v);
    std::memcpy(arena.data() + at, t.raw(), static_cast<size_t>(t.byteSize()));
  };
  auto load = [&](const Value *v, uint64_t offset) {
    Tensor t = Tensor::zeros(v->dtype(), v->shape().sizes());
    std::memcpy(t.mutableRaw(), arena.data() + offset, static_cast<size_t>(t.byteSize()));
    return t;
  };
  std::map<const Value *, Tensor> outsideArena; // constants' views
  for (const Value *in : g.inputs())
    store(in, inputs.at(in->name()));
  for (const NodeGroup &step : plan.steps) {
    std::map<const Value *, Tensor> local;
    for (const Node *n : step.nodes) {
      std::vector<Tensor> args;
      for (const Value *in : n->inputs()) {
        if (!in)
          args.emplace_back();
        else if (in->isConstant())
          args.push_back(in->constant());
        else if (local.count(in))
          args.push_back(local.at(in));
        else if (outsideArena.count(in))
          args.push_back(outsideArena.at(in));
        else
          args.push_back(load(in, static_cast<uint64_t>(plan.offsetOf(in))));
      }
      auto results = eval::evaluate(*n, args);
      EXPECT_TRUE(results) << results.status().message();
      if (!results)
        return {};
      for (int i = 0; i < n->numOutputs(); ++i) {
        const Value *out = n->output(i);
        if (!out)
          continue;
        local[out] = (*results)[static_cast<size_t>(i)];
        if (plan.offsetOf(out) >= 0)
          store(out, local[out]);
        else if (plan.slots.at(out).aliasOf)
          outsideArena[out] = local[out];
      }
    }
  }
  for (const ArenaBuffer &b : plan.buffers)
    if (b.copyFrom) {
      Tensor t = b.copyFrom->isConstant() ? b.copyFrom->constant()
                                          : load(b.copyFrom, plan.offsetOf(b.copyFrom));
      std::memcpy(arena.data() + b.offset, t.raw(), static_cast<size_t>(t.byteSize()));
    }
  std::vector<Tensor> outs;
  for (size_t i = 0; i < g.outputs().size(); ++i)
    outs.push_back(load(g.outputs()[i].value,
                        plan.buffers[static_cast<size_t>(plan.outputBuffers[i])].offset));
  return outs;
}

void expectSimulationMatches(const Graph &g, const MemoryPlan &plan, uint64_t seed) {
  auto inputs = testing::randomInputs(g, seed);
  auto ex = ReferenceExecutor::create(g);
  ASSERT_TRUE(ex);
  auto want = ex->run(inputs);
  ASSERT_TRUE(want) << want.status().message();
  std::vector<Tensor> got = simulate(g, plan, inputs);
  ASSERT_EQ(got.size(), want->size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_TRUE(got[i].identical((*want)[i].tensor)) << "output " << (*want)[i].name;
}

TEST(PlanMemoryRandomGraphs, NoOverlapAndTheArenaReproducesTheReference) {
  uint64_t arena = 0, unshared = 0;
  for (uint64_t seed = 0; seed < 150; ++seed) {
    SCOPED_TRACE(seed);
    auto g = testing::randomGraph(seed, {.nodes = 30, .cpuPercent = 0});
    // Half the graphs are fused first, so that groups have internal values.
    auto prepared = testing::after(*g, seed % 2 ? "fuse" : "cse");
    auto plan = planMemory(*prepared);
    ASSERT_TRUE(plan) << plan.status().message();
    checkPlan(*prepared, *plan);
    expectSimulationMatches(*prepared, *plan, seed);
    arena += plan->arenaBytes;
    unshared += plan->unsharedBytes();
  }
  // Reuse happens: the random chains let most buffers share.
  EXPECT_LT(arena * 2, unshared);
}

TEST(PlanMemory, ViewsAliasTheirRootAndOutputsOfInputsAreCopies) {
  auto g = parsed(R"(
graph @views(%x: f32[4,8]) -> (v: ?, same: ?, cv: ?, id: ?) {
  %flat = constant i64[1] dense<[32]>
  %ax1 = constant i64[1] dense<[1]>
  %c = constant f32[2,2] dense<[1.0, 2.0, 3.0, 4.0]>
  %r = relu(%x) : f32[4,8]
  %f = reshape(%r, %flat) : f32[32]
  %u = unsqueeze(%f, %ax1) : f32[32,1]
  %cv = flatten(%c) : f32[2,2]
  %id = identity(%x) : f32[4,8]
  %e = exp(%u) : f32[32,1]
  return %e, %x, %cv, %id
}
)");
  ASSERT_TRUE(g);
  auto plan = planMemory(*g);
  ASSERT_TRUE(plan) << plan.status().message();
  checkPlan(*g, *plan);
  auto v = [&](std::string_view name) { return g->findValue(name); };
  // %f and %u are views of %r, whose buffer lives until %e reads %u (step 5).
  EXPECT_EQ(plan->slots.at(v("u")).aliasOf, v("f"));
  EXPECT_EQ(plan->offsetOf(v("u")), plan->offsetOf(v("r")));
  EXPECT_EQ(bufferOf(*plan, v("u"))->last, 5);
  // A view of a constant has no arena place; as an output it is copied, like %x and %id.
  EXPECT_EQ(plan->offsetOf(v("cv")), -1);
  for (size_t i : {1, 2, 3}) {
    const ArenaBuffer &b = plan->buffers[static_cast<size_t>(plan->outputBuffers[i])];
    EXPECT_NE(b.copyFrom, nullptr) << i;
    EXPECT_NE(b.offset, static_cast<uint64_t>(plan->offsetOf(v("x"))));
  }
  EXPECT_EQ(plan->buffers[static_cast<size_t>(plan->outputBuffers[2])].copyFrom, v("c"));
  expectSimulationMatches(*g, *plan, 3);
}

TEST(PlanMemory, ChainsReuseMemoryAndTheSummarySaysHowMuch) {
  std::string text = "graph @chain(%x: f32[1024]) -> (y: ?) {\n"
                     "  %zero = constant i64[] dense<[0]>\n"
                     "  %v0 = cumsum(%x, %zero) : f32[1024]\n";
  for (int i = 1; i < 10; ++i)
    text += fmt::format("  %v{} = cumsum(%v{}, %zero) : f32[1024]\n", i, i - 1);
  text += "  return %v9\n}\n";
  auto g = parsed(text);
  ASSERT_TRUE(g);
  auto plan = planMemory(*g);
  ASSERT_TRUE(plan);
  checkPlan(*g, *plan);
  // x for the whole run plus two 4 KiB slots that the chain alternates between.
  EXPECT_EQ(plan->arenaBytes, 3u * 4096);
  EXPECT_EQ(plan->summary(),
            "arena 12288 bytes for 11 values (sum of intermediates 45056 bytes, 72.7% reuse)");
}

TEST(PlanMemory, ValuesWithoutStaticShapesAreAnError) {
  auto g = parsed(R"(
graph @sym(%x: f32[N,4]) -> (y: ?) {
  %y = relu(%x) : f32[N,4] loc("r")
  return %y
}
)");
  ASSERT_TRUE(g);
  auto plan = planMemory(*g);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.status().message(),
            "%x (graph input) has no static type (f32[N,4]): bind the input shapes first");
}

} // namespace
} // namespace dlc
