// GEMM kernel writer: tile choice, kernel parameters, split-K, dispatch; the epilogue is in
// gemm_epilogue.cc, the main loops in gemm_tc.cc (tensor cores) and gemm_simt.cc (f32 SIMT).
// See gemm_kernel.h.
#include "codegen/gemm_kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "codegen/cuda_prelude.h"
#include "codegen/elementwise_chain.h"
#include "codegen/emitters.h"
#include "codegen/gemm_writer.h"

namespace dlc::codegen::gemm {
namespace {

int threadsOf(const TileConfig &c) {
  return c.simt ? 256 : c.wgmma ? 128 * (c.warpsM + 1) : 32 * c.warpsM * c.warpsN;
}

uint32_t sharedBytes(const GemmSpec &spec, const TileConfig &c) {
  return c.simt ? 0 : c.wgmma ? sm90SharedBytes(c) : tcSharedBytes(spec, c);
}

/// Registers per thread, roughly (accumulators, fragments, addressing).
int regsEstimate(const GemmSpec &spec, const TileConfig &c) {
  if (c.simt)
    return (c.bm / 16) * (c.bn / 16) + 48;
  if (c.wgmma)
    return 168; // 65536 / 384: one CTA per SM, setmaxnreg moves them to the consumers
  const int wm = c.bm / c.warpsM, wn = c.bn / c.warpsN;
  return std::min(255, wm * wn / 32 + wm / 16 * 4 + wn / 8 * 2 + 48);
}

int blocksPerSm(const GemmSpec &spec, const TileConfig &c) {
  const int nt = threadsOf(c);
  int b = std::min(2048 / nt, 32);
  if (uint32_t smem = sharedBytes(spec, c))
    b = std::min<int>(b, static_cast<int>((227u * 1024u) / smem));
  b = std::min(b, 65536 / (nt * regsEstimate(spec, c)));
  return b;
}

/// Shared memory per SM on compute capability `smVersion` (times ten), the capacity resident
/// blocks share (each also reserving 1 KiB).
uint32_t sharedBytesPerSm(int smVersion) {
  switch (smVersion) {
  case 80:
  case 87:
    return 164u * 1024u;
  case 86:
  case 89:
    return 100u * 1024u;
  case 75:
    return 64u * 1024u;
  case 70:
  case 72:
    return 96u * 1024u;
  default: // sm_90 and later
    return 228u * 1024u;
  }
}

/// The group's epilogue table (byte_table.h) where its static shared memory, beside the
/// kernel's `dynamicBytes`, leaves as many blocks resident per SM as before.
std::optional<ByteTable> tableThatFits(const FusedGroup &group, const GemmSpec &spec,
                                       const TileConfig &c, const EmitOptions &opts,
                                       uint32_t dynamicBytes) {
  auto table = findByteTable(group);
  if (!table)
    return std::nullopt;
  // Each resident block also reserves 1 KiB of the SM's shared memory.
  const uint32_t cap = sharedBytesPerSm(opts.smVersion), reserve = 1024;
  const uint32_t before = std::min<uint32_t>(blocksPerSm(spec, c), cap / (dynamicBytes + reserve));
  const uint32_t with = dynamicBytes + table->bytes() + reserve;
  if (with > cap || std::max<uint32_t>(before, 1) * with > cap)
    return std::nullopt;
  return table;
}

/// How stream-K shares `tiles` output tiles of `kTiles` K steps out over a grid of at most
/// `sms` CTAs: the whole waves but the last two stay whole tiles (wholeWaves x grid of them, at
/// the end), and the K steps of the first skTiles are shared out perCta to a CTA.
struct StreamKSplit {
  int64_t grid, wholeWaves, skTiles, perCta;
};
StreamKSplit streamKSplit(int64_t tiles, int64_t kTiles, int sms) {
  StreamKSplit s;
  s.grid = std::max<int64_t>(1, std::min<int64_t>(sms, tiles * kTiles));
  s.wholeWaves = tiles / s.grid >= 2 ? tiles / s.grid - 1 : 0;
  s.skTiles = tiles - s.wholeWaves * s.grid;
  s.perCta = ceilDiv(s.skTiles * kTiles, s.grid);
  return s;
}

/// EmitOptions::prefetchShortEpilogues: a 16-bit or int8 product on the mma.sync kernels whose
/// main loop is at most 64 deep and whose epilogue reads a full-size operand, which the
/// epilogue's loads bound. (int8 since session 45: ResNet-50 b32's layer1 expansion with its int8
/// residual, 100352 x 256 x 64 at 128 x 64, took 0.0648 ms prefetched against 0.0726, kbench on
/// an H100.)
bool shortEpilogueBound(const GemmSpec &spec, const TileConfig &c, const EmitOptions &opts) {
  return opts.prefetchShortEpilogues && spec.fullEpilogueOperand && !c.simt && !c.wgmma &&
         (spec.dtype == DType::kF16 || spec.dtype == DType::kBF16 || spec.dtype == DType::kI8) &&
         spec.k <= 64;
}

/// Whether a grid of `blocks` has at least two per SM: enough that registers an epilogue frees
/// hold another resident block, and that smaller tiles pay off (session 47, below).
bool twoBlocksPerSm(int64_t blocks, const EmitOptions &opts) {
  return blocks >= 2 * int64_t{std::max(1, opts.numSms)};
}

struct Candidate {
  TileConfig cfg;
  double eff;       // share of the family's peak a full tile sustains on a strided GEMM
  double gatherEff; // the same when B is conv's im2col gather (0: never used for it)
};

// Efficiencies measured with kbench on an H200 (tools/kbench/sweep.txt): the f16 GEMM tiles
// relative to the best at 4096^3 and 8192^3, the gather tiles on ResNet-50's convolutions.
std::vector<Candidate> candidates(const GemmSpec &spec, const EmitOptions &opts) {
  std::vector<Candidate> out;
  if (spec.dtype == DType::kF32 && !opts.allowTf32) {
    TileConfig big;
    big.simt = true;
    big.bm = big.bn = 128;
    big.bk = 8;
    TileConfig small = big;
    small.bm = small.bn = 64;
    out.push_back({big, 0.75, 0.75});
    out.push_back({small, 0.5, 0.6});
    return out;
  }
  const bool f32 = spec.dtype == DType::kF32, s8 = spec.dtype == DType::kI8;
  auto tc = [&](int bm, int bn, int bk, int wmw, int wnw, int stages, double eff,
                double gatherEff) {
    TileConfig c;
    c.bm = bm;
    c.bn = bn;
    c.bk = f32 ? bk / 2 : s8 ? bk * 2 : bk; // same bytes per row
    c.warpsM = wmw;
    c.warpsN = wnw;
    c.stages = stages;
    out.push_back({c, eff, gatherEff});
  };
  // Convolutions that gather im2col rows (channels-last A) reach the Hopper family only when
  // asked (EmitOptions::hopperConv) or through a tile override (kbench --tile); 16-bit
  // pointwise ones read A as a plain matrix and reach it like any GEMM. int8 products unless
  // EmitOptions::hopperInt8 is off.
  if (opts.hopperGemms() && (!spec.a.nhwc || opts.hopperConv) &&
      (spec.dtype == DType::kF16 || spec.dtype == DType::kBF16 || (s8 && opts.hopperInt8))) {
    auto wg = [&](int bn, int stages, double eff) {
      TileConfig c;
      c.bm = 128;
      c.bn = bn;
      c.bk = s8 ? 128 : 64; // a stage row is 128 bytes of K
      c.warpsM = 2;
      c.warpsN = 1;
      c.stages = stages;
      c.wgmma = true;
      out.push_back({c, eff, 0});
    };
    wg(256, 4, 1.6);
    if (opts.hopperTile192)
      wg(192, 5, 1.55); // a guess between its neighbours until measured
    // 160, 96 and 80 columns read B K-major (sm90Fits; kmajor-weights stores constant
    // weights so): narrower tiles that fill the SMs where ViT's 13 row tiles leave them idle.
    // Fitted to kbench on an H100 (session 39, tools/kbench/narrow_tiles.txt) against the
    // whole-atom tiles' values: 1576x3072x768 +bias 0.0221 ms at 128 x 160 (260 tiles) against
    // 0.0253 at 128 x 192 (208), two waves each; 1576x768x3072 +bias +residual 0.0225 at
    // 128 x 96 (104 tiles) and 0.0261 at 128 x 80 (130) against 0.0240 at 128 x 128 (78),
    // one wave each; 1576x768x768 the same way 0.0116 and 0.0120 against 0.0128.
    wg(160, 5, 1.45);
    wg(128, 6, 1.45);
    wg(96, 7, 1.18);
    wg(80, 7, 0.85);
    // 128 x 64 (m64n64 wgmma): twice the tiles of 128 x 128 where N is small (BERT's 768
    // columns make 48 tiles of 128 x 128 on 132 SMs). kbench on an H100 (session 29,
    // tools/kbench/sm90.txt): 1024x768x3072 +bias +residual 0.0277 ms against 0.0368 at
    // 128 x 128, 1024x768x768 +bias 0.0116 against 0.0152, 1000^3 0.0183 against 0.0190. Per
    // tile that is 0.95 of 128 x 128's efficiency scaled to its area on the one-wave 768-column
    // shapes and 0.75 on 1000^3, where more tiles share the memory system. 0.8 until session
    // 38; with split-K's partial sums priced for both passes, 1.0 takes it where it beats a
    // split (H100, tools/kbench/split_cost.txt): BERT's FFN down-projection (1024x768x3072,
    // 96 tiles) 0.0189 ms against 0.0200 in 4 splits of 128 x 192, the MLP's (256x1024x4096,
    // 4 splits) 0.0140 against 0.0151 in 8 of 128 x 128. Per step it still costs more than
    // 128 x 128 (1.45 for twice the area), which keeps the larger tile wherever several
    // waves run.
    wg(64, 8, 1.0);
    // 128 x 48 and 128 x 32 (B K-major): where 128 x 64 tiles leave SMs idle, as BERT b8's
    // 768-column projections do (96 tiles on 132 SMs; 128 of 128 x 48). Their values assume a
    // step costs a fixed part plus one proportional to the width, fitted to 128 x 64 (1.0)
    // and 128 x 128 (1.45): a guess until measured. Not for rows normalized in the kernel,
    // whose row tiles would take clusters of more CTAs.
    if (opts.hopperNarrowTiles && spec.b.kContig && spec.maxTilesN == 0) {
      wg(48, 8, 0.83);
      wg(32, 8, 0.62);
    }
  }
  tc(128, 256, 32, 2, 4, 4, 1.0, 0);
  tc(256, 128, 32, 4, 2, 4, 1.0, 0.9);
  tc(128, 256, 64, 2, 4, 3, 0.95, 0);
  tc(256, 128, 64, 4, 2, 3, 0.93, 0);
  tc(128, 128, 64, 2, 2, 3, 0.92, 0);
  tc(128, 128, 32, 2, 2, 4, 0.87, 0);
  tc(128, 128, 32, 2, 4, 4, 0.96, 0.75); // best on mid-size shapes (kbench transformer.txt)
  tc(64, 256, 32, 1, 4, 4, 0.8, 0);
  tc(128, 64, 32, 4, 2, 4, 0.7, 1.0);
  tc(64, 128, 32, 2, 4, 4, 0.7, 0.6);
  tc(128, 64, 32, 2, 2, 4, 0.65, 0);
  tc(64, 128, 32, 2, 2, 4, 0.65, 0);
  tc(64, 64, 32, 2, 2, 4, 0.5, 0.8);
  tc(32, 128, 32, 1, 4, 4, 0.5, 0);
  tc(16, 128, 32, 1, 4, 4, 0.35, 0);
  tc(32, 64, 32, 1, 4, 4, 0.35, 0.4);
  tc(16, 64, 32, 1, 4, 4, 0.25, 0.25);
  tc(128, 32, 32, 4, 1, 4, 0.35, 0);
  tc(128, 16, 32, 4, 1, 4, 0.2, 0);
  return out;
}

} // namespace

int64_t rowUnits(const TileConfig &cfg, int64_t tilesM) {
  return cfg.multicast ? ceilDiv(tilesM, 2) : tilesM;
}

bool tileFits(const GemmSpec &spec, const TileConfig &c, const EmitOptions &opts,
              std::string *why) {
  auto no = [&](std::string msg) {
    *why = std::move(msg);
    return false;
  };
  const int64_t kTiles = ceilDiv(spec.k, c.bk);
  if (c.splitK < 1 || c.splitK > kTiles)
    return no(fmt::format("split-K {} outside [1, {}]", c.splitK, kTiles));
  if (c.simt) {
    if (spec.dtype != DType::kF32)
      return no("the SIMT kernel is f32 only");
    if ((c.bm != 64 && c.bm != 128) || (c.bn != 64 && c.bn != 128) || c.bk != 8)
      return no("SIMT tiles are 64 or 128 rows and columns, BK 8");
    return true;
  }
  if (c.rowCluster > 0 && !c.wgmma)
    return no("rows are normalized in the kernel only by the Hopper family");
  if (c.wgmma)
    return sm90Fits(spec, c, opts, spec.out, why);
  if (spec.dtype == DType::kF32 && !opts.allowTf32)
    return no("f32 needs allowTf32 for tensor cores");
  if (opts.smVersion < 80)
    return no(fmt::format("tensor-core kernels need sm_80 or newer, got sm_{}", opts.smVersion));
  const int nt = threadsOf(c);
  const bool s8 = spec.dtype == DType::kI8;
  const int kStep = spec.dtype == DType::kF32 ? 8 : s8 ? 32 : 16;
  if (c.warpsM < 1 || c.warpsN < 1 || nt > 1024)
    return no("bad warp layout");
  if (c.bm % (16 * c.warpsM) != 0 || c.bn % (16 * c.warpsN) != 0)
    return no("the warp tile must be a multiple of 16 x 16");
  if (c.bk % kStep != 0 || c.bk < kStep)
    return no(fmt::format("BK must be a multiple of {}", kStep));
  // Each thread holds its share of the warp tile's sums in registers (the candidates' largest,
  // 64 x 64 a warp, hold 128).
  const int sums = (c.bm / c.warpsM) * (c.bn / c.warpsN) / 32;
  if (sums > 128)
    return no(fmt::format("a {}x{} warp tile holds {} sums per thread; at most 128 fit in "
                          "registers",
                          c.bm / c.warpsM, c.bn / c.warpsN, sums));
  if (c.stages < 2)
    return no("at least 2 stages");
  if (sharedBytes(spec, c) > 227u * 1024u)
    return no(fmt::format("{} bytes of shared memory", sharedBytes(spec, c)));
  if (c.minBlocks < 0 || c.minBlocks * nt > 2048 ||
      (c.minBlocks > 0 && c.minBlocks * sharedBytes(spec, c) > 228u * 1024u))
    return no(fmt::format("{} blocks of {} threads do not fit on an SM", c.minBlocks, nt));
  const int ce = 16 / elemBytes(spec.dtype);
  if (c.bm % ce != 0 || c.bn % ce != 0 || c.bk % ce != 0)
    return no("tiles must be whole 16-byte chunks");
  if (s8) {
    if (c.splitK != 1 && c.wgmma && !c.clusterSplit)
      return no("int8 Hopper GEMMs split K only in a cluster");
    if (spec.k % 16 != 0)
      return no(fmt::format("int8 needs K a multiple of 16, got {}", spec.k));
    for (const Operand *op : {&spec.a, &spec.b})
      if (!op->kContig || op->gather || op->ld % 16 != 0 || op->split != 0)
        return no("int8 operands must be K-contiguous with 16-byte aligned rows");
  }
  if (spec.a.nhwc) {
    if (spec.dtype == DType::kF32)
      return no("the NHWC loader is for int8, f16 and bf16");
    const int cpr = c.bk / ce;
    if (nt % cpr != 0 || (c.bm * cpr) % nt != 0)
      return no("the NHWC loader needs whole rows of chunks per thread group");
    if (spec.a.nhwc->channels % ce != 0)
      return no(fmt::format("the NHWC loader needs channels a multiple of {}", ce));
  }
  for (const Operand *op : {&spec.a, &spec.b}) {
    if (op->gather) {
      const int pairs = c.bn / 2;
      if (pairs > nt || nt % pairs != 0 || c.bk % (nt / pairs) != 0)
        return no("the im2col loader needs BN/2 to divide the thread count");
      if (c.bk / (nt / pairs) > 8)
        return no("the im2col loader would stage more than 8 rows per thread");
    } else if (op->split != 0) {
      const int64_t e = ce;
      if (op->split % e != 0 || op->splitStride % e != 0 || op->ld % e != 0)
        return no("a split operand must be 16-byte aligned");
    }
  }
  return true;
}

TileConfig chooseTile(const GemmSpec &spec, const EmitOptions &opts, double *seconds) {
  const bool simt = spec.dtype == DType::kF32 && !opts.allowTf32;
  const bool gather = spec.b.gather.has_value();
  // Sustained rates of an H200 seen with kbench: math (FLOP/s) of the best tile, DRAM
  // bandwidth (B/s), and seconds per im2col element gathered when every SM gathers.
  const double peak = simt                        ? 30e12
                      : spec.dtype == DType::kF32 ? 150e12
                      : spec.dtype == DType::kI8  ? 800e12
                                                  : 400e12;
  const double bandwidth = 3.5e12, gatherCost = 1.8e-12;
  const int sms = std::max(1, opts.numSms);
  const int eb = elemBytes(spec.dtype);
  // int8 partial sums are int32, exact: the mma.sync family's through the workspace, the
  // Hopper family's only in a cluster (its partials leave as float4 slabs). The mma.sync
  // family splits an int8 product only where its output is under half a wave of 128 x 64
  // tiles: on an H100 (session 50) that took ResNet-50 b1 int8 from 0.315 to 0.287 ms (its
  // layer4 3x3 convolutions, 49 x 512 x 4608, and the classifier split in 8), while b32's
  // layer4 3x3 convolutions (1568 x 512, 104 tiles of 128 x 64) lost in two splits of
  // 128 x 128 (the model 1.338 -> 1.353 ms).
  const bool int8Splits = opts.int8SplitK && double(spec.batch) * double(spec.m) * double(spec.n) <
                                                 double(sms / 2) * 128.0 * 64.0;
  TileConfig best;
  double bestTime = INFINITY;
  for (const Candidate &cand : candidates(spec, opts)) {
    const double eff = gather ? cand.gatherEff : cand.eff;
    if (eff <= 0)
      continue;
    // Rows normalized in the kernel: a cluster per row tile, the cooperative schedule, whole.
    const bool rows = spec.maxTilesN > 0;
    if (rows && (!cand.cfg.wgmma || ceilDiv(spec.n, cand.cfg.bn) > spec.maxTilesN))
      continue;
    const int64_t kTiles = ceilDiv(spec.k, cand.cfg.bk);
    // The Hopper family splits K in clusters of at most 8 CTAs (int8 too) when asked.
    const bool cluster = cand.cfg.wgmma && opts.hopperClusterSplitK;
    // Splits of K, 0 for stream-K (the Hopper family, when asked), after the unsplit tile.
    std::vector<int> splitsToTry{1};
    if (cand.cfg.wgmma && opts.hopperStreamK && !rows)
      splitsToTry.push_back(0);
    for (int s : {2, 3, 4, 6, 8, 12, 16, 24, 32})
      if (!rows)
        splitsToTry.push_back(s);
    for (int s : splitsToTry) {
      if (s > 1 &&
          (kTiles / s < 4 || (cand.cfg.wgmma && !opts.hopperSplitK) ||
           (cluster ? s > 8 : spec.dtype == DType::kI8 && (cand.cfg.wgmma || !int8Splits))))
        break;
      TileConfig c = cand.cfg;
      c.streamK = s == 0;
      s = std::max(s, 1);
      const int64_t perSplit = ceilDiv(kTiles, s);
      // Stages past the K tiles only hold shared memory (and cost blocks per SM, which the
      // epilogue needs to hide its loads): a 1x1 conv over 64 channels has one K tile. A
      // product bound by its epilogue's prefetched loads keeps no stage past them: ResNet-50
      // b32's 64 -> 256 1x1 conv with the residual took 0.0965 ms at 128 x 64 in 3 stages (150
      // registers, 1 block per SM) and 0.0678 in 2 (128, 2 blocks) (H100, session 39).
      const int64_t spare = shortEpilogueBound(spec, c, opts) ? 0 : 1;
      c.stages = static_cast<int>(
          std::max<int64_t>(c.wgmma ? 3 : 2, std::min<int64_t>(c.stages, perSplit + spare)));
      c.splitK = static_cast<int>(ceilDiv(kTiles, perSplit));
      c.clusterSplit = cluster && c.splitK > 1;
      if (rows)
        c.rowCluster = static_cast<int>(ceilDiv(spec.n, c.bn));
      // The cluster's handover buffer takes the shared memory of a stage or two.
      while ((c.clusterSplit || c.rowCluster > 0) && c.stages > 3 &&
             sm90SharedBytes(c) > 227u * 1024u)
        --c.stages;
      std::string why;
      if (!tileFits(spec, c, opts, &why) || blocksPerSm(spec, c) < 1)
        continue;
      const int64_t tilesM = ceilDiv(spec.m, c.bm), tilesN = ceilDiv(spec.n, c.bn);
      const int64_t blocks = tilesM * tilesN * spec.batch * c.splitK;
      // A cluster's CTAs are whole clusters of SMs.
      const int cl = c.clusterSplit ? c.splitK : std::max(c.rowCluster, 1);
      const int slots = std::max(cl, sms / cl * cl);
      const int64_t waves = ceilDiv(blocks, slots);
      // Ping-pong where a CTA gets more than one tile: its epilogues but the last run behind
      // the other warpgroup's products. Not for an int8 product of at most two K steps whose
      // epilogue reads a full-size operand: its main loop is too short to hide the
      // requantizing epilogue, which ping-pong leaves to one warpgroup per tile. kbench, H100,
      // session 50: ResNet-50 b32's int8 1x1 256 -> 1024 conv at 14 x 14 with the residual
      // (a plain A, `--int8-pointwise-plain`) 0.0258 ms at 128 x 128 ping-pong, 0.0219
      // cooperative.
      const bool shortHeavy = spec.dtype == DType::kI8 && spec.fullEpilogueOperand && perSplit <= 2;
      c.pingpong = opts.hopperPingpong && c.wgmma && c.bn <= 160 && !c.clusterSplit && !c.streamK &&
                   !rows && waves > 1 && !shortHeavy;
      // TMA where the operands allow it (the producer's speed is not modelled).
      if (opts.hopperTma && c.wgmma) {
        TileConfig t = c;
        t.tma = true;
        c.tma = tileFits(spec, t, opts, &why);
      }
      // B multicast in pairs of row tiles where the pairs fill no more waves than the tiles.
      if (opts.hopperMulticast && c.tma && !c.streamK && !c.clusterSplit && !rows && tilesM >= 2) {
        TileConfig t = c;
        t.multicast = true;
        c.multicast = ceilDiv(rowUnits(t, tilesM) * tilesN * spec.batch * c.splitK,
                              std::max(1, sms / 2)) <= waves &&
                      tileFits(spec, t, opts, &why);
      }
      // A tile costs its K steps plus about two more (the pipeline's fill, the epilogue); the
      // persistent Hopper kernel fills the next tile's stages during the epilogue, about one.
      // (kbench on the H200: 1024x768x768 with a bias, 0.0152 ms for 128x128 wgmma against
      // 0.0165 for the mma.sync 128x64 the "+2" chose.) Rank 0 of a split-K cluster reads the
      // other splits' sums, about a K step's time each. Ping-pong: a guess (a quarter of a
      // step per hidden epilogue) until measured.
      const double stepFlops = double(c.bm) * c.bn * c.bk * 2.0;
      double steps;
      if (c.streamK) {
        // Whole waves but the last two, then the rest shared out by K steps (writeGemm's
        // split). A CTA hands over a tile of 4-byte sums and its tile's owner reads one from
        // each CTA its K steps reach: bytes priced as operand stages of the tile (a guess
        // until measured). Pointless where the tiles fill their waves.
        if (blocks % sms == 0)
          continue;
        const StreamKSplit sk = streamKSplit(blocks, kTiles, sms);
        const double peers = double(ceilDiv(kTiles, sk.perCta));
        const double handover = (1.0 + peers) * c.bm * c.bn * 4.0 / ((c.bm + c.bn) * 128.0);
        steps = double(sk.wholeWaves) * double(kTiles + 1) + double(sk.perCta) + 1.0 + handover;
      } else {
        steps = c.pingpong ? double(waves) * perSplit + 1.0 + 0.25 * double(waves - 1)
                           : double(waves) * (perSplit + (c.wgmma ? 1 : 2) +
                                              (c.clusterSplit ? c.splitK - 1 : 0));
      }
      double compute = steps * stepFlops / (eff * peak / sms);
      // The im2col gather is paid once per row tile, by as many SMs as there are blocks.
      if (gather)
        compute += double(tilesM) * spec.batch * spec.n * spec.k * gatherCost * double(sms) /
                   double(std::min<int64_t>(blocks, sms));
      // Unique bytes (operands re-read by other tiles come from L2); for conv's gathered B
      // that is the input image, not the im2col matrix.
      const double bBytes = gather ? double(spec.b.gather->images) * spec.b.gather->channels *
                                         spec.b.gather->h * spec.b.gather->w
                                   : double(spec.batch) * spec.k * spec.n;
      double bytes = (double(spec.batch) * spec.m * (spec.k + spec.n) + bBytes) * eb;
      double extra = 0;
      if (c.splitK > 1 && !c.clusterSplit) {
        // Partial sums: written inside the main kernel, read back by the reduction kernel.
        // The Hopper family's pay both passes after the products: priced once, the model put
        // ViT's FFN down-projection (1576x768x3072, bias, residual) at 25.8 us in 3 splits of
        // 128 x 256 and 28.1 whole at 128 x 128, where kbench measured 0.0264 and 0.0249 ms
        // (H100, session 38); the split's overhead over its products was about 11.5 us there
        // and on BERT's (1024x768x3072, 4 splits of 128 x 192). The mma.sync family's splits
        // (small-M heads, partial sums of a few hundred KB) keep the one pass they were tuned
        // with.
        const double partials = double(spec.batch) * spec.m * spec.n * c.splitK * 4.0;
        bytes += partials;
        extra = 4e-6 + (c.wgmma ? 2.0 : 1.0) * partials / bandwidth;
      }
      // DRAM bandwidth needs most SMs pulling; memory-bound shapes still prefer the tile
      // that wastes less math.
      const double memory = bytes / (bandwidth * std::min(1.0, double(blocks) / double(sms)));
      // An int8 product spends much of its time in the requantizing epilogue (int32 to float,
      // per-channel scales, residual loads, byte stores), whose loads only resident warps
      // hide: fitted on the H200 with kbench on 100352x256x64 with a residual and the output
      // quantized (0.136 ms at 8 warps per SM, 0.094 ms at 16). Over a longer K it still
      // decides between tiles whose main loops cost alike: BERT's FFN up-projection
      // (1024x3072x768, GELU, quantized) takes 0.0366 ms at 128x256 (8 warps per SM) and
      // 0.0314 ms at 128x64 (16).
      // Only the SMs that hold a tile share it: the Hopper family's 128 x 256 tiles leave a
      // third of the SMs idle on BERT's 1024 x 3072 (96 tiles), and its FFN up-projection
      // with GELU took 0.0287 ms there against 0.0240 at 128 x 128 (kbench, H100, session 32).
      // A 16-bit product bound by its epilogue's loads likewise (shortEpilogueBound), fitted
      // on ResNet-50 b32's 64 -> 256 1x1 conv with a residual (kbench, H100, session 37): 0.0919
      // ms at 8 warps per SM (128 x 256), 0.0663 at 16 (128 x 64, the loads prefetched).
      // Not where an int8 conv gathers a window over a long K: ResNet-50 b32's 3x3 convs over
      // 128 channels (25088 x 128 x 1152) took 0.0244 ms at 256 x 128 (8 warps per SM) and
      // 0.0346 at 128 x 64 (16), which the term chose (kbench, H100, session 45): the main
      // loops of other blocks hide a short epilogue after 18 K steps.
      const bool windowed = spec.a.nhwc && spec.a.nhwc->kh * spec.a.nhwc->kw > 1 && spec.k > 256;
      const double perElement = spec.dtype == DType::kI8 && !windowed ? 2.6e-11
                                : shortEpilogueBound(spec, c, opts)   ? 1.6e-11
                                                                      : 0.0;
      if (perElement > 0) {
        const double warps =
            std::min(16.0, double(blocksPerSm(spec, c)) * double(threadsOf(c)) / 32.0);
        const double busy = double(std::min<int64_t>(blocks, sms));
        extra += double(spec.batch) * spec.m * spec.n * perElement * 132.0 / (busy * warps);
      }
      const double t = std::max(compute, memory) + 0.2 * compute + extra;
      if (t < bestTime * 0.97) {
        bestTime = t;
        best = c;
      }
    }
  }
  // An int8 product one K tile deep with a residual, in many blocks, is bound by its
  // requantizing epilogue in a way the per-element term does not tell apart by tile: inside
  // ResNet-50 b32 int8 (H100, session 47, `--gemm-tile`, sub-chunked epilogues) the layer1
  // expansions (100352 x 256 x 64, 3136 blocks of 128 x 64) took 0.0514, 0.0509 and 0.0577 ms
  // at 128 x 64 and 0.0482, 0.0479 and 0.0478 at 64 x 64 (the model 1.407 -> 1.392 ms). Not
  // measured at batch 1 (100 blocks), which keeps the cost model's tile.
  if (!best.wgmma && !best.simt && spec.dtype == DType::kI8 && spec.fullEpilogueOperand &&
      spec.k <= 64 && best.splitK == 1 &&
      twoBlocksPerSm(ceilDiv(spec.m, 128) * ceilDiv(spec.n, 64) * spec.batch, opts)) {
    const TileConfig small = *parseTileConfig("64x64x64/2x2s2k1");
    std::string why;
    if (tileFits(spec, small, opts, &why))
      best = small;
  }
  if (seconds)
    *seconds = bestTime;
  return best;
}

bool int8Operands(const Node &node, std::string *why) {
  for (int i : {0, 1})
    if (node.input(i)->dtype() != DType::kI8) {
      *why = fmt::format("{}: input {} is {}; the GPU kernel is int8 x int8", opOnnxName(node.op()),
                         i, dtypeName(node.input(i)->dtype()));
      return false;
    }
  if (node.hasInput(2) || node.hasInput(3)) {
    *why = fmt::format("{}: zero points have no GPU kernel (realize-int8 writes none)",
                       opOnnxName(node.op()));
    return false;
  }
  return true;
}

void writeOpaqueOrigin(CodeWriter &w) {
  w.line("int m0e = m0, n0e = n0;");
  w.line("asm volatile(\"\" : \"+r\"(m0e), \"+r\"(n0e));");
}

void writeRaster(CodeWriter &w, int64_t tilesM, int64_t tilesN, const std::string &index) {
  w.line("int tm, tn;");
  auto raster = w.block("");
  if (tilesM <= 8 || tilesN == 1) {
    w.line("tm = {} % {};", index, tilesM);
    w.line("tn = {} / {};", index, tilesM);
  } else {
    // Groups of 8 row tiles walk the columns together, so their A rows stay in L2.
    w.line("const int pid = {}, width = {};", index, 8 * tilesN);
    w.line("const int first = (pid / width) * 8;");
    w.line("const int gs = min({} - first, 8);", tilesM);
    w.line("tm = first + (pid % width) % gs;");
    w.line("tn = (pid % width) / gs;");
  }
}

std::vector<std::string> groupParams(KernelContext &ctx, std::vector<KernelParam> &params) {
  std::vector<std::string> decls;
  for (size_t i = 0; i < ctx.group.inputs.size(); ++i) {
    const Value *in = ctx.group.inputs[i];
    ctx.names[in] = fmt::format("in{}", i);
    decls.push_back(paramDecl(in, ctx.names[in], false));
    params.push_back({in, -1, false});
  }
  decls.push_back(paramDecl(ctx.group.outputs[0], "out0", true));
  params.push_back({ctx.group.outputs[0], -1, true});
  return decls;
}

Expected<KernelSet> writeGemm(const FusedGroup &group, const GemmSpec &spec,
                              const EmitOptions &opts, const std::optional<TileConfig> &cfg) {
  if (group.norm)
    return writeNormGemm(group, spec, opts, cfg);
  return writeGemmKernels(group, spec, opts, cfg, nullptr);
}

GemmSpec groupSpec(const FusedGroup &group, const GemmSpec &specIn) {
  GemmSpec spec = specIn;
  spec.out = group.outputs[0]->dtype();
  // An epilogue operand as large as the output (not A or B): a residual.
  const std::optional<int64_t> outElements = group.outputs[0]->shape().numElements();
  for (const Value *in : group.inputs)
    if (in != spec.a.value && in != spec.b.value && outElements &&
        in->shape().numElements() == outElements)
      spec.fullEpilogueOperand = true;
  return spec;
}

Expected<KernelSet> writeGemmKernels(const FusedGroup &group, const GemmSpec &specIn,
                                     const EmitOptions &opts,
                                     const std::optional<TileConfig> &cfgIn, const Node *norm) {
  if (group.outputs.size() != 1)
    return invalidArgument("a GEMM group has one output, got {}", group.outputs.size());
  if (!group.anchor)
    return invalidArgument("the group has no anchor");
  const GemmSpec spec = groupSpec(group, specIn);
  const TileConfig cfg = cfgIn ? *cfgIn : chooseTile(spec, opts);
  std::string why;
  if (!tileFits(spec, cfg, opts, &why))
    return invalidArgument("tile {} does not fit: {}", cfg.str(), why);
  if ((norm != nullptr) != (cfg.rowCluster > 0))
    return internalError("a tile that normalizes rows needs the layer norm, and back");
  const Value *out = group.outputs[0];
  KernelContext ctx(group, spec, cfg);
  ctx.norm = norm;
  ctx.name = group.name;
  ctx.storage = cudaStorageType(spec.dtype);
  ctx.outStorage = cudaStorageType(out->dtype());
  ctx.total = 1;
  for (int64_t d : staticSizes(out))
    ctx.total *= d;
  ctx.narrow = ctx.total < (int64_t{1} << 31);
  ctx.tilesM = ceilDiv(spec.m, cfg.bm);
  ctx.tilesN = ceilDiv(spec.n, cfg.bn);
  ctx.kTiles = ceilDiv(spec.k, cfg.bk);
  ctx.kTilesPerSplit = ceilDiv(ctx.kTiles, cfg.splitK);
  const int64_t splits = ceilDiv(ctx.kTiles, ctx.kTilesPerSplit);
  ctx.cfg.splitK = static_cast<int>(splits);
  // Split-K's partial sums go through a workspace and a reduction kernel, unless the splits
  // are a cluster's CTAs (the Hopper family's clusterSplit).
  const bool workspace = splits > 1 && !cfg.clusterSplit;
  ctx.outPairs = (spec.m == 1 || spec.outRowStride % 2 == 0) &&
                 (spec.batch == 1 || spec.outBatchStride % 2 == 0) &&
                 (spec.outSplit == 0 || (spec.outSplit % 2 == 0 && spec.outSplitStride % 2 == 0));

  KernelSet set;
  std::vector<KernelParam> params;
  std::vector<std::string> decls = groupParams(ctx, params);
  if (norm)
    normParams(ctx, decls, params);
  if (workspace) {
    decls.push_back(fmt::format("{}* __restrict__ ws", spec.accType()));
    params.push_back({nullptr, 0, true});
    set.scratchBytes.push_back(static_cast<uint64_t>(splits * ctx.total) * 4u);
  }
  // Stream-K: a grid of one CTA per SM shares out the K steps of the tiles past the whole
  // waves but one (those tiles' CTAs would otherwise wait for a partly filled last wave);
  // each CTA hands over at most one tile of sums (4-byte accumulators) and one flag.
  int64_t skGrid = 0;
  if (cfg.streamK) {
    const StreamKSplit sk =
        streamKSplit(ctx.tilesM * ctx.tilesN * spec.batch, ctx.kTiles, opts.numSms);
    skGrid = sk.grid;
    ctx.skTiles = sk.skTiles;
    ctx.skPerCta = sk.perCta;
    decls.push_back(fmt::format("{}* __restrict__ sk_partials", spec.accType()));
    params.push_back({nullptr, static_cast<int>(set.scratchBytes.size()), true});
    set.scratchBytes.push_back(static_cast<uint64_t>(skGrid * cfg.bm * cfg.bn) * 4u);
    decls.push_back("int* __restrict__ sk_flags");
    KernelParam flags{nullptr, -1, true};
    flags.zeroed = true;
    params.push_back(flags);
    set.zeroedBytes = static_cast<uint64_t>(skGrid) * 4u;
  }
  ctx.params = fmt::format("{}", fmt::join(decls, ", "));
  ctx.gridZ = static_cast<uint32_t>(std::min<int64_t>(spec.batch, 65535));
  if (ctx.tilesM * ctx.tilesN >= (int64_t{1} << 31))
    return invalidArgument("{} x {} output tiles are too many for one grid", ctx.tilesM,
                           ctx.tilesN);

  Kernel main;
  main.name = ctx.name;
  main.params = params;
  if (cfg.tma)
    for (KernelParam &p : tensorMapParams(spec, cfg))
      main.params.push_back(std::move(p));
  main.launch.grid[0] = static_cast<uint32_t>(ctx.tilesM * ctx.tilesN);
  main.launch.grid[1] = static_cast<uint32_t>(splits);
  main.launch.grid[2] = ctx.gridZ;
  main.launch.block[0] = static_cast<uint32_t>(threadsOf(cfg));
  if (cfg.wgmma) {
    // Persistent: one CTA per SM at most, each walking the tiles of every batch (and split);
    // with the splits in a cluster, clusters of `splits` CTAs walk the tiles; with B
    // multicast, clusters of two walk pairs of row tiles.
    // Rows normalized in the kernel: clusters of the row tiles' column tiles walk row tiles.
    const int64_t units = cfg.rowCluster > 0 ? ctx.tilesM
                                             : rowUnits(cfg, ctx.tilesM) * ctx.tilesN * spec.batch *
                                                   (cfg.clusterSplit ? 1 : splits);
    if (units >= (int64_t{1} << 31))
      return invalidArgument("{} output tiles are too many for one grid", units);
    const int64_t cluster = cfg.clusterSplit ? splits
                            : cfg.multicast  ? 2
                                             : std::max(cfg.rowCluster, 1);
    const int64_t clusterSlots = std::max(1, opts.numSms) / cluster;
    main.launch.grid[0] = static_cast<uint32_t>(
        cfg.streamK ? skGrid
                    : std::min<int64_t>(units, std::max<int64_t>(1, clusterSlots)) * cluster);
    main.launch.grid[1] = 1;
    main.launch.grid[2] = 1;
  }
  ctx.stagedV =
      opts.stagedEpilogue ? stagedWidth(spec, cfg, workspace ? splits : 1, out->dtype()) : 0;
  // The staged epilogue's chunk loop is not unrolled for a heavy epilogue, so its body is
  // copied MI x stagedV times, not once per accumulator pair: it stays inlined (kbench: BERT's
  // int8 FFN up-projection with GELU, 0.0271 ms outlined, 0.0253 ms inlined).
  ctx.outlineEpilogue =
      opts.outlineHeavyEpilogues && !workspace && ctx.stagedV == 0 && heavyEpilogue(group);
  main.launch.sharedBytes = sharedBytes(spec, cfg);
  main.sm90a = cfg.wgmma;
  if (ctx.stagedV > 0 && !cfg.wgmma) {
    // Slabs as tall as the warp tile where the operand pipeline's shared memory holds them
    // (one pass, every chunk's loads free to be issued together), else halved down to 16 rows.
    const int wm = cfg.bm / cfg.warpsM;
    ctx.stagedRows = wm;
    while (ctx.stagedRows % 32 == 0 &&
           stagedEpilogueBytes(cfg, ctx.stagedRows) > main.launch.sharedBytes)
      ctx.stagedRows /= 2;
    main.launch.sharedBytes =
        std::max(main.launch.sharedBytes, stagedEpilogueBytes(cfg, ctx.stagedRows));
    // Prefetch: each lane's chunks of every pass, at most 64 bytes of registers held through
    // a main loop of at most 8 K tiles (a 1x1 conv's; longer loops hide the epilogue anyway).
    const int passes = wm / ctx.stagedRows,
              chunks = ctx.stagedRows * (cfg.bn / cfg.warpsN) / ctx.stagedV;
    if ((opts.prefetchEpilogue || shortEpilogueBound(spec, cfg, opts)) && !heavyEpilogue(group) &&
        chunks % 32 == 0 && ctx.kTilesPerSplit <= 8) {
      DLC_ASSIGN_OR_RETURN(int bytes, stagedFullOperandBytes(ctx));
      if (bytes > 0 && passes * (chunks / 32) * bytes <= 64) {
        ctx.prefetchPasses = passes;
        ctx.prefetchChunks = chunks / 32;
      }
    }
  }
  // Sub-chunks where the grid is at least two blocks per SM, so that the registers they free
  // can hold another resident block (H100, session 47, `--profile` of ResNet-50 b32 int8, all
  // kernels sub-chunked against none: the layer1 expansions 0.0658 -> 0.0514 ms (3136 blocks),
  // the 1x1 convs over 256-512 channels about 0.002 ms faster each (416-1568 blocks), but the
  // layer4 3x3 convs (104 blocks) 0.0297 -> 0.0316; at batch 1, every kernel under 264
  // blocks, the model 0.321 -> 0.329 ms).
  ctx.subChunkEpilogue =
      opts.epilogueSubChunks && !cfg.wgmma &&
      twoBlocksPerSm(int64_t{main.launch.grid[0]} * main.launch.grid[1] * main.launch.grid[2],
                     opts);
  if (opts.epilogueTables && !workspace)
    ctx.table = tableThatFits(group, spec, cfg, opts, main.launch.sharedBytes);
  ctx.deferTableFill = ctx.table && !cfg.simt && !cfg.wgmma;
  CodeWriter w;
  w.line("// {}: {} GEMM, batch {} of {} x {} x {}, tile {}", group.name, dtypeName(spec.dtype),
         spec.batch, spec.m, spec.n, spec.k, ctx.cfg.str());
  if (cfg.simt)
    DLC_RETURN_IF_ERROR(writeSimtKernel(w, ctx));
  else if (cfg.wgmma)
    DLC_RETURN_IF_ERROR(writeSm90Kernel(w, ctx));
  else
    DLC_RETURN_IF_ERROR(writeTcKernel(w, ctx));
  main.source = w.str();
  main.prelude = w.requirements();
  set.kernels.push_back(std::move(main));

  if (workspace) {
    // The reduction kernel: each thread sums the splits of `v` adjacent outputs (16 bytes of
    // the output where the output's size allows, float4 loads of the sums) in split order, the
    // same sums every run, and runs the staged epilogue's vector form on them.
    Kernel red;
    red.name = ctx.name + "_splitk";
    red.params = params;
    KernelContext rctx = ctx; // ctx.outlineEpilogue is false here (split-K): one call site
    rctx.prefetchPasses = 0;
    rctx.subChunkEpilogue = false; // its sums are in registers
    int v = opts.stagedEpilogue ? 16 / static_cast<int>(dtypeSize(out->dtype())) : 1;
    while (v > 1 && ctx.total % v != 0)
      v /= 2;
    rctx.stagedV = v >= 2 ? v : 0;
    red.launch = gridStrideLaunch(ctx.total / std::max(v, 1), opts);
    const char *acc = spec.accType(); // int8 sums are int32, exact in any order
    CodeWriter r;
    {
      auto fn = r.block("extern \"C\" __global__ void __launch_bounds__(256) {}({})", red.name,
                        ctx.params);
      DLC_RETURN_IF_ERROR(writeEpilogueLambdas(r, rctx));
      auto loop = r.block("for (long long c = blockIdx.x * 256LL + threadIdx.x; c < {0}LL; c += "
                          "(long long)gridDim.x * 256)",
                          ctx.total / std::max(v, 1));
      if (rctx.stagedV > 0) {
        r.line("const long long i = c * {};", v);
        r.line("dlc_vec<{}, {}> v, t;", acc, v);
        r.line("dlc_vload(v, ws + i, true);");
        r.line("#pragma unroll");
        auto sum = r.block("for (int s = 1; s < {}; ++s)", splits);
        r.line("dlc_vload(t, ws + s * {}LL + i, true);", ctx.total);
        r.line("#pragma unroll");
        r.line("for (int j = 0; j < {}; ++j)", v);
        r.line("  v.v[j] += t.v[j];");
        sum.close();
        r.line("dlc_epv(v.v, ({})i);", indexType(ctx));
      } else {
        r.line("{} v = 0;", acc);
        r.line("#pragma unroll 4");
        r.line("for (int s = 0; s < {}; ++s)", splits);
        r.line("  v += ws[s * {}LL + c];", ctx.total);
        r.line("dlc_ep(v, ({})c);", indexType(ctx));
      }
    }
    red.source = r.str();
    red.prelude = r.requirements();
    set.kernels.push_back(std::move(red));
  }
  return set;
}

} // namespace dlc::codegen::gemm
