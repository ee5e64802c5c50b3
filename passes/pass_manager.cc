// Running a pipeline with its instrumentation (declared in passes/pass_manager.h).
#include "passes/pass_manager.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "ir/verifier.h"

namespace dlc {

namespace {

bool contains(const std::vector<std::string> &names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

/// Every name given to --print-ir-after / --debug-only must be a pass dlc knows.
Status checkPassNames(const std::vector<std::string> &names, const Pipeline &pipeline,
                      std::string_view flag) {
  for (const std::string &name : names)
    if (!findPass(name) && !pipeline.contains(name))
      return unknownPassError(name).withContext(std::string(flag));
  return Status::ok();
}

Status dumpIr(const Graph &g, const PipelineOptions &opts, size_t index, std::string_view name) {
  std::filesystem::path path =
      std::filesystem::path(opts.dumpIrDir) / fmt::format("{:02}-{}.dlc", index, name);
  std::ofstream file(path);
  if (file)
    printGraph(g, file, opts.print);
  if (!file)
    return unavailable("--dump-ir: cannot write '{}'", path.string());
  return Status::ok();
}

struct Timing {
  std::string pass;
  double ms;
};

void printTimings(const std::vector<Timing> &timings, std::ostream &os) {
  double total = 0;
  size_t width = 5; // "total"
  for (const Timing &t : timings) {
    total += t.ms;
    width = std::max(width, t.pass.size());
  }
  auto row = [&](std::string_view pass, double ms) {
    double percent = total > 0 ? 100.0 * ms / total : 0.0;
    os << fmt::format("{:<{}}  {:>10.3f}  {:>9.1f}%\n", pass, width, ms, percent);
  };
  os << fmt::format("{:<{}}  {:>10}  {:>10}\n", "pass", width, "time (ms)", "% of total");
  for (const Timing &t : timings)
    row(t.pass, t.ms);
  row("total", total);
}

} // namespace

Status runPipeline(Graph &g, const Pipeline &pipeline, const PipelineOptions &opts) {
  if (!opts.stopAfter.empty() && !pipeline.contains(opts.stopAfter))
    return invalidArgument("--stop-after: pass '{}' is not in the pipeline '{}'", opts.stopAfter,
                           pipeline.str());
  DLC_RETURN_IF_ERROR(checkPassNames(opts.printIrAfter, pipeline, "--print-ir-after"));
  DLC_RETURN_IF_ERROR(checkPassNames(opts.debugOnly, pipeline, "--debug-only"));
  if (!opts.dumpIrDir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(opts.dumpIrDir, ec);
    if (ec)
      return unavailable("--dump-ir: cannot create directory '{}': {}", opts.dumpIrDir,
                         ec.message());
    DLC_RETURN_IF_ERROR(dumpIr(g, opts, 0, "input"));
  }

  std::vector<Timing> timings;
  for (size_t i = 0; i < pipeline.passes.size(); ++i) {
    const PipelineEntry &entry = pipeline.passes[i];
    PassOptions options = entry.options;
    options.pass = entry.name;
    options.debug = contains(opts.debugOnly, entry.name);
    options.debugOut = opts.err;
    options.warnOut = opts.err;
    options.gpuSupport = opts.gpuSupport;

    std::unique_ptr<Pass> pass = entry.create();
    auto start = std::chrono::steady_clock::now();
    Expected<bool> changed = pass->run(g, options);
    auto end = std::chrono::steady_clock::now();
    if (!changed)
      return changed.status().withContext(fmt::format("pass '{}'", entry.name));
    timings.push_back({entry.name, std::chrono::duration<double, std::milli>(end - start).count()});

    if (opts.printIrAfterAll || contains(opts.printIrAfter, entry.name)) {
      *opts.out << "// -----// IR after " << entry.name << " ("
                << (*changed ? "changed" : "unchanged") << ") //----- //\n";
      printGraph(g, *opts.out, opts.print);
      *opts.out << "\n";
    }
    if (!opts.dumpIrDir.empty())
      DLC_RETURN_IF_ERROR(dumpIr(g, opts, i + 1, entry.name));
    if (opts.verifyEach) {
      Status s = verifyGraph(g);
      if (!s.isOk())
        return Status(s.code(),
                      fmt::format("verifier failed after pass '{}': {}", entry.name, s.message()));
    }
    if (entry.name == opts.stopAfter)
      break;
  }
  if (opts.timePasses)
    printTimings(timings, *opts.err);
  return Status::ok();
}

Status inferShapes(Graph &g) {
  DLC_ASSIGN_OR_RETURN(Pipeline p, parsePipeline("infer-shapes"));
  PipelineOptions opts;
  opts.verifyEach = false;
  return runPipeline(g, p, opts);
}

} // namespace dlc
