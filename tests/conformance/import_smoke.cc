// ONNX node-test import smoke: for every generated node test (model.onnx), import it, run
// infer-shapes, check the inferred output types against the types the model declares, and
// round-trip the text form (print with constants -> parse -> print must be identical), and
// run the default -O1 pipeline on the result with the verifier after every pass.
// Outputs whose inferred type is consistent with the declared one but less precise (the
// test's shape/axes/sizes are graph inputs, so the declared dims come from its data) are
// listed with stage `imprecise`, so a loss of precision is caught like any regression.
//
//   dlc_conformance_import --tests DIR --known FILE [--report OUT.md] [--update]
//
// FILE lists the tests that do not pass yet, one per line: `test_name  stage: reason`. The run
// fails when a test outside the list fails (a regression) or a listed test passes (update the
// list with --update).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "frontend/onnx/importer.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/pass_manager.h"
#include "runtime/jit/pipelines.h"

namespace fs = std::filesystem;
using namespace dlc;

namespace {

struct Result {
  std::string stage; // "" = passed; else import / infer-shapes / output-types / roundtrip
  std::string reason;
};

/// The gist of an error for the list: without the model's path (which differs between
/// machines), on one line (a multi-line unsupported-op report is joined).
std::string gist(const std::string &message, const std::string &path) {
  std::string s = message;
  if (s.rfind(path + ": ", 0) == 0)
    s = s.substr(path.size() + 2);
  std::string line;
  for (char c : s) {
    if (c == '\n')
      c = ' ';
    if (c == ' ' && !line.empty() && line.back() == ' ')
      continue;
    line += c;
  }
  return line.size() > 200 ? line.substr(0, 197) + "..." : line;
}

/// Declared and inferred types agree: same dtype; where the model declares a known dim the
/// inferred dim is that integer (symbolic declared dims accept anything).
bool matchesDeclared(const TensorType &declared, const TensorType &inferred) {
  if (declared.dtype != DType::kUnknown && declared.dtype != inferred.dtype)
    return false;
  if (!declared.shape.isRanked())
    return true;
  if (!inferred.shape.isRanked() || inferred.shape.rank() != declared.shape.rank())
    return false;
  for (int64_t i = 0; i < declared.shape.rank(); ++i) {
    const Dim &d = declared.shape[i];
    if (d.isKnown() && (!inferred.shape[i].isKnown() || inferred.shape[i].value() != d.value()))
      return false;
  }
  return true;
}

Result runOne(const fs::path &model) {
  auto graphOr = onnx::importFile(model.string());
  if (!graphOr)
    return {"import", gist(graphOr.status().message(), model.string())};
  Graph &g = **graphOr;
  if (Status st = inferShapes(g); !st.isOk())
    return {"infer-shapes", gist(st.message(), model.string())};
  for (const Graph::Output &o : g.outputs()) {
    if (!typesCompatible(o.declared, o.value->type()) ||
        (o.declared.shape.isRanked() && o.value->shape().isRanked() &&
         o.declared.shape.rank() != o.value->shape().rank()))
      return {"output-types", fmt::format("output '{}' inferred {} but the model declares {}",
                                          o.name, o.value->type().str(), o.declared.str())};
  }
  PrintOptions full;
  full.printConstants = true;
  std::string text = printGraph(g, full);
  auto reparsed = parseGraph(text, model.string() + ".dlc");
  if (!reparsed)
    return {"roundtrip", gist(reparsed.status().message(), model.string() + ".dlc")};
  if (printGraph(**reparsed, full) != text)
    return {"roundtrip", "re-printed text differs from the first print"};
  // `dlc opt -O1` on the re-parsed graph, verifying after every pass.
  auto pipeline = parsePipeline(*jit::loadPipeline(1));
  PipelineOptions po;
  po.verifyEach = true;
  if (Status st = runPipeline(**reparsed, *pipeline, po); !st.isOk())
    return {"pipeline", gist(st.message(), model.string())};
  // Everything works; the node tests also declare the shapes their test data produced, which
  // a data-dependent output (shape, axes, sizes fed as graph inputs) cannot match statically.
  for (const Graph::Output &o : g.outputs()) {
    if (!matchesDeclared(o.declared, o.value->type()))
      return {"imprecise", fmt::format("output '{}' inferred {}, the test data gives {}", o.name,
                                       o.value->type().str(), o.declared.str())};
  }
  return {};
}

std::map<std::string, std::string> readKnown(const std::string &path) {
  std::map<std::string, std::string> known;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    size_t sp = line.find_first_of(" \t");
    std::string name = line.substr(0, sp);
    std::string rest =
        sp == std::string::npos ? "" : line.substr(line.find_first_not_of(" \t", sp));
    known[name] = rest;
  }
  return known;
}

} // namespace

