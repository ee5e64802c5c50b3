// Every pass pipeline dlc runs, defined once (pipelines.cc) and printed by
// `dlc opt --print-pipeline`.
//
//   load  Every model, when it is loaded (Model::load, Model::fromGraph, `dlc opt -O N`):
//           -O0  infer-shapes
//           -O1  infer-shapes,fold-constants,simplify,cse,dce,infer-shapes   (the default)
//   cpu   A CPU session runs the loaded graph on the reference backend: no further pass.
//   gpu   Per set of input shapes, after the symbolic input dims are bound (specializeGraph):
//           infer-shapes,expand-ops,fold-batchnorm,canonicalize-quant,fold-constants,
//           realize-int8,[mixed-precision,]layout,fold-transpose-matmul,dce,fuse-attention,dce,
//           place-devices{gpu=true,gpus=1,strict=S},insert-copies,fuse,plan-memory{reuse=R}
//         Binding the dims makes the shape arithmetic constant (fold-constants folds it with
//         the batch norms' weights); simplify, cse and dce already ran at load and are not
//         repeated. `dlc run --verify` plans without reuse, so that every value survives.
//   quantize  `dlc quantize`, after calibration has written quant.ranges into the loaded graph:
//           infer-shapes,canonicalize-quant,fold-batchnorm,insert-fake-quant
//         TensorFlow's fake_quant becomes Q/DQ first, batch norms fold into the weights before
//         they are quantized, then Q/DQ go where the ranges say.
#pragma once

#include <string>

#include "ir/status.h"

namespace dlc::jit {

/// The highest `-O` level. Levels differ in what they run; there are no aliases.
inline constexpr int kMaxOptLevel = 1;

/// The load pipeline of `-O optLevel`; an error for a level that does not exist.
Expected<std::string> loadPipeline(int optLevel);

struct GpuPipelineOptions {
  /// A node without a GPU kernel is an error naming it, instead of running on the CPU.
  bool strictPlacement = false;
  /// Let buffers share memory; off for `--verify`, which reads every intermediate.
  bool reuseMemory = true;
  /// `--precision`: "fp16" or "bf16" adds mixed-precision (after the folds, before placement);
  /// "" (or "fp32") keeps the model's types.
  std::string precision = {};
  /// `--keep-fp32`: node or op names ('|'-separated) mixed-precision keeps in float32.
  std::string keepFp32 = {};
  /// fuse-attention after fold-transpose-matmul (on by default since its kernel was measured
  /// on the H200; `--no-fused-attention` turns it off).
  bool fuseAttention = true;
  /// realize-int8{fast-requantize=true}: on by default, `--exact-requantize` turns it off.
  bool fastRequantize = true;
  /// layout{patch-gemm=true} (on by default; `--no-patch-gemm` turns it off).
  bool patchGemm = true;
  /// kmajor-weights after fuse-attention: the compile for an sm_90a target adds it unless
  /// `--no-kmajor-weights` (codegen::EmitOptions::kMajorWeights).
  bool kMajorWeights = false;
  /// fuse{gemm-layer-norm=true} (`--gemm-layer-norm`, codegen::EmitOptions::gemmLayerNorm).
  bool gemmLayerNorm = false;
};

/// The GPU pipeline (see above).
std::string gpuPipeline(const GpuPipelineOptions &opts = {});
/// What `dlc run --device gpu` runs on a model file: the load pipeline of -O1, then the GPU
/// pipeline (`dlc opt -p gpu`, `dlc export`).
std::string loadAndGpuPipeline();

/// The pipeline `dlc quantize` runs on the loaded, calibrated graph (see above);
/// `insertOptions` ("range-mismatch=requantize,range-ratio=64") go to insert-fake-quant.
std::string quantizePipeline(const std::string &insertOptions = "");

/// Every pipeline, one per line, for `dlc opt --print-pipeline`: the load pipeline of
/// `optLevel` (marked as what `dlc opt -O optLevel` runs) and of the other levels, and the CPU
/// and GPU pipelines.
std::string describePipelines(int optLevel);

} // namespace dlc::jit
