// The GEMM kernel writer shared by the GEMM family (gemm.cc: MatMul, Gemm) and the conv family
// (conv.cc: Conv as implicit GEMM).
//
// Every problem is a batch of products C[b] = A[b] * B[b] with A: M x K, B: K x N, computed in
// float and finished per output element by the epilogue: alpha, addends (Gemm's beta * C, a
// conv bias), then the group's elementwise nodes, then one store. Operands are read in place:
// a strided matrix (either index may be the contiguous one) or, for conv's B, an im2col
// gather from an NCHW image. Output element (b, m, n) lives at the flat offset
//     b * outBatchStride + m * outRowStride + colOffset(n),
//     colOffset(n) = (n / outSplit) * outSplitStride + n % outSplit   (outSplit = 0: n),
// which is also the element's flat index in the output tensor (epilogue operands broadcast
// against it).
//
// Kernels: on sm_90 (EmitOptions::sm90a), f16/bf16 products with plain strided operands run the
// Hopper family (wgmma fed by a warp-specialized cp.async pipeline, gemm_sm90.cc). Otherwise
// f16/bf16 run on tensor cores (mma.sync m16n8k16, ldmatrix, a cp.async multi-stage
// shared-memory pipeline with padded rows); int8 likewise with mma.sync m16n8k32 s8 and int32
// accumulators (both operands K-contiguous, 16-byte aligned); f32 runs a SIMT tiled kernel, or
// TF32 mma (m16n8k8) when EmitOptions::allowTf32. Split-K writes partial sums to a scratch
// buffer (float, or int32 for int8, exact: EmitOptions::int8SplitK) and a second kernel adds
// them in a fixed order (deterministic), then runs the epilogue.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel.h"

namespace dlc::codegen::gemm {

/// The window of an NCHW convolution read as im2col matrix B (K = Cg*KH*KW rows, in the
/// order channel, kernel row, kernel column; N = images*OH*OW columns); batch index b is the
/// group.
struct ConvGather {
  int64_t images = 1, channels = 1, groupChannels = 1; // C and C / group
  int64_t h = 1, w = 1, kh = 1, kw = 1, oh = 1, ow = 1;
  int64_t strideH = 1, strideW = 1, dilationH = 1, dilationW = 1, padH = 0, padW = 0;
};

/// One input matrix. For A the free index i is m, for B it is n.
struct Operand {
  const Value *value = nullptr;
  /// Strided: element (i, k) at batchOffset(b) + i * ld + k (kContig) or
  /// batchOffset(b) + k * ld + splitOffset(i) (!kContig, i contiguous), where
  /// splitOffset(i) = (i / split) * splitStride + i % split (split = 0: i).
  bool kContig = true;
  int64_t ld = 0;
  int64_t split = 0, splitStride = 0;
  /// A C expression (64-bit) of the batch index `b`; "0" when every batch shares the matrix.
  std::string batchOffset = "0";
  /// Set for conv's B: an im2col gather instead of a strided matrix.
  std::optional<ConvGather> gather;
  /// Set for a channels-last conv's A (kContig): the im2col rows of an NHWC image, one row per
  /// output pixel (M = images * OH * OW), K in kernel-row, kernel-column, channel order;
  /// channels a multiple of a 16-byte chunk, so that every chunk is channels of one tap.
  std::optional<ConvGather> nhwc;
};

/// A value added to alpha * (A * B) before the elementwise epilogue: coef * v, with v
/// broadcast (numpy rules) to `shape` (the output shape, or a reshaped view of v's shape).
struct Addend {
  const Value *value = nullptr;
  double coef = 1.0;
  std::vector<int64_t> shape; // v's dims as broadcast against the output shape
};

struct GemmSpec {
  DType dtype = DType::kF32; // of A and B
  /// The output's type (writeGemm sets it from the group): the staged epilogue's width
  /// depends on it, and the Hopper family needs that epilogue.
  DType out = DType::kUnknown;
  int64_t batch = 1, m = 1, n = 1, k = 1;
  Operand a, b;
  int64_t outBatchStride = 0;
  /// When set, a C expression (64-bit) of `b` giving batch b's output offset, used instead of
  /// b * outBatchStride (a MatMul's perm_y output); outBatchStride is then a common divisor of
  /// its strides, for the alignment checks.
  std::string outBatchOffset;
  int64_t outRowStride = 0;
  int64_t outSplit = 0, outSplitStride = 0;
  double alpha = 1.0;
  std::vector<Addend> addends;
  /// The epilogue reads an operand as large as the output (a residual): writeGemm sets it from
  /// the group, for the cost model (EmitOptions::prefetchShortEpilogues).
  bool fullEpilogueOperand = false;
  /// At most this many column tiles (0: any): a GEMM that normalizes its rows
  /// (FusedGroup::norm) holds each row tile's column tiles in one cluster of at most 8 CTAs.
  int64_t maxTilesN = 0;

