// Moving transposes through elementwise ops (simplify's layout rewrites).
#pragma once

#include <optional>
#include <vector>

#include "ir/graph.h"
#include "passes/pass.h"

namespace dlc {

/// The permutation a transpose applies: `perm`, or the reversal of its input's dims; nullopt
/// when it is unknown or malformed.
std::optional<std::vector<int64_t>> transposePerm(const Node &n);

/// Whether `perm` leaves every axis in place.
bool isIdentityPerm(const std::vector<int64_t> &perm);

/// The transpose producing `v` when its permutation is `perm`, else nullptr.
Node *transposeWithPerm(const Value *v, const std::vector<int64_t> &perm);

/// A transpose reading `v` with permutation `perm` (the last of its uses), else nullptr.
Node *transposeOfWithPerm(const Value *v, const std::vector<int64_t> &perm);

/// Constant data `t` broadcast to perm.size() dims (leading 1s), then transposed by `perm`
/// (eval::permuted; an error only past its size limit).
Expected<Tensor> permuted(const Tensor &t, const std::vector<int64_t> &perm);

/// Sinks a transpose below the elementwise or broadcast node `n`:
///   op(transpose(a, p), b, ...) -> transpose(op(a, b', ...), p)
/// when the transpose's output has no other use and every other operand b can take the
/// inverse permutation for free: a transpose with the same p (b' is its input), a value that
/// broadcasting cannot tell from its permutation (one element), a constant (b' is permuted
/// data, padded to the full rank) or a value some transpose already permutes by p's inverse
/// (b' is that transpose). Only when a transpose by the inverse permutation reads n's result
/// (directly or through more elementwise ops), so that the two will cancel: a transpose
/// that merely moves past an elementwise op would lose it as its fused epilogue. The node
/// count does not grow. Returns whether `n` was rewritten.
bool sinkTranspose(Graph &g, Node *n, const PassOptions &options);

} // namespace dlc
