// ONNX node tests on the reference backend: for every generated node test (model.onnx and
// test_data_set_*/{input,output}_N.pb), load the model as a user would (import and the -O1
// pipeline, dlc::Model::load), run every data set on the CPU reference backend and compare
// each output with the expected one (rtol 1e-3, atol 1e-7 as ONNX's own runner; integers and
// bools exactly; NaN equals NaN; only dtype and shape for models with a random op).
//
//   dlc_conformance_run --tests DIR --known FILE [--report OUT.md] [--update] [--filter TEXT]
//                       [--no-fork] [--jobs N] [--backend cpu|gpu]
//
// With `--backend gpu` every test runs on the GPU backend with CPU fallback off and the arena
// poisoned: a test whose ops the GPU backend does not claim fails as `unsupported` (reported
// as "not claimed"). Its `--known` list is gpu_known_failures.txt, checked the same way on
// the H200 (scripts/gpu-check.sh); without one the run only reports.
//
// `--gpu-known FILE` (CPU runs) adds the GPU-strict results of that list, the last GPU run,
// to the report: per op the tests that pass on each backend, and each failure's reason on
// each. `--check-report FILE` fails the run when FILE (the checked-in report) differs from the
// report this run writes, so the report in the tree is always the current one.
//
// Each failure is classified: `unsupported` (the importer or the reference backend does not
// handle the op, dtype or attribute yet), `out of scope` (training, sequence, string ops),
// `mismatch` (wrong numbers, dtype or shape) or `error` (anything else, crashes included).
// FILE lists the failing tests, one per line: `test_name  category: reason`. The run fails
// when a test outside the list fails, a listed test fails in another category, or a listed
// test passes (update the list with --update). Each test runs in a child process, so a crash
// or a hang (60 s) is reported as that test's error instead of ending the run.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "frontend/onnx/importer.h"
#include "frontend/onnx/tensor_file.h"
#include "ir/match.h"
#include "runtime/jit/compile.h"
#include "runtime/jit/gpu_jit.h"
#include "runtime/jit/model.h"
#include "runtime/jit/segments.h"
#include "runtime/tensor_compare.h"
#include "unit/codegen/host_emulator.h"

namespace fs = std::filesystem;
using namespace dlc;

