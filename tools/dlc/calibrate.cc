#include "tools/dlc/calibrate.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "ir/file_util.h"
#include "tools/dlc/commands.h"
#include "tools/dlc/run_util.h"

namespace dlc::tool {

namespace fs = std::filesystem;

namespace {

/// Progress over samples on stderr: a bar redrawn in place on a terminal, else a line at
/// every tenth of the way.
class Progress {
public:
  explicit Progress(int total) : total_(total), tty_(isatty(fileno(stderr)) != 0) {}
  void step(int done) {
    if (quiet())
      return;
    if (tty_) {
      const int width = 30, filled = width * done / total_;
      std::fprintf(stderr, "\rcalibrating [%s%s] %d/%d samples", std::string(filled, '#').c_str(),
                   std::string(width - filled, ' ').c_str(), done, total_);
      if (done == total_)
        std::fprintf(stderr, "\n");
    } else if (10 * done / total_ > 10 * (done - 1) / total_) {
      std::fprintf(stderr, "calibrating: %d/%d samples\n", done, total_);
    }
    std::fflush(stderr);
  }

private:
  int total_;
  bool tty_;
};

} // namespace

Expected<std::vector<fs::path>> sampleFolders(const std::string &dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return notFound("--calibration '{}': not a directory", dir);
  std::vector<fs::path> out;
  for (const fs::directory_entry &e : fs::directory_iterator(dir, ec))
    if (e.is_directory())
      out.push_back(e.path());
  if (ec)
    return invalidArgument("--calibration '{}': cannot list it: {}", dir, ec.message());
  if (out.empty())
    return invalidArgument("--calibration '{}': no samples (expected one folder per sample, "
                           "each with NAME.npy for every input, as `dlc run --save-inputs` "
                           "writes them)",
                           dir);
  std::sort(out.begin(), out.end());
  return out;
}

Expected<std::map<std::string, Tensor>> readSample(const Graph &g, const fs::path &folder) {
  std::map<std::string, Tensor> inputs;
  std::set<std::string> taken;
  for (const Value *in : g.inputs()) {
    const fs::path file = folder / (outputFileName(in->name(), taken) + ".npy");
    std::error_code ec;
    if (!fs::exists(file, ec))
      return notFound("missing input '{}' ({}): no file {}", in->name(), in->type().str(),
                      file.string());
    DLC_ASSIGN_OR_RETURN(inputs[in->name()], readTensorFile(file.string()));
  }
  return inputs;
}

Expected<RangeMap> calibrateSamples(const Graph &g, const std::string &dir,
                                    const RangeMethod &method, Backend backend, int &samples,
                                    Backend &ranOn) {
  DLC_ASSIGN_OR_RETURN(std::vector<fs::path> folders, sampleFolders(dir));
  DLC_ASSIGN_OR_RETURN(Calibrator cal, Calibrator::create(g, method, backend));
  ranOn = cal.backend();
  Progress progress(static_cast<int>(folders.size()));
  for (size_t i = 0; i < folders.size(); ++i) {
    const std::string name = folders[i].filename().string();
    auto inputs = readSample(g, folders[i]);
    Status st = inputs ? cal.addSample(*inputs) : inputs.status();
    if (!st.isOk() && inputs && i == 0 && backend == Backend::kAuto && ranOn == Backend::kGpu) {
      // The GPU program is compiled at the first sample; a graph it cannot compile (a shape
      // only the reference backend works out) is still calibrated, on the CPU.
      note(fmt::format("calibration on the GPU failed ({}); calibrating on the CPU reference "
                       "backend",
                       st.message()));
      DLC_ASSIGN_OR_RETURN(cal, Calibrator::create(g, method, Backend::kCpu));
      ranOn = cal.backend();
      st = cal.addSample(*inputs);
    }
    if (!st.isOk())
      return st.withContext(fmt::format("calibration sample '{}'", name));
    progress.step(static_cast<int>(i + 1));
  }
  for (const auto &[v, count] : cal.nonFinite())
    std::cerr << fmt::format("dlc: warning: value '{}': skipped {} NaN/Inf element{} "
                             "(not counted in its range)\n",
                             v->name(), count, count == 1 ? "" : "s");
  samples = cal.samples();
  return cal.ranges();
}

Expected<std::string> readFile(const std::string &path, const char *flag) {
  if (Status regular = checkRegularFile(path); !regular.isOk())
    return regular.withContext(fmt::format("{} '{}'", flag, path));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return notFound("{} '{}': cannot open it", flag, path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Expected<RangeMap> loadRanges(const Graph &g, const std::string &file, int &samples,
                              std::string &method) {
  DLC_ASSIGN_OR_RETURN(std::string text, readFile(file, "--ranges"));
  const std::string what = fmt::format("--ranges '{}'", file);
  DLC_ASSIGN_OR_RETURN(RangeTable table, parseRangeTable(text, what));
  DLC_ASSIGN_OR_RETURN(RangeMap ranges, rangesForGraph(table, g, what));
  samples = table.samples;
  method = table.method;
  return ranges;
}

} // namespace dlc::tool
