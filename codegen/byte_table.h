// Epilogue tails computed once per block as a 256-entry table.
//
// An int8 kernel's epilogue often ends in a chain whose only varying input is an 8-bit integer:
// ResNet-50's realized residual block adds two int8 values in the integer domain, then
// dequantizes the sum, applies ReLU and quantizes it again with another scale (DQ -> Relu ->
// Q). Per element that is a multiply, a compare and a correctly rounded division (about 15
// instructions), in kernels that are bound by their epilogue (a 1x1 convolution over 64
// channels does 64 multiply-adds per output). Since the tail is a function of 256 possible
// inputs, each block evaluates it for all of them into shared memory before its main loop, with
// the same expressions the element loop would run (so the table is exact by construction), and
// each element then costs one shared-memory load.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codegen/code_writer.h"
#include "codegen/elementwise_chain.h"
#include "codegen/kernel.h"

namespace dlc::codegen {

/// A tail of a group's elementwise nodes that depends on one small integer value alone.
struct ByteTable {
  const Value *index = nullptr;    // the integer value the tail is a function of
  std::vector<const Node *> nodes; // the tail, in topological order
  const Value *result = nullptr;   // what the table holds: the group's one output
  int64_t lo = -128;               // the index's least value: entry 0
  int64_t entries = 256;           // the index's values, lo to lo + entries - 1

  /// Shared memory the table takes (`entries` elements of the result's compute type).
  uint32_t bytes() const;
  /// `dlc_tab[...]`: the result for the element whose index value is the C expression `x`.
  std::string lookup(const std::string &x) const;
};

/// The most entries a table may have: an index wider than 8 bits is bounded by interval
/// arithmetic over the chain (the saturating sum of two int8 values takes 511).
constexpr int64_t kMaxTableEntries = 1024;

/// The tail of `group`'s elementwise nodes (the anchor's excluded) worth a table: the nodes the
/// group's single output depends on through one integer value computed in the group, every
/// other operand a one-element group input, none of their intermediate values read elsewhere,
/// and dearer per element than a table load (a QuantizeLinear, a division or transcendental
/// math). The index is an i8/u8 value, or a wider integer whose values the chain bounds to at
/// most kMaxTableEntries (a sum of two int8 values before its saturating clamp, which the table
/// then absorbs: two fewer compares and a conversion per element). The earliest such index
/// value wins (the longest tail); nullopt when there is none.
std::optional<ByteTable> findByteTable(const FusedGroup &group);

/// Writes the table's shared-memory array and the loop that fills it (every thread of the block
/// takes entries; a __syncthreads() follows), where the one-element operands are already bound
/// (`load` returns their names). Every thread of the block must reach it. With `deferred`, the
/// loop is the lambda `dlc_tab_fill` instead, with no barrier: the kernel calls it itself, and
/// a barrier of its own must come between that call and the first lookup.
Status writeByteTableInit(CodeWriter &w, const ByteTable &table, const LoadFn &load,
                          bool deferred = false);

} // namespace dlc::codegen
