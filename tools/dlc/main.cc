// dlc: the command line. Each subcommand lives in its own file.
#include <cstdio>
#include <exception>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "tools/dlc/commands.h"

int main(int argc, char **argv) {
  // Logs (warnings, -v's info, -vv's debug) go to stderr: stdout carries results only.
  spdlog::set_default_logger(spdlog::stderr_logger_mt("dlc"));
  spdlog::set_pattern("dlc: %l: %v");
  int exitCode = 0;
  CLI::App app{"dlc: a deep-learning graph compiler (ONNX or TensorFlow -> IR -> passes -> CUDA)",
               "dlc"};
  app.set_version_flag("--version", "dlc 0.1.0");
  app.require_subcommand(1);
  dlc::tool::addInspectCommand(app, exitCode);
  dlc::tool::addOptCommand(app, exitCode);
  dlc::tool::addCompileCommand(app, exitCode);
  dlc::tool::addRunCommand(app, exitCode);
  dlc::tool::addQuantizeCommand(app, exitCode);
  dlc::tool::addExportCommand(app, exitCode);
  for (CLI::App *cmd : app.get_subcommands([](CLI::App *) { return true; }))
    dlc::tool::addCommonFlags(cmd);
  spdlog::set_level(spdlog::level::warn); // -v: info, -vv: debug, -q: errors only
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    // --help and --version end here too (status 0); anything else is a usage error.
    return app.exit(e) == 0 ? 0 : dlc::tool::kExitUsage;
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "dlc: error: out of memory\n");
    return dlc::tool::kExitError;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "dlc: error: %s\n", e.what());
    return dlc::tool::kExitError;
  }
  return exitCode;
}
