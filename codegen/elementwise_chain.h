// Shared by every emitter: elementwise/broadcast nodes computed at one output element.
//
// A fused kernel computes its anchor (a GEMM accumulator, a reduction result, a loaded input
// element, ...) and then runs the group's elementwise nodes on it: the epilogue. The emitter
// binds the values it already has to C expressions in `env`, and this writes one statement per
// node with its CUDA expression (elementwise_expr.h), fetching any other operand through
// the emitter's `load` callback (which knows the element's coordinates and does broadcasting).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/code_writer.h"
#include "ir/graph.h"

namespace dlc::codegen {

/// Maps values to C expressions of their element in compute type.
using ValueEnv = std::map<const Value *, std::string>;
/// The expression of an element of `v` (a value the nodes read but do not compute) read as if
/// its shape were `shape`, broadcast against the iteration shape: staticSizes(v) for most
/// operands, another shape with as many elements for per-axis Q/DQ parameters
/// (codegen/quant_expr.h, operandView). Loaders index with broadcastOffset(shape, ...).
using LoadFn =
    std::function<Expected<std::string>(const Value *v, const std::vector<int64_t> &shape)>;

/// Writes `const <compute type> <prefix>N = <expr>;` (names from CodeWriter::fresh) for each
/// output of each node (elementwise or broadcast, in topological order) and binds it in `env`.
/// Operands missing from `env` are fetched with `load` once per shape they are read as and
/// bound. Fails, naming the node, when an op has no CUDA expression, or when an operand
/// computed in the kernel would have to be read with another shape.
Status emitElementwiseNodes(CodeWriter &w, const std::vector<const Node *> &nodes, ValueEnv &env,
                            const LoadFn &load, std::string_view prefix);

/// The static sizes of a value's shape (the shape must be static; lowering guarantees it).
std::vector<int64_t> staticSizes(const Value *v);

/// A C expression (64-bit) of the flat offset into a tensor of shape `in`, broadcast
/// (numpy rules, right-aligned) to `out`, for the output element whose flat index is the C
/// expression `idx`. "0" for a single element; `idx` itself when the shapes are equal.
/// `wide`: 64-bit constants (`LL`); off when every offset is known to fit in 32 bits.
std::string broadcastOffset(const std::vector<int64_t> &in, const std::vector<int64_t> &out,
                            std::string_view idx, bool wide = true);
/// The same for a tensor whose dims lie `inStrides` elements apart (a permuted view).
std::string broadcastOffset(const std::vector<int64_t> &in, const std::vector<int64_t> &inStrides,
                            const std::vector<int64_t> &out, std::string_view idx,
                            bool wide = true);

/// `dlc_load(ptr[offset])`: an element of `v` in compute type.
std::string loadExpr(std::string_view ptr, std::string_view offset);

} // namespace dlc::codegen
