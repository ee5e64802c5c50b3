// Pipeline strings: parsing, options, errors, the default pipelines and --help.
#include <gtest/gtest.h>

#include "passes/pass_manager.h"
#include "runtime/jit/pipelines.h"

namespace dlc {
namespace {

std::string parseError(std::string_view text) {
  Expected<Pipeline> p = parsePipeline(text);
  EXPECT_FALSE(p.hasValue()) << text;
  return p ? "" : p.status().message();
}

TEST(PipelineParse, NamesInOrder) {
  Expected<Pipeline> p = parsePipeline(" infer-shapes , dce,cse ");
  ASSERT_TRUE(p) << p.status().message();
  ASSERT_EQ(p->passes.size(), 3u);
  EXPECT_EQ(p->passes[0].name, "infer-shapes");
  EXPECT_EQ(p->passes[1].name, "dce");
  EXPECT_EQ(p->passes[2].name, "cse");
  EXPECT_EQ(p->passes[1].options.pass, "dce");
  EXPECT_EQ(p->str(), "infer-shapes,dce,cse");
}

TEST(PipelineParse, EmptyStringIsEmptyPipeline) {
  Expected<Pipeline> p = parsePipeline("  ");
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->passes.empty());
}

TEST(PipelineParse, Options) {
  Expected<Pipeline> p = parsePipeline("fold-constants{ size-limit = 65536 },dce");
  ASSERT_TRUE(p) << p.status().message();
  ASSERT_EQ(p->passes.size(), 2u);
  const PassOptions &o = p->passes[0].options;
  EXPECT_EQ(o.values.at("size-limit"), "65536");
  Expected<int64_t> limit = o.getInt("size-limit", 0);
  ASSERT_TRUE(limit);
  EXPECT_EQ(*limit, 65536);
  EXPECT_EQ(p->str(), "fold-constants{size-limit=65536},dce");
  Expected<Pipeline> again = parsePipeline(p->str());
  ASSERT_TRUE(again);
  EXPECT_EQ(again->str(), p->str());
}

TEST(PipelineParse, EmptyBracesAreNoOptions) {
  Expected<Pipeline> p = parsePipeline("fold-constants{}");
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->passes[0].options.values.empty());
}

TEST(PipelineParse, UnknownPass) {
  EXPECT_EQ(parseError("infer-shapes,foo"),
            "unknown pass 'foo'; known passes: infer-shapes, fold-constants, simplify, cse, dce, "
            "expand-ops, fold-batchnorm, canonicalize-quant, insert-fake-quant, realize-int8, "
            "mixed-precision, "
            "layout, fold-transpose-matmul, fuse-attention, kmajor-weights, place-devices, "
            "insert-copies, fuse, plan-memory");
}

TEST(PipelineParse, BadOptionValue) {
  EXPECT_EQ(parseError("fold-constants{size-limit=big}"),
            "pass 'fold-constants': option 'size-limit': expected an integer, got 'big'");
  EXPECT_EQ(parseError("fold-constants{size-limit=12k}"),
            "pass 'fold-constants': option 'size-limit': expected an integer, got '12k'");
  EXPECT_EQ(parseError("fold-constants{size-limit=}"),
            "pass 'fold-constants': option 'size-limit': expected an integer, got ''");
}

TEST(PipelineParse, UnknownOption) {
  EXPECT_EQ(parseError("fold-constants{limit=3}"),
            "pass 'fold-constants': unknown option 'limit'; known options: size-limit");
  EXPECT_EQ(parseError("dce{aggressive=1}"),
            "pass 'dce': unknown option 'aggressive'; it takes no options");
}

TEST(PipelineParse, MalformedText) {
  EXPECT_EQ(parseError("dce,,cse"), "empty pass name at offset 4 of pipeline 'dce,,cse'");
  EXPECT_EQ(parseError("dce,"), "empty pass name at offset 4 of pipeline 'dce,'");
  EXPECT_EQ(parseError("fold-constants{size-limit=3"),
            "pass 'fold-constants': missing '}' after its options");
  EXPECT_EQ(parseError("fold-constants{size-limit}"),
            "pass 'fold-constants': expected 'key=value' in options, got 'size-limit'");
  EXPECT_EQ(parseError("fold-constants{size-limit=1,size-limit=2}"),
            "pass 'fold-constants': option 'size-limit' is given twice");
  EXPECT_EQ(parseError("fold-constants{size-limit=1} dce"),
            "expected ',' after the options of pass 'fold-constants', got 'd'");
}

TEST(PassOptions, TypedGetters) {
  PassOptions o;
  o.values = {{"n", "-3"}, {"flag", "false"}, {"bad", "yes"}, {"s", "text"}};
  EXPECT_EQ(*o.getInt("n", 0), -3);
  EXPECT_EQ(*o.getInt("missing", 7), 7);
  EXPECT_FALSE(*o.getBool("flag", true));
  EXPECT_TRUE(*o.getBool("missing", true));
  EXPECT_EQ(o.getBool("bad", false).status().message(),
            "option 'bad': expected true or false, got 'yes'");
  EXPECT_EQ(o.getString("s", ""), "text");
  EXPECT_EQ(o.getString("missing", "d"), "d");
  EXPECT_TRUE(o.has("s"));
  EXPECT_FALSE(o.has("missing"));
}

