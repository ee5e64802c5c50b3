// The stem convolution: a few input channels (ResNet's 3-channel 7x7 stride-2 conv on the
// image) on NCHW f16/bf16 tensors, as a direct tensor-core kernel.
//
// The implicit GEMM (conv.cc) gathers the im2col matrix of such a conv element by element from
// global memory: per K tile and thread, 2-byte loads with a division and a bounds test each,
// staged through registers, for a reduction of only C * KH * KW (147). Here a block instead
// copies the input window of a run of output pixels into shared memory once (zeros where the
// window leaves the image), and the mma.sync A fragments are read from that patch directly:
// with K ordered (channel, kernel row, kernel column padded to 8), the two K elements of a
// fragment register are adjacent kernel columns, i.e. adjacent input columns of one patch row,
// so each register is one 32-bit shared load (two 16-bit ones for an odd stride) at an offset
// that is a compile-time constant plus the lane's pixel base. The weight, re-laid in shared
// memory as [output channel][K] once per block (the blocks are persistent), feeds the B
// fragments through ldmatrix. The epilogue goes through shared memory so that each lane
// finishes stagedV adjacent pixels of one output channel (the NCHW rows), as the GEMM
// kernels' staged epilogue does, with the same fused tail (bias, ReLU, casts, quantization).
//
// Block: 8 warps, 32 consecutive output pixels of one image each (two m16 tiles), all output
// channels (n8 tiles); a tile of 256 pixels never crosses an image. Chosen where the tiles fill
// the GPU (ResNet-50 from batch 3): at batch 1 the implicit GEMM is faster. The padded kernel
// columns (kw >= KW) are masked to zero in A as well as in the weight, so a non-finite input
// value outside a pixel's window cannot reach it.
#include <fmt/format.h>

#include "codegen/cuda_prelude.h"
#include "codegen/emitters.h"
#include "codegen/gemm_writer.h"

