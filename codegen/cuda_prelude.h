// The CUDA source every NVRTC program of dlc starts with, and the dtype names emitters use.
//
// Storage types (what a buffer holds): float, __half, __nv_bfloat16, double, signed char,
// short, int, long long, unsigned char/short/int/long long, bool. Compute types (what
// expressions work in): float for f32/f16/bf16, the storage type otherwise. `dlc_load(x)`
// converts a stored element to its compute type, `dlc_store<S>(c)` converts back (round to
// nearest even). The prelude also defines the `dlc_*` helpers that the elementwise ops' CUDA
// expressions (codegen/elementwise_expr.cc) name.
//
// The prelude is a list of named helpers (cuda_prelude.cc), each with the helpers it uses. A
// kernel's prelude holds only the helpers its source names (CodeWriter records them, see
// code_writer.h), with their dependencies, each once, in the list's order; a program of several
// kernels needs the union of theirs. cudaPrelude() is every helper.
#pragma once

#include <bitset>
#include <string>
#include <string_view>

#include "codegen/elementwise_expr.h"
#include "ir/dtype.h"

namespace dlc::codegen {

/// A set of prelude helpers, closed under their dependencies.
class HelperSet {
public:
  /// Adds the helper that defines `name` (a `dlc_*` identifier) and its dependencies; an
  /// unknown name is an internal error.
  void add(std::string_view name);
  void merge(const HelperSet &o) { bits_ |= o.bits_; }
  bool contains(const HelperSet &o) const { return (bits_ & o.bits_) == o.bits_; }
  bool empty() const { return bits_.none(); }
  bool operator==(const HelperSet &o) const { return bits_ == o.bits_; }
  /// The helpers' names, in prelude order ("dlc_load dlc_relu").
  std::string str() const;

private:
  friend std::string cudaPrelude(const HelperSet &);
  friend HelperSet helpersNamedIn(std::string_view);
  std::bitset<64> bits_; // index into the helper list
};

/// The helpers whose `dlc_*` identifiers occur in `code` (whole identifiers), with their
/// dependencies. Exact for dlc's generated code: every helper is named `dlc_*`, and a kernel's
/// own identifiers never are helpers' names.
HelperSet helpersNamedIn(std::string_view code);

/// The prelude with just `helpers` (includes cuda_fp16.h and cuda_bf16.h).
std::string cudaPrelude(const HelperSet &helpers);

/// The prelude with every helper.
std::string_view cudaPrelude();

/// The storage type of `t` in generated code ("__half" for f16).
std::string cudaStorageType(DType t);
// The compute type and literals (cudaComputeType, cudaLiteral): codegen/elementwise_expr.h.

} // namespace dlc::codegen
