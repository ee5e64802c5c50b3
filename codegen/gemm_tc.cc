// The tensor-core main kernel (see gemm_kernel.h): f16/bf16 through mma.sync m16n8k16 and
// int8 through mma.sync m16n8k32 (s8 x s8 -> s32) with ldmatrix fragments, f32 through TF32
// mma.sync m16n8k8 with plain shared-memory fragments. An int8 fragment row is 16 bytes like
// a half one, so ldmatrix serves both: an 8 x 8 matrix of b16 is 8 rows of 16 int8, exactly
// the m16n8k32 A and B fragment layouts (K-contiguous tiles only: ldmatrix cannot transpose
// bytes).
//
// Each block computes a BM x BN output tile of one batch (and one K slice under split-K) with
// warpsM x warpsN warps. Operand tiles go through a STAGES-deep shared-memory ring: strided
// operands whose contiguous rows are 16-byte aligned are copied with cp.async (zero-filled
// past the edges); other strided operands and conv's im2col gather are loaded into registers
// before the tile's math and stored to shared memory after it. Shared rows are padded by 16
// bytes (an odd number of 16-byte units per row), so ldmatrix and the copies are free of bank
// conflicts. One __syncthreads per K tile: the stage a thread refills was read in the
// previous iteration, which every warp has finished once it passes the barrier.
#include <fmt/format.h>

#include "codegen/gemm_writer.h"