int main(int argc, char **argv) {
  std::string testsDir, knownPath, reportPath;
  bool update = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--tests" && i + 1 < argc)
      testsDir = argv[++i];
    else if (a == "--known" && i + 1 < argc)
      knownPath = argv[++i];
    else if (a == "--report" && i + 1 < argc)
      reportPath = argv[++i];
    else if (a == "--update")
      update = true;
    else {
      std::cerr << "usage: dlc_conformance_import --tests DIR --known FILE [--report OUT.md] "
                   "[--update]\n";
      return 2;
    }
  }
  if (testsDir.empty() || knownPath.empty() || !fs::is_directory(testsDir)) {
    std::cerr << "dlc_conformance_import: --tests must name the generated node-test folder and "
                 "--known the known-failures list\n";
    return 2;
  }
  std::vector<fs::path> tests;
  for (const auto &e : fs::directory_iterator(testsDir))
    if (fs::exists(e.path() / "model.onnx"))
      tests.push_back(e.path());
  std::sort(tests.begin(), tests.end());

  std::map<std::string, Result> failures;
  int imported = 0, inferred = 0, typed = 0, roundtripped = 0, optimized = 0, exact = 0;
  for (const fs::path &t : tests) {
    Result r = runOne(t / "model.onnx");
    std::string name = t.filename().string();
    static const std::map<std::string, int> kStagesPassed = {
        {"import", 0},    {"infer-shapes", 1}, {"output-types", 2},
        {"roundtrip", 3}, {"pipeline", 4},     {"imprecise", 5}};
    int stages = r.stage.empty() ? 6 : kStagesPassed.at(r.stage);
    imported += stages >= 1;
    inferred += stages >= 2;
    typed += stages >= 3;
    roundtripped += stages >= 4;
    optimized += stages >= 5;
    exact += stages >= 6;
    if (!r.stage.empty())
      failures[name] = r;
  }
  int total = static_cast<int>(tests.size());
  std::string summary = fmt::format(
      "{} node tests: {} imported, {} shape-inferred, {} with output types consistent with the "
      "declared ones, {} round-tripped, {} through -O1 with --verify-each; {} infer every declared "
      "dim "
      "exactly",
      total, imported, inferred, typed, roundtripped, optimized, exact);
  std::cout << summary << "\n";

  std::map<std::string, int> byStage;
  for (const auto &[n, r] : failures)
    ++byStage[r.stage];
  for (const auto &[s, c] : byStage)
    std::cout << "  failing at " << s << ": " << c << "\n";

  if (!reportPath.empty()) {
    std::ofstream rep(reportPath);
    rep << "# ONNX node tests: import, shape inference, text round trip\n\n" << summary << ".\n\n";
    rep << "| test | stage | reason |\n|---|---|---|\n";
    for (const auto &[n, r] : failures)
      rep << "| " << n << " | " << r.stage << " | " << r.reason << " |\n";
  }

  if (update) {
    std::ofstream out(knownPath);
    out << "# ONNX node tests that do not yet import, infer and round-trip (test  stage: reason).\n"
        << "# Maintained by `dlc_conformance_import --update`; CI fails when this list is stale.\n";
    for (const auto &[n, r] : failures)
      out << n << "  " << r.stage << ": " << r.reason << "\n";
    std::cout << "updated " << knownPath << " (" << failures.size() << " entries)\n";
    return 0;
  }

  auto known = readKnown(knownPath);
  int regressions = 0, unexpected = 0;
  for (const auto &[n, r] : failures) {
    if (!known.count(n)) {
      std::cout << "REGRESSION " << n << ": " << r.stage << ": " << r.reason << "\n";
      ++regressions;
    }
  }
  for (const auto &[n, why] : known) {
    if (!failures.count(n) && std::any_of(tests.begin(), tests.end(),
                                          [&](const fs::path &p) { return p.filename() == n; })) {
      std::cout << "UNEXPECTED PASS " << n << " (listed as: " << why << "): remove it from "
                << knownPath << "\n";
      ++unexpected;
    }
  }
  if (regressions || unexpected) {
    std::cout << regressions << " regressions, " << unexpected << " unexpected passes\n";
    return 1;
  }
  std::cout << "ok: every failure is listed in " << knownPath << "\n";
  return 0;
}
