// NVRTC: CUDA C++ source -> PTX and cubin.
//
// The CUDA headers the prelude includes (cuda_fp16.h, cuda_bf16.h) are looked up explicitly;
// see cudaIncludeDir(). Errors carry NVRTC's full log and the program's name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/status.h"

namespace dlc::codegen {

struct NvrtcOptions {
  /// Compute capability times ten: 90 for sm_90.
  int smVersion = 90;
  /// Keep line info for compute-sanitizer / profilers.
  bool lineInfo = false;
  /// Extra NVRTC options, appended.
  std::vector<std::string> extra;
};

struct CompiledModule {
  std::vector<uint8_t> cubin;
  std::string ptx;
  std::string log; // warnings, if any
};

/// Compiles one program. `name` names it in errors ("conv_1_relu" or "module 3").
Expected<CompiledModule> compileCuda(const std::string &source, const std::string &name,
                                     const NvrtcOptions &opts = {});

/// The directory holding cuda_fp16.h, searched in order: $CUDA_HOME/include, $CUDA_PATH/include,
/// the toolkit found when dlc was configured, the `include` directory beside libnvrtc. The
/// error lists every path tried.
Expected<std::string> cudaIncludeDir();

/// NVRTC's version as major*1000 + minor*10 (13000 for 13.0).
int nvrtcVersion();

} // namespace dlc::codegen
