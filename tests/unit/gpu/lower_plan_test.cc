// Lowering uses the memory plan the `plan-memory` pass printed: the offsets a dump shows are
// the offsets the program uses, and editing them in the text moves the program's buffers
// (runs everywhere: no NVRTC, no GPU).
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "codegen/lower.h"
#include "ir/annotations/memory_plan.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "runtime/gpu_program.h"
#include "runtime/jit/compile.h"

namespace dlc {
namespace {

// Two groups (matmul+relu, then cumsum alone), an output that returns an input (a copy), and
// a value returned twice.
std::unique_ptr<Graph> model() {
  std::string w;
  for (int i = 0; i < 64; ++i)
    w += (i ? ", " : "") + std::to_string(0.25 * (i % 7) - 0.5);
  std::string text = R"(graph @g(%x: f32[4,8]) -> (y: ?, z: ?, again: ?, same: ?) {
  %w = constant f32[8,8] dense<[)" +
                     w + R"(]>
  %axis = constant i64[] dense<[1]>
  %h = matmul(%x, %w) : f32[4,8]
  %y = relu(%h) : f32[4,8]
  %z = cumsum(%y, %axis) : f32[4,8]
  return %y, %z, %y, %x
})";
  auto g = parseGraph(text, "model.dlc");
  EXPECT_TRUE(g) << g.status().message();
  return std::move(*g);
}

/// The GPU pipeline's output, printed with its data, as `dlc compile --print-ir-after-all`
/// would show it.
std::string plannedText() {
  std::ostringstream sink;
  jit::JitOptions jo;
  jo.pipeline.out = &sink;
  jo.pipeline.err = &sink;
  auto g = jit::prepareForGpu(*model(), {}, jo);
  EXPECT_TRUE(g) << g.status().message();
  PrintOptions full;
  full.printConstants = true;
  return printGraph(**g, full);
}

rt::Program lower(const std::string &text) {
  auto g = parseGraph(text, "planned.dlc");
  EXPECT_TRUE(g) << g.status().message();
  codegen::LowerOptions lo;
  lo.compile = false;
  auto p = codegen::lowerToProgram(**g, lo);
  EXPECT_TRUE(p) << p.status().message();
  return std::move(*p);
}

/// `text` through the GPU pipeline and lowered (no NVRTC).
rt::Program compiled(const std::string &text) {
  auto g = parseGraph(text, "compiled.dlc");
  EXPECT_TRUE(g) << g.status().message();
  std::ostringstream sink;
  jit::JitOptions jo;
  jo.pipeline.out = &sink;
  jo.pipeline.err = &sink;
  auto prepared = jit::prepareForGpu(**g, {}, jo);
  EXPECT_TRUE(prepared) << prepared.status().message();
  codegen::LowerOptions lo;
  lo.compile = false;
  auto p = codegen::lowerToProgram(**prepared, lo);
  EXPECT_TRUE(p) << p.status().message();
  return std::move(*p);
}

/// Every arena offset the program's steps and tensors use.
std::vector<uint64_t> arenaOffsets(const rt::Program &p) {
  std::vector<uint64_t> out;
  auto add = [&](const rt::BufferRef &r) {
    if (r.space == rt::Space::kArena)
      out.push_back(r.offset);
  };
  for (const rt::ProgramTensor &t : p.inputs)
    add(t.buffer);
  for (const rt::ProgramTensor &t : p.outputs)
    add(t.buffer);
  for (const rt::Step &s : p.steps) {
    if (const auto *l = std::get_if<rt::LaunchStep>(&s))
      for (const rt::BufferRef &a : l->args)
        add(a);
    if (const auto *c = std::get_if<rt::CopyStep>(&s)) {
      add(c->src);
      add(c->dst);
    }
    if (const auto *h = std::get_if<rt::HostStep>(&s)) {
      for (const rt::BufferRef &a : h->inputs)
        add(a);
      for (const rt::BufferRef &a : h->outputs)
        add(a);
    }
  }
  return out;
}

