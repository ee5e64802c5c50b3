// What quantization costs, layer by layer: the float model and its quantized form run side by
// side on the same inputs (the reference backend), and every quantized layer's output is
// compared (`dlc quantize --report`).
//
// A quantized layer is a Conv, ConvTranspose, MatMul or Gemm (fusion kind out-fusable) of the
// quantized graph with a DequantizeLinear on one of its inputs; its output has the same name
// in both graphs. Per layer, over every sample:
//  * SQNR: 10 log10(sum f^2 / sum (f - q)^2), in dB (f the float output, q the quantized);
//  * cosine similarity of f and q;
//  * saturation: the share of the values entering its quantized activation inputs (the
//    QuantizeLinear's input) that fall outside the int8 grid and are clipped;
//  * outliers: max |x| of those values against their 99.9th percentile: a range a few outliers
//    stretch leaves the bulk of the values few levels.
//  * a range mismatch: a join insert-fake-quant found with inputs of very different ranges
//    (`quant.range_mismatch`) feeds the layer: its SQNR can look fine while the smaller input
//    is gone (the mask example: the output is dominated by the mask).
// Layers come sorted worst SQNR first, each with a reason when one of those explains it.
//
// The same table for float16/bfloat16 (`dlc run --compare-precision fp16`): the layers are the
// nodes the mixed-precision pass moves to the low type (not Casts, not data movement), each
// output compared between the float32 model and the mixed-precision one; "clipped" is the share
// of float32 output values beyond the low type's range, and the reasons are values beyond that
// range, a finite value that became Inf/NaN (an overflow inside the layer), or underflow.
//
// Both graphs run through a ValueRunner (value_runner.h): on the GPU or the reference backend.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/jit/model.h"

namespace dlc::jit {

struct LayerQuantReport {
  std::string node;  // the layer's name
  std::string op;    // "Conv"
  std::string value; // its output
  double sqnrDb = 0; // +inf when exact
  double cosine = 1;
  double saturated = 0;    // share of input values clipped, 0..1
  double outlierRatio = 1; // max |x| / 99.9th percentile of |x| over its quantized inputs
  std::string reason;      // "", or why it is bad
};

/// Runs both graphs on every sample (inputs by name) on `backend` and reports each quantized
/// layer.
Expected<std::vector<LayerQuantReport>>
compareQuantized(const Graph &floatGraph, const Graph &quantGraph,
                 const std::vector<std::map<std::string, Tensor>> &samples,
                 Backend backend = Backend::kCpu);

/// Runs `floatGraph` in float32 and in mixed precision (`precision` "fp16" or "bf16",
/// `keepFp32` as the mixed-precision pass takes it) on every sample and reports each layer the
/// pass moves to the low type (see above). Layers the backend could not observe are left out.
Expected<std::vector<LayerQuantReport>>
compareMixedPrecision(const Graph &floatGraph,
                      const std::vector<std::map<std::string, Tensor>> &samples,
                      const std::string &precision, const std::string &keepFp32 = "",
                      Backend backend = Backend::kCpu);

/// A copy of an already quantized graph with every QuantizeLinear -> DequantizeLinear pair
/// removed (the DQ's readers read the Q's input): its float counterpart. DequantizeLinear of
/// stored integer weights stays (their float values are gone). `removed` gets the number of
/// pairs removed.
std::unique_ptr<Graph> stripQuantization(const Graph &g, int *removed = nullptr);

/// The table `dlc quantize --report` prints.
std::string formatQuantReport(const std::vector<LayerQuantReport> &layers);
/// The same table under another title line (e.g. for fp16).
std::string formatLayerTable(const std::vector<LayerQuantReport> &layers, const std::string &title);

} // namespace dlc::jit
