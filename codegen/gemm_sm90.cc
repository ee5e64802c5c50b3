// The Hopper GEMM family (TileConfig::wgmma): the persistent main loop is the CUDA template in
// codegen/sm90_gemm.cuh (warp-specialized cp.async producer, wgmma consumers, mbarrier
// pipeline); this file writes what is particular to a group around it: the entry point, where
// each tile lies (raster, batch, operand pointers), and the staged epilogue that finishes the
// accumulators through shared memory (gemm_epilogue.cc). The module is compiled for sm_90a.
#include <fmt/format.h>

#include "codegen/gemm_writer.h"

namespace dlc::codegen::gemm {

uint32_t sm90SharedBytes(const TileConfig &cfg) {
  // Stages of (BM + BN) rows of 128 bytes, the epilogue's slabs (8 consumer warps x 8 rows x
  // 72 words), the full and empty mbarriers, and the 1024 bytes that aligning the dynamic
  // shared memory to the swizzle atom may skip: dlc_sm90::shared_bytes, which each kernel
  // checks against this with a static_assert.
  // Split-K in a cluster adds the buffer that hands a tile's sums over (4 bytes per
  // accumulator) and two mbarriers.
  // Rows normalized in the kernel (rowCluster) take two mbarriers in the same place.
  const int handover = cfg.clusterSplit ? cfg.bm * cfg.bn * 4 + 16 : cfg.rowCluster > 0 ? 16 : 0;
  return static_cast<uint32_t>(cfg.stages * (cfg.bm + cfg.bn) * 128 + 8 * 8 * 72 * 4 +
                               cfg.stages * 16 + handover + 1024);
}

bool sm90Fits(const GemmSpec &spec, const TileConfig &c, const EmitOptions &opts, DType out,
              std::string *why) {
  auto no = [&](std::string msg) {
    *why = std::move(msg);
    return false;
  };
  if (!opts.hopperGemms())
    return no(fmt::format("the wgmma kernels are for sm_90a, the target is sm_{}{}", opts.smVersion,
                          opts.sm90a ? "" : " without arch-specific features"));
  const bool s8 = spec.dtype == DType::kI8;
  if (spec.dtype != DType::kF16 && spec.dtype != DType::kBF16 && !s8)
    return no("the wgmma kernels are f16, bf16 and int8");
  // A stage row is 128 bytes of K: 64 16-bit elements, 128 int8 ones.
  const int bk = s8 ? 128 : 64, chunk = s8 ? 16 : 8;
  const bool wholeAtoms = c.bn % 64 == 0; // an N-major B's stage is atoms of 64 columns
  if (c.bm != 128 ||
      !(wholeAtoms || c.bn == 32 || c.bn == 48 || c.bn == 80 || c.bn == 96 || c.bn == 160) ||
      c.bn > 256 || c.bn < 32 || c.bk != bk || c.warpsM != 2 || c.warpsN != 1)
    return no(fmt::format("wgmma tiles are 128 x 32, 48, 64, 80, 96, 128, 160, 192 or 256, BK "
                          "{}, two consumer warpgroups",
                          bk));
  if (!wholeAtoms && !spec.b.kContig)
    return no(fmt::format("a {}-column wgmma tile reads B K-major (an N-major B is loaded in "
                          "atoms of 64 columns)",
                          c.bn));
  if (c.pingpong && c.bn > 160)
    return no("a ping-pong warpgroup holds a whole tile's accumulators: at most 160 columns");
  if (c.clusterSplit && (c.splitK < 2 || c.splitK > 8 || c.pingpong))
    return no("split-K in a cluster takes 2 to 8 splits, with the cooperative schedule");
  if (c.streamK && (c.splitK != 1 || c.clusterSplit || c.pingpong))
    return no("stream-K shares K steps out itself: no split-K, the cooperative schedule");
  if (c.multicast && (!c.tma || c.clusterSplit || c.streamK))
    return no("B multicast is for the TMA producer, without split-K clusters or stream-K");
  if (c.rowCluster > 0 &&
      (c.splitK != 1 || c.clusterSplit || c.streamK || c.pingpong || c.multicast ||
       c.rowCluster > 8 || c.rowCluster != ceilDiv(spec.n, c.bn) || spec.batch != 1 ||
       spec.n % 8 != 0 || spec.outRowStride != spec.n || spec.outSplit != 0 || s8))
    return no("rows normalized in the kernel take the cooperative schedule, one GEMM of N a "
              "multiple of 8 stored densely, whole, in clusters of one CTA per column tile "
              "(at most 8)");
  if (c.splitK != 1 && s8 && !c.clusterSplit)
    return no("int8 GEMMs split K only in a cluster (float partial sums would round the int32 "
              "sums)");
  // Split-K partial sums are float4 stores straight from the accumulator slabs.
  if (c.splitK != 1 && !c.clusterSplit &&
      (spec.n % 4 != 0 || spec.outSplit != 0 || (spec.m > 1 && spec.outRowStride % 4 != 0) ||
       (spec.batch > 1 && spec.outBatchStride % 4 != 0)))
    return no("a split-K wgmma kernel writes its partial sums 4 columns at a time, which this "
              "output's shape and strides do not allow");
  if (c.stages < 3 || sm90SharedBytes(c) > 227u * 1024u)
    return no(fmt::format("{} stages do not fit (3 or more, 227 KiB)", c.stages));
  if (spec.k % chunk != 0)
    return no(fmt::format("K = {} is not a multiple of {}", spec.k, chunk));
  for (const Operand *op : {&spec.a, &spec.b})
    if (op->gather || op->split != 0 || (!op->nhwc && op->ld % chunk != 0))
      return no("wgmma operands are strided matrices with rows of 16-byte chunks (or a "
                "channels-last conv's im2col rows)");
  if (spec.a.nhwc && (spec.a.nhwc->channels % chunk != 0 || spec.batch != 1))
    return no("a channels-last conv needs whole 16-byte chunks of channels and one group");
  if (!spec.a.kContig || (s8 && !spec.b.kContig))
    return no(s8 ? "int8 wgmma reads both operands K-contiguous"
                 : "the wgmma kernels read A K-contiguous");
  if (!spec.b.kContig && spec.n % 8 != 0)
    return no("an N-contiguous B needs N a multiple of 8");
  // TMA: 2-D maps of plain strided matrices (16-byte aligned rows: the chunk checks above).
  if (c.tma &&
      (spec.batch != 1 || spec.a.nhwc || spec.a.batchOffset != "0" || spec.b.batchOffset != "0"))
    return no("the TMA producer reads one plain matrix per operand (no batch, no im2col rows)");
  if (!opts.stagedEpilogue ||
      ((c.splitK == 1 || c.clusterSplit) && stagedWidth(spec, c, 1, out) == 0))
    return no("the wgmma kernels finish through the staged epilogue, which this output's "
              "strides do not allow");
  return true;
}

std::vector<KernelParam> tensorMapParams(const GemmSpec &spec, const TileConfig &cfg) {
  const uint64_t eb = spec.dtype == DType::kI8 ? 1 : 2, bk = 128 / eb;
  auto map = [&](const Operand &op, uint64_t inner, uint64_t outer, uint32_t boxInner,
                 uint32_t boxOuter) {
    KernelParam p;
    p.value = op.value;
    rt::TensorMapLayout m;
    m.dtype = spec.dtype;
    m.dims[0] = inner;
    m.dims[1] = outer;
    m.pitchBytes = static_cast<uint64_t>(op.ld) * eb;
    m.box[0] = boxInner;
    m.box[1] = boxOuter;
    p.map = m;
    return p;
  };
  const auto k = static_cast<uint64_t>(spec.k), m = static_cast<uint64_t>(spec.m),
             n = static_cast<uint64_t>(spec.n);
  // B multicast: each CTA of a pair loads half of B's box (dlc_sm90::tma_stage): half the
  // rows of a K-major one, 32 of the 64 K rows of each N-major atom.
  const auto bn = static_cast<uint32_t>(cfg.multicast ? cfg.bn / 2 : cfg.bn);
  return {map(spec.a, k, m, static_cast<uint32_t>(bk), static_cast<uint32_t>(cfg.bm)),
          spec.b.kContig ? map(spec.b, k, n, static_cast<uint32_t>(bk), bn)
                         : map(spec.b, n, k, 64, cfg.multicast ? 32 : 64)};
}

namespace {

/// Split-K: a warp's slab of accumulators (EP_ROWS x EP_COLS floats) stored as partial sums,
/// 4 adjacent columns per store, into split x.split of the workspace; the group's reduction
/// kernel (gemm_kernel.cc) sums the splits and applies the epilogue.
void writeSplitPartials(CodeWriter &w, const KernelContext &ctx, const std::string &rowOrigin,
                        const std::string &colOrigin) {
  const GemmSpec &s = ctx.spec;
  w.line("float *wp = ws + (long long)x.split * {}LL;", ctx.total);
  auto chunks = w.block("for (int q = lane; q < EP_ROWS * EP_CHUNKS; q += 32)");
  w.line("const int r = q / EP_CHUNKS, c = (q % EP_CHUNKS) * 4;");
  w.line("const int row = m0 + {} + r, col = n0 + {} + c;", rowOrigin, colOrigin);
  w.line("if (row < {} && col < {})", s.m, s.n); // n % 4 == 0: whole chunks
  w.line("  *reinterpret_cast<float4 *>(wp + {} + ({})row * {} + col) = "
         "*reinterpret_cast<const float4 *>(ep + r * EP_PITCH + c);",
         outBatchExpr(ctx), indexType(ctx), s.outRowStride);
}

} // namespace

Status writeSm90Kernel(CodeWriter &w, const KernelContext &ctx) {
  const GemmSpec &s = ctx.spec;
  const TileConfig &c = ctx.cfg;
  // Split-K in a cluster: the kernel's clusters are its splits (ctx.cfg.splitK, as many as
  // the K steps make). B multicast: clusters of two CTAs, which the template's CLUSTER (the
  // split-K handover) does not count.
  const int cluster = c.clusterSplit ? c.splitK : 1;
  const int launchCluster = c.multicast ? 2 : c.rowCluster > 1 ? c.rowCluster : cluster;
  // Rows normalized in the kernel (writeGemmKernels pairs ctx.norm with it): the template's
  // ROWS, only then spelled out, so that other kernels keep their text.
  const bool rows = c.rowCluster > 0;
  // The TMA producer's tensor maps come last (gemm::tensorMapParams).
  const std::string maps = c.tma ? ", const __grid_constant__ dlc_sm90::TensorMap tmA, "
                                   "const __grid_constant__ dlc_sm90::TensorMap tmB"
                                 : "";
  auto fn =
      w.block("extern \"C\" __global__ void __launch_bounds__(384, 1){} {}({}{})",
              launchCluster > 1 ? fmt::format(" __cluster_dims__({}, 1, 1)", launchCluster) : "",
              ctx.name, ctx.params, maps);
  w.line("constexpr int BN = {}, STAGES = {}, CLUSTER = {};", c.bn, c.stages, cluster);
  if (rows)
    w.line("constexpr int ROWS = {};", c.rowCluster);
  w.line("constexpr int M = {}, N = {}, K = {};", s.m, s.n, s.k);
  // The launch's shared memory (sm90SharedBytes) is the layout the template uses.
  w.line("static_assert(dlc_sm90::shared_bytes<BN, STAGES, CLUSTER{}>() == {}u, \"shared memory "
         "layout\");",
         rows ? ", ROWS" : "", sm90SharedBytes(c));
  // The epilogue passes over the accumulators in slabs of 8 rows x 64 columns per warp.
  w.line("constexpr int EP_ROWS = dlc_sm90::EP_ROWS, EP_PITCH = dlc_sm90::EP_PITCH;");
  const bool split = c.splitK > 1 && !c.clusterSplit; // partial sums to the workspace
  w.line("constexpr int EP_CHUNKS = dlc_sm90::EP_COLS / {};", split ? 4 : ctx.stagedV);
  w.line("extern __shared__ __align__(1024) unsigned char dlc_smem_raw[];");
  w.line("unsigned char *dlc_smem = dlc_sm90::align1024(dlc_smem_raw);");
  // The epilogue scales' reciprocals are computed by each tile's epilogue (a few instructions),
  // so that no warp waits for a scale before the main loop; only their loads come first.
  CodeWriter late;
  DLC_RETURN_IF_ERROR(writeEpilogueLambdas(w, ctx, &late));
  // B multicast: a unit is a pair of row tiles (2 tm, 2 tm + 1; the second past M where the
  // row tiles are odd, its rows then masked), the cluster's rank picks one.
  const int64_t unitRows = rowUnits(c, ctx.tilesM), perBatch = unitRows * ctx.tilesN;
  {
    // Unit t: split t / (tiles of every batch), then batch, then the raster within the batch.
    auto tileOf = w.blockSemi("auto tile_of = [&](int t, dlc_sm90::Tile<{}> &x)", ctx.storage);
    if (rows) { // row tile t, the cluster's rank its column tile
      w.line("x.m0 = t * 128;");
      w.line("x.n0 = {} * BN;", c.rowCluster > 1 ? "(int)dlc_sm90::cluster_rank()" : "0");
      w.line("x.b = 0;");
      w.line("x.A = {};", ctx.names.at(s.a.value));
      w.line("x.B = {};", ctx.names.at(s.b.value));
    } else if (split) {
      w.line("x.split = t / {};", perBatch * s.batch);
      w.line("x.kt0 = x.split * {};", ctx.kTilesPerSplit);
      w.line("x.kt1 = x.kt0 + {};", ctx.kTilesPerSplit);
      w.line("t %= {};", perBatch * s.batch);
    } else if (cluster > 1) {
      w.line("x.split = (int)dlc_sm90::cluster_rank();");
      w.line("x.kt0 = x.split * {};", ctx.kTilesPerSplit);
      w.line("x.kt1 = x.kt0 + {};", ctx.kTilesPerSplit);
    }
    if (!rows) {
      w.line("const long long b = t / {};", perBatch);
      writeRaster(w, unitRows, ctx.tilesN, fmt::format("(t % {})", perBatch));
      if (c.multicast)
        w.line("x.m0 = (2 * tm + (int)dlc_sm90::cluster_rank()) * 128;");
      else
        w.line("x.m0 = tm * 128;");
      w.line("x.n0 = tn * BN;");
      w.line("x.b = b;");
      auto pointer = [&](const Operand &op) {
        const std::string base = ctx.names.at(op.value);
        return op.batchOffset == "0" ? base : fmt::format("{} + ({})", base, op.batchOffset);
      };
      w.line("x.A = {};", pointer(s.a));
      w.line("x.B = {};", pointer(s.b));
    }
  }
  if (rows)
    writeNormTail(w, ctx);
  // Where A's chunks lie: a strided matrix, or a channels-last conv's im2col rows.
  std::string aRows = "a_rows";
  if (const auto &g = s.a.nhwc) {
    auto rows =
        w.blockSemi("auto a_rows = [&](const {0} *A, int m, int kc) -> const {0} *", ctx.storage);
    w.line("if (m >= M || kc >= K)");
    w.line("  return nullptr;");
    w.line("const int ow = m % {0}, t = m / {0}, oh = t % {1}, n = t / {1};", g->ow, g->oh);
    writeNhwcTap(w, *g, "kc");
    w.line("const int ih = oh * {} - {} + kh * {}, iw = ow * {} - {} + kw * {};", g->strideH,
           g->padH, g->dilationH, g->strideW, g->padW, g->dilationW);
    w.line("if ((unsigned)ih >= {}u || (unsigned)iw >= {}u)", g->h, g->w);
    w.line("  return nullptr;");
    w.line("return A + ((long long)(n * {} + ih) * {} + iw) * {} + c;", g->h, g->w, g->channels);
  } else if (c.tma) {
    aRows = "dlc_sm90::TmaOperands{&tmA, &tmB}";
  } else {
    aRows = fmt::format("dlc_sm90::StridedRows<{}>{{{}LL, M, K}}", ctx.storage, s.a.ld);
  }
  const char *acc = s.accType();
  // Stream-K: where the CTAs' units meet (gemm::writeGemm's sk_partials and sk_flags).
  std::string streamK = fmt::format("static_cast<const dlc_sm90::StreamK<{}> *>(nullptr)", acc);
  if (ctx.skPerCta > 0) {
    w.line("const dlc_sm90::StreamK<{}> sk{{sk_partials, sk_flags, {}, {}}};", acc, ctx.skTiles,
           ctx.skPerCta);
    streamK = "&sk";
  }
  const std::string head = fmt::format(
      "dlc_sm90::gemm<{}, BN, STAGES, {}, {}, CLUSTER, {}{}>({}, {}LL, N, K, {}, {}, dlc_smem, "
      "tile_of, "
      "[&]({} (&acc)[BN / 2], int w, int lane, const dlc_sm90::Tile<{}> &x, {} *ep)",
      ctx.storage, s.b.kContig ? "true" : "false", c.pingpong ? "true" : "false",
      c.multicast ? "true" : "false", rows ? ", ROWS" : "", aRows, s.b.ld,
      rows ? ctx.tilesM : perBatch * s.batch * (split ? c.splitK : 1), streamK, acc, ctx.storage,
      acc);
  auto call = rows ? w.lambdaArgThen("norm_tail", "{}", head) : w.lambdaArg("{}", head);
  w.line("const long long b = x.b;");
  w.line("const int m0 = x.m0, n0 = x.n0;");
  w.embed(late);
  writeOpaqueOrigin(w);
  // The slab passes are unrolled: the accumulators are registers, indexed by constants. Each
  // pass holds a copy of the chunk loop (not unrolled for a heavy epilogue). Calling one
  // outlined copy instead was measured 1.4x slower on ViT's GELU projection (H200): the call
  // saves the live accumulators to local memory.
  w.line("#pragma unroll");
  auto half = w.block("for (int h = 0; h < 2; ++h)");
  // One pass: the lane's accumulators of fragment row h, columns cq * 64 .. + cols - 1, through
  // the warp's slab.
  auto pass = [&](int cols) {
    w.line("#pragma unroll");
    w.line("for (int j = 0; j < {}; ++j)", cols / 8);
    w.line("  *reinterpret_cast<{0}2 *>(ep + (lane >> 2) * EP_PITCH + j * 8 + (lane & 3) * 2) = "
           "make_{0}2(acc[4 * (cq * 8 + j) + 2 * h], acc[4 * (cq * 8 + j) + 2 * h + 1]);",
           acc);
    w.line("__syncwarp();");
    if (split)
      writeSplitPartials(w, ctx, "w * 16 + h * 8", "cq * dlc_sm90::EP_COLS");
    else
      writeStagedChunks(w, ctx, "w * 16 + h * 8", "cq * dlc_sm90::EP_COLS");
    w.line("__syncwarp();");
  };
  {
    w.line("#pragma unroll");
    auto quarter = w.block("for (int cq = 0; cq < BN / dlc_sm90::EP_COLS; ++cq)");
    pass(64);
  }
  // A tile of 32, 48, 80, 96 or 160 columns ends in a narrower pass (the only one below 64),
  // its chunks counted anew.
  if (const int rest = c.bn % 64) {
    auto last = w.block("");
    w.line("constexpr int cq = BN / dlc_sm90::EP_COLS, EP_CHUNKS = {} / {};", rest,
           split ? 4 : ctx.stagedV);
    pass(rest);
  }
  return Status::ok();
}

} // namespace dlc::codegen::gemm