/// The integers of annotation `name` in `text` (all occurrences, in order).
std::vector<int64_t> annotated(const std::string &text, const std::string &name) {
  std::vector<int64_t> out;
  std::regex re(name + R"( = (?:\[([-0-9, ]*)\]|(-?[0-9]+)))");
  for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it) {
    std::stringstream ss((*it)[1].matched ? (*it)[1].str() : (*it)[2].str());
    for (std::string item; std::getline(ss, item, ',');)
      out.push_back(std::stoll(item));
  }
  return out;
}

/// Adds `delta` to every non-negative offset of the plan's annotations and to the arena.
std::string shifted(const std::string &text, int64_t delta) {
  std::regex re(R"((mem\.(?:offset|inputs|outputs|arena) = )(\[[-0-9, ]*\]|[0-9]+))");
  std::string out;
  auto last = text.cbegin();
  for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it) {
    out.append(last, (*it)[0].first);
    std::string list = (*it)[2].str();
    std::string edited;
    std::regex num(R"(-?[0-9]+)");
    auto from = list.cbegin();
    for (std::sregex_iterator n(list.begin(), list.end(), num), e; n != e; ++n) {
      edited.append(from, (*n)[0].first);
      int64_t v = std::stoll((*n)[0].str());
      edited += std::to_string(v < 0 ? v : v + delta);
      from = (*n)[0].second;
    }
    edited.append(from, list.cend());
    out += (*it)[1].str() + edited;
    last = (*it)[0].second;
  }
  out.append(last, text.cend());
  return out;
}

