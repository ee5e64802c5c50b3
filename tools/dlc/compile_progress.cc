#include "tools/dlc/compile_progress.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "tools/dlc/commands.h"

namespace dlc::tool {
namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// A second of compiling before the line appears: fast (or cached) compiles print nothing.
constexpr double kQuietSeconds = 1.0;

} // namespace

CompileProgressLine::CompileProgressLine() : enabled_(isatty(fileno(stderr)) != 0 && !quiet()) {}

CompileProgressLine::~CompileProgressLine() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable())
    ticker_.join();
}

std::function<void(const codegen::KernelProgress &)> CompileProgressLine::callback() {
  if (!enabled_)
    return {};
  return [this](const codegen::KernelProgress &p) { report(p); };
}

std::string CompileProgressLine::format(const codegen::KernelProgress &p) {
  std::string line =
      fmt::format("compiling kernels: {}/{} ({} of {} NVRTC programs), {:.1f} s", p.kernelsDone,
                  p.kernelsTotal, p.modulesDone, p.modulesTotal, p.elapsed);
  if (!p.slowestKernels.empty())
    line += fmt::format("; slowest: {} ({:.1f} s)", p.slowestKernels, p.slowestSeconds);
  return line;
}

void CompileProgressLine::report(const codegen::KernelProgress &p) {
  std::lock_guard<std::mutex> lock(mu_);
  last_ = p;
  if (p.modulesDone == 0) { // a program's compile starts (a run may compile several)
    startedAt_ = now();
    compiling_ = true;
    if (!ticker_.joinable())
      ticker_ = std::thread([this] { tick(); });
  }
  const bool finished = p.modulesDone == p.modulesTotal;
  if (drawn_ || now() - startedAt_ >= kQuietSeconds)
    draw(finished);
  if (finished)
    compiling_ = false;
}

void CompileProgressLine::tick() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::milliseconds(250));
    if (stop_ || !compiling_)
      continue;
    // Between reports the clock still runs: redraw it.
    last_.elapsed = now() - startedAt_;
    if (last_.elapsed >= kQuietSeconds)
      draw(false);
  }
}

void CompileProgressLine::draw(bool final) {
  // \r and clear to the end of the line (ANSI EL), so a shorter line leaves no tail.
  std::fprintf(stderr, "\r%s\033[K%s", format(last_).c_str(), final ? "\n" : "");
  std::fflush(stderr);
  drawn_ = !final;
}

} // namespace dlc::tool
