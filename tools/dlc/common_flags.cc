// The flags every `dlc` subcommand shares: verbosity and resource limits (commands.h).
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include <spdlog/spdlog.h>

#include "ir/limits.h"
#include "tools/dlc/commands.h"

namespace dlc::tool {

namespace {

std::atomic<bool> g_quiet{false};

/// Applies a limit flag; a bad value is a usage error (CLI11 reports it with the flag).
void setLimit(const std::string &flag, const std::string &text, int64_t Limits::*field,
              bool bytes) {
  int64_t v = 0;
  if (bytes) {
    auto parsed = parseByteSize(flag, text);
    if (!parsed)
      throw CLI::ValidationError(flag, "'" + text +
                                           "': expected a positive byte count such as 1000000, "
                                           "512M or 8G");
    v = *parsed;
  } else {
    char *end = nullptr;
    errno = 0;
    long long n = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno == ERANGE || n <= 0)
      throw CLI::ValidationError(flag, "'" + text + "': expected a positive whole number");
    v = n;
  }
  Limits l = limits();
  l.*field = v;
  setLimits(l);
}

} // namespace

bool quiet() { return g_quiet.load(); }

void note(const std::string &message) {
  if (!quiet())
    std::fprintf(stderr, "dlc: note: %s\n", message.c_str());
}

Expected<int64_t> parseByteSize(const std::string &flag, const std::string &text) {
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])))
    ++i;
  std::string unit = text.substr(i);
  struct Unit {
    const char *name;
    int shift;
  };
  static constexpr Unit kUnits[] = {{"", 0},     {"B", 0},   {"K", 10},   {"KB", 10}, {"KiB", 10},
                                    {"M", 20},   {"MB", 20}, {"MiB", 20}, {"G", 30},  {"GB", 30},
                                    {"GiB", 30}, {"T", 40},  {"TB", 40},  {"TiB", 40}};
  int shift = -1;
  for (const Unit &u : kUnits)
    if (unit == u.name)
      shift = u.shift;
  errno = 0;
  char *end = nullptr;
  long long n = i > 0 ? std::strtoll(text.substr(0, i).c_str(), &end, 10) : 0;
  int64_t bytes = 0;
  if (i == 0 || shift < 0 || errno == ERANGE || n <= 0 ||
      __builtin_mul_overflow(static_cast<int64_t>(n), int64_t{1} << shift, &bytes))
    return invalidArgument("{} '{}': expected a positive byte count such as 1000000, 512M or 8G",
                           flag, text);
  return bytes;
}

void addCommonFlags(CLI::App *cmd) {
  auto *verbose = cmd->add_flag_function(
      "-v,--verbose",
      [](int64_t n) { spdlog::set_level(n >= 2 ? spdlog::level::debug : spdlog::level::info); },
      "Say more on stderr: what was loaded and how long each phase took; -vv adds debug "
      "logs (kernel cache, module loads)");
  auto *q = cmd->add_flag_function(
      "-q,--quiet",
      [](int64_t) {
        spdlog::set_level(spdlog::level::err);
        g_quiet = true;
      },
      "Errors only on stderr: no warnings, no progress (results still go to stdout)");
  verbose->excludes(q);
  cmd->add_option_function<std::string>(
         "--max-tensor-bytes",
         [](const std::string &v) {
           setLimit("--max-tensor-bytes", v, &Limits::maxTensorBytes, true);
         },
         "The largest tensor a model may declare or compute (512M, 8G, ...); larger ones are "
         "refused before anything is allocated. Default: this machine's memory")
      ->type_name("BYTES");
  cmd->add_option_function<std::string>(
         "--max-nodes",
         [](const std::string &v) { setLimit("--max-nodes", v, &Limits::maxNodes, false); },
         "The most nodes a model may have, subgraphs counted (default 10000000)")
      ->type_name("N");
  cmd->add_option_function<std::string>(
         "--max-loop-iterations",
         [](const std::string &v) {
           setLimit("--max-loop-iterations", v, &Limits::maxLoopIterations, false);
         },
         "The most iterations one Loop may run on the reference backend (default 1000000)")
      ->type_name("N");
}

} // namespace dlc::tool