TEST(LowerPlan, TheProgramUsesTheOffsetsTheDumpShows) {
  const std::string text = plannedText();
  ASSERT_NE(text.find("attributes {mem.arena = "), std::string::npos) << text;
  rt::Program p = lower(text);

  const std::vector<int64_t> inputs = annotated(text, "mem.inputs");
  ASSERT_EQ(inputs.size(), p.inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    EXPECT_EQ(p.inputs[i].buffer.offset, static_cast<uint64_t>(inputs[i])) << p.inputs[i].name;
  const std::vector<int64_t> outputs = annotated(text, "mem.outputs");
  ASSERT_EQ(outputs.size(), p.outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i)
    EXPECT_EQ(p.outputs[i].buffer.offset, static_cast<uint64_t>(outputs[i])) << p.outputs[i].name;
  // Returning the input %x needs a copy into the output's own place; %y returned twice is
  // one buffer.
  int copies = 0;
  for (const rt::Step &s : p.steps)
    copies += std::holds_alternative<rt::CopyStep>(s);
  EXPECT_EQ(copies, 1);
  EXPECT_EQ(p.outputs[0].buffer.offset, p.outputs[2].buffer.offset);

  // Every place a step reads or writes is one the dump printed.
  std::vector<int64_t> printed = annotated(text, "mem.offset");
  printed.insert(printed.end(), inputs.begin(), inputs.end());
  printed.insert(printed.end(), outputs.begin(), outputs.end());
  for (uint64_t offset : arenaOffsets(p))
    EXPECT_NE(std::find(printed.begin(), printed.end(), static_cast<int64_t>(offset)),
              printed.end())
        << "offset " << offset << " is not in the dump:\n"
        << text;
  ASSERT_EQ(annotated(text, "mem.arena").size(), 1u);
  EXPECT_EQ(p.arenaBytes, static_cast<uint64_t>(annotated(text, "mem.arena")[0]));
}

TEST(LowerPlan, EditingThePrintedPlanMovesTheProgramsBuffers) {
  const std::string text = plannedText();
  const std::string moved = shifted(text, 1024);
  ASSERT_NE(moved, text);
  rt::Program a = lower(text);
  rt::Program b = lower(moved);
  std::vector<uint64_t> before = arenaOffsets(a), after = arenaOffsets(b);
  ASSERT_EQ(before.size(), after.size());
  ASSERT_FALSE(before.empty());
  for (size_t i = 0; i < before.size(); ++i)
    EXPECT_EQ(after[i], before[i] + 1024) << i;
  EXPECT_EQ(b.arenaBytes, a.arenaBytes + 1024);
}

TEST(LowerPlan, CopiesBetweenDevicesAreAliasesOfTheirInput) {
  // A GPU backend without cumsum: it runs on the CPU, and insert-copies puts a copy of %y on
  // the edge. The copy launches nothing and makes no host step: the host step of cumsum reads
  // %y's own arena buffer (the runtime stages it to the host).
  std::ostringstream sink;
  jit::JitOptions jo;
  jo.pipeline.out = &sink;
  jo.pipeline.err = &sink;
  jo.pipeline.gpuSupport = [](const Node &n, std::string *why) {
    if (n.op() == Op::kCumSum) {
      *why = "no cumsum here";
      return false;
    }
    return codegen::gpuSupports(n, why);
  };
  auto g = jit::prepareForGpu(*model(), {}, jo);
  ASSERT_TRUE(g) << g.status().message();
  const Value *copy = (*g)->findValue("y.to_cpu");
  ASSERT_NE(copy, nullptr) << printGraph(**g);
  EXPECT_EQ(copy->producer()->op(), Op::kCopy);
  EXPECT_EQ(copy->producer()->device(), Device::cpu());
  EXPECT_NE(sink.str().find("1 Copy node was added to the graph: 1 to cpu"), std::string::npos)
      << sink.str();
  auto layout = readArenaLayout(**g);
  ASSERT_TRUE(layout) << layout.status().message();
  codegen::LowerOptions lo;
  lo.compile = false;
  auto p = codegen::lowerToProgram(**g, lo);
  ASSERT_TRUE(p) << p.status().message();
  int hostSteps = 0;
  for (const rt::Step &s : p->steps)
    if (const auto *h = std::get_if<rt::HostStep>(&s)) {
      ++hostSteps;
      EXPECT_EQ(h->origin, "node of op CumSum");
      ASSERT_EQ(h->inputs.size(), 1u);
      EXPECT_EQ(static_cast<int64_t>(h->inputs[0].offset), layout->offsetOf((*g)->findValue("y")));
    }
  EXPECT_EQ(hostSteps, 1);
}

/// Whether step `i` of `p` refers to `buf` (an argument, or a copy's source or destination).
bool refersTo(const rt::Program &p, size_t i, const rt::BufferRef &buf) {
  auto same = [&](const rt::BufferRef &r) {
    return r.space == buf.space && r.offset == buf.offset;
  };
  if (const auto *l = std::get_if<rt::LaunchStep>(&p.steps[i]))
    return std::any_of(l->args.begin(), l->args.end(), same);
  if (const auto *c = std::get_if<rt::CopyStep>(&p.steps[i]))
    return same(c->src) || same(c->dst);
  return false;
}

// Each output names the step that produces it (the runtime binds the caller's memory to that
// step's arguments and the later ones); what cannot be bound in place is left out of the plan.
TEST(LowerPlan, OutputsNameTheirFirstStepAndTheDirectPlanFollows) {
  rt::Program p = lower(plannedText());
  ASSERT_EQ(p.outputs.size(), 4u); // y, z, again (= y), same (= the input x)
  for (const rt::ProgramTensor &o : p.outputs) {
    ASSERT_GE(o.firstStep, 0) << o.name;
    ASSERT_LT(static_cast<size_t>(o.firstStep), p.steps.size()) << o.name;
    EXPECT_TRUE(refersTo(p, static_cast<size_t>(o.firstStep), o.buffer)) << o.name;
  }
  EXPECT_EQ(p.outputs[0].firstStep, 0) << "y: the matmul + relu kernel comes first";
  EXPECT_GT(p.outputs[1].firstStep, p.outputs[0].firstStep) << "z: cumsum reads y";
  EXPECT_EQ(p.outputs[2].firstStep, p.outputs[0].firstStep);
  EXPECT_TRUE(std::holds_alternative<rt::CopyStep>(p.steps[p.outputs[3].firstStep]));
  // z alone can be bound in place: y shares its buffer with `again`, `same` and the input x
  // are a copy's destination and source.
  std::vector<rt::DirectTensor> direct = rt::planDirectTensors(p);
  ASSERT_EQ(direct.size(), 1u);
  EXPECT_TRUE(direct[0].output);
  EXPECT_EQ(direct[0].index, 1u);
  ASSERT_FALSE(direct[0].args.empty());
  for (const rt::DirectTensor::Arg &a : direct[0].args) {
    EXPECT_GE(a.step, static_cast<size_t>(p.outputs[1].firstStep));
    EXPECT_EQ(a.offset, 0u);
  }

  // Without the copy and the second return, x and y are bound too; a program read from a
  // package without first steps binds its inputs only.
  rt::Program two = compiled(R"(graph @g(%x: f32[4,8]) -> (y: ?, z: ?) {
  %axis = constant i64[] dense<[1]>
  %y = relu(%x) : f32[4,8]
  %z = cumsum(%y, %axis) : f32[4,8]
  return %y, %z
})");
  EXPECT_EQ(rt::planDirectTensors(two).size(), 3u);
  for (rt::ProgramTensor &o : two.outputs)
    o.firstStep = -1;
  direct = rt::planDirectTensors(two);
  ASSERT_EQ(direct.size(), 1u);
  EXPECT_FALSE(direct[0].output);
}