namespace {

constexpr unsigned kTimeoutSeconds = 60;
bool gNvrtcOnly = false;
bool gEmulate = false; // --backend emulator
SessionOptions gSessionOptions = [] {
  SessionOptions o;
  o.backend = Backend::kCpu;
  return o;
}();
const Tolerance kTolerance{1e-3, 1e-7};

struct Result {
  std::string category; // "" = passed; unsupported / out of scope / mismatch / error
  std::string reason;
};

/// A message on one line (runs of whitespace collapsed), without the test folder's path, at
/// most 240 characters.
std::string brief(std::string s, const std::string &dir) {
  for (size_t p; !dir.empty() && (p = s.find(dir)) != std::string::npos;)
    s.erase(p, dir.size() + 1);
  std::string out;
  for (char c : s) {
    bool space = std::isspace(static_cast<unsigned char>(c));
    if (!space || (!out.empty() && out.back() != ' '))
      out += space ? ' ' : c;
  }
  return out.size() > 240 ? out.substr(0, 237) + "..." : out;
}

/// Import and loading failures: why the model does not get as far as running.
Result classifyLoad(const Status &st, const std::string &dir) {
  const std::string &m = st.message();
  // dlc has no string dtype, like the importer's string ops.
  if (m.find("out of scope") != std::string::npos ||
      m.find("unsupported data type string") != std::string::npos)
    return {"out of scope", brief(m, dir)};
  if (st.code() == StatusCode::kUnimplemented || m.find("unsupported") != std::string::npos)
    return {"unsupported", brief(m, dir)};
  return {"error", brief(m, dir)};
}

/// The tensors of `set/<prefix>_N.pb`, N = 0, 1, ...
Expected<std::vector<std::pair<std::string, Tensor>>> readSet(const fs::path &set,
                                                              const std::string &prefix) {
  std::vector<std::pair<std::string, Tensor>> out;
  for (int i = 0;; ++i) {
    fs::path p = set / fmt::format("{}_{}.pb", prefix, i);
    if (!fs::exists(p))
      break;
    std::string name;
    DLC_ASSIGN_OR_RETURN(Tensor t, onnx::readTensorProtoFile(p.string(), &name));
    out.push_back({name, std::move(t)});
  }
  return out;
}

/// ONNX 1.12 stores bf16 test data as uint16 TensorProtos holding the bf16 bits; read them as
/// the bf16 tensors they are.
Tensor asBf16IfWanted(const Tensor &t, DType wanted) {
  if (wanted != DType::kBF16 || t.dtype() != DType::kU16)
    return t;
  Tensor b = Tensor::zeros(DType::kBF16, t.shape());
  if (t.byteSize() > 0)
    std::memcpy(b.mutableRaw(), t.raw(), static_cast<size_t>(t.byteSize()));
  return b;
}

using RunFn =
    std::function<Expected<std::vector<NamedTensor>>(const std::map<std::string, Tensor> &)>;

Result runDataSet(const Model &model, const RunFn &run, const fs::path &set,
                  const std::string &dir) {
  auto inputs = readSet(set, "input");
  auto expected = readSet(set, "output");
  for (const auto *e : {&inputs, &expected})
    if (!*e)
      return classifyLoad(e->status(), dir);
  // Inputs bind by the proto's name when it names a model input, else by position.
  std::map<std::string, Tensor> feed;
  for (size_t i = 0; i < inputs->size(); ++i) {
    const auto &[name, t] = (*inputs)[i];
    bool named = std::any_of(model.inputs().begin(), model.inputs().end(),
                             [&](const TensorInfo &in) { return in.name == name; });
    if (!named && i >= model.inputs().size())
      return {"error", fmt::format("{} has input_{}.pb but the model has {} inputs",
                                   set.filename().string(), i, model.inputs().size())};
    const TensorInfo &in = named
                               ? *std::find_if(model.inputs().begin(), model.inputs().end(),
                                               [&](const TensorInfo &m) { return m.name == name; })
                               : model.inputs()[i];
    feed[in.name] = asBf16IfWanted(t, in.type.dtype);
  }
  auto outputs = run(feed);
  if (!outputs) {
    Status st = outputs.takeStatus();
    return {st.code() == StatusCode::kUnimplemented ? "unsupported" : "error",
            brief(st.message(), dir)};
  }
  if (outputs->size() != expected->size())
    return {"mismatch",
            fmt::format("{} outputs, the test expects {}", outputs->size(), expected->size())};
  // A random op's values cannot match another implementation's generator: only the dtype and
  // shape of its results are checked. Dropout draws a mask unless training_mode is absent or a
  // constant false.
  const auto nodes = model.graph().nodes();
  bool random = std::any_of(nodes.begin(), nodes.end(), [](Node *n) {
    return n->def().random ||
           (n->op() == Op::kDropout && n->hasInput(2) && !isConstantFalse(n->input(2)));
  });
  for (size_t i = 0; i < outputs->size(); ++i) {
    const NamedTensor &o = (*outputs)[i];
    if (random) {
      if (o.tensor.type() != (*expected)[i].second.type())
        return {"mismatch",
                fmt::format("{}: output '{}' is {}, expected {}", set.filename().string(), o.name,
                            o.tensor.type().str(), (*expected)[i].second.type().str())};
      continue;
    }
    Tensor e = asBf16IfWanted((*expected)[i].second, o.tensor.dtype());
    Comparison c = compareTensors(o.tensor, e, kTolerance);
    if (!c.match)
      return {"mismatch", fmt::format("{}: output '{}': {}", set.filename().string(), o.name,
                                      brief(c.str(o.tensor, e), dir))};
  }
  return {};
}

/// The test's test_data_set_* folders, sorted.
std::vector<fs::path> dataSets(const fs::path &test) {
  std::vector<fs::path> sets;
  for (const auto &e : fs::directory_iterator(test))
    if (e.is_directory() && e.path().filename().string().starts_with("test_data_set_"))
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  return sets;
}

/// `--backend nvrtc`: the GPU pipeline, lowering and NVRTC compilation for sm_90 at the shapes
/// of the first data set, with no device. A pass reports the number of kernels compiled.
Result compileOne(const Model &model, const fs::path &test, const std::string &dir) {
  const std::vector<fs::path> sets = dataSets(test);
  std::map<std::string, int64_t> dims;
  std::map<std::string, Tensor> feed; // by position: what the GPU run binds shape inputs from
  if (!sets.empty()) {
    auto inputs = readSet(sets[0], "input");
    if (!inputs)
      return classifyLoad(inputs.status(), dir);
    for (size_t i = 0; i < inputs->size() && i < model.inputs().size(); ++i) {
      const Shape &s = model.inputs()[i].type.shape;
      const Tensor &t = (*inputs)[i].second;
      feed.emplace(model.inputs()[i].name, t);
      for (int64_t d = 0; s.isRanked() && d < s.rank() && d < t.rank(); ++d)
        if (s[d].isSymbol())
          dims.emplace(s[d].symbolName(), t.shape()[static_cast<size_t>(d)]);
    }
  }
  jit::JitOptions jo;
  (void)jit::bindShapeInputs(model.graph(), dims, feed, jo); // unbound, the run says why
  jo.strictPlacement = true;
  jo.lower.jobs = 1;
  std::ostringstream sink;
  jo.pipeline.out = &sink;
  jo.pipeline.err = &sink;
  // A model with a shape point compiles its first segment here; the rest needs the values the
  // first computes (the emulator and the GPU run both).
  auto seg = jit::compileSegment(model.graph(), dims, jo);
  if (!seg) {
    Status st = seg.takeStatus();
    return {st.code() == StatusCode::kUnimplemented ? "unsupported" : "error",
            brief(st.message(), dir)};
  }
  return {"", fmt::format("kernels={}{}", seg->program.sources.size(),
                          seg->point ? " (before its shape point)" : "")};
}

/// `--backend emulator`: the GPU program of each data set (compiled as `--backend gpu` would,
/// shape inputs bound, no NVRTC) run on the host emulator (tests/unit/codegen/host_emulator.h),
/// so the GPU backend's results are checked on a machine without a GPU. The plain sm_90
/// kernels: the emulator has no wgmma.
Expected<std::vector<NamedTensor>> emulate(const Model &model,
                                           const std::map<std::string, Tensor> &feed) {
  DLC_ASSIGN_OR_RETURN(auto dims, bindInputDims(model.graph(), feed));
  jit::JitOptions jo;
  jo.strictPlacement = true;
  jo.lower.compile = false;
  jo.lower.emit.sm90a = false;
  std::ostringstream sink;
  jo.pipeline.out = &sink;
  jo.pipeline.err = &sink;
  DLC_RETURN_IF_ERROR(jit::bindShapeInputs(model.graph(), dims, feed, jo));
  // Segment by segment when the model has shape points (runtime/jit/segments.h), as a GPU
  // session runs it; a compile error is what the GPU session reports: not claimed.
  Status compileError = Status::ok();
  auto out = jit::runSegments(
      model.graph(), dims, jo, feed,
      [](const rt::Program &p, const std::map<std::string, Tensor> &in) {
        return codegen::testing::runProgramOnHost(p, in);
      },
      &compileError);
  if (!compileError.isOk())
    return unimplemented("{}", compileError.message());
  return out;
}

Result runOne(const fs::path &test) {
  std::string dir = test.string();
  auto model = Model::load((test / "model.onnx").string());
  if (!model)
    return classifyLoad(model.status(), dir);
  if (gNvrtcOnly)
    return compileOne(*model, test, dir);
  RunFn run;
  std::optional<Session> session;
  if (gEmulate) {
    run = [&](const std::map<std::string, Tensor> &feed) { return emulate(*model, feed); };
  } else {
    auto created = model->createSession(gSessionOptions);
    if (!created)
      return classifyLoad(created.status(), dir);
    session.emplace(std::move(*created));
    run = [&](const std::map<std::string, Tensor> &feed) { return session->runOrdered(feed); };
  }
  const std::vector<fs::path> sets = dataSets(test);
  if (sets.empty())
    return {"error", "no test_data_set_* folder"};
  for (const fs::path &set : sets) {
    Result r = runDataSet(*model, run, set, dir);
    if (!r.category.empty())
      return r;
  }
  return {};
}

/// A test running in a child process.
struct Child {
  pid_t pid = -1;
  int fd = -1;
};

Child startIsolated(const fs::path &test) {
  int fds[2];
  if (pipe(fds) != 0)
    return {};
  std::cout.flush();
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    alarm(kTimeoutSeconds);
    Result r = runOne(test);
    std::string msg = r.category + "\t" + r.reason;
    ssize_t unused = write(fds[1], msg.data(), msg.size());
    (void)unused;
    _exit(0);
  }
  close(fds[1]);
  return {pid, fds[0]};
}