TEST(PassOptions, DebugLogOnlyWhenEnabled) {
  std::ostringstream log;
  PassOptions o;
  o.pass = "dce";
  o.debugOut = &log;
  o.debugf("first {}", 1);
  EXPECT_EQ(log.str(), "");
  o.debug = true;
  o.debugf("second {}", 2);
  EXPECT_EQ(log.str(), "[dce] second 2\n");
}

TEST(Pipelines, LoadLevelsAreDistinctAndParse) {
  EXPECT_EQ(*jit::loadPipeline(0), "infer-shapes");
  EXPECT_EQ(*jit::loadPipeline(1), "infer-shapes,fold-constants,simplify,cse,dce,infer-shapes");
  for (int level = 1; level <= jit::kMaxOptLevel; ++level)
    EXPECT_NE(*jit::loadPipeline(level), *jit::loadPipeline(level - 1)) << "-O" << level;
  for (int level = 0; level <= jit::kMaxOptLevel; ++level) {
    Expected<Pipeline> p = parsePipeline(*jit::loadPipeline(level));
    EXPECT_TRUE(p) << p.status().message();
  }
  Expected<std::string> none = jit::loadPipeline(jit::kMaxOptLevel + 1);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.status().message(), "optimization level 2 does not exist: dlc has -O0 (types "
                                     "only) and -O1 (the default cleanup)");
}

TEST(Pipelines, GpuPipelineRunsTheCleanupPassesNoMoreThanOnceAfterLoad) {
  // Model::load runs the -O1 cleanup; the GPU pipeline must not repeat its simplify and cse.
  Expected<Pipeline> gpu = parsePipeline(jit::gpuPipeline());
  ASSERT_TRUE(gpu) << gpu.status().message();
  for (const char *pass : {"simplify", "cse"})
    EXPECT_FALSE(gpu->contains(pass)) << pass;
  int dce = 0;
  for (const PipelineEntry &e : gpu->passes)
    dce += e.name == "dce";
  // One dce clears what fold-transpose-matmul left (its dead transposes would count as
  // readers when fuse-attention matches), one what fuse-attention left.
  EXPECT_EQ(dce, 2);
  EXPECT_EQ(gpu->passes.back().name, "plan-memory");
  EXPECT_EQ(jit::gpuPipeline({.strictPlacement = true, .reuseMemory = false}),
            "infer-shapes,expand-ops,fold-batchnorm,canonicalize-quant,fold-constants,"
            "realize-int8{fast-requantize=true},layout{patch-gemm=true},fold-transpose-matmul,dce,"
            "fuse-attention,dce,"
            "place-devices{gpu=true,gpus=1,strict=true},insert-copies,fuse,plan-memory{reuse="
            "false}");
  EXPECT_EQ(jit::gpuPipeline({.fuseAttention = false}),
            "infer-shapes,expand-ops,fold-batchnorm,canonicalize-quant,fold-constants,"
            "realize-int8{fast-requantize=true},layout{patch-gemm=true},fold-transpose-matmul,dce,"
            "place-devices{gpu=true,gpus=1,strict=false},insert-copies,fuse,plan-memory{reuse="
            "true}");
  EXPECT_NE(jit::gpuPipeline({.patchGemm = false}).find(",layout,"), std::string::npos);
  // Requantization is folded by default (`--exact-requantize` keeps the division).
  const std::string exact = jit::gpuPipeline({.fastRequantize = false});
  EXPECT_NE(exact.find(",realize-int8,layout{"), std::string::npos) << exact;
  EXPECT_TRUE(parsePipeline(exact)) << exact;
}

TEST(Registry, EveryPassIsListedAndCreatable) {
  const std::vector<PassInfo> &passes = registeredPasses();
  ASSERT_EQ(passes.size(), 19u);
  for (const PassInfo &p : passes) {
    EXPECT_EQ(findPass(p.name), &p);
    EXPECT_NE(p.create(), nullptr);
    EXPECT_FALSE(p.summary.empty());
  }
  EXPECT_EQ(findPass("nope"), nullptr);
}

TEST(Registry, HelpListsNamesSummariesAndOptions) {
  std::string help = passListHelp();
  // A name, padded to the longest name's width, then its summary.
  const size_t dce = help.find("\n  dce ");
  ASSERT_NE(dce, std::string::npos) << help;
  const size_t summary = help.find_first_not_of(' ', dce + 6);
  EXPECT_EQ(help.substr(summary, help.find('\n', summary) - summary),
            "remove nodes and constants whose results are never used")
      << help;
  EXPECT_NE(help.find("{size-limit=...} largest output, in elements, a fold may create"),
            std::string::npos)
      << help;
  for (const PassInfo &p : registeredPasses())
    EXPECT_NE(help.find(std::string(p.name)), std::string::npos);
}

} // namespace
} // namespace dlc
