// NVRTC: CUDA C++ source -> PTX and cubin.
//
// The CUDA headers the prelude includes (cuda_fp16.h, cuda_bf16.h) are looked up explicitly;
// see cudaIncludeDir(). Errors carry NVRTC's full log and the program's name.
//
// compileModules() compiles many programs on a pool of threads and keeps the results in an
// on-disk cache: one file per program, named by a hash of the source, the NVRTC options
// (arch included) and NVRTC's version. An entry also holds the source and options it was
// made from and a checksum, so a hash collision is a miss and a corrupt or truncated file is
// discarded with a warning and recompiled, never a wrong module. Entries are written to a temporary
// file and renamed into place, so concurrent compilers never see half an entry.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/status.h"

namespace dlc::codegen {

struct NvrtcOptions {
  /// Compute capability times ten: 90 for sm_90.
  int smVersion = 90;
  /// Compile for the arch-specific target (sm_90a: wgmma, setmaxnreg), whose code runs on that
  /// compute capability only.
  bool archSpecific = false;
  /// Keep line info for compute-sanitizer / profilers.
  bool lineInfo = false;
  /// Extra NVRTC options, appended.
  std::vector<std::string> extra;
  /// compileModules only (compileCuda never caches): use the on-disk cache, in `cacheDir`, or
  /// when that is empty in defaultCacheDir().
  bool cache = true;
  std::string cacheDir;
};

struct CompiledModule {
  std::vector<uint8_t> cubin;
  std::string ptx;
  std::string log; // warnings, if any
  bool fromCache = false;
};

/// What compileModules did.
struct CompileStats {
  int hits = 0;    // programs found in the cache
  int misses = 0;  // programs compiled by NVRTC
  int damaged = 0; // cache entries that failed their checks (discarded, counted among misses)
  bool cacheEnabled = false;
  std::string cacheDir; // the directory used; empty when the cache is off
  double seconds = 0;   // wall time
};

/// One program compileModules has finished (from the cache or through NVRTC), reported from the
/// worker thread that finished it; reports do not overlap.
struct CompileEvent {
  size_t index = 0;           // the program: an index into `sources`
  size_t done = 0, total = 0; // programs finished so far, of all
  double seconds = 0;         // this program's wall time
  double elapsed = 0;         // since compileModules started
  bool fromCache = false;
};
using CompileProgressFn = std::function<void(const CompileEvent &)>;

/// Compiles one program. `name` names it in errors ("conv_1_relu" or "module 3").
Expected<CompiledModule> compileCuda(const std::string &source, const std::string &name,
                                     const NvrtcOptions &opts = {});

/// The options compileCuda gives NVRTC for `opts` (they and the source decide the module).
Expected<std::vector<std::string>> nvrtcArguments(const NvrtcOptions &opts);

/// Compiles `sources[i]` (named `names[i]` in errors) on `jobs` threads (0: one per core),
/// through the disk cache unless `opts.cache` is false. The cache is skipped, with a debug
/// message, when its directory cannot be created. On failure the error is that of the first
/// failing program (by index) and says how many failed. `stats` (optional) receives counts;
/// `progress` (optional) hears of each finished program.
Expected<std::vector<CompiledModule>> compileModules(const std::vector<std::string> &sources,
                                                     const std::vector<std::string> &names,
                                                     const NvrtcOptions &opts = {}, int jobs = 0,
                                                     CompileStats *stats = nullptr,
                                                     const CompileProgressFn &progress = {});

/// The cache directory: $DLC_CACHE_DIR, else $XDG_CACHE_HOME/dlc, else $HOME/.cache/dlc;
/// empty when none of these variables is set.
std::string defaultCacheDir();

/// The cache file that holds (or would hold) `source` compiled with `opts`:
/// `<dir>/<16 hex digits>.dlcm`. Empty when the CUDA headers cannot be found.
std::string cacheEntryPath(const std::string &dir, const std::string &source,
                           const NvrtcOptions &opts);

/// The directory holding cuda_fp16.h, searched in order: $CUDA_HOME/include, $CUDA_PATH/include,
/// the toolkit found when dlc was configured, the `include` directory beside libnvrtc. The
/// error lists every path tried.
Expected<std::string> cudaIncludeDir();

/// NVRTC's version as major*1000 + minor*10 (13000 for 13.0).
int nvrtcVersion();

} // namespace dlc::codegen