/// Reads the child's result and reaps it: a crash or a hang becomes an `error` result.
Result finishIsolated(Child c) {
  std::string msg;
  char buf[4096];
  for (ssize_t n; (n = read(c.fd, buf, sizeof(buf))) > 0;)
    msg.append(buf, static_cast<size_t>(n));
  close(c.fd);
  int status = 0;
  waitpid(c.pid, &status, 0);
  if (WIFSIGNALED(status))
    return {"error", WTERMSIG(status) == SIGALRM
                         ? fmt::format("timed out after {} s", kTimeoutSeconds)
                         : fmt::format("crashed ({})", strsignal(WTERMSIG(status)))};
  size_t tab = msg.find('\t');
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || tab == std::string::npos)
    return {"error", "the test process ended without a result"};
  return {msg.substr(0, tab), msg.substr(tab + 1)};
}

/// The op a test exercises: its model's only op type, or for `*_expanded` tests (a function
/// body) the op of the test it expands; else the op types joined.
std::string opOf(const fs::path &test) {
  auto ops = [](const fs::path &t) -> std::vector<std::string> {
    auto s = onnx::summarizeFile((t / "model.onnx").string());
    std::vector<std::string> out;
    if (s)
      for (const auto &[op, n] : s->opHistogram)
        out.push_back(op);
    return out;
  };
  std::string name = test.filename().string();
  if (name.ends_with("_expanded")) {
    auto base = ops(test.parent_path() / name.substr(0, name.size() - 9));
    if (base.size() == 1)
      return base[0];
  }
  auto mine = ops(test);
  if (mine.empty())
    return "(unreadable)";
  std::string joined;
  for (const std::string &o : mine)
    joined += (joined.empty() ? "" : "+") + o;
  return joined;
}

