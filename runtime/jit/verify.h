// `dlc run --verify`: the GPU backend checked against the reference backend, value by value.
//
// The model is specialised and lowered as for a GPU run, with every value a kernel writes kept
// as an extra output; the same specialised graph runs on the reference backend with every
// value kept. Values are compared in node order with the dtype's tolerance (relative to the
// largest magnitude of the reference value: f32 1e-4, f16 1e-2, bf16 4e-2; integers and bools
// exactly). In a quantized graph, and for integers, each value is compared with the reference
// of its own kernel run on the GPU's values of that kernel's inputs (a rounding boundary crossed
// by float error moves a level by one, which a whole-graph run compounds layer after layer);
// an integer that a kernel quantizes from a float may be one quantization step away (the
// summary counts them). The first value that diverges names its node.
#pragma once

#include <map>
#include <string>

#include "runtime/jit/model.h"
#include "runtime/tensor_compare.h"

namespace dlc {

struct VerifyReport {
  int compared = 0;            // values compared
  int oneStepValues = 0;       // quantized values with elements one step from the reference
  int64_t oneStepElements = 0; // and how many such elements
  std::string divergence;      // empty when everything matched: "node 'conv_3' (Conv): output ..."
  std::string summary;         // one line for the user
};

Expected<VerifyReport> verifyGpuAgainstReference(const Model &model,
                                                 const std::map<std::string, Tensor> &inputs,
                                                 const SessionOptions &opts);

/// For every float value of `g` that a node computes, the least precise float dtype on its way
/// from the graph's inputs and constants: a float32 Cast of a float16 result maps to float16.
std::map<const Value *, DType> computedPrecision(const Graph &g);

/// The tolerance `--verify` uses for a dtype, given the largest |value| of the reference.
Tolerance verifyTolerance(DType dtype, double maxAbs);

} // namespace dlc
