// `dlc run --compare-precision int8|fp16|bf16`: the float model and its lower-precision form
// run side by side on the run's inputs, and the per-layer table of `dlc quantize --report`
// (runtime/jit/quant_report.h) is printed, worst layer first.
//
//  * int8: the model is quantized as `dlc quantize` quantizes it (the quantize pipeline of
//    runtime/jit/pipelines.h), from ranges calibrated on `--calibration DIR`'s samples or read
//    from `--ranges FILE.json`; the layers are the Conv/MatMul/Gemm with a dequantized input.
//    A model that is already quantized (QuantizeLinear/DequantizeLinear or FakeQuant nodes) is
//    compared as it is against itself with every Q->DQ pair removed (FakeQuant first becomes
//    Q/DQ); it needs no ranges, and giving them is an error (they would not be used).
//  * fp16/bf16: the mixed-precision pass (with `--keep-fp32`); the layers are the nodes it
//    moves to the low type.
// Both run where `--device` says (auto: the GPU when there is one, else the reference backend).
#pragma once

#include <map>
#include <string>

#include "runtime/jit/model.h"

namespace dlc::tool {

struct ComparePrecisionArgs {
  std::string precision; // int8, fp16 or bf16
  std::string calibration;
  std::string ranges;
  std::string method = "entropy";
  std::string keepFp32; // '|'-joined, as the mixed-precision pass takes it
};

/// Checks the flags before anything runs (a missing --calibration/--ranges for int8, ...).
Status checkComparePrecisionArgs(const Model &model, const ComparePrecisionArgs &args);

/// Runs the comparison on `inputs` and prints the table on stdout.
Status comparePrecision(const Model &model, const std::map<std::string, Tensor> &inputs,
                        const ComparePrecisionArgs &args, Backend backend);

} // namespace dlc::tool