// A tensor a kernel reads through a TMA descriptor is bound in place too (the session encodes
// the map again over the caller's memory), unless the map reaches past it.
TEST(LowerPlan, TensorMapsOverATensorAreRebound) {
  rt::Program p;
  p.arenaBytes = 4096;
  p.inputs = {{"x", DType::kF16, {32, 16}, {rt::Space::kArena, 0, 1024}}};
  p.outputs = {{"y", DType::kF16, {32, 16}, {rt::Space::kArena, 1024, 1024}, 0}};
  rt::LaunchStep l;
  l.kernel = "k";
  l.args = {{rt::Space::kArena, 1024, 1024}};
  rt::TensorMapArg m;
  m.buffer = {rt::Space::kArena, 0, 1024};
  m.dims[0] = 16, m.dims[1] = 32, m.pitchBytes = 32, m.box[0] = 16, m.box[1] = 32;
  l.tensorMaps = {m};
  p.steps.push_back(l);
  std::vector<rt::DirectTensor> direct = rt::planDirectTensors(p);
  ASSERT_EQ(direct.size(), 2u);
  EXPECT_FALSE(direct[0].output);
  EXPECT_TRUE(direct[0].args.empty());
  ASSERT_EQ(direct[0].maps.size(), 1u);
  EXPECT_EQ(direct[0].maps[0].step, 0u);
  EXPECT_EQ(direct[0].maps[0].arg, 0u);
  EXPECT_TRUE(direct[1].output);
  ASSERT_EQ(direct[1].args.size(), 1u);
  // A map over both x and y would still read the arena after either moved: neither is bound.
  std::get<rt::LaunchStep>(p.steps[0]).tensorMaps[0].buffer.bytes = 2048;
  EXPECT_TRUE(rt::planDirectTensors(p).empty());

  // As lowering makes them: a product on sm_90 reads both operands through maps.
  rt::Program mm =
      compiled(R"(graph @mm(%x: f16[2048,512], %w: f16[512,1024]) -> (y: f16[2048,1024]) {
  %y = matmul(%x, %w) : f16[2048,1024]
  return %y
})");
  ASSERT_EQ(mm.steps.size(), 1u);
  EXPECT_EQ(std::get<rt::LaunchStep>(mm.steps[0]).tensorMaps.size(), 2u);
  direct = rt::planDirectTensors(mm);
  ASSERT_EQ(direct.size(), 3u); // x and w through their maps, y through its pointer
  EXPECT_EQ(direct[0].maps.size(), 1u);
  EXPECT_EQ(direct[1].maps.size(), 1u);
  EXPECT_TRUE(direct[2].output);
  EXPECT_FALSE(direct[2].args.empty());
}

