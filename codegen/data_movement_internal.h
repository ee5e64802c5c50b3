// Pieces shared by the data-movement family's files (data_movement.cc,
// data_movement_transpose.cc).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/anchor_epilogue.h"
#include "codegen/code_writer.h"
#include "codegen/kernel.h"

namespace dlc::codegen {

/// A scalar tensor as a C expression of its storage type ("dlc_store<__half>(1.0f)").
std::string storageLiteral(const Tensor &scalar);

/// Declares the coordinates c<d> in `used` of flat index `i` over the row-major shape `iter`.
void emitDecode(CodeWriter &w, const std::vector<int64_t> &iter, const std::set<std::string> &used,
                std::string_view idxType);

/// `for (T i = ...; i < n; i += ...)`: the head of a grid-stride loop over n elements (for
/// CodeWriter::block).
std::string gridStrideLoop(std::string_view idxType, int64_t n);

/// The one-kernel set of a grid-stride kernel: `body` finished as `k` with `params`, 256 threads
/// a block, launched over `n` iterations.
Expected<KernelSet> finishGridStride(Kernel k, CodeWriter &body, const ParamList &params, int64_t n,
                                     const EmitOptions &opts);

/// A transpose that moves the innermost axis, through 32x32 shared-memory tiles so that both
/// reads and writes are coalesced; nullopt when the innermost axis stays (the plain kernel is
/// coalesced then) or the shape does not suit.
std::optional<Expected<KernelSet>> emitTiledTranspose(const FusedGroup &group,
                                                      const EmitOptions &opts);

/// A transpose alone in its group that keeps the innermost axis: each thread moves a 16-, 8- or
/// 4-byte chunk of the innermost run instead of one element (ViT's patch extraction moves runs
/// of 16 halves); nullopt when the run does not split into such chunks or an epilogue follows.
std::optional<Expected<KernelSet>> emitVectorTranspose(const FusedGroup &group,
                                                       const EmitOptions &opts);

} // namespace dlc::codegen