std::map<std::string, Result> readKnown(const std::string &path) {
  std::map<std::string, Result> known;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    size_t sp = line.find_first_of(" \t");
    std::string rest =
        sp == std::string::npos ? "" : line.substr(line.find_first_not_of(" \t", sp));
    size_t colon = rest.find(':');
    known[line.substr(0, sp)] = {rest.substr(0, colon),
                                 colon == std::string::npos ? "" : rest.substr(colon + 2)};
  }
  return known;
}

const char *const kCategories[] = {"unsupported", "out of scope", "mismatch", "error"};

/// Failures whose error does not say why, with the cause found by reading the test.
std::string whyFails(const std::string &test) {
  if (test == "test_cast_FLOAT_to_BFLOAT16")
    return "onnx 1.12's expected data truncates f32 to bf16; dlc rounds to nearest even, as "
           "ONNX's reference does in later releases (onnx/onnx#4193)";
  if (test == "test_adam_multiple")
    return "the test computes with epsilon 1e-2, but its node leaves epsilon at the spec's "
           "default, 1e-6";
  if (test.starts_with("test_castlike_") && test.find("BFLOAT16") != std::string::npos)
    return "the test contradicts its model: input 'like' is declared [3,4], its data is [1]";
  return "";
}

/// The report: per op, the tests that pass (and how the others fail) on this run's backend,
/// and with `gpu` (a GPU-strict known-failures list) on the GPU too; then every failure with
/// its reason on each backend.
std::string
reportText(const std::string &title, const std::string &summary,
           const std::map<std::string, std::vector<std::pair<std::string, Result>>> &byOp,
           const std::map<std::string, Result> *gpu, const std::string &gpuSummary) {
  std::ostringstream rep;
  rep << "# " << title << (gpu ? " and on the GPU" : "") << "\n\n" << summary << ".\n";
  if (gpu)
    rep << "\n" << gpuSummary << "\n";
  rep << "\n| op | tests | " << (gpu ? "CPU: passed" : "passed")
      << " | unsupported | out of scope | mismatch | error |"
      << (gpu ? " GPU strict: passed |" : "") << "\n|---|---|---|---|---|---|---|"
      << (gpu ? "---|" : "") << "\n";
  for (const auto &[op, results] : byOp) {
    std::map<std::string, int> count;
    int gpuPass = 0;
    for (const auto &[t, r] : results) {
      ++count[r.category];
      gpuPass += gpu && !gpu->count(t);
    }
    rep << fmt::format("| {} | {} | {} | {} | {} | {} | {} |", op, results.size(), count[""],
                       count["unsupported"], count["out of scope"], count["mismatch"],
                       count["error"]);
    if (gpu)
      rep << fmt::format(" {} |", gpuPass);
    rep << "\n";
  }
  rep << "\n## Failures by op\n";
  for (const auto &[op, results] : byOp) {
    bool header = false;
    for (const auto &[t, r] : results) {
      const auto g = gpu ? gpu->find(t) : std::map<std::string, Result>::const_iterator();
      const bool gpuFails = gpu && g != gpu->end();
      if (r.category.empty() && !gpuFails)
        continue;
      if (!header)
        rep << "\n### " << op << "\n\n";
      header = true;
      rep << "- `" << t << "`: ";
      if (gpu)
        rep << "CPU: ";
      if (r.category.empty()) {
        rep << "passes";
      } else {
        rep << r.category << ": " << r.reason;
        if (std::string why = whyFails(t); !why.empty())
          rep << " (why: " << why << ")";
      }
      if (gpu) {
        rep << "; GPU: ";
        if (!gpuFails)
          rep << "passes";
        else if (g->second.category == "unsupported")
          rep << "not claimed: " << g->second.reason;
        else
          rep << g->second.category << ": " << g->second.reason;
      }
      rep << "\n";
    }
  }
  return rep.str();
}

} // namespace

