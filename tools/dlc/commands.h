// The `dlc` subcommands. Each registers itself on the app and reports its exit status
// through `exitCode`.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ir/graph.h"
#include "runtime/jit/model.h"
#include "runtime/package.h"

namespace dlc::tool {

/// Exit statuses of every command: 0 done, 1 an error (the message says which), 2 a usage
/// error (an unknown flag, a missing argument: CLI11's message), 3 `dlc run --compare` found
/// outputs that differ from the expected ones.
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitMismatch = 3;

void addInspectCommand(CLI::App &app, int &exitCode);
void addOptCommand(CLI::App &app, int &exitCode);
void addRunCommand(CLI::App &app, int &exitCode);
void addCompileCommand(CLI::App &app, int &exitCode);
void addQuantizeCommand(CLI::App &app, int &exitCode);
void addExportCommand(CLI::App &app, int &exitCode);

/// The flags every command that reads a model shares: --format, --input-shape, --outputs.
struct LoadArgs {
  std::string format;
  std::vector<std::string> inputShapes;
  std::vector<std::string> outputs;
  bool keepInitializersAsInputs = false;
};
void addLoadFlags(CLI::App *cmd, LoadArgs &args);
/// The parsed flags (errors name the flag and the bad value).
Expected<LoadOptions> toLoadOptions(const LoadArgs &args);

/// `--precision fp32|fp16|bf16` and `--keep-fp32 NAME|OP` (run and compile).
struct PrecisionArgs {
  std::string precision = "fp32";
  std::vector<std::string> keepFp32;
};
void addPrecisionFlags(CLI::App *cmd, PrecisionArgs &args);
/// The flags as the GPU pipeline takes them: precision "" for fp32, names '|'-joined.
Status precisionOptions(const PrecisionArgs &args, std::string &precision, std::string &keepFp32);

/// The GPU kernel choices `dlc run` and `dlc compile` share (--allow-tf32, --no-hopper-kernels,
/// --[no-]hopper-split-k, --[no-]hopper-int8 and the experimental --hopper-conv,
/// --epilogue-prefetch), bound to the codegen options they set.
void addKernelFlags(CLI::App *cmd, codegen::EmitOptions &kernels);

/// Loads a model through the frontend its content calls for (runtime/jit's loadGraphFile).
Expected<std::unique_ptr<Graph>> loadGraph(const std::string &path, const LoadArgs &args);

/// Sizes for symbolic dims from `--dim N=8` (repeatable): `--dim 'N8': expected NAME=SIZE`,
/// `--dim 'N=x': SIZE must be a non-negative integer`.
Expected<std::map<std::string, int64_t>> parseDims(const std::vector<std::string> &specs);
/// `--dim` values of `dlc compile`: NAME=SIZE or NAME=MIN..MAX (a range; SIZE is SIZE..SIZE).
Expected<std::vector<rt::DimRange>> parseDimRanges(const std::vector<std::string> &specs);

/// `dlc inspect` on a TensorFlow GraphDef (inspect_tf.cc).
int inspectTfGraph(const std::string &path, bool text, bool json);

/// Prints `dlc: error: <message>` to stderr and returns exit status 1.
int reportError(const Status &status);

/// Output files (`-o`) are new files or regular files dlc replaces: a symbolic link, a device,
/// a FIFO or a directory at `path` is refused before any work, where `compile -o` used to
/// rename over a link or a device node and `opt -o` wrote through links.
Status checkOutputFile(const std::string &flag, const std::string &path);

/// The flags every subcommand takes (common_flags.cc): -v/--verbose (-vv: debug logs),
/// -q/--quiet (errors only: no warnings, no progress), and the resource limits of ir/limits.h
/// (--max-tensor-bytes, --max-nodes, --max-loop-iterations). They take effect as parsed, before
/// the command runs.
void addCommonFlags(CLI::App *cmd);
/// -q was given: progress output stays off.
bool quiet();
/// Prints `dlc: note: <message>` to stderr, unless -q.
void note(const std::string &message);
/// "8G", "512MiB", "1000000": a byte count (K/M/G/T are powers of 1024, an optional trailing
/// B or iB); an error naming `flag` otherwise.
Expected<int64_t> parseByteSize(const std::string &flag, const std::string &text);

/// "1.5 MiB" (binary units, one decimal; plain bytes below 1 KiB). Defined in inspect.cc.
std::string humanBytes(int64_t bytes);

} // namespace dlc::tool