  /// The CUDA type of the accumulators and of split-K's partial sums: int for int8 (int32,
  /// exact), float otherwise.
  const char *accType() const { return dtype == DType::kI8 ? "int" : "float"; }
};

/// Tile shape and pipeline of one kernel.
struct TileConfig {
  int bm = 128, bn = 128, bk = 32;
  int warpsM = 2, warpsN = 2; // tensor cores: warp tile (bm/warpsM) x (bn/warpsN)
  int stages = 4;             // tensor cores: shared-memory pipeline depth
  int splitK = 1;
  bool simt = false; // f32 SIMT kernel (16x16 threads, bm/16 x bn/16 outputs each)
  /// The Hopper family (sm_90a, codegen/sm90_gemm.cuh): a producer warpgroup and warpsM = 2
  /// consumer warpgroups (warpsN = 1) running wgmma; bm 128, bn 128 or 256, bk 64.
  bool wgmma = false;
  /// The Hopper family's ping-pong schedule: the two consumer warpgroups take whole tiles in
  /// turn (bn 64 or 128), one's epilogue overlapping the other's main loop.
  bool pingpong = false;
  /// The Hopper family's split-K (splitK 2..8) through a thread-block cluster: a tile's splits
  /// are one cluster's CTAs, rank 0 adds the others' sums from their shared memory and runs
  /// the epilogue (no workspace, no reduction kernel; exact for int32 sums). Else split-K
  /// writes partial sums to a workspace that a second kernel reduces.
  bool clusterSplit = false;
  /// The Hopper family's producer loads the operands with TMA (tensor-map parameters).
  bool tma = false;
  /// The Hopper family's stream-K schedule (splitK 1, cooperative, no cluster): the tiles of
  /// the last, partly filled wave (with a full one before it) are shared out among the CTAs
  /// by K steps; a CTA whose range starts inside a tile hands its sums over through a
  /// workspace, and the CTA holding the tile's first steps adds them and runs the epilogue.
  bool streamK = false;
  /// The Hopper family's B multicast (TMA, no split-K cluster, no stream-K): clusters of two
  /// CTAs take row tiles 2i and 2i + 1 of one column of tiles, and each CTA's producer loads
  /// half of their common B tile into both CTAs' shared memory, so B leaves L2 once per pair
  /// (where the tiles' operand traffic from L2, not the tensor cores, bounds a GEMM).
  bool multicast = false;
  /// The Hopper family normalizes the GEMM's rows after its epilogue (FusedGroup::norm; the
  /// cooperative schedule, splitK 1): clusters of rowCluster CTAs, one per column tile, walk
  /// the row tiles, and after each tile every CTA normalizes its share of the tile's rows
  /// (rowCluster 1: a tile spans the columns). 0: no normalization.
  int rowCluster = 0;
  /// Tensor cores (mma.sync): blocks per SM the kernel is compiled for (launch bounds, which
  /// cap its registers: 65536 / (threads x minBlocks)); 0 leaves registers to the compiler.
  int minBlocks = 0;
  std::string str() const;
};

/// Parses "BMxBNxBK[/WMxWN|/wg|/wp][sS][kSPLIT[c][t[m]]|ks[t]][bBLOCKS]" ("128x256x32/2x4s4k1",
/// "128x256x64/wgs4", "128x128x64/wps4" (ping-pong), "128x128x64/wgs4k3c" (split-K in a
/// cluster), "128x128x64/wgs6k1t" (TMA producer), "128x192x64/wgs5k1tm" (TMA, B multicast
/// in CTA pairs), "128x192x64/wgs5kst" (stream-K, TMA), "128x64x64/4x2s4b3"); for kbench.
/// TileConfig::rowCluster is not part of the text: a group that normalizes its rows sets it.
std::optional<TileConfig> parseTileConfig(const std::string &text);

/// Rows of tiles a unit of the Hopper kernel's walk spans: pairs of row tiles with B
/// multicast (the last pair's second past M where `tilesM` is odd), else the row tiles.
int64_t rowUnits(const TileConfig &cfg, int64_t tilesM);

/// The tile configuration the writer picks for `spec`; `seconds`, when given, gets the cost
/// model's time for it (infinity where no tile fits).
TileConfig chooseTile(const GemmSpec &spec, const EmitOptions &opts, double *seconds = nullptr);

/// Calls `emit` with the tile EmitOptions::gemmTiles names for a node of `group` (`--gemm-tile`),
/// or with none; an error then names the option (a tile that does not parse, or does not fit).
Expected<KernelSet> emitWithTileOverride(
    const FusedGroup &group, const EmitOptions &opts,
    const std::function<Expected<KernelSet>(const std::optional<TileConfig> &)> &emit);

/// Whether `cfg` can run `spec`; else why not.
bool tileFits(const GemmSpec &spec, const TileConfig &cfg, const EmitOptions &opts,
              std::string *why);

/// Writes the kernels of `spec` for `group` (whose anchor is the GEMM or conv node and whose
/// remaining nodes form its elementwise epilogue). `cfg` overrides the choice (kbench).
Expected<KernelSet> writeGemm(const FusedGroup &group, const GemmSpec &spec,
                              const EmitOptions &opts,
                              const std::optional<TileConfig> &cfg = std::nullopt);

/// Whether integer product `node` (MatMulInteger, ConvInteger) has the int8 kernel's operands:
/// int8 x int8 without zero points (realize-int8's form); else `why` names what differs.
bool int8Operands(const Node &node, std::string *why);

/// The families' emitters with an optional tile override (kbench); gemmFamily() and
/// convFamily() call them with none.
Expected<KernelSet> emitGemmGroup(const FusedGroup &group, const EmitOptions &opts,
                                  const std::optional<TileConfig> &cfg);
Expected<KernelSet> emitConvGroup(const FusedGroup &group, const EmitOptions &opts,
                                  const std::optional<TileConfig> &cfg);

} // namespace dlc::codegen::gemm