TEST(LowerPlan, MissingOrBrokenPlansAreRefused) {
  const std::string text = plannedText();
  codegen::LowerOptions lo;
  lo.compile = false;

  auto noPlan =
      parseGraph(std::regex_replace(text, std::regex(R"( attributes \{[^}]*\})"), ""), "x.dlc");
  ASSERT_TRUE(noPlan) << noPlan.status().message();
  auto p = codegen::lowerToProgram(**noPlan, lo);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.status().message(), "graph 'g' has no 'mem.arena' annotation: run plan-memory first");

  auto small = parseGraph(
      std::regex_replace(text, std::regex(R"(mem\.arena = [0-9]+)"), "mem.arena = 256"), "x.dlc");
  ASSERT_TRUE(small) << small.status().message();
  p = codegen::lowerToProgram(**small, lo);
  ASSERT_FALSE(p);
  EXPECT_NE(p.status().message().find("is not a 256-byte aligned place inside the arena of 256 "
                                      "bytes"),
            std::string::npos)
      << p.status().message();
}

} // namespace
} // namespace dlc

namespace dlc {
namespace {

// With EmitOptions::programmaticLaunch on sm_90 every kernel starts by waiting for the grids
// before it (dlc_grid_wait, or dlc_grid_dependency with earlyDependents: the wait, then
// launch_dependents) and its step says so, so that the session may launch it while the
// previous kernel runs (the default); not for sm_80, not with the option off.
TEST(LowerPlan, KernelsWaitForTheGridsBeforeThem) {
  const std::string text = plannedText();
  for (int sm : {90, 80}) {
    for (int mode : {0, 1, 2}) { // off, on, on with early dependents
      SCOPED_TRACE(fmt::format("sm_{}, mode {}", sm, mode));
      auto g = parseGraph(text, "planned.dlc");
      ASSERT_TRUE(g) << g.status().message();
      codegen::LowerOptions lo;
      lo.compile = false;
      lo.emit.smVersion = lo.nvrtc.smVersion = sm;
      EXPECT_TRUE(lo.emit.programmaticLaunch) << "on by default";
      lo.emit.programmaticLaunch = mode > 0;
      lo.emit.earlyDependents = mode == 2;
      auto p = codegen::lowerToProgram(**g, lo);
      ASSERT_TRUE(p) << p.status().message();
      const bool want = mode > 0 && sm >= 90;
      const std::string call = mode == 2 ? "dlc_grid_dependency();" : "dlc_grid_wait();";
      int launches = 0;
      for (const rt::Step &s : p->steps) {
        const auto *l = std::get_if<rt::LaunchStep>(&s);
        if (!l)
          continue;
        ++launches;
        EXPECT_EQ(l->waitsForGrid, want) << l->kernel;
        std::string source;
        for (const auto &[name, src] : p->sources)
          if (name == l->kernel)
            source = src;
        // The wait is the body's first statement.
        const size_t body = source.find("{", source.find(" " + l->kernel + "("));
        ASSERT_NE(body, std::string::npos) << source;
        EXPECT_EQ(source.find("griddepcontrol") != std::string::npos ||
                      source.find("dlc_grid_") != std::string::npos,
                  want)
            << source;
        if (want) {
          EXPECT_EQ(source.find_first_not_of(" \n", body + 1), source.find(call)) << source;
        }
      }
      EXPECT_GT(launches, 0);
    }
  }
  codegen::Kernel other;
  other.name = "k";
  other.source = "extern \"C\" __global__ void other(int n) {}";
  const Status bad = codegen::waitForGrid(other, false);
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.message().find("kernel 'k'"), std::string::npos) << bad.message();
}

} // namespace
} // namespace dlc