namespace dlc::codegen::gemm {
namespace {

struct StemPlan {
  int warps = 8;
  int64_t tile = 256; // output pixels per block tile
  int64_t rows = 0;   // output rows a tile spans at most
  int64_t patchRows = 0, patchCols = 0;
  int64_t combos = 0;  // C * KH: (channel, kernel row) pairs, 8 K elements each
  int64_t kSteps = 0;  // k16 steps: two combos each
  int64_t wPitch = 0;  // halves per weight row in shared memory
  int64_t chPass = 16; // output channels staged per epilogue pass
  int v = 0;           // outputs per chunk of the staged epilogue
  uint32_t patchBytes = 0, weightBytes = 0, stageBytes = 0;
};

StemPlan planStem(const ConvGather &g, int64_t outChannels, DType out) {
  StemPlan p;
  p.tile = 32 * p.warps;
  p.rows = std::min(g.oh, (p.tile + g.ow - 2) / g.ow + 1);
  p.patchRows = (p.rows - 1) * g.strideH + (g.kh - 1) * g.dilationH + 1;
  p.patchCols = ((g.ow - 1) * g.strideW + 8 + 1) / 2 * 2;
  p.combos = g.channels * g.kh;
  p.kSteps = ceilDiv(p.combos, 2);
  p.wPitch = p.kSteps * 16 + 8; // 16-byte rows, 8 banks apart: ldmatrix without conflicts
  p.chPass = std::min<int64_t>(16, outChannels);
  p.v = 16 / static_cast<int>(dtypeSize(out));
  p.patchBytes = static_cast<uint32_t>(g.channels * p.patchRows * p.patchCols * 2);
  p.weightBytes = static_cast<uint32_t>(outChannels * p.wPitch * 2);
  p.stageBytes = static_cast<uint32_t>(p.warps * p.chPass * 36 * 4);
  return p;
}

uint32_t align16(uint32_t b) { return (b + 15) / 16 * 16; }

} // namespace

bool stemConvFits(const ConvGather &g, int64_t outChannels, int64_t group, DType in, DType out,
                  int numSms, std::string *why) {
  auto no = [&](std::string s) {
    *why = std::move(s);
    return false;
  };
  if (in != DType::kF16 && in != DType::kBF16)
    return no(fmt::format("the stem kernel takes f16 or bf16, not {}", dtypeName(in)));
  if (group != 1 || g.channels > 4)
    return no("the stem kernel is for at most 4 input channels without groups");
  if (g.kw < 4 || g.kw > 8 || g.dilationH != 1 || g.dilationW != 1)
    return no("the stem kernel takes 4 to 8 kernel columns, undilated");
  if (outChannels % 16 != 0 || outChannels > 64)
    return no("the stem kernel takes 16 to 64 output channels, a multiple of 16");
  const StemPlan p = planStem(g, outChannels, out);
  if ((g.oh * g.ow) % p.v != 0)
    return no(
        fmt::format("the stem kernel's stores need output planes a multiple of {} pixels", p.v));
  if (align16(p.patchBytes) + align16(p.weightBytes) + p.stageBytes > 100 * 1024)
    return no("the stem kernel's input window does not fit in shared memory");
  // Fewer tiles than SMs (ResNet-50 at batch 1: 49) leave the persistent blocks each one tile,
  // their weight and window loads exposed: the implicit GEMM's smaller tiles do better there.
  if (g.images * ceilDiv(g.oh * g.ow, p.tile) < numSms)
    return no(fmt::format("the stem kernel's {} tiles of {} pixels would leave SMs idle",
                          g.images * ceilDiv(g.oh * g.ow, p.tile), p.tile));
  return true;
}

Expected<KernelSet> writeStemConv(const FusedGroup &group, const GemmSpec &spec,
                                  const ConvGather &g, const EmitOptions &opts) {
  const Node &n = *group.anchor;
  const Value *out = group.outputs[0];
  const DType dt = spec.dtype;
  const int64_t outChannels = spec.m, ohw = g.oh * g.ow, hw = g.h * g.w;
  const StemPlan p = planStem(g, outChannels, out->dtype());
  const int64_t tilesPerImage = ceilDiv(ohw, p.tile), tiles = g.images * tilesPerImage;

  KernelContext ctx(group, spec, TileConfig{});
  ctx.name = group.name;
  ctx.storage = cudaStorageType(dt);
  ctx.outStorage = cudaStorageType(out->dtype());
  ctx.total = outChannels * g.images * ohw;
  ctx.narrow = ctx.total < (int64_t{1} << 31);
  ctx.stagedV = p.v;

  Kernel k;
  k.name = group.name;
  const std::vector<std::string> decls = groupParams(ctx, k.params);
  const std::string x = ctx.names.at(n.input(0)), wt = ctx.names.at(n.input(1));
  const std::string st = ctx.storage, idx = indexType(ctx);
  const bool wide = g.images * g.channels * hw >= (int64_t{1} << 31);
  const uint32_t wOff = 0, pOff = align16(p.weightBytes), sOff = pOff + align16(p.patchBytes);
  const int threads = 32 * p.warps;

  CodeWriter w;
  w.line("// {}: stem conv, {} -> {} channels, {}x{} window stride {}x{}, {} tiles of {} pixels "
         "({} warps)",
         group.name, g.channels, outChannels, g.kh, g.kw, g.strideH, g.strideW, tiles, p.tile,
         p.warps);
  {
    auto fn = w.block("extern \"C\" __global__ void __launch_bounds__({}, 2) {}({})", threads,
                      k.name, fmt::join(decls, ", "));
    w.line("constexpr int C = {}, H = {}, W = {}, KH = {}, KW = {}, SH = {}, SW = {}, PH = {}, "
           "PW = {};",
           g.channels, g.h, g.w, g.kh, g.kw, g.strideH, g.strideW, g.padH, g.padW);
    w.line("constexpr int OW = {}, OHW = {}, COUT = {}, TILE = {}, TILES_PER_IMAGE = {};", g.ow,
           ohw, outChannels, p.tile, tilesPerImage);
    w.line("constexpr int PR = {}, PC = {}, COMBOS = {}, KSTEPS = {}, WP = {}, NT = COUT / 8;",
           p.patchRows, p.patchCols, p.combos, p.kSteps, p.wPitch);
    w.line("constexpr int CH_PASS = {}, EPP = 36, V = {};", p.chPass, p.v);
    w.line("extern __shared__ __align__(16) unsigned char dlc_smem[];");
    w.line("{0} *sW = reinterpret_cast<{0} *>(dlc_smem + {1});", st, wOff);
    w.line("{0} *sP = reinterpret_cast<{0} *>(dlc_smem + {1});", st, pOff);
    w.line("float *sE = reinterpret_cast<float *>(dlc_smem + {}) + (threadIdx.x / 32) * (CH_PASS "
           "* EPP);",
           sOff);
    w.line("const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;");
    CodeWriter late; // the epilogue scales' reciprocals, after the weight's loads
    DLC_RETURN_IF_ERROR(writeEpilogueLambdas(w, ctx, &late));
    // The weight as [COUT][KSTEPS * 16]: K = combo * 8 + kernel column, zeros past KW and past
    // the last combo.
    w.line("// The weight, re-laid once per block: [out channel][(channel, kernel row) x 8 + "
           "kernel column]");
    {
      auto loop = w.block("for (int i = tid; i < COUT * KSTEPS * 16; i += {})", threads);
      w.line("const int o = i / (KSTEPS * 16), kk = i % (KSTEPS * 16);");
      w.line("const int combo = kk >> 3, kw = kk & 7;");
      w.line("{} v = {}(0.f);", st, dt == DType::kBF16 ? "__float2bfloat16" : "__float2half");
      w.line("if (combo < COMBOS && kw < KW) v = {}[(o * COMBOS + combo) * KW + kw];", wt);
      w.line("sW[o * WP + kk] = v;");
    }
    // Lane constants: the A registers' kernel-column mask (zero past KW).
    w.line("const int t4 = lane & 3, g8 = lane >> 2;");
    w.line("const unsigned amask = (2 * t4 < KW ? 0xFFFFu : 0u) | (2 * t4 + 1 < KW ? 0xFFFF0000u "
           ": 0u);");
    w.line("const unsigned bBase = dlc_smem_u32(sW) + (unsigned)(((lane & 7) + ((lane >> 4) << "
           "3)) * WP + ((lane >> 3) & 1) * 8) * 2u;");
    w.embed(late);
    auto tilesLoop = w.block("for (int tile = blockIdx.x; tile < {}; tile += gridDim.x)", tiles);
    w.line("const int img = tile / TILES_PER_IMAGE, p0 = (tile % TILES_PER_IMAGE) * TILE;");
    w.line("const int oh0 = p0 / OW, ih0 = oh0 * SH - PH;");
    w.line("__syncthreads(); // the last tile's patch is read; the weight is written");
    w.line("// The input window of the tile's output rows, zeros outside the image");
    // Every load of the window issued before any store: one memory round trip per tile.
    {
      w.line("const {} *xi = {} + ({})img * {};", st, x, wide ? "long long" : "int",
             g.channels * hw);
      w.line("constexpr int PITER = (C * PR * PC + {0} - 1) / {0}, PBATCH = {1};", threads, 16);
      w.line("#pragma unroll 1");
      auto batches = w.block("for (int i0 = 0; i0 < PITER; i0 += PBATCH)");
      w.line("unsigned short pv[PBATCH];");
      w.line("#pragma unroll");
      {
        auto loop = w.block("for (int it = 0; it < PBATCH; ++it)");
        w.line("const int i = tid + (i0 + it) * {};", threads);
        w.line("const int c = i / (PR * PC), r = (i / PC) % PR, j = i % PC;");
        w.line("const int ih = ih0 + r, iw = j - PW;");
        w.line("pv[it] = i < C * PR * PC && (unsigned)ih < (unsigned)H && (unsigned)iw < "
               "(unsigned)W ? dlc_bits16(xi[(c * H + ih) * W + iw]) : (unsigned short)0;");
      }
      w.line("#pragma unroll");
      w.line("for (int it = 0; it < PBATCH; ++it)");
      w.line(
          "  if (tid + (i0 + it) * {0} < C * PR * PC) reinterpret_cast<unsigned short *>(sP)[tid "
          "+ (i0 + it) * {0}] = pv[it];",
          threads);
    }
    w.line("__syncthreads();");
    // Each lane's four pixels (two m16 tiles, rows g and g + 8): their patch offsets. Pixels
    // past the image compute on a valid pixel and are not stored.
    w.line("int pb[2][2];");
    w.line("#pragma unroll");
    {
      auto mi = w.block("for (int mi = 0; mi < 2; ++mi)");
      w.line("#pragma unroll");
      auto h = w.block("for (int h = 0; h < 2; ++h)");
      w.line("const int pix = min(p0 + warp * 32 + mi * 16 + h * 8 + g8, OHW - 1);");
      w.line("const int oh = pix / OW, ow = pix % OW;");
      w.line("pb[mi][h] = (oh - oh0) * SH * PC + ow * SW + 2 * t4;");
    }
    w.line("float acc[2][NT][4];");
    w.line("#pragma unroll");
    w.line("for (int mi = 0; mi < 2; ++mi)");
    w.line("#pragma unroll");
    w.line("  for (int ni = 0; ni < NT; ++ni)");
    w.line("#pragma unroll");
    w.line("    for (int q = 0; q < 4; ++q)");
    w.line("      acc[mi][ni][q] = 0.f;");
    // A register of combo `cb` for pixel base `b`: two adjacent kernel columns of one patch row.
    const bool evenStride = g.strideW % 2 == 0;
    {
      auto fn = w.blockSemi("auto aword = [&](int b, int cb) -> unsigned");
      w.line("const {} *q = sP + b + (cb / KH) * (PR * PC) + (cb % KH) * PC;", st);
      if (evenStride)
        w.line("return *reinterpret_cast<const unsigned *>(q) & amask;");
      else
        w.line("return ((unsigned)dlc_bits16(q[0]) | ((unsigned)dlc_bits16(q[1]) << 16)) & "
               "amask;");
    }
    w.line("#pragma unroll");
    {
      auto ks = w.block("for (int s = 0; s < KSTEPS; ++s)");
      w.line("unsigned a[2][4];");
      w.line("#pragma unroll");
      {
        auto mi = w.block("for (int mi = 0; mi < 2; ++mi)");
        w.line("a[mi][0] = aword(pb[mi][0], 2 * s);");
        w.line("a[mi][1] = aword(pb[mi][1], 2 * s);");
        w.line("a[mi][2] = 2 * s + 1 < COMBOS ? aword(pb[mi][0], 2 * s + 1) : 0u;");
        w.line("a[mi][3] = 2 * s + 1 < COMBOS ? aword(pb[mi][1], 2 * s + 1) : 0u;");
      }
      w.line("#pragma unroll");
      auto np = w.block("for (int nj = 0; nj < NT / 2; ++nj)");
      w.line("unsigned b[4];");
      w.line("dlc_ldmatrix_x4(b, bBase + (unsigned)(nj * 16 * WP + s * 16) * 2u);");
      const char *mma = dt == DType::kBF16 ? "dlc_mma_bf16" : "dlc_mma_f16";
      w.line("#pragma unroll");
      auto mi = w.block("for (int mi = 0; mi < 2; ++mi)");
      w.line("{}(acc[mi][2 * nj], a[mi], b[0], b[1]);", mma);
      w.line("{}(acc[mi][2 * nj + 1], a[mi], b[2], b[3]);", mma);
    }
    // Staged epilogue: CH_PASS channels of the warp's 32 pixels at a time, [channel][pixel] in
    // the warp's slab, then V adjacent pixels of one channel per lane and chunk.
    w.line(
        "// Epilogue: the warp's slab as [channel][pixel], then V pixels of a channel per chunk");
    w.line("#pragma unroll");
    {
      auto pass = w.block("for (int c0 = 0; c0 < COUT; c0 += CH_PASS)");
      w.line("__syncwarp();");
      w.line("#pragma unroll");
      w.line("for (int nl = 0; nl < CH_PASS / 8; ++nl)");
      w.line("#pragma unroll");
      w.line("  for (int mi = 0; mi < 2; ++mi)");
      w.line("#pragma unroll");
      w.line("    for (int q = 0; q < 4; ++q)");
      w.line("      sE[(nl * 8 + 2 * t4 + (q & 1)) * EPP + mi * 16 + g8 + (q >> 1) * 8] = "
             "acc[mi][c0 / 8 + nl][q];");
      w.line("__syncwarp();");
      w.line("#pragma unroll");
      auto chunks = w.block("for (int q = lane; q < CH_PASS * (32 / V); q += 32)");
      w.line("const int ch = q / (32 / V), pc = (q % (32 / V)) * V;");
      w.line("const int pix = p0 + warp * 32 + pc;");
      w.line("if (pix < OHW)");
      w.line("  dlc_epv(sE + ch * EPP + pc, (({0})img * COUT + c0 + ch) * ({0})OHW + pix);", idx);
    }
  }
  k.source = w.str();
  k.prelude = w.requirements();
  // Persistent: at most what the SMs hold at once (the weight is loaded once per block).
  const uint32_t smem = sOff + p.stageBytes;
  // Two blocks of 8 warps per SM: the 64 accumulators and the fragments take ~100 registers.
  const int64_t perSm = std::max<int64_t>(1, std::min<int64_t>(227 * 1024 / smem, 512 / threads));
  k.launch.grid[0] =
      static_cast<uint32_t>(std::min<int64_t>(tiles, std::max(1, opts.numSms) * perSm));
  k.launch.block[0] = static_cast<uint32_t>(threads);
  k.launch.sharedBytes = smem;
  KernelSet set;
  set.kernels.push_back(std::move(k));
  return set;
}

} // namespace dlc::codegen::gemm
