// A progress line for NVRTC compiles that take a while: on a terminal, once compiling has run
// for a second, `dlc compile` and `dlc run` redraw one line on stderr (kernels compiled of the
// total, the time so far, the slowest module yet) until it is done.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "codegen/lower.h"

namespace dlc::tool {

class CompileProgressLine {
public:
  /// Draws when stderr is a terminal and --quiet is off.
  CompileProgressLine();
  ~CompileProgressLine();
  CompileProgressLine(const CompileProgressLine &) = delete;
  CompileProgressLine &operator=(const CompileProgressLine &) = delete;

  /// The callback for LowerOptions::progress / SessionOptions::compileProgress; empty when
  /// nothing is drawn.
  std::function<void(const codegen::KernelProgress &)> callback();

  /// The line for `p` (without the carriage return).
  static std::string format(const codegen::KernelProgress &p);

private:
  void report(const codegen::KernelProgress &p);
  void tick();
  void draw(bool final);

  const bool enabled_;
  std::mutex mu_;
  std::condition_variable wake_;
  codegen::KernelProgress last_;
  double startedAt_ = 0; // steady-clock seconds of the first report; 0: none yet
  bool compiling_ = false, drawn_ = false, stop_ = false;
  std::thread ticker_;
};

} // namespace dlc::tool
