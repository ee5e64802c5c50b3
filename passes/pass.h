// A pass: one transformation of the graph, with its own options from the pipeline string.
//
// Passes are listed once, in passes/passes.def; that list drives registration, `--help` and
// pipeline parsing (passes/registry.h). A pass reads its options only from the PassOptions
// it is given (never from globals), reports refusals under `--debug-only=<its name>` through
// PassOptions::debugf, and returns whether it changed the graph.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/status.h"
#include "passes/placement.h"

namespace dlc {

/// The options a pass received: `fold-constants{size-limit=65536}` gives
/// values = {"size-limit": "65536"}. Typed getters return an error naming the option for a
/// value of the wrong form; an option that was not given yields the default.
struct PassOptions {
  /// The pass these options are for (used in messages and the debug log).
  std::string pass;
  /// key -> raw text, as written in the pipeline.
  std::map<std::string, std::string, std::less<>> values;
  /// Set for the pass named by `--debug-only`: log each decision to *debugOut.
  bool debug = false;
  std::ostream *debugOut = nullptr;
  /// Where warnings a user should see go (place-devices' CPU fallbacks); none when null.
  std::ostream *warnOut = nullptr;
  /// Whether the GPU backend can run a node (passes/placement.h); empty when no GPU backend
  /// answers (then place-devices assumes a GPU that runs everything).
  DeviceSupportFn gpuSupport;

  bool has(std::string_view key) const { return values.find(key) != values.end(); }
  /// A decimal integer (`-3`, `65536`); error `option 'K': expected an integer, got 'V'`.
  Expected<int64_t> getInt(std::string_view key, int64_t dflt) const;
  /// `true`/`false`/`1`/`0`; error `option 'K': expected true or false, got 'V'`.
  Expected<bool> getBool(std::string_view key, bool dflt) const;
  std::string getString(std::string_view key, std::string dflt) const;

  /// Writes `[<pass>] <message>\n` to *debugOut when debug is on.
  template <typename... Args> void debugf(fmt::format_string<Args...> f, Args &&...args) const {
    if (debug && debugOut)
      writeDebugLine(fmt::format(f, std::forward<Args>(args)...));
  }

  /// Writes `warning: [<pass>] <message>\n` to *warnOut when set.
  template <typename... Args> void warnf(fmt::format_string<Args...> f, Args &&...args) const {
    if (warnOut)
      *warnOut << "warning: [" << pass << "] " << fmt::format(f, std::forward<Args>(args)...)
               << "\n";
  }

private:
  void writeDebugLine(const std::string &message) const;
};

/// What a pass accepts in `{...}`: pipeline parsing rejects unknown names and ill-formed
/// values before any pass runs.
struct PassOptionSpec {
  enum class Kind : uint8_t { kInt, kBool, kString };
  std::string name;
  Kind kind;
  /// One line for `--help`, including the default.
  std::string help;
};

class Pass {
public:
  virtual ~Pass() = default;
  /// The options this pass understands (none by default).
  virtual std::vector<PassOptionSpec> options() const { return {}; }
  /// Transforms `g`; returns true when the graph changed.
  virtual Expected<bool> run(Graph &g, const PassOptions &options) = 0;
};

} // namespace dlc
