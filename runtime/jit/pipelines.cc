#include "runtime/jit/pipelines.h"

#include <fmt/format.h>

namespace dlc::jit {

namespace {

/// What each -O level adds to the one below it.
constexpr const char *kLoadLevels[kMaxOptLevel + 1] = {
    "infer-shapes",                                 // -O0: types only, the graph as imported
    "fold-constants,simplify,cse,dce,infer-shapes", // -O1: the import cleanup
};

} // namespace

Expected<std::string> loadPipeline(int optLevel) {
  if (optLevel < 0 || optLevel > kMaxOptLevel)
    return invalidArgument("optimization level {} does not exist: dlc has -O0 (types only) and "
                           "-O1 (the default cleanup)",
                           optLevel);
  std::string text;
  for (int level = 0; level <= optLevel; ++level)
    text += (level ? "," : "") + std::string(kLoadLevels[level]);
  return text;
}

std::string loadAndGpuPipeline() { return *loadPipeline(1) + "," + gpuPipeline(); }

std::string gpuPipeline(const GpuPipelineOptions &opts) {
  std::string precision;
  if (!opts.precision.empty() && opts.precision != "fp32")
    precision = fmt::format("mixed-precision{{precision={}{}}},", opts.precision,
                            opts.keepFp32.empty() ? "" : ",keep-fp32=" + opts.keepFp32);
  return fmt::format(
      "infer-shapes,expand-ops,fold-batchnorm,canonicalize-quant,fold-constants,realize-int8{},{}"
      "layout{},fold-transpose-matmul,{}{}dce,place-devices{{gpu=true,gpus=1,strict={}}},"
      "insert-copies,fuse{},"
      "plan-memory{{reuse={}}}",
      opts.fastRequantize ? "{fast-requantize=true}" : "", precision,
      opts.patchGemm ? "{patch-gemm=true}" : "", opts.fuseAttention ? "dce,fuse-attention," : "",
      opts.kMajorWeights ? "kmajor-weights," : "", opts.strictPlacement,
      opts.gemmLayerNorm ? "{gemm-layer-norm=true}" : "", opts.reuseMemory);
}

std::string quantizePipeline(const std::string &insertOptions) {
  return "infer-shapes,canonicalize-quant,fold-batchnorm,insert-fake-quant" +
         (insertOptions.empty() ? std::string() : "{" + insertOptions + "}");
}

std::string describePipelines(int optLevel) {
  std::string out;
  for (int level = 0; level <= kMaxOptLevel; ++level)
    out += fmt::format("load -O{}: {}{}\n", level, *loadPipeline(level),
                       level == optLevel ? "   (this run)" : "");
  out += "cpu: (none: the reference backend runs the loaded graph)\n";
  out += fmt::format("gpu: {}\n", gpuPipeline());
  out += fmt::format("gpu for sm_90a: {}\n", gpuPipeline({.kMajorWeights = true}));
  out += fmt::format("gpu --gemm-layer-norm: {}\n", gpuPipeline({.gemmLayerNorm = true}));
  out += fmt::format("gpu --verify: {}\n", gpuPipeline({.reuseMemory = false}));
  out += fmt::format("gpu --no-cpu-fallback: {}\n", gpuPipeline({.strictPlacement = true}));
  out += fmt::format("gpu --precision fp16: {}\n", gpuPipeline({.precision = "fp16"}));
  out += fmt::format("gpu --no-fused-attention: {}\n", gpuPipeline({.fuseAttention = false}));
  out += fmt::format("gpu --exact-requantize: {}\n", gpuPipeline({.fastRequantize = false}));
  out += fmt::format("gpu --no-patch-gemm: {}\n", gpuPipeline({.patchGemm = false}));
  out += fmt::format("quantize: {}\n", quantizePipeline());
  return out;
}

} // namespace dlc::jit
