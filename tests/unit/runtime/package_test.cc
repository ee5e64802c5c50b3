// Packages: round trips of graphs (large constants, bodies, symbolic dims) and programs (every
// step kind), each refusal with its message, and corrupted or truncated bytes at many positions.
#include "runtime/package.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "package_test_util.h"

namespace dlc::rt {
namespace {

using namespace package_testing; // NOLINT: the hand-made package and its helpers

// --- Round trips ----------------------------------------------------------------------------

TEST(Package, GraphRoundTripsWithItsConstants) {
  Package p = modelPackage();
  ASSERT_TRUE(p.graph);
  std::vector<uint8_t> bytes = serialized(p);
  // Weights are stored once each (%b twice in the text), not as hex text: the 1 MiB constant
  // dominates the size.
  EXPECT_GT(bytes.size(), 256u * 1024 * 4);
  EXPECT_LT(bytes.size(), 256u * 1024 * 4 + 64 * 1024);
  auto back = read(bytes);
  ASSERT_TRUE(back) << back.status().message();
  PrintOptions full;
  full.printConstants = true;
  EXPECT_EQ(printGraph(*back->graph, full), printGraph(*p.graph, full));
  EXPECT_EQ(printGraph(*back->graph), printGraph(*p.graph));
  EXPECT_EQ(back->dlcVersion, "0.1.0");
  ASSERT_EQ(back->inputs.size(), 2u);
  EXPECT_EQ(back->inputs[0].name, "x");
  EXPECT_EQ(back->inputs[0].type, typeOf("f32[N,32]"));
  EXPECT_TRUE(back->inputs[0].type.shape[0].isSymbol());
  EXPECT_EQ(back->inputs[1].type, typeOf("bool[]"));
  ASSERT_EQ(back->outputs.size(), 2u);
  EXPECT_EQ(back->outputs[0].type, typeOf("f32[N,?]"));
  EXPECT_TRUE(back->outputs[0].type.shape[1].isUnknown());
  EXPECT_FALSE(back->outputs[1].type.shape.isRanked());
  ASSERT_EQ(back->dimRanges.size(), 2u);
  EXPECT_EQ(back->dimRanges[0].name, "N");
  EXPECT_EQ(back->dimRanges[0].min, 1);
  EXPECT_EQ(back->dimRanges[0].max, 64);
  EXPECT_EQ(back->dimRanges[1].name, "S");
  EXPECT_EQ(back->dimRanges[1].max, 7);
}

TEST(Package, ConstantsAreStoredOnceAndAligned) {
  std::vector<uint8_t> bytes = serialized(modelPackage());
  ASSERT_GT(bytes.size(), kPackageHeaderBytes);
  const uint8_t *payload = bytes.data() + kPackageHeaderBytes;
  const fbs::Package *fp = fbs::GetPackage(payload);
  ASSERT_TRUE(fp->graph()->constants());
  // w, b (twice in the text), t (an attribute), k and k1 (inside the branch); %s is inline.
  EXPECT_EQ(fp->graph()->constants()->size(), 5u);
  for (const fbs::Constant *c : *fp->graph()->constants()) {
    EXPECT_EQ((c->data()->data() - payload) % 16, 0) << c->hash()->str();
    EXPECT_EQ(c->hash()->size(), 16u);
  }
  for (const fbs::CompiledProgram *cp : *fp->programs())
    for (const fbs::Module *m : *cp->program()->modules())
      if (m->cubin()->size()) {
        EXPECT_EQ((m->cubin()->data() - payload) % 16, 0);
      }
  // The text elides them.
  std::string text = fp->graph()->text()->str();
  EXPECT_NE(text.find("dense<hash:\""), std::string::npos);
  EXPECT_EQ(text.find("dense<0x"), std::string::npos);
}

TEST(Package, ProgramsRoundTripExactly) {
  Package p = modelPackage();
  auto back = read(serialized(p));
  ASSERT_TRUE(back) << back.status().message();
  ASSERT_EQ(back->programs.size(), 2u);
  EXPECT_EQ(back->programs[0].dims, (std::map<std::string, int64_t>{{"N", 4}}));
  EXPECT_EQ(back->programs[1].dims, (std::map<std::string, int64_t>{{"N", 64}, {"S", 7}}));
  for (size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE("program " + std::to_string(i));
    expectSamePrograms(*back->programs[i].program, *p.programs[i].program);
    // Diagnostics of the compile are not part of the package.
    EXPECT_EQ(back->programs[i].program->compileSeconds, 0);
    EXPECT_EQ(back->programs[i].program->cacheHits, 0);
  }
  EXPECT_EQ(back->arches(), (std::vector<std::string>{"sm_100", "sm_80", "sm_90"}));
  EXPECT_EQ(p.arches(), back->arches());
}

TEST(Package, ZeroedStateLargerThanTheArenaIsRefused) {
  Package p = modelPackage();
  auto bad = std::make_shared<Program>(*p.programs[0].program);
  bad->zeroedBytes = bad->arenaBytes + 256;
  p.programs[0].program = bad;
  EXPECT_NE(errorOf(serialized(p))
                .find("the zeroed state (4352 bytes) is larger than the arena "
                      "(4096 bytes)"),
            std::string::npos)
      << errorOf(serialized(p));
}

TEST(Package, ProgramsWithTheSameWeightsStoreThemOnce) {
  Package p = modelPackage();
  auto shared = std::make_shared<Program>(*p.programs[0].program);
  shared->constants.assign(1 << 16, 0x5A); // 64 KiB of weights, the same in both programs
  auto other = std::make_shared<Program>(*p.programs[1].program);
  other->constants = shared->constants;
  p.programs[0].program = shared;
  p.programs[1].program = other;
  const std::vector<uint8_t> both = serialized(p);
  p.programs.pop_back();
  const std::vector<uint8_t> one = serialized(p);
  EXPECT_LT(both.size(), one.size() + (1 << 15)) << "the second program's pool is not repeated";
  Package again = modelPackage();
  again.programs[0].program = shared;
  again.programs[1].program = other;
  auto back = read(serialized(again));
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_EQ(back->programs[1].program->constants, other->constants);
  expectSamePrograms(*back->programs[1].program, *other);
}

TEST(Package, ProgramPoolsShareTheGraphsWeights) {
  // A pool holding two of the graph's elided constants (w: 8 KiB, k: 1 MiB) where kernels read
  // them stores those bytes once, with the graph (format 3); the pool reads back exactly.
  Package p = modelPackage();
  p.programs.pop_back();
  const Graph &g = *p.graph;
  auto constantNamed = [&](const std::string &name) -> const Tensor & {
    for (const Value *c : g.constants())
      if (c->name() == name)
        return c->constant();
    for (const Node *n : g.nodes())
      for (const auto &[k, a] : n->attrs())
        if (a.kind() == AttrKind::kGraph)
          for (const Value *c : a.graph().constants())
            if (c->name() == name)
              return c->constant();
    ADD_FAILURE() << "no constant " << name;
    static const Tensor none;
    return none;
  };
  const Tensor &w = constantNamed("w"), &k = constantNamed("k");
  auto prog = std::make_shared<Program>(*p.programs[0].program);
  const uint64_t wAt = 512, kAt = wAt + 8192 + 256; // 256-aligned, a gap of own bytes between
  prog->constants.resize(kAt + 1048576 + 512, 0x33);
  std::memcpy(prog->constants.data() + wAt, w.raw(), 8192);
  std::memcpy(prog->constants.data() + kAt, k.raw(), 1048576);
  auto &launch = std::get<LaunchStep>(prog->steps[0]);
  launch.args.push_back({Space::kConstants, wAt, 8192});
  launch.args.push_back({Space::kConstants, kAt, 1048576});
  p.programs[0].program = prog;
  const std::vector<uint8_t> sharing = serialized(p);
  // The same pool with one byte of k changed shares only w.
  auto other = std::make_shared<Program>(*prog);
  other->constants[kAt + 100] ^= 1;
  p.programs[0].program = other;
  const std::vector<uint8_t> apart = serialized(p);
  EXPECT_LT(sharing.size() + 1000000, apart.size()) << "k is stored once";
  for (const auto &[bytes, want] : {std::pair{sharing, prog}, std::pair{apart, other}}) {
    auto back = read(bytes);
    ASSERT_TRUE(back) << back.status().message();
    expectSamePrograms(*back->programs[0].program, *want);
  }
}

TEST(Package, CpuOnlyPackageHasNoArches) {
  Package p = modelPackage();
  p.programs.clear();
  auto back = read(serialized(p));
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_TRUE(back->programs.empty());
  EXPECT_TRUE(back->arches().empty());
}

TEST(Package, ReadsFromUnalignedBytes) {
  std::vector<uint8_t> bytes = serialized(modelPackage());
  std::vector<uint8_t> shifted(bytes.size() + 3);
  std::memcpy(shifted.data() + 3, bytes.data(), bytes.size());
  auto back = deserializePackage(shifted.data() + 3, bytes.size(), "m.so");
  ASSERT_TRUE(back) << back.status().message();
  EXPECT_EQ(printGraph(*back->graph, {true}), printGraph(*modelGraph(), {true}));
}

TEST(Package, TrailingBytesAreIgnored) {
  std::vector<uint8_t> bytes = serialized(modelPackage());
  bytes.resize(bytes.size() + 100, 0xab);
  EXPECT_TRUE(read(bytes)) << errorOf(bytes);
}

// --- Refusals -------------------------------------------------------------------------------

TEST(Package, RefusesTooShortInput) {
  std::vector<uint8_t> bytes = serialized(modelPackage());
  bytes.resize(10);
  EXPECT_EQ(errorOf(bytes), "m.so: not a dlc package: 10 bytes, shorter than the 32-byte header");
}

TEST(Package, RefusesBadMagic) {
  std::vector<uint8_t> bytes = serialized(modelPackage());
  bytes[1] = 'X';
  EXPECT_EQ(errorOf(bytes), "m.so: not a dlc package (bad magic bytes)");
}

TEST(Package, RefusesOtherFormatVersionsNamingTheWriter) {
  std::vector<uint8_t> bytes = serialized(modelPackage());
  ASSERT_EQ(bytes[8], 6); // format 6 is written
  bytes[8] = 7;           // as a later dlc would write it, its checksum over its header
  fixChecksum(bytes);
  EXPECT_EQ(errorOf(bytes), "m.so: was written by a dlc package format 7 (dlc 0.1.0); this dlc "
                            "reads formats 1 to 6");
  bytes[8] = 0;
  fixChecksum(bytes);
  EXPECT_EQ(errorOf(bytes), "m.so: was written by a dlc package format 0 (dlc 0.1.0); this dlc "
                            "reads formats 1 to 6");
  // Without a readable stamp the writer goes unnamed.
  std::vector<uint8_t> junk(64, 0xee);
  std::vector<uint8_t> other = withHeader(junk.data(), junk.size());
  other[8] = 0, other[11] = 1; // format 2^24
  EXPECT_EQ(errorOf(other),
            "m.so: was written by a dlc package format 16777216; this dlc reads formats 1 to 6");
}

TEST(Package, ChecksumIsXxh3SeededWithTheHeaderFromFormat4) {
  std::vector<uint8_t> bytes = serialized(modelPackage());
  ASSERT_EQ(bytes[8], 6);
  uint64_t stored = 0;
  for (int i = 0; i < 8; ++i)
    stored |= uint64_t{bytes[24 + static_cast<size_t>(i)]} << (8 * i);
  EXPECT_EQ(stored, specChecksum(bytes)) << "the checksum PACKAGE_FORMAT.md specifies";
  // A format-3 package (FNV-1a over header and payload) still reads, and reports its format.
  bytes[8] = 3;
  EXPECT_NE(errorOf(bytes).find("corrupted: checksum"), std::string::npos) << errorOf(bytes);
  fixChecksum(bytes);
  auto p = read(bytes);
  ASSERT_TRUE(p.hasValue()) << p.status().message();
  EXPECT_EQ(p->formatVersion, 3u);
  // Format 6 with format 3's checksum is corrupt: the version picks the hash.
  bytes[8] = 6;
  EXPECT_NE(errorOf(bytes).find("corrupted: checksum"), std::string::npos) << errorOf(bytes);
}

TEST(Package, ReadsFormat1WithItsChecksumBasis) {
  // Format 1 is format 2 with the checksum's FNV-1a started from 1469598103934665603 (FNV's
  // basis with its last digit lost): such a package still reads; a format-1 header with a
  // checksum over the right basis is corrupt.
  std::vector<uint8_t> bytes = serialized(modelPackage());
  const uint8_t *payload = bytes.data() + kPackageHeaderBytes;
  const size_t size = bytes.size() - kPackageHeaderBytes;
  bytes[8] = 1;
  putU64(bytes, 24, fnv1a64(payload, size, 1469598103934665603ull));
  auto p = read(bytes);
  ASSERT_TRUE(p.hasValue()) << p.status().message();
  EXPECT_EQ(p->inputs.size(), modelPackage().inputs.size());
  EXPECT_EQ(p->formatVersion, 1u) << "dlc inspect reports the format the file has";
  EXPECT_EQ(read(serialized(modelPackage()))->formatVersion, kPackageFormatVersion);
  putU64(bytes, 24, fnv1a64(payload, size));
  EXPECT_NE(errorOf(bytes).find("corrupted: checksum"), std::string::npos) << errorOf(bytes);
}

TEST(Package, RefusesUnknownFlags) {
  std::vector<uint8_t> bytes = serialized(modelPackage());
  bytes[12] = 4;
  EXPECT_EQ(errorOf(bytes), "m.so: unknown header flags 0x4; format 6 has none");
}

TEST(Package, RefusesTruncatedPayload) {
  std::vector<uint8_t> bytes = serialized(modelPackage());
  size_t payload = bytes.size() - kPackageHeaderBytes;
  bytes.resize(bytes.size() - 10);
  EXPECT_EQ(errorOf(bytes), "m.so: truncated: the header announces a " + std::to_string(payload) +
                                "-byte payload but " + std::to_string(payload - 10) +
                                " bytes follow it");
}

TEST(Package, RefusesChecksumMismatch) {
  std::vector<uint8_t> bytes = serialized(modelPackage());
  bytes[bytes.size() / 2] ^= 0x10;
  std::string e = errorOf(bytes);
  EXPECT_EQ(e.rfind("m.so: corrupted: checksum ", 0), 0u) << e;
  EXPECT_NE(e.find("does not match the header's"), std::string::npos) << e;
}

TEST(Package, RefusesWhatTheVerifierRejects) {
  std::vector<uint8_t> junk(64, 0xff);
  EXPECT_EQ(errorOf(withHeader(junk.data(), junk.size())),
            "m.so: corrupted: the payload fails the FlatBuffers verifier");
  EXPECT_EQ(errorOf(withHeader(junk.data(), 0)),
            "m.so: corrupted: the payload fails the FlatBuffers verifier");
}

/// A payload built by hand: the graph `text` with `constants`, and one program `prog`.
std::vector<uint8_t>
handPackage(const std::string &text,
            const std::function<
                flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fbs::Constant>>>(
                    flatbuffers::FlatBufferBuilder &)> &constants,
            const std::function<flatbuffers::Offset<fbs::Program>(flatbuffers::FlatBufferBuilder &)>
                &prog) {
  flatbuffers::FlatBufferBuilder fbb;
  auto consts = constants ? constants(fbb) : 0;
  auto graph = fbs::CreateGraph(fbb, fbb.CreateString(text), consts);
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fbs::CompiledProgram>>> programs;
  if (prog) {
    auto pr = prog(fbb);
    std::vector<flatbuffers::Offset<fbs::CompiledProgram>> list = {
        fbs::CreateCompiledProgram(fbb, 0, pr)};
    programs = fbb.CreateVector(list);
  }
  auto version = fbb.CreateString("9.9.9");
  fbb.Finish(fbs::CreatePackage(fbb, version, 0, 0, 0, graph, programs));
  return withHeader(fbb.GetBufferPointer(), fbb.GetSize());
}

const char *kTinyGraph = "graph @g(%x: f32[20]) -> (y: f32[20]) {\n"
                         "  %w = constant f32[20] dense<hash:\"0123456789abcdef\">\n"
                         "  %y = add(%x, %w) : f32[20]\n  return %y\n}\n";

auto constantTable(uint8_t dtype, std::vector<int64_t> shape, size_t bytes,
                   std::string hash = "0123456789abcdef") {
  return [=](flatbuffers::FlatBufferBuilder &fbb) {
    std::vector<uint8_t> data(bytes, 0);
    auto c = fbs::CreateConstant(fbb, fbb.CreateString(hash), dtype, fbb.CreateVector(shape),
                                 fbb.CreateVector(data));
    std::vector<flatbuffers::Offset<fbs::Constant>> list = {c};
    return fbb.CreateVector(list);
  };
}

TEST(Package, HandMadePayloadReads) {
  // The control for the refusals below: the same construction with consistent content.
  auto p = read(handPackage(kTinyGraph, constantTable(1, {20}, 80), nullptr));
  ASSERT_TRUE(p) << p.status().message();
  EXPECT_EQ(p->dlcVersion, "9.9.9");
  EXPECT_EQ(p->graph->constants()[0]->constant().numElements(), 20);
}

TEST(Package, RefusesConstantWithInvalidDType) {
  EXPECT_EQ(errorOf(handPackage(kTinyGraph, constantTable(200, {20}, 80), nullptr)),
            "m.so: inconsistent package: constant 0123456789abcdef: invalid dtype 200");
}

TEST(Package, RefusesConstantOfTheWrongSize) {
  EXPECT_EQ(errorOf(handPackage(kTinyGraph, constantTable(1, {20}, 79), nullptr)),
            "m.so: inconsistent package: constant 0123456789abcdef: f32[20] needs 80 bytes but "
            "holds 79");
  EXPECT_EQ(errorOf(handPackage(kTinyGraph, constantTable(1, {1ll << 40, 1ll << 40}, 8), nullptr)),
            "m.so: inconsistent package: constant 0123456789abcdef: number of elements "
            "overflows int64");
}

TEST(Package, RefusesGraphWhoseConstantIsMissingOrMistyped) {
  std::string e = errorOf(handPackage(kTinyGraph, nullptr, nullptr));
  EXPECT_NE(e.find("m.so (graph):2:"), std::string::npos) << e;
  EXPECT_NE(e.find("constant %w was printed without its data (hash 0123456789abcdef)"),
            std::string::npos)
      << e;
  e = errorOf(handPackage(kTinyGraph, constantTable(8, {20}, 160), nullptr));
  EXPECT_NE(e.find("constant %w: the constant with hash 0123456789abcdef is i64[20], not f32[20]"),
            std::string::npos)
      << e;
}

flatbuffers::Offset<fbs::Program> launchProgram(flatbuffers::FlatBufferBuilder &fbb,
                                                uint32_t module, uint8_t space) {
  std::vector<flatbuffers::Offset<fbs::Module>> modules = {
      fbs::CreateModule(fbb, fbb.CreateString("sm_90"), 0, fbb.CreateString("ptx"),
                        fbb.CreateVectorOfStrings({"k"}))};
  fbs::Dim3 one(1, 1, 1);
  std::vector<fbs::BufferRef> args = {fbs::BufferRef(0, 16, space)};
  auto launch = fbs::CreateLaunchStep(fbb, module, fbb.CreateString("k"), &one, &one, 0,
                                      fbb.CreateVectorOfStructs(args), fbb.CreateString("relu_1"));
  std::vector<fbs::Step> types = {fbs::Step::LaunchStep};
  std::vector<flatbuffers::Offset<void>> steps = {launch.Union()};
  auto mods = fbb.CreateVector(modules);
  auto typesOff = fbb.CreateVector(types);
  auto stepsOff = fbb.CreateVector(steps);
  return fbs::CreateProgram(fbb, mods, typesOff, stepsOff, 256);
}

TEST(Package, RefusesLaunchOfAMissingModule) {
  auto tiny = constantTable(1, {20}, 80);
  EXPECT_TRUE(
      read(handPackage(kTinyGraph, tiny, [](auto &fbb) { return launchProgram(fbb, 0, 0); })));
  EXPECT_EQ(
      errorOf(handPackage(kTinyGraph, tiny, [](auto &fbb) { return launchProgram(fbb, 5, 0); })),
      "m.so: inconsistent package: program 0 (no symbolic dims): step 0 (kernel 'k', from "
      "relu_1): module 5 does not exist (the program has 1)");
  EXPECT_EQ(
      errorOf(handPackage(kTinyGraph, tiny, [](auto &fbb) { return launchProgram(fbb, 0, 9); })),
      "m.so: inconsistent package: program 0 (no symbolic dims): step 0 (kernel 'k', from "
      "relu_1), argument 0: unknown buffer space 9");
}

TEST(Package, RefusesUnknownStepKind) {
  auto prog = [](flatbuffers::FlatBufferBuilder &fbb) {
    std::vector<fbs::Step> types = {fbs::Step::NONE};
    std::vector<flatbuffers::Offset<void>> steps = {fbs::CreateCopyStep(fbb).Union()};
    auto typesOff = fbb.CreateVector(types);
    auto stepsOff = fbb.CreateVector(steps);
    return fbs::CreateProgram(fbb, 0, typesOff, stepsOff);
  };
  EXPECT_EQ(errorOf(handPackage(kTinyGraph, constantTable(1, {20}, 80), prog)),
            "m.so: inconsistent package: program 0 (no symbolic dims): step 0: unknown step "
            "kind 0");
}

TEST(Package, RefusesBadHostStepGraph) {
  Package p = modelPackage();
  auto prog = std::make_shared<Program>(*handProgram());
  std::get<HostStep>(prog->steps[2]).graphText = "graph @h(%t: f32[4,8]) -> (u: f32[4,8]) {";
  p.programs = {{{{"N", 4}}, prog}};
  auto bytes = serializePackage(p);
  ASSERT_FALSE(bytes);
  EXPECT_EQ(bytes.status().message().rfind("serializePackage: program 0 (dims N=4): step 2 (host "
                                           "step, from relu_4): host step 2:1:",
                                           0),
            0u)
      << bytes.status().message();
}

TEST(Package, WriterRefusesInconsistentPackages) {
  Package p = modelPackage();
  p.programs[0].dims["N"] = 65;
  auto bytes = serializePackage(p);
  ASSERT_FALSE(bytes);
  EXPECT_EQ(bytes.status().message(), "serializePackage: program 0 (dims N=65): dim 'N' = 65 lies "
                                      "outside its range [1, 64]");
  p = modelPackage();
  p.programs[0].dims["M"] = 1;
  EXPECT_EQ(serializePackage(p).status().message(),
            "serializePackage: program 0 (dims M=1,N=4): dim 'M' has no range in the package");
  p = modelPackage();
  p.inputs[0].name = "q";
  EXPECT_EQ(serializePackage(p).status().message(),
            "serializePackage: input 'q' is not an input of the graph");
  p = modelPackage();
  p.dimRanges[1].min = 9;
  EXPECT_EQ(serializePackage(p).status().message(),
            "serializePackage: dim 'S' has an invalid range [9, 7]");
  p = modelPackage();
  p.graph = nullptr;
  EXPECT_EQ(serializePackage(p).status().message(), "serializePackage: the package has no graph");
}

// --- Corruption -----------------------------------------------------------------------------

/// A small package (every part present) so that corrupting each byte stays quick.
/// A package of graph `text` (input x and output y of type `type`, N in 1..8) with one
/// program for N = 2: handProgram's, its cubin cut to 40 bytes, without sources.
Package oneProgramPackage(const std::string &text, const char *type) {
  Package p;
  p.dlcVersion = "0.1.0";
  auto g = parseGraph(text);
  EXPECT_TRUE(g) << g.status().message();
  p.graph = std::move(*g);
  p.inputs = {{"x", typeOf(type)}};
  p.outputs = {{"y", typeOf(type)}};
  p.dimRanges = {{"N", 1, 8}};
  auto prog = handProgram();
  prog->modules[0].cubin.resize(40);
  prog->sources.clear();
  p.programs.push_back({{{"N", 2}}, prog});
  return p;
}

std::vector<uint8_t> smallPackage() {
  return serialized(oneProgramPackage(
      "graph @g(%x: f32[N,20], %c: bool[]) -> (y: f32[N,20]) {\n"
      "  %w = constant f32[20] dense<0x" +
          std::string(160, '3') +
          ">\n"
          "  %y = if(%c, %x) {else_branch = graph @e(%a: f32[N,20]) -> (r: f32[N,20]) "
          "{\n    %v = constant f32[20] dense<0x" +
          std::string(160, '4') +
          ">\n    %r = add(%a, %v) : f32[N,20]\n    return %r\n  }, then_branch = "
          "graph @t(%a: f32[N,20]) -> (r: f32[N,20]) {\n    return %a\n  }} : "
          "f32[N,20]\n  return %y\n}\n",
      "f32[N,20]"));
}

/// Every result is a package or an error naming the source; counts the errors.
int checkAll(const std::vector<std::vector<uint8_t>> &cases) {
  int errors = 0;
  for (const auto &b : cases) {
    auto p = deserializePackage(b.data(), b.size(), "fuzz.so");
    if (!p) {
      ++errors;
      EXPECT_EQ(p.status().message().rfind("fuzz.so: ", 0), 0u) << p.status().message();
    }
  }
  return errors;
}

TEST(PackageCorruption, EveryTruncationIsRefused) {
  std::vector<uint8_t> bytes = smallPackage();
  ASSERT_TRUE(read(bytes)) << errorOf(bytes);
  std::vector<std::vector<uint8_t>> cases;
  for (size_t n = 0; n < bytes.size(); ++n)
    cases.emplace_back(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(n));
  EXPECT_EQ(checkAll(cases), static_cast<int>(cases.size()));
}

TEST(PackageCorruption, EveryFlippedByteIsRefusedByTheChecksumOrHeader) {
  std::vector<uint8_t> bytes = smallPackage();
  std::vector<std::vector<uint8_t>> cases;
  for (size_t i = 0; i < bytes.size(); ++i) {
    cases.push_back(bytes);
    cases.back()[i] ^= 0x01;
  }
  EXPECT_EQ(checkAll(cases), static_cast<int>(cases.size()));
}

/// A small package whose program pool shares a 4 KiB graph constant (a format-3 segment), and
/// the same with the pool's copy differing in one byte (no segment).
std::pair<std::vector<uint8_t>, std::vector<uint8_t>> sharedPoolPackages() {
  Package p = oneProgramPackage("graph @g(%x: f32[N,1024]) -> (y: f32[N,1024]) {\n"
                                "  %w = constant f32[1024] dense<0x" +
                                    std::string(8192, '5') +
                                    ">\n  %y = add(%x, %w) : f32[N,1024]\n  return %y\n}\n",
                                "f32[N,1024]");
  auto prog = std::make_shared<Program>(*p.programs[0].program);
  prog->constants.assign(256 + 4096 + 256, 0x11);
  std::fill(prog->constants.begin() + 256, prog->constants.begin() + 256 + 4096, 0x55);
  std::get<LaunchStep>(prog->steps[0]).args.push_back({Space::kConstants, 256, 4096});
  p.programs[0].program = prog;
  std::vector<uint8_t> shared = serialized(p);
  auto apart = std::make_shared<Program>(*prog);
  apart->constants[300] = 0x56;
  p.programs[0].program = apart;
  return {shared, serialized(p)};
}

TEST(PackageCorruption, SharedPoolReadsBackAndItsFlipsNeverCrash) {
  auto [bytes, apart] = sharedPoolPackages();
  EXPECT_LT(bytes.size() + 4000, apart.size()) << "the pool's copy of w is a segment";
  auto back = read(bytes);
  ASSERT_TRUE(back) << back.status().message();
  std::vector<uint8_t> want(256 + 4096 + 256, 0x11);
  std::fill(want.begin() + 256, want.begin() + 256 + 4096, 0x55);
  EXPECT_EQ(back->programs[0].program->constants, want);
  // Corrupted segments, sizes and offsets behind a valid checksum: an error or a package.
  std::vector<std::vector<uint8_t>> cases;
  for (uint8_t mask : {0x01, 0xff})
    for (size_t i = kPackageHeaderBytes; i < bytes.size(); ++i) {
      if (i % 4 != 0 && bytes[i] == 0x55)
        continue; // inside the weight's data: reads, and slow to repeat
      cases.push_back(bytes);
      cases.back()[i] ^= mask;
      fixChecksum(cases.back());
    }
  const int errors = checkAll(cases);
  EXPECT_GT(errors, 0);
  EXPECT_LT(errors, static_cast<int>(cases.size()));
}

TEST(PackageCorruption, FlippedBytesBehindAValidChecksumNeverCrash) {
  // With the checksum rewritten, the verifier and the content checks see every corruption.
  std::vector<uint8_t> bytes = smallPackage();
  std::vector<std::vector<uint8_t>> cases;
  for (uint8_t mask : {0x01, 0x80, 0xff})
    for (size_t i = kPackageHeaderBytes; i < bytes.size(); ++i) {
      cases.push_back(bytes);
      cases.back()[i] ^= mask;
      fixChecksum(cases.back());
    }
  std::mt19937 rng(7);
  for (int k = 0; k < 500; ++k) { // several random bytes at once
    cases.push_back(bytes);
    for (int j = 0; j < 4; ++j)
      cases.back()[kPackageHeaderBytes + rng() % (bytes.size() - kPackageHeaderBytes)] =
          static_cast<uint8_t>(rng());
    fixChecksum(cases.back());
  }
  int errors = checkAll(cases);
  // Many flips hit data (weights, cubin bytes) and still read; many others must be refused.
  EXPECT_GT(errors, static_cast<int>(cases.size()) / 10);
  EXPECT_LT(errors, static_cast<int>(cases.size()));
}

} // namespace
} // namespace dlc::rt