namespace dlc::codegen::gemm {
namespace {

/// Elements per 16-byte chunk.
int chunkElems(DType t) { return 16 / elemBytes(t); }

/// Whether a strided operand can be copied in aligned 16-byte chunks.
bool vectorizable(const GemmSpec &spec, const Operand &op, int64_t freeExtent) {
  const int64_t ce = chunkElems(spec.dtype);
  if (op.gather)
    return false;
  if (op.ld % ce != 0)
    return false;
  if (op.kContig)
    return spec.k % ce == 0;
  if (op.split != 0)
    return op.split % ce == 0 && op.splitStride % ce == 0;
  return freeExtent % ce == 0;
}

int pitchOf(const GemmSpec &spec, const TileConfig &cfg, const Operand &op, int freeTile) {
  if (!op.gather && op.kContig)
    return cfg.bk + chunkElems(spec.dtype);
  return freeTile + 8;
}

int stageElems(const TileConfig &cfg, const Operand &op, int freeTile, int pitch) {
  return (!op.gather && op.kContig) ? freeTile * pitch : cfg.bk * pitch;
}

/// 32-bit pattern of element expression `e` (a storage-type lvalue) for packing.
std::string bitsOf(DType t, const std::string &e) {
  return t == DType::kF32 ? fmt::format("__float_as_uint({})", e)
                          : fmt::format("(unsigned)dlc_bits16({})", e);
}

/// Where chunk j of a thread lies, as C expressions in `j` (and the tile's K start `k`): its
/// free index (first element), K offset within the tile, global pointer and shared offset.
struct ChunkExprs {
  std::string iOf, kOf, src, smem;
};

/// The chunk layout of a strided operand's tile (see writeStridedLoader).
struct ChunkLayout {
  int ce = 0, eb = 0, nt = 0; // elements and bytes per chunk element, threads
  int pitch = 0, cpr = 0, chunks = 0, cpt = 0;
  bool affine = false;
  int rs = 0; // rows between a thread's chunks (affine)
};

ChunkLayout chunkLayout(const KernelContext &ctx, const Operand &op, int freeTile) {
  ChunkLayout l;
  l.ce = chunkElems(ctx.spec.dtype);
  l.eb = elemBytes(ctx.spec.dtype);
  l.nt = 32 * ctx.cfg.warpsM * ctx.cfg.warpsN;
  l.pitch = pitchOf(ctx.spec, ctx.cfg, op, freeTile);
  l.cpr = op.kContig ? ctx.cfg.bk / l.ce : freeTile / l.ce;
  l.chunks = op.kContig ? freeTile * l.cpr : ctx.cfg.bk * l.cpr;
  l.cpt = (l.chunks + l.nt - 1) / l.nt;
  l.affine = l.nt % l.cpr == 0 && l.chunks % l.nt == 0;
  l.rs = l.affine ? l.nt / l.cpr : 0;
  return l;
}

/// Writes the per-thread chunk setup of operand `x` and returns the expressions of chunk j.
ChunkExprs writeChunkSetup(CodeWriter &w, const KernelContext &ctx, const Operand &op,
                           const std::string &x, const ChunkLayout &l, int64_t freeExtent,
                           const std::string &i0) {
  const std::string ptr = ctx.names.at(op.value);
  const std::string boff = op.batchOffset == "0" ? "0" : "(" + op.batchOffset + ")";
  auto splitOff = [&](const std::string &i) {
    return op.split ? fmt::format("((long long)({0} / {1}) * {2}LL + {0} % {1})", i, op.split,
                                  op.splitStride)
                    : fmt::format("(long long)({})", i);
  };
  ChunkExprs e;
  if (l.affine) {
    w.line("const int {0}r0 = tid / {1}, {0}c0 = (tid % {1}) * {2};", x, l.cpr, l.ce);
    w.line("const int {0}o = {0}r0 * {1} + {0}c0;", x, l.pitch);
    if (op.kContig) {
      w.line("const int {0}i = {1} + {0}r0;", x, i0);
      w.line("const {0} *{1}g = {2} + {3} + (long long){1}i * {4}LL + {1}c0;", ctx.storage, x, ptr,
             boff, op.ld);
      e.iOf = fmt::format("({}i + j * {})", x, l.rs);
      e.kOf = fmt::format("{}c0", x);
      e.src = fmt::format("{}g + (long long)j * {}LL + k", x, int64_t{l.rs} * op.ld);
    } else {
      w.line("const int {0}i = {1} + {0}c0;", x, i0);
      w.line("const {0} *{1}g = {2} + {3} + {4} + (long long){1}r0 * {5}LL;", ctx.storage, x, ptr,
             boff, splitOff(fmt::format("({0}i < {1} ? {0}i : 0)", x, freeExtent)), op.ld);
      e.iOf = fmt::format("{}i", x);
      e.kOf = fmt::format("({}r0 + j * {})", x, l.rs);
      e.src = fmt::format("{}g + ((long long)k + j * {}) * {}LL", x, l.rs, op.ld);
    }
    e.smem = fmt::format("{}o + j * {}", x, l.rs * l.pitch);
    return e;
  }
  w.line("const {0} *{1}g[{2}];", ctx.storage, x, l.cpt);
  w.line("int {0}o[{1}], {0}k[{1}], {0}i[{1}];", x, l.cpt);
  w.line("#pragma unroll");
  {
    auto loop = w.block("for (int j = 0; j < {}; ++j)", l.cpt);
    w.line("const int c = tid + j * {};", l.nt);
    if (op.kContig) {
      w.line("const int r = c / {0}, kc = (c % {0}) * {1};", l.cpr, l.ce);
      w.line("const int i = {} + r;", i0);
      w.line("{0}i[j] = c < {1} ? i : 0x3fffffff;", x, l.chunks);
      w.line("{}k[j] = kc;", x);
      w.line("{}o[j] = r * {} + kc;", x, l.pitch);
      w.line("{0}g[j] = {1} + {2} + (long long)({0}i[j] < {3} ? i : 0) * {4}LL + kc;", x, ptr, boff,
             freeExtent, op.ld);
      e.src = fmt::format("{}g[j] + k", x);
    } else {
      w.line("const int kr = c / {0}, ic = (c % {0}) * {1};", l.cpr, l.ce);
      w.line("const int i = {} + ic;", i0);
      w.line("{0}i[j] = c < {1} ? i : 0x3fffffff;", x, l.chunks);
      w.line("{}k[j] = kr;", x);
      w.line("{}o[j] = kr * {} + ic;", x, l.pitch);
      w.line("{0}g[j] = {1} + {2} + {3} + (long long)kr * {4}LL;", x, ptr, boff,
             splitOff(fmt::format("({}i[j] < {} ? i : 0)", x, freeExtent)), op.ld);
      e.src = fmt::format("{}g[j] + (long long)k * {}LL", x, op.ld);
    }
  }
  e.iOf = fmt::format("{}i[j]", x);
  e.kOf = fmt::format("{}k[j]", x);
  e.smem = fmt::format("{}o[j]", x);
  return e;
}

/// X_load as cp.async 16-byte copies straight into the stage (X_store does nothing).
void writeAsyncLoad(CodeWriter &w, const KernelContext &ctx, const Operand &op,
                    const std::string &x, const ChunkLayout &l, const ChunkExprs &e,
                    int64_t freeExtent, const std::string &guard) {
  w.line("const unsigned {0}u = dlc_smem_u32(s{0});", x);
  {
    auto load = w.blockSemi("auto {}_load = [&](int stage, int kt)", x);
    w.line("const int k = kt * BK;");
    w.line("#pragma unroll");
    auto loop = w.block("for (int j = 0; j < {}; ++j)", l.cpt);
    if (!guard.empty())
      w.line("{}", guard);
    w.line("const bool p = {} < {} && k + {} < K;", e.iOf, freeExtent, e.kOf);
    w.line("dlc_cp_async16({0}u + (unsigned)(stage * {0}_STAGE + {1}) * {2}u, p ? (const void "
           "*)({3}) : (const void *){4}, p);",
           x, e.smem, l.eb, e.src, ctx.names.at(op.value));
  }
  w.line("auto {}_store = [&](int) {{}};", x);
}

/// X_load fetching element by element into registers (packed as uint4 per chunk), X_store
/// writing them to the stage.
void writeRegisterLoad(CodeWriter &w, const KernelContext &ctx, const Operand &op,
                       const std::string &x, const ChunkLayout &l, const ChunkExprs &e,
                       int64_t freeExtent, const std::string &guard) {
  const DType dt = ctx.spec.dtype;
  w.line("uint4 {}r[{}];", x, l.cpt);
  {
    auto load = w.blockSemi("auto {}_load = [&](int, int kt)", x);
    w.line("const int k = kt * BK;");
    w.line("#pragma unroll");
    auto chunk = w.block("for (int j = 0; j < {}; ++j)", l.cpt);
    w.line("const {} *q = {};", ctx.storage, e.src);
    w.line("unsigned v[{}];", l.ce);
    w.line("#pragma unroll");
    {
      auto elem = w.block("for (int e = 0; e < {}; ++e)", l.ce);
      if (op.kContig)
        w.line("const bool p = {} < {} && k + {} + e < K;", e.iOf, freeExtent, e.kOf);
      else
        w.line("const bool p = {} + e < {} && k + {} < K;", e.iOf, freeExtent, e.kOf);
      w.line("v[e] = p ? {} : 0u;", bitsOf(dt, "q[e]"));
    }
    if (l.eb == 2)
      w.line("{}r[j] = make_uint4(v[0] | (v[1] << 16), v[2] | (v[3] << 16), v[4] | (v[5] << 16), "
             "v[6] | (v[7] << 16));",
             x);
    else
      w.line("{}r[j] = make_uint4(v[0], v[1], v[2], v[3]);", x);
  }
  auto store = w.blockSemi("auto {}_store = [&](int stage)", x);
  w.line("#pragma unroll");
  auto loop = w.block("for (int j = 0; j < {}; ++j)", l.cpt);
  if (!guard.empty())
    w.line("{}", guard);
  w.line("*reinterpret_cast<uint4 *>(s{0} + stage * {0}_STAGE + {1}) = {0}r[j];", x, e.smem);
}

/// Writes the loader of strided operand `op` ("A" or "B"): per-thread chunk setup, and the
/// lambdas X_load(stage, kt) (cp.async, or a fetch into registers) and X_store(stage). Chunk j
/// of a thread is chunk tid + j * NT of the tile; when NT is a multiple of the chunks per row,
/// every chunk of a thread sits in the same column, so one pointer and one shared offset
/// describe them all (rows j * NT / chunks-per-row apart).
void writeStridedLoader(CodeWriter &w, const KernelContext &ctx, const Operand &op,
                        const std::string &x, int freeTile, int64_t freeExtent,
                        const std::string &i0) {
  const bool vec = vectorizable(ctx.spec, op, freeExtent);
  const ChunkLayout l = chunkLayout(ctx, op, freeTile);
  w.line("// {}: {} tile, {} loads", x, op.kContig ? "K-contiguous" : "K-strided",
         vec ? "cp.async 16-byte" : "register-staged element");
  const ChunkExprs e = writeChunkSetup(w, ctx, op, x, l, freeExtent, i0);
  const std::string guard = l.affine || l.chunks % l.nt == 0
                                ? ""
                                : fmt::format("if (tid + j * {} >= {}) continue;", l.nt, l.chunks);
  if (vec)
    writeAsyncLoad(w, ctx, op, x, l, e, freeExtent, guard);
  else
    writeRegisterLoad(w, ctx, op, x, l, e, freeExtent, guard);
}

/// Conv's im2col operand B: each thread owns two adjacent columns (output pixels) and every
/// (NT / (BN/2))-th row of the tile; it loads element by element into registers.
void writeGatherLoader(CodeWriter &w, const KernelContext &ctx, const Operand &op) {
  const GemmSpec &s = ctx.spec;
  const ConvGather &g = *op.gather;
  const int nt = 32 * ctx.cfg.warpsM * ctx.cfg.warpsN;
  const int pairs = ctx.cfg.bn / 2, rg = nt / pairs, rpt = ctx.cfg.bk / rg;
  const std::string ptr = ctx.names.at(op.value);
  const bool f32 = s.dtype == DType::kF32;
  const int64_t ohw = g.oh * g.ow, hw = g.h * g.w;
  // 32-bit offsets unless the input is too large for them.
  const bool wide = g.images * g.channels * hw >= (int64_t{1} << 31);
  const char *off = wide ? "long long" : "int";
  w.line("// B: im2col gather of an NCHW image (2 columns x {} rows per thread)", rpt);
  w.line("const int gp = tid % {}, gk = tid / {};", pairs, pairs);
  w.line("{} gb[2];", off);
  w.line("int gih[2], giw[2];");
  w.line("#pragma unroll");
  {
    auto cols = w.block("for (int q = 0; q < 2; ++q)");
    w.line("const int n = n0 + 2 * gp + q;");
    w.line("const int img = n / {}, pix = n % {};", ohw, ohw);
    w.line("const int oh = pix / {}, ow = pix % {};", g.ow, g.ow);
    w.line("gih[q] = n < N ? oh * {} - {} : -0x3fffffff;", g.strideH, g.padH);
    w.line("giw[q] = ow * {} - {};", g.strideW, g.padW);
    w.line("gb[q] = n < N ? ({0})img * {1} + ({0})b * {2} + gih[q] * {3} + giw[q] : 0;", off,
           g.channels * hw, g.groupChannels * hw, g.w);
  }
  w.line("{} gr[{}];", f32 ? "uint2" : "unsigned", rpt);
  {
    auto load = w.blockSemi("auto B_load = [&](int, int kt)");
    w.line("#pragma unroll");
    auto rows = w.block("for (int r = 0; r < {}; ++r)", rpt);
    w.line("const int k = kt * BK + gk + r * {};", rg);
    w.line("const int c = k / {0}, rr = k % {0};", g.kh * g.kw);
    w.line("const int kh = rr / {0}, kw = rr % {0};", g.kw);
    w.line("const {} off = ({})c * {} + kh * {} + kw * {};", off, off, hw, g.dilationH * g.w,
           g.dilationW);
    w.line("unsigned v[2];");
    w.line("#pragma unroll");
    {
      auto cols = w.block("for (int q = 0; q < 2; ++q)");
      w.line("const int ih = gih[q] + kh * {}, iw = giw[q] + kw * {};", g.dilationH, g.dilationW);
      w.line("const bool p = k < K && (unsigned)ih < {}u && (unsigned)iw < {}u;", g.h, g.w);
      w.line("v[q] = p ? {} : 0u;", bitsOf(s.dtype, fmt::format("{}[gb[q] + off]", ptr)));
    }
    if (f32)
      w.line("gr[r] = make_uint2(v[0], v[1]);");
    else
      w.line("gr[r] = v[0] | (v[1] << 16);");
  }
  auto store = w.blockSemi("auto B_store = [&](int stage)");
  w.line("#pragma unroll");
  w.line("for (int r = 0; r < {}; ++r)", rpt);
  auto body = w.indented();
  w.line("*reinterpret_cast<{} *>(sB + stage * B_STAGE + (gk + r * {}) * B_PITCH + 2 * gp) = "
         "gr[r];",
         f32 ? "uint2" : "unsigned", rg);
}

} // namespace

void writeNhwcTap(CodeWriter &w, const ConvGather &g, const std::string &k) {
  w.line("const int tap = {1} / {0}, c = {1} - tap * {0};", g.channels, k);
  w.line("const int kh = tap / {0}, kw = tap - kh * {0};", g.kw);
}

namespace {

/// A channels-last conv's operand A: the im2col rows of an NHWC image (one row per output
/// pixel, K in kernel-row, kernel-column, channel order). A 16-byte chunk is 16 (int8) or 8
/// (f16/bf16) channels of one tap, so it is one cp.async (zero-filled in the padding); a thread's
/// chunks share one K column (the layout is affine, tileFits checks it), so the tap is worked out
/// once per K tile.
void writeNhwcLoader(CodeWriter &w, const KernelContext &ctx, const Operand &op) {
  const ConvGather &g = *op.nhwc;
  const ChunkLayout l = chunkLayout(ctx, op, ctx.cfg.bm);
  const std::string ptr = ctx.names.at(op.value);
  const bool wide = g.images * g.h * g.w * g.channels >= (int64_t{1} << 31);
  const char *off = wide ? "long long" : "int";
  w.line("// A: im2col rows of an NHWC image, cp.async 16-byte chunks ({} per thread)", l.cpt);
  w.line("const unsigned Au = dlc_smem_u32(sA);");
  w.line("const int Ar0 = tid / {0}, Ac0 = (tid % {0}) * {1};", l.cpr, l.ce);
  w.line("{} Abase[{}];", off, l.cpt);
  w.line("int Aih[{0}], Aiw[{0}];", l.cpt);
  w.line("#pragma unroll");
  {
    auto rows = w.block("for (int j = 0; j < {}; ++j)", l.cpt);
    w.line("const int m = m0 + Ar0 + j * {};", l.rs);
    w.line("const int img = m / {}, pix = m % {};", g.oh * g.ow, g.oh * g.ow);
    w.line("const int oh = pix / {}, ow = pix % {};", g.ow, g.ow);
    w.line("Aih[j] = m < M ? oh * {} - {} : -0x3fffffff;", g.strideH, g.padH);
    w.line("Aiw[j] = ow * {} - {};", g.strideW, g.padW);
    w.line("Abase[j] = m < M ? ({})img * {} : 0;", off, g.h * g.w * g.channels);
  }
  {
    auto load = w.blockSemi("auto A_load = [&](int stage, int kt)");
    w.line("const int k = kt * BK + Ac0;");
    writeNhwcTap(w, g, "k");
    w.line("#pragma unroll");
    auto chunks = w.block("for (int j = 0; j < {}; ++j)", l.cpt);
    w.line("const int ih = Aih[j] + kh * {}, iw = Aiw[j] + kw * {};", g.dilationH, g.dilationW);
    w.line("const bool p = k < K && (unsigned)ih < {}u && (unsigned)iw < {}u;", g.h, g.w);
    w.line("const {0} o = Abase[j] + (({0})ih * {1} + iw) * {2} + c;", off, g.w, g.channels);
    w.line("dlc_cp_async16(Au + (unsigned)(stage * A_STAGE + (Ar0 + j * {}) * A_PITCH + Ac0) * "
           "{}u, p ? (const void *)({} + o) : (const void *){}, p);",
           l.rs, l.eb, ptr, ptr);
  }
  w.line("auto A_store = [&](int) {{}};");
}

/// The body of `frag` for f16/bf16: ldmatrix (transposed for a K-strided tile).
void writeLdmatrixFragments(CodeWriter &w, bool aK, bool bK, bool s8) {
  // The second 8 x 8 b16 matrix along K starts `half` elements on; addresses are in bytes.
  const int half = s8 ? 16 : 8, eb = s8 ? 1 : 2;
  w.line("const unsigned aBase = dlc_smem_u32(As), bBase = dlc_smem_u32(Bs);");
  w.line("#pragma unroll");
  {
    auto rows = w.block("for (int mi = 0; mi < MI; ++mi)");
    if (aK) {
      w.line("const int r = wm * WM + mi * 16 + (lane & 15), c = ks + (lane >> 4) * {};", half);
      w.line("dlc_ldmatrix_x4(af[mi], aBase + (unsigned)(r * A_PITCH + c) * {}u);", eb);
    } else {
      w.line("const int kk = ks + (lane & 7) + ((lane >> 4) << 3);");
      w.line("const int r = wm * WM + mi * 16 + (((lane >> 3) & 1) << 3);");
      w.line("dlc_ldmatrix_x4_trans(af[mi], aBase + (unsigned)(kk * A_PITCH + r) * 2u);");
    }
  }
  w.line("#pragma unroll");
  auto cols = w.block("for (int nj = 0; nj < NI / 2; ++nj)");
  w.line("unsigned r4[4];");
  if (bK) {
    w.line("const int nn = wn * WN + nj * 16 + (lane & 7) + ((lane >> 4) << 3);");
    w.line("const int kk = ks + ((lane >> 3) & 1) * {};", half);
    w.line("dlc_ldmatrix_x4(r4, bBase + (unsigned)(nn * B_PITCH + kk) * {}u);", eb);
  } else {
    w.line("const int kk = ks + (lane & 7) + (((lane >> 3) & 1) << 3);");
    w.line("const int nn = wn * WN + nj * 16 + ((lane >> 4) << 3);");
    w.line("dlc_ldmatrix_x4_trans(r4, bBase + (unsigned)(kk * B_PITCH + nn) * 2u);");
  }
  w.line("bf[2 * nj][0] = r4[0];");
  w.line("bf[2 * nj][1] = r4[1];");
  w.line("bf[2 * nj + 1][0] = r4[2];");
  w.line("bf[2 * nj + 1][1] = r4[3];");
}

/// The body of `frag` for f32: TF32 fragments read element by element.
void writeTf32Fragments(CodeWriter &w, bool aK, bool bK) {
  w.line("const int g = lane >> 2, t = lane & 3;");
  w.line("#pragma unroll");
  {
    auto rows = w.block("for (int mi = 0; mi < MI; ++mi)");
    w.line("const int r = wm * WM + mi * 16 + g;");
    auto a = [&](const char *row, const char *k) {
      return aK ? fmt::format("dlc_to_tf32(As[({}) * A_PITCH + {}])", row, k)
                : fmt::format("dlc_to_tf32(As[({}) * A_PITCH + {}])", k, row);
    };
    w.line("af[mi][0] = {};", a("r", "ks + t"));
    w.line("af[mi][1] = {};", a("r + 8", "ks + t"));
    w.line("af[mi][2] = {};", a("r", "ks + t + 4"));
    w.line("af[mi][3] = {};", a("r + 8", "ks + t + 4"));
  }
  w.line("#pragma unroll");
  auto cols = w.block("for (int ni = 0; ni < NI; ++ni)");
  w.line("const int nn = wn * WN + ni * 8 + g;");
  auto b = [&](const char *k) {
    return bK ? fmt::format("dlc_to_tf32(Bs[nn * B_PITCH + {}])", k)
              : fmt::format("dlc_to_tf32(Bs[({}) * B_PITCH + nn])", k);
  };
  w.line("bf[ni][0] = {};", b("ks + t"));
  w.line("bf[ni][1] = {};", b("ks + t + 4"));
}

/// Lambdas `frag(stage, ks, af, bf)`: the warp's A and B fragments of one MMA K step from a
/// shared-memory stage, and `mma(af, bf)`: the warp tile's MMAs on them.
void writeFragments(CodeWriter &w, const KernelContext &ctx) {
  const GemmSpec &s = ctx.spec;
  const bool aK = s.a.kContig && !s.a.gather, bK = s.b.kContig && !s.b.gather;
  {
    auto frag = w.blockSemi(
        "auto frag = [&](int stage, int ks, unsigned (&af)[MI][4], unsigned (&bf)[NI][2])");
    w.line("const {0} *As = sA + stage * A_STAGE;", ctx.storage);
    w.line("const {0} *Bs = sB + stage * B_STAGE;", ctx.storage);
    if (s.dtype != DType::kF32)
      writeLdmatrixFragments(w, aK, bK, s.dtype == DType::kI8);
    else
      writeTf32Fragments(w, aK, bK);
  }
  const char *mma = s.dtype == DType::kF32    ? "dlc_mma_tf32"
                    : s.dtype == DType::kBF16 ? "dlc_mma_bf16"
                    : s.dtype == DType::kI8   ? "dlc_mma_s8"
                                              : "dlc_mma_f16";
  auto fn = w.blockSemi("auto mma = [&](const unsigned (&af)[MI][4], const unsigned (&bf)[NI][2])");
  w.line("#pragma unroll");
  w.line("for (int mi = 0; mi < MI; ++mi)");
  auto mi = w.indented();
  w.line("#pragma unroll");
  w.line("for (int ni = 0; ni < NI; ++ni)");
  auto ni = w.indented();
  w.line("{}(acc[mi][ni], af[mi], bf[ni][0], bf[ni][1]);", mma);
}

/// The software pipeline over the K tiles: the first STAGES - 1 tiles in flight, then per
/// tile its MMAs while the next tiles load. Fragments are double-buffered across K steps; the
/// last step of a tile waits for the next tile (one barrier per tile) and loads that tile's
/// first fragments before its own MMAs. While the first tiles load, before the barrier that
/// ends their wait, the block computes its epilogue scales' reciprocals (`late`) and fills a
/// deferred epilogue table (ctx.deferTableFill, once per block): its first loads then no
/// longer wait behind the epilogue's scalar loads and the fill.
void writeMainLoop(CodeWriter &w, const KernelContext &ctx, const CodeWriter &late) {
  w.line("#pragma unroll");
  {
    auto prologue = w.block("for (int st = 0; st < STAGES - 1; ++st)");
    {
      auto inRange = w.block("if (st < ktn)");
      w.line("A_load(st, kt0 + st);");
      w.line("B_load(st, kt0 + st);");
      w.line("A_store(st);");
      w.line("B_store(st);");
    }
    w.line("dlc_cp_async_commit();");
  }
  w.embed(late); // the epilogue scales' reciprocals, while the first tiles load
  if (ctx.deferTableFill) {
    if (ctx.spec.batch == 1)
      w.line("dlc_tab_fill();");
    else
      w.line("if (b == blockIdx.z) dlc_tab_fill();");
  }
  w.line("dlc_cp_async_wait<STAGES - 2>();");
  w.line("__syncthreads();");
  w.line("unsigned af[2][MI][4], bf[2][NI][2];");
  w.line("frag(0, 0, af[0], bf[0]);");
  auto tiles = w.block("for (int i = 0; i < ktn; ++i)");
  w.line("const int cur = i % STAGES, nx = i + STAGES - 1, ns = nx % STAGES;");
  {
    auto next = w.block("if (nx < ktn)");
    w.line("A_load(ns, kt0 + nx);");
    w.line("B_load(ns, kt0 + nx);");
  }
  w.line("dlc_cp_async_commit();");
  w.line("#pragma unroll");
  auto steps = w.block("for (int s = 0; s < KSTEPS; ++s)");
  {
    auto last = w.block("if (s == KSTEPS - 1)");
    {
      auto next = w.block("if (nx < ktn)");
      w.line("A_store(ns);");
      w.line("B_store(ns);");
    }
    w.line("dlc_cp_async_wait<STAGES - 2>();");
    w.line("__syncthreads();");
    w.line("if (i + 1 < ktn)");
    {
      auto then = w.indented();
      w.line("frag((i + 1) % STAGES, 0, af[(s + 1) & 1], bf[(s + 1) & 1]);");
    }
    last.chain("else");
    w.line("frag(cur, (s + 1) * KSTEP, af[(s + 1) & 1], bf[(s + 1) & 1]);");
  }
  w.line("mma(af[s & 1], bf[s & 1]);");
}

} // namespace

int elemBytes(DType t) { return t == DType::kF32 ? 4 : t == DType::kI8 ? 1 : 2; }

uint32_t tcSharedBytes(const GemmSpec &spec, const TileConfig &cfg) {
  const int pa = pitchOf(spec, cfg, spec.a, cfg.bm), pb = pitchOf(spec, cfg, spec.b, cfg.bn);
  const int sa = stageElems(cfg, spec.a, cfg.bm, pa), sb = stageElems(cfg, spec.b, cfg.bn, pb);
  return static_cast<uint32_t>(cfg.stages * (sa + sb) * elemBytes(spec.dtype));
}

Status writeTcKernel(CodeWriter &w, const KernelContext &ctx) {
  const GemmSpec &s = ctx.spec;
  const TileConfig &c = ctx.cfg;
  const int nt = 32 * c.warpsM * c.warpsN;
  const int pa = pitchOf(s, c, s.a, c.bm), pb = pitchOf(s, c, s.b, c.bn);
  auto fn = w.block("extern \"C\" __global__ void __launch_bounds__({}{}) {}({})", nt,
                    c.minBlocks > 0 ? fmt::format(", {}", c.minBlocks) : "", ctx.name, ctx.params);
  w.line("constexpr int BM = {}, BN = {}, BK = {}, STAGES = {};", c.bm, c.bn, c.bk, c.stages);
  w.line("constexpr int WM = {}, WN = {}, WARPS_M = {};", c.bm / c.warpsM, c.bn / c.warpsN,
         c.warpsM);
  const bool s8 = s.dtype == DType::kI8;
  w.line("constexpr int MI = WM / 16, NI = WN / 8, KSTEP = {}, KSTEPS = BK / KSTEP;",
         s.dtype == DType::kF32 ? 8
         : s8                   ? 32
                                : 16);
  w.line("constexpr int M = {}, N = {}, K = {};", s.m, s.n, s.k);
  w.line("constexpr int A_PITCH = {}, B_PITCH = {};", pa, pb);
  w.line("constexpr int A_STAGE = {}, B_STAGE = {};", stageElems(c, s.a, c.bm, pa),
         stageElems(c, s.b, c.bn, pb));
  w.line("extern __shared__ __align__(16) unsigned char dlc_smem[];");
  w.line("{0} *sA = reinterpret_cast<{0} *>(dlc_smem);", ctx.storage);
  w.line("{} *sB = sA + STAGES * A_STAGE;", ctx.storage);
  w.line("const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;");
  w.line("const int wm = warp % WARPS_M, wn = warp / WARPS_M;");
  w.line("(void)lane;");
  writeRaster(w, ctx.tilesM, ctx.tilesN);
  w.line("const int m0 = tm * BM, n0 = tn * BN;");
  w.line("const int kt0 = blockIdx.y * {};", ctx.kTilesPerSplit);
  w.line("const int ktn = min({} - kt0, {});", ctx.kTiles, ctx.kTilesPerSplit);
  CodeWriter late;
  if (c.splitK == 1)
    DLC_RETURN_IF_ERROR(writeEpilogueLambdas(w, ctx, &late));
  auto batch = w.block("for (long long b = blockIdx.z; b < {}LL; b += gridDim.z)", s.batch);
  if (ctx.prefetchPasses > 0)
    writeEpiloguePrefetch(w, ctx);
  if (s.a.nhwc)
    writeNhwcLoader(w, ctx, s.a);
  else
    writeStridedLoader(w, ctx, s.a, "A", c.bm, s.m, "m0");
  if (s.b.gather)
    writeGatherLoader(w, ctx, s.b);
  else
    writeStridedLoader(w, ctx, s.b, "B", c.bn, s.n, "n0");
  w.line("{} acc[MI][NI][4];", s.accType());
  w.line("#pragma unroll");
  w.line("for (int mi = 0; mi < MI; ++mi)");
  w.line("#pragma unroll");
  w.line("  for (int ni = 0; ni < NI; ++ni)");
  w.line("#pragma unroll");
  w.line("    for (int q = 0; q < 4; ++q)");
  w.line("      acc[mi][ni][q] = 0;");
  writeFragments(w, ctx);
  writeMainLoop(w, ctx, late);
  w.line("dlc_cp_async_wait<0>();");
  w.line("__syncthreads();");
  writeOpaqueOrigin(w);
  if (ctx.stagedV > 0) {
    writeStagedStore(w, ctx);
    // The next batch's loads refill the slabs: every lane is past its last slab read.
    if (s.batch > 1)
      w.line("__syncthreads();");
    return Status::ok();
  }
  w.line("#pragma unroll");
  auto rows = w.block("for (int mi = 0; mi < MI; ++mi)");
  w.line("#pragma unroll");
  auto cols = w.block("for (int ni = 0; ni < NI; ++ni)");
  w.line("#pragma unroll");
  auto half = w.block("for (int h = 0; h < 2; ++h)");
  w.line("const int row = m0e + wm * WM + mi * 16 + (lane >> 2) + h * 8;");
  w.line("const int col = n0e + wn * WN + ni * 8 + (lane & 3) * 2;");
  writeAccStore(w, ctx, "row", "col", "acc[mi][ni][2 * h]", "acc[mi][ni][2 * h + 1]");
  return Status::ok();
}

} // namespace dlc::codegen::gemm