int main(int argc, char **argv) {
  // Warnings and errors only, as the dlc tool by default: the info lines of every model load
  // (import and pipeline times) would bury the report.
  spdlog::set_level(spdlog::level::warn);
  std::string testsDir, knownPath, reportPath, filter, backend = "cpu", gpuKnownPath,
                                                       checkReportPath;
  bool update = false, isolate = true;
  int jobs = 1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--tests" && i + 1 < argc)
      testsDir = argv[++i];
    else if (a == "--known" && i + 1 < argc)
      knownPath = argv[++i];
    else if (a == "--report" && i + 1 < argc)
      reportPath = argv[++i];
    else if (a == "--filter" && i + 1 < argc)
      filter = argv[++i];
    else if (a == "--gpu-known" && i + 1 < argc)
      gpuKnownPath = argv[++i];
    else if (a == "--check-report" && i + 1 < argc)
      checkReportPath = argv[++i];
    else if (a == "--update")
      update = true;
    else if (a == "--no-fork")
      isolate = false;
    else if (a == "--jobs" && i + 1 < argc)
      jobs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--backend" && i + 1 < argc &&
             (std::string(argv[i + 1]) == "cpu" || std::string(argv[i + 1]) == "gpu" ||
              std::string(argv[i + 1]) == "nvrtc" || std::string(argv[i + 1]) == "emulator"))
      backend = argv[++i];
    else {
      std::cerr << "usage: dlc_conformance_run --tests DIR --known FILE [--report OUT.md] "
                   "[--update] [--filter TEXT] [--no-fork] [--jobs N] "
                   "[--backend cpu|gpu|nvrtc|emulator] "
                   "[--gpu-known FILE] [--check-report FILE]\n";
      return 2;
    }
  }
  const bool gpu = backend == "gpu" || backend == "nvrtc" || backend == "emulator";
  gNvrtcOnly = backend == "nvrtc";
  gEmulate = backend == "emulator";
  if (gpu) {
    gSessionOptions.backend = Backend::kGpu;
    gSessionOptions.cpuFallback = false;
    gSessionOptions.poison = true;
  }
  if (testsDir.empty() || (knownPath.empty() && !gpu) || !fs::is_directory(testsDir)) {
    std::cerr << "dlc_conformance_run: --tests must name the generated node-test folder and "
                 "--known the known-failures list\n";
    return 2;
  }
  if (update && !filter.empty()) {
    std::cerr << "dlc_conformance_run: --update needs the full run (no --filter)\n";
    return 2;
  }
  std::vector<fs::path> tests;
  for (const auto &e : fs::directory_iterator(testsDir))
    if (fs::exists(e.path() / "model.onnx") &&
        e.path().filename().string().find(filter) != std::string::npos)
      tests.push_back(e.path());
  std::sort(tests.begin(), tests.end());

  std::map<std::string, Result> failures;
  std::map<std::string, std::vector<std::pair<std::string, Result>>> byOp;
  std::map<std::string, int> byCategory;
  std::vector<Result> results(tests.size());
  if (!isolate) {
    for (size_t i = 0; i < tests.size(); ++i)
      results[i] = runOne(tests[i]);
  } else {
    std::map<pid_t, std::pair<size_t, Child>> running;
    size_t next = 0;
    while (next < tests.size() || !running.empty()) {
      while (next < tests.size() && running.size() < static_cast<size_t>(jobs)) {
        Child c = startIsolated(tests[next]);
        if (c.pid < 0)
          results[next] = runOne(tests[next]);
        else
          running[c.pid] = {next, c};
        ++next;
      }
      if (running.empty())
        continue;
      // Drain the first running child (its pipe closes when it exits).
      auto it = running.begin();
      results[it->second.first] = finishIsolated(it->second.second);
      running.erase(it);
    }
  }
  for (size_t i = 0; i < tests.size(); ++i) {
    const Result &r = results[i];
    std::string name = tests[i].filename().string();
    byOp[opOf(tests[i])].push_back({name, r});
    ++byCategory[r.category];
    if (!r.category.empty())
      failures[name] = r;
  }
  int kernels = 0;
  for (const Result &r : results)
    if (r.category.empty() && r.reason.rfind("kernels=", 0) == 0)
      kernels += std::atoi(r.reason.c_str() + 8);
  std::string summary =
      fmt::format("{} node tests{}: {} pass", tests.size(),
                  gNvrtcOnly ? fmt::format(" compiled for sm_90 by NVRTC ({} kernels)", kernels)
                  : gEmulate ? std::string(" on the GPU backend, emulated on the host")
                  : gpu      ? std::string(" on the GPU")
                             : std::string(),
                  byCategory[""]);
  for (const char *c : kCategories)
    summary += fmt::format(", {} {}", byCategory[c],
                           gpu && std::string(c) == "unsupported" ? "not claimed" : c);
  if (gpu) {
    const int claimed =
        static_cast<int>(tests.size()) - byCategory["unsupported"] - byCategory["out of scope"];
    summary += fmt::format("; claimed by the GPU backend: {}, of which {} pass ({:.1f}%)", claimed,
                           byCategory[""], claimed ? 100.0 * byCategory[""] / claimed : 0.0);
  }
  std::cout << summary << "\n";
  const std::string title = gNvrtcOnly ? "ONNX node tests compiled by NVRTC for sm_90"
                            : gEmulate ? "ONNX node tests on the GPU backend, emulated on the host"
                            : gpu      ? "ONNX node tests on the GPU, no CPU fallback"
                                       : "ONNX node tests on the reference backend";
  if (gpu && knownPath.empty()) {
    int failed = 0;
    for (const auto &[n, r] : failures)
      if (r.category != "unsupported" && r.category != "out of scope") {
        std::cout << "FAIL " << n << "  " << r.category << ": " << r.reason << "\n";
        ++failed;
      }
    if (!reportPath.empty())
      std::ofstream(reportPath) << reportText(title, summary, byOp, nullptr, "");
    // NVRTC-only and emulated runs (CI): every claimed test must compile, and, emulated, match.
    return (gNvrtcOnly || gEmulate) && failed ? 1 : 0;
  }
  std::map<std::string, Result> gpuKnown;
  std::string gpuSummary;
  if (!gpuKnownPath.empty()) {
    if (!fs::is_regular_file(gpuKnownPath)) {
      std::cerr << "dlc_conformance_run: --gpu-known " << gpuKnownPath << ": no such file\n";
      return 2;
    }
    gpuKnown = readKnown(gpuKnownPath);
    std::map<std::string, int> gpuCount; // over this run's tests (--filter)
    for (const fs::path &t : tests)
      if (auto it = gpuKnown.find(t.filename().string()); it != gpuKnown.end())
        ++gpuCount[it->second.category];
      else
        ++gpuCount[""];
    gpuSummary = fmt::format(
        "On the GPU with `--no-cpu-fallback` (the last GPU run, `{}`): {} pass, {} not claimed "
        "by the GPU backend, {} out of scope, {} mismatch, {} error",
        fs::path(gpuKnownPath).filename().string(), gpuCount[""], gpuCount["unsupported"],
        gpuCount["out of scope"], gpuCount["mismatch"], gpuCount["error"]);
    std::cout << gpuSummary << "\n";
  }
  const std::string report =
      reportText(title, summary, byOp, gpuKnownPath.empty() ? nullptr : &gpuKnown, gpuSummary);
  if (!reportPath.empty())
    std::ofstream(reportPath) << report;
  if (!checkReportPath.empty()) {
    std::ifstream in(checkReportPath);
    std::stringstream had;
    had << in.rdbuf();
    if (had.str() != report) {
      std::cout << "STALE REPORT " << checkReportPath
                << ": it differs from this run's; write it again with --report " << checkReportPath
                << "\n";
      return 1;
    }
  }

  if (update) {
    std::ofstream out(knownPath);
    out << "# ONNX node tests that do not pass on the "
        << (gpu ? "GPU backend with --no-cpu-fallback (unsupported: not claimed by it)"
                : "reference backend")
        << " (test  category: reason).\n"
        << "# Maintained by `dlc_conformance_run" << (gpu ? " --backend gpu" : "") << " --update`; "
        << (gpu ? "scripts/gpu-check.sh conformance" : "CI") << " fails when this list is stale.\n";
    for (const auto &[n, r] : failures)
      out << n << "  " << r.category << ": " << r.reason << "\n";
    std::cout << "updated " << knownPath << " (" << failures.size() << " entries)\n";
    return 0;
  }

  auto known = readKnown(knownPath);
  int regressions = 0, unexpected = 0, changed = 0;
  for (const auto &[n, r] : failures) {
    auto it = known.find(n);
    if (it == known.end()) {
      std::cout << "REGRESSION " << n << ": " << r.category << ": " << r.reason << "\n";
      ++regressions;
    } else if (it->second.category != r.category) {
      std::cout << "CHANGED " << n << ": listed as " << it->second.category << ", now "
                << r.category << ": " << r.reason << "\n";
      ++changed;
    }
  }
  for (const fs::path &t : tests) {
    std::string n = t.filename().string();
    if (!failures.count(n) && known.count(n)) {
      std::cout << "UNEXPECTED PASS " << n << " (listed as " << known[n].category
                << "): remove it from " << knownPath << "\n";
      ++unexpected;
    }
  }
  if (regressions || unexpected || changed) {
    std::cout << regressions << " regressions, " << changed << " changed, " << unexpected
              << " unexpected passes; run with --update after checking them\n";
    return 1;
  }
  std::cout << "ok: every failure is listed in " << knownPath << "\n";
  return 0;
}
