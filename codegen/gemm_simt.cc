// The f32 SIMT main kernel (see gemm_kernel.h): 16 x 16 threads, each computing a
// (BM/16) x (BN/16) block of outputs with fused multiply-adds, K in tiles of 8 through two
// shared-memory buffers (A stored K-major, B row-major, both read as float4). Global loads go
// element by element into registers during the previous tile's math, so any layout, edge and
// alignment, and conv's im2col gather, take the same path.
#include <fmt/format.h>

#include "codegen/gemm_writer.h"

namespace dlc::codegen::gemm {
namespace {

constexpr int kThreads = 256;

/// Loader of strided operand `op` into shared array `arr` ([2][BK][tile + 4]).
void writeStrided(CodeWriter &w, const KernelContext &ctx, const Operand &op, const std::string &x,
                  int tile, int64_t extent, const std::string &i0) {
  const int bk = ctx.cfg.bk, count = tile * bk / kThreads;
  const std::string ptr = ctx.names.at(op.value);
  const std::string boff = op.batchOffset == "0" ? "0" : "(" + op.batchOffset + ")";
  w.line("const float *{}g[{}];", x, count);
  w.line("int {0}r[{1}], {0}kk[{1}], {0}i[{1}];", x, count);
  w.line("#pragma unroll");
  {
    auto loop = w.block("for (int j = 0; j < {}; ++j)", count);
    w.line("const int e = tid + j * {};", kThreads);
    if (op.kContig) {
      w.line("{}r[j] = e / {};", x, bk);
      w.line("{}kk[j] = e % {};", x, bk);
    } else {
      w.line("{}r[j] = e % {};", x, tile);
      w.line("{}kk[j] = e / {};", x, tile);
    }
    w.line("{}i[j] = {} + {}r[j];", x, i0, x);
    std::string iv = fmt::format("({0}i[j] < {1} ? {0}i[j] : 0)", x, extent);
    if (op.kContig)
      w.line("{}g[j] = {} + {} + (long long){} * {}LL;", x, ptr, boff, iv, op.ld);
    else if (op.split)
      w.line("{0}g[j] = {1} + {2} + (long long)({3} / {4}) * {5}LL + {3} % {4};", x, ptr, boff, iv,
             op.split, op.splitStride);
    else
      w.line("{}g[j] = {} + {} + {};", x, ptr, boff, iv);
  }
  w.line("float {}v[{}];", x, count);
  {
    auto load = w.blockSemi("auto {}_load = [&](int kt)", x);
    w.line("#pragma unroll");
    auto loop = w.block("for (int j = 0; j < {}; ++j)", count);
    w.line("const int k = kt * {} + {}kk[j];", bk, x);
    w.line("{0}v[j] = {0}i[j] < {1} && k < K ? {0}g[j][{2}] : 0.f;", x, extent,
           op.kContig ? "k" : fmt::format("(long long)k * {}LL", op.ld));
  }
  auto store = w.blockSemi("auto {}_store = [&](int s)", x);
  w.line("#pragma unroll");
  w.line("for (int j = 0; j < {}; ++j)", count);
  auto body = w.indented();
  w.line("s{0}[s][{0}kk[j]][{0}r[j]] = {0}v[j];", x);
}

void writeGather(CodeWriter &w, const KernelContext &ctx, const Operand &op) {
  const ConvGather &g = *op.gather;
  const int bk = ctx.cfg.bk, bn = ctx.cfg.bn, count = bn * bk / kThreads, step = kThreads / bn;
  const std::string ptr = ctx.names.at(op.value);
  const int64_t ohw = g.oh * g.ow, hw = g.h * g.w;
  w.line("const int gc = tid % {}, gk = tid / {};", bn, bn);
  w.line("int gih, giw;");
  w.line("long long gb;");
  {
    auto pixel = w.block("");
    w.line("const int n = n0 + gc;");
    w.line("const int img = n / {}, pix = n % {};", ohw, ohw);
    w.line("const int oh = pix / {}, ow = pix % {};", g.ow, g.ow);
    w.line("gih = n < N ? oh * {} - {} : -0x3fffffff;", g.strideH, g.padH);
    w.line("giw = ow * {} - {};", g.strideW, g.padW);
    w.line("gb = n < N ? (long long)img * {}LL + b * {}LL + (long long)gih * {} + giw : 0;",
           g.channels * hw, g.groupChannels * hw, g.w);
  }
  w.line("float Bv[{}];", count);
  {
    auto load = w.blockSemi("auto B_load = [&](int kt)");
    w.line("#pragma unroll");
    auto loop = w.block("for (int j = 0; j < {}; ++j)", count);
    w.line("const int k = kt * {} + gk + j * {};", bk, step);
    w.line("const int c = k / {0}, rr = k % {0};", g.kh * g.kw);
    w.line("const int kh = rr / {0}, kw = rr % {0};", g.kw);
    w.line("const int ih = gih + kh * {}, iw = giw + kw * {};", g.dilationH, g.dilationW);
    w.line("const bool p = k < K && (unsigned)ih < {}u && (unsigned)iw < {}u;", g.h, g.w);
    w.line("Bv[j] = p ? {}[gb + (long long)c * {} + kh * {} + kw * {}] : 0.f;", ptr, hw,
           g.dilationH * g.w, g.dilationW);
  }
  auto store = w.blockSemi("auto B_store = [&](int s)");
  w.line("#pragma unroll");
  w.line("for (int j = 0; j < {}; ++j)", count);
  auto body = w.indented();
  w.line("sB[s][gk + j * {}][gc] = Bv[j];", step);
}

/// One K tile of the SIMT kernel's math: per kk, float4 reads of A and B from shared memory and
/// the thread's TM x TN fused multiply-adds.
void writeTileMath(CodeWriter &w) {
  w.line("#pragma unroll");
  auto steps = w.block("for (int kk = 0; kk < BK; ++kk)");
  w.line("float a[TM], bb[TN];");
  for (const char *op : {"A", "B"}) {
    const bool isA = op[0] == 'A';
    w.line("#pragma unroll");
    auto quad = w.block("for (int h = 0; h < {} / 4; ++h)", isA ? "TM" : "TN");
    w.line("const float4 t4 = *reinterpret_cast<const float4 *>(&s{}[s][kk][{} * 4 + h * 64]);", op,
           isA ? "ty" : "tx");
    const char *r = isA ? "a" : "bb";
    w.line("{}[4 * h] = t4.x;", r);
    w.line("{}[4 * h + 1] = t4.y;", r);
    w.line("{}[4 * h + 2] = t4.z;", r);
    w.line("{}[4 * h + 3] = t4.w;", r);
  }
  w.line("#pragma unroll");
  w.line("for (int im = 0; im < TM; ++im)");
  auto im = w.indented();
  w.line("#pragma unroll");
  w.line("for (int in = 0; in < TN; ++in)");
  auto in = w.indented();
  w.line("acc[im][in] = fmaf(a[im], bb[in], acc[im][in]);");
}

} // namespace

Status writeSimtKernel(CodeWriter &w, const KernelContext &ctx) {
  const GemmSpec &s = ctx.spec;
  const TileConfig &c = ctx.cfg;
  auto fn = w.block("extern \"C\" __global__ void __launch_bounds__({}) {}({})", kThreads, ctx.name,
                    ctx.params);
  w.line("constexpr int BM = {}, BN = {}, BK = {}, TM = BM / 16, TN = BN / 16;", c.bm, c.bn, c.bk);
  w.line("constexpr int M = {}, N = {}, K = {};", s.m, s.n, s.k);
  w.line("__shared__ __align__(16) float sA[2][BK][BM + 4];");
  w.line("__shared__ __align__(16) float sB[2][BK][BN + 4];");
  w.line("const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;");
  writeRaster(w, ctx.tilesM, ctx.tilesN);
  w.line("const int m0 = tm * BM, n0 = tn * BN;");
  w.line("const int kt0 = blockIdx.y * {};", ctx.kTilesPerSplit);
  w.line("const int ktn = min({} - kt0, {});", ctx.kTiles, ctx.kTilesPerSplit);
  if (c.splitK == 1)
    DLC_RETURN_IF_ERROR(writeEpilogueLambdas(w, ctx));
  auto batch = w.block("for (long long b = blockIdx.z; b < {}LL; b += gridDim.z)", s.batch);
  writeStrided(w, ctx, s.a, "A", c.bm, s.m, "m0");
  if (s.b.gather)
    writeGather(w, ctx, s.b);
  else
    writeStrided(w, ctx, s.b, "B", c.bn, s.n, "n0");
  w.line("float acc[TM][TN];");
  w.line("#pragma unroll");
  w.line("for (int im = 0; im < TM; ++im)");
  w.line("#pragma unroll");
  w.line("  for (int in = 0; in < TN; ++in)");
  w.line("    acc[im][in] = 0.f;");
  {
    auto first = w.block("if (ktn > 0)");
    w.line("A_load(kt0);");
    w.line("B_load(kt0);");
    w.line("A_store(0);");
    w.line("B_store(0);");
  }
  w.line("__syncthreads();");
  {
    auto tiles = w.block("for (int i = 0; i < ktn; ++i)");
    w.line("const int s = i & 1;");
    {
      auto next = w.block("if (i + 1 < ktn)");
      w.line("A_load(kt0 + i + 1);");
      w.line("B_load(kt0 + i + 1);");
    }
    writeTileMath(w);
    {
      auto next = w.block("if (i + 1 < ktn)");
      w.line("A_store(s ^ 1);");
      w.line("B_store(s ^ 1);");
    }
    w.line("__syncthreads();");
  }
  writeOpaqueOrigin(w);
  w.line("#pragma unroll");
  auto rows = w.block("for (int im = 0; im < TM; ++im)");
  w.line("#pragma unroll");
  auto cols = w.block("for (int in = 0; in < TN; in += 2)");
  w.line("const int row = m0e + ty * 4 + (im >> 2) * 64 + (im & 3);");
  w.line("const int col = n0e + tx * 4 + (in >> 2) * 64 + (in & 3);");
  writeAccStore(w, ctx, "row", "col", "acc[im][in]", "acc[im][in + 1]");
  return Status::ok();
}

} // namespace dlc::codegen::gemm
