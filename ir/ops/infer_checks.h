// Checks shared by the shape-inference functions of the elementwise, reduction, linalg and
// quantization families: node-against-schema validation (so an inference function may index
// its inputs and read its attributes without guarding every access), dtype classes, and
// small dim helpers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/op.h"

namespace dlc::ops {

/// Checks a node against its op's schema: input and output counts, required inputs present,
/// required attributes set, every set attribute of the schema's kind, and the op's own
/// OpDef::verify. Inference functions may then read inputs below `minInputs` and attributes
/// freely.
Status checkSchema(const InferContext &ctx); // inferNode runs it before every InferFn

/// Classes of element types that ONNX type constraints use.
enum class TypeClass : uint8_t {
  kAny,
  kFloat,         // f16, bf16, f32, f64
  kNumeric,       // floats and integers
  kSignedNumeric, // floats and signed integers
  kInteger,       // signed and unsigned integers
  kUnsigned,      // unsigned integers
  kBool,
};

/// Whether `t` belongs to class `c`.
bool inTypeClass(DType t, TypeClass c);

/// Error unless input i's dtype is unknown or belongs to `c`.
Status checkInputDType(const InferContext &ctx, int i, TypeClass c);

/// The common dtype of the present inputs in `indices` (kUnknown if none is known); error if
/// two known dtypes differ.
Expected<DType> commonDType(const InferContext &ctx, const std::vector<int> &indices);

/// Input i's dtype if it is a present input, else kUnknown.
DType inputDType(const InferContext &ctx, int i);

/// A shape of `rank` unknown dims.
Shape unknownDims(int64_t rank);

/// Error unless `from` broadcasts to `to` in one direction only (numpy rules with `to` kept):
/// used by PRelu's slope and Gemm's C. `what` names `from` in the message.
Status checkUnidirectional(const InferContext &ctx, const Shape &from, const Shape &to,
                           const std::string &what);

/// The integer elements of constant input i, or nullopt when it is not a constant integer
/// tensor.
std::optional<std::vector<int64_t>> constantInts(const InferContext &ctx, int i);

} // namespace dlc::ops
