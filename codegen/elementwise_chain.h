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
#include "codegen/kernel.h"
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

/// An epilogue's one-element operands (scales, zero points) hoisted out of its element loop:
/// value -> the name of its hoisted copy.
using Hoisted = std::map<const Value *, std::string>;

/// Writes `const auto h_<param> = dlc_load(<param>[0]);` for each one-element operand of the
/// group's nodes beside the anchor for which `param` returns a parameter name ("" skips it),
/// so that it is loaded once, not per element under the kernel's bounds branches, where the
/// compiler does not merge the loads (nor what is computed from them). A scale read as a
/// QuantizeLinear scale, and otherwise only as a DequantizeLinear one, carries its reciprocal
/// (`dlc_qscale`), computed once; a dequantization reads it back through the explicit (float)
/// conversion its expression writes. Otherwise every element would compute the reciprocal again,
/// whose double-precision steps and branch the compiler does not hoist. Readers outside the group
/// do not count. With `assign`, a scale's load stays in `w` but its reciprocal (`h_<param> =
/// dlc_qscale_of(h_<param>_raw);`) goes to `assign`, for a kernel that computes it later, once
/// its operand loads are in flight: the reciprocal waits for the scale where it is computed
/// (and branches on it), a load alone does not. A constant integer of at most 32 bits (a zero
/// point, a clamp's bound) is written as a literal (`constexpr`) instead of loaded.
Hoisted writeHoistedScalars(CodeWriter &w, const FusedGroup &group,
                            const std::function<std::string(const Value *)> &param,
                            CodeWriter *assign = nullptr);

/// `load`, except that an operand in `hoisted` (when given) is read from its hoisted copy.
LoadFn readingHoisted(const Hoisted *hoisted, LoadFn load);

} // namespace dlc::codegen
