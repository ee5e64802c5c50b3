// Internals shared by the GEMM kernel writers: gemm_kernel.cc (tiles, parameters, split-K
// reduction, dispatch), gemm_epilogue.cc (the epilogue and the stores), gemm_tc.cc
// (tensor-core main loop) and gemm_simt.cc (f32 SIMT).
#pragma once

#include <map>
#include <string>

#include "codegen/byte_table.h"
#include "codegen/code_writer.h"
#include "codegen/gemm_kernel.h"

namespace dlc::codegen::gemm {

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct KernelContext {
  KernelContext(const FusedGroup &g, const GemmSpec &s, TileConfig c) : group(g), spec(s), cfg(c) {}
  const FusedGroup &group;
  const GemmSpec &spec;
  TileConfig cfg;
  std::string name;   // the main kernel's name
  std::string params; // the parameter list shared by every kernel of the group
  std::map<const Value *, std::string> names; // parameter name of each group input
  std::string storage;                        // storage type of A and B
  std::string outStorage;
  bool outPairs = false; // columns (2j, 2j+1) are adjacent, 2-element aligned in the output
  int64_t total = 0;     // output elements (one batch of split-K partial sums)
  bool narrow = false;   // every output offset fits in 32 bits: int index arithmetic
  int64_t tilesM = 0, tilesN = 0, kTiles = 0, kTilesPerSplit = 0;
  uint32_t gridZ = 1;
  // Stream-K (TileConfig::streamK): tiles 0 .. skTiles - 1 are shared out in ranges of
  // skPerCta K steps over the grid's CTAs; the kernel takes `sk_partials` and `sk_flags`.
  int64_t skTiles = 0, skPerCta = 0;
  // The epilogue lambdas are compiled as calls, not inlined: set for a main kernel whose
  // epilogue has transcendental math, which the fully unrolled accumulator loop would
  // otherwise copy once per accumulator pair (64 copies of erf for a 64 x 64 warp tile: a
  // cubin past the instruction cache). Only for the fragment epilogue.
  bool outlineEpilogue = false;
  // Outputs per lane of the staged epilogue (writeStagedStore), 0 for the fragment epilogue.
  int stagedV = 0;
  int stagedRows = 16; // rows of a warp's slab: 16, 32, ... up to the warp tile's rows
  // EmitOptions::prefetchEpilogue: the staged epilogue's full-size operands are loaded before
  // the main loop into `pf[prefetchPasses][prefetchChunks]` (slab passes x chunks per lane);
  // 0 where they are loaded by the chunk loop.
  int prefetchPasses = 0, prefetchChunks = 0;
  // EmitOptions::epilogueSubChunks: dlc_epv reads the accumulators and the operands along N 16
  // bytes of accumulators at a time (gemm_epilogue.cc's writeVectorEpilogue).
  bool subChunkEpilogue = false;
  // The epilogue's tail from an 8-bit value to the output, computed once per block into a
  // shared-memory table (codegen/byte_table.h; EmitOptions::epilogueTables); every element
  // then loads its result.
  std::optional<ByteTable> table;
  // The table is filled by `dlc_tab_fill()`, which the kernel calls itself between issuing its
  // first operand loads and the barrier after them (gemm_tc.cc), so that the fill and the
  // scalar loads it waits on overlap those loads; otherwise writeEpilogueLambdas fills it at
  // once, followed by a barrier of its own.
  bool deferTableFill = false;
  // The layer norm the kernel runs on its rows after the epilogue (FusedGroup::norm, with
  // cfg.rowCluster): its scale, bias and result are the parameters ln_scale, ln_bias, ln_out.
  const Node *norm = nullptr;
};

/// The parameters of a group's kernel: every group input (`in0`, `in1`, ... recorded in
/// ctx.names) then the output `out0`, appended to `params`; returns their declarations.
std::vector<std::string> groupParams(KernelContext &ctx, std::vector<KernelParam> &params);

/// Whether the group's epilogue (its nodes beside the anchor) does more than cheap arithmetic.
bool heavyEpilogue(const FusedGroup &group);

/// The C type of the kernel's output offsets: int where every offset fits in 32 bits.
std::string indexType(const KernelContext &ctx);

/// Outputs per lane of the staged epilogue: 16 bytes' worth, or 8 where that does not divide
/// the output's rows and splits; 0 where the kernel keeps the fragment epilogue (SIMT, split-K,
/// or no 4-element chunk fits, e.g. a row stride not a multiple of 4).
int stagedWidth(const GemmSpec &spec, const TileConfig &cfg, int64_t splits, DType out);

/// C expression of batch b's output offset, in the index type.
std::string outBatchExpr(const KernelContext &ctx);

/// C expression of the output offset of column `col` (outSplit applied), in the index type.
std::string outColOffset(const KernelContext &ctx, const std::string &col);

/// Writes the statements that hand the accumulators (v0, v1) of output row `row`, columns
/// `col`, `col` + 1 (each may lie past the edge) to the epilogue, or to the split-K scratch.
void writeAccStore(CodeWriter &w, const KernelContext &ctx, const std::string &row,
                   const std::string &col, const std::string &v0, const std::string &v1);

/// Writes `dlc_ep` / `dlc_ep2` lambdas: epilogue of one element (or of two adjacent ones) at
/// flat output offset `oidx`, ending in the store; with ctx.stagedV instead `dlc_epv`, the
/// epilogue of stagedV adjacent elements whose accumulators are in shared memory. With `late`,
/// the reciprocals of the epilogue's scales (dlc_qscale) go there (writeHoistedScalars' assign),
/// for the kernel to compute once its first loads are in flight, before the first epilogue or
/// deferred table fill; only their loads stay at the top.
Status writeEpilogueLambdas(CodeWriter &w, const KernelContext &ctx, CodeWriter *late = nullptr);

/// The staged epilogue of a tensor-core kernel (ctx.stagedV > 0), written after its main loop.
/// The m16n8 accumulator fragments leave each lane with two adjacent outputs in each of 8 rows,
/// so storing them directly moves 2-8 bytes per lane, scattered over 8 rows, and reads the
/// epilogue's full-size operands (a residual) the same way: for int8 outputs the kernel is
/// bound by L1 transactions, not by DRAM. Instead each warp writes its accumulators, a slab of
/// ctx.stagedRows rows at a time, to private shared memory, and each lane then finishes stagedV
/// adjacent outputs of one row from it, with 16-byte loads of the full-size operands and one
/// 16-byte store (element by element when a buffer is not aligned to it).
void writeStagedStore(CodeWriter &w, const KernelContext &ctx);

/// The chunk loop of the staged epilogue: each lane of a warp finishes ctx.stagedV adjacent
/// outputs of the warp's slab `ep` (EP_ROWS x EP_CHUNKS chunks, rows EP_PITCH words apart), at
/// tile row `rowOrigin` + r and column `colOrigin` + c (C expressions).
void writeStagedChunks(CodeWriter &w, const KernelContext &ctx, const std::string &rowOrigin,
                       const std::string &colOrigin);

/// Bytes of full-size operands (a residual) that one chunk of the staged epilogue reads: what
/// prefetching them into registers holds per chunk (0: none; -1: one of them takes more than
/// one 16-byte load per chunk, which the prefetch does not do).
Expected<int> stagedFullOperandBytes(const KernelContext &ctx);

/// Writes the prefetch of the staged epilogue's full-size operands (ctx.prefetchPasses > 0):
/// `pf`, each lane's chunks of every slab pass, loaded through `dlc_epl`. Inside the batch
/// loop, before the main loop.
void writeEpiloguePrefetch(CodeWriter &w, const KernelContext &ctx);

/// Shared memory of the staged epilogue's slabs of `rows` rows (reused from the operand
/// pipeline's).
uint32_t stagedEpilogueBytes(const TileConfig &cfg, int rows);

/// Tile raster: writes `tm`, `tn` from the tile index `index` (a C expression) over
/// `tilesM` x `tilesN` tiles (groups of 8 row tiles for L2 reuse).
void writeRaster(CodeWriter &w, int64_t tilesM, int64_t tilesN,
                 const std::string &index = "blockIdx.x");

/// Writes `m0e`, `n0e`: copies of the tile origin the compiler cannot see through, for the
/// epilogue's index math. Otherwise it hoists every output and epilogue-operand address
/// (loop-invariant) above the main loop and keeps them live across it, spilling.
void writeOpaqueOrigin(CodeWriter &w);

/// Writes `tap`, `c`, `kh`, `kw`: where K offset `k` (a C expression) of a channels-last
/// conv's im2col row lies: kernel row, kernel column, channel (the NHWC loaders).
void writeNhwcTap(CodeWriter &w, const ConvGather &g, const std::string &k);

/// The stem convolution (conv_stem.cc): a direct tensor-core kernel for an NCHW f16/bf16 conv
/// with at most 4 input channels (ResNet's 7x7 stride-2 conv on the image), its input window in
/// shared memory. Whether it takes the conv (else `why`; also where its tiles would not fill
/// `numSms` SMs), and its kernel.
bool stemConvFits(const ConvGather &g, int64_t outChannels, int64_t group, DType in, DType out,
                  int numSms, std::string *why);
/// `spec` is the NCHW implicit GEMM's description of the conv (conv.cc): its epilogue (output
/// rows the channels, columns images x pixels, the bias) is the stem kernel's too.
Expected<KernelSet> writeStemConv(const FusedGroup &group, const GemmSpec &spec,
                                  const ConvGather &g, const EmitOptions &opts);

/// `spec` completed from the group it runs for (writeGemmKernels' and the cost model's view):
/// the output's type, and whether the epilogue reads an operand as large as the output.
GemmSpec groupSpec(const FusedGroup &group, const GemmSpec &spec);

/// writeGemm's body for a group without FusedGroup::norm, or for the GEMM part of one with
/// `norm` given (then cfg, given or chosen, normalizes rows: TileConfig::rowCluster).
Expected<KernelSet> writeGemmKernels(const FusedGroup &group, const GemmSpec &spec,
                                     const EmitOptions &opts, const std::optional<TileConfig> &cfg,
                                     const Node *norm);

/// A group with a layer norm after its GEMM (FusedGroup::norm; gemm_norm.cc): the Hopper
/// kernel that normalizes its own rows where a cluster spans a row tile's columns, else the
/// GEMM kernel then the reduction family's layer-norm kernel. The layer norm's input, when no
/// other group reads it, lives in a scratch buffer.
Expected<KernelSet> writeNormGemm(const FusedGroup &group, const GemmSpec &spec,
                                  const EmitOptions &opts, const std::optional<TileConfig> &cfg);
/// The layer norm's parameters (ln_scale, ln_bias, ln_out), after groupParams'.
void normParams(const KernelContext &ctx, std::vector<std::string> &decls,
                std::vector<KernelParam> &params);
/// The Hopper kernel's `norm_tail` lambda: each consumer warp normalizes rows of the tile.
void writeNormTail(CodeWriter &w, const KernelContext &ctx);

/// Main kernels.
Status writeTcKernel(CodeWriter &w, const KernelContext &ctx);
Status writeSimtKernel(CodeWriter &w, const KernelContext &ctx);

/// The Hopper family (gemm_sm90.cc, cfg.wgmma): whether it can run `spec` (whose output has
/// type `out`), its kernel, and its dynamic shared memory.
bool sm90Fits(const GemmSpec &spec, const TileConfig &cfg, const EmitOptions &opts, DType out,
              std::string *why);
Status writeSm90Kernel(CodeWriter &w, const KernelContext &ctx);
/// The TMA producer's two tensor-map parameters (cfg.tma), after the kernel's pointers: A as
/// [M, K] in boxes of 128 rows x 128 bytes; B as [N, K] in boxes of BN rows x 128 bytes
/// (K-contiguous) or [K, N] in boxes of 64 x 64.
std::vector<KernelParam> tensorMapParams(const GemmSpec &spec, const TileConfig &cfg);
uint32_t sm90SharedBytes(const TileConfig &cfg);

/// Dynamic shared memory of the tensor-core kernel.
uint32_t tcSharedBytes(const GemmSpec &spec, const TileConfig &cfg);
/// Bytes of one operand element.
int elemBytes(DType t);

} // namespace dlc::codegen::gemm
