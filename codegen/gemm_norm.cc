// A GEMM group that ends in a layer norm (FusedGroup::norm, fuse{gemm-layer-norm}): a
// transformer's projection with its residual add, then the next block's LayerNormalization
// over the hidden size. Where the Hopper family can hold a row tile's column tiles in one
// thread-block cluster (at most 8 CTAs: N <= 8 x BN), the GEMM kernel normalizes its own rows:
// after each tile's epilogue has stored the layer norm's input, the cluster's CTAs meet on an
// mbarrier and each normalizes a share of the tile's rows, reading them back from L2
// (dlc_sm90::gemm's ROWS, this file's norm_tail). The layer norm's kernel and its launch go
// away, and so does the wait for the whole GEMM before any row is normalized. Elsewhere the
// group runs as two kernels: the GEMM, then the reduction family's layer norm.
//
// The tail computes what the layer-norm kernel computes (codegen/reduction_rows.cc), in the
// same order: each lane sums its 8-column chunks of the row, the warp adds the lanes' sums by
// butterfly, then the squared deviations the same way; so the fused kernel's results equal the
// two kernels' bit for bit.
#include <fmt/format.h>

#include <algorithm>

#include "codegen/elementwise_expr.h"
#include "codegen/emitters.h"
#include "codegen/gemm_writer.h"

namespace dlc::codegen::gemm {

void normParams(const KernelContext &ctx, std::vector<std::string> &decls,
                std::vector<KernelParam> &params) {
  const Node &ln = *ctx.norm;
  decls.push_back(paramDecl(ln.input(1), "ln_scale", false));
  params.push_back({ln.input(1), -1, false});
  if (ln.hasInput(2)) {
    decls.push_back(paramDecl(ln.input(2), "ln_bias", false));
    params.push_back({ln.input(2), -1, false});
  }
  decls.push_back(paramDecl(ln.output(0), "ln_out", true));
  params.push_back({ln.output(0), -1, true});
}

void writeNormTail(CodeWriter &w, const KernelContext &ctx) {
  const Node &ln = *ctx.norm;
  const int64_t n = ctx.spec.n, chunks = (n / 8 + 31) / 32; // 8-column chunks per lane
  const int rows = ctx.cfg.rowCluster;
  const int perWarp = (128 + rows * 8 - 1) / (rows * 8); // rows of the tile per consumer warp
  const std::string t = cudaStorageType(ln.output(0)->dtype());
  auto lit = [](double v) { return cudaLiteral(v, DType::kF32); };
  // Rows rank + ROWS (cw + 8 i) of the tile: each consumer warp normalizes its perWarp rows
  // together (their loads in flight at once), what the cluster's CTAs stored, read from L2
  // (ld.global.cg: another SM's stores are not in this one's L1). A chunk past the row (N not
  // a multiple of 256 columns) is skipped.
  auto tail = w.blockSemi("auto norm_tail = [&](const dlc_sm90::Tile<{}> &x, int cw, int lane)",
                          ctx.storage);
  w.line("const int rank = {};", rows > 1 ? "(int)dlc_sm90::cluster_rank()" : "0");
  w.line("constexpr int RPW = {}, CH = {};", perWarp, chunks);
  const std::string inRow = n % 256 != 0 ? "c < N" : "true";
  w.line("bool ok[RPW];");
  w.line("long long base[RPW];");
  w.line("float v[RPW][CH * 8], sum[RPW], dev[RPW];");
  w.line("#pragma unroll");
  {
    auto i = w.block("for (int i = 0; i < RPW; ++i)");
    w.line("const int r = rank + ROWS * (cw + 8 * i);");
    w.line("ok[i] = r < 128 && x.m0 + r < M;");
    w.line("base[i] = (long long)(x.m0 + r) * N;");
    w.line("sum[i] = 0.f;");
    w.line("dev[i] = 0.f;");
    w.line("#pragma unroll");
    auto k = w.block("for (int k = 0; k < CH; ++k)");
    w.line("const int c = (lane + 32 * k) * 8;");
    w.line("uint4 q = make_uint4(0u, 0u, 0u, 0u);");
    w.line("if (ok[i] && {})", inRow);
    w.line("  q = dlc_sm90::load_cg16(out0 + base[i] + c);");
    w.line("const {0} *e = reinterpret_cast<const {0} *>(&q);", t);
    w.line("#pragma unroll");
    w.line("for (int j = 0; j < 8; ++j)");
    w.line("  v[i][k * 8 + j] = dlc_load(e[j]);");
  }
  // The sums in the layer-norm kernel's order: each lane's chunks, then the butterfly.
  auto perRow = [&](auto body) {
    w.line("#pragma unroll");
    auto i = w.block("for (int i = 0; i < RPW; ++i)");
    body();
  };
  auto eachValue = [&](const char *stmt) {
    w.line("#pragma unroll");
    auto k = w.block("for (int k = 0; k < CH; ++k)");
    if (n % 256 != 0)
      w.line("if ((lane + 32 * k) * 8 >= N) continue;");
    w.line("#pragma unroll");
    w.line("for (int j = 0; j < 8; ++j)");
    w.line("  {}", stmt);
  };
  auto butterfly = [&](const char *x) {
    w.line("#pragma unroll");
    w.line("for (int off = 16; off > 0; off >>= 1)");
    w.line("  {0}[i] += __shfl_xor_sync(0xffffffffu, {0}[i], off);", x);
  };
  perRow([&] { eachValue("sum[i] += v[i][k * 8 + j];"); });
  perRow([&] {
    butterfly("sum");
    w.line("sum[i] = sum[i] / {};", lit(static_cast<double>(n))); // the mean from here on
  });
  perRow([&] { eachValue("dev[i] += (v[i][k * 8 + j] - sum[i]) * (v[i][k * 8 + j] - sum[i]);"); });
  perRow([&] {
    butterfly("dev");
    w.line("dev[i] = {} / sqrt(dev[i] / {} + {});", lit(1), lit(static_cast<double>(n)),
           lit(ln.getFloat("epsilon"))); // the inverse deviation from here on
  });
  // y = (x - mean) invStd scale + bias, 8 columns a store.
  w.line("#pragma unroll");
  auto k = w.block("for (int k = 0; k < CH; ++k)");
  w.line("const int c = (lane + 32 * k) * 8;");
  if (n % 256 != 0)
    w.line("if (c >= N) continue;");
  w.line("const uint4 gq = *reinterpret_cast<const uint4 *>(ln_scale + c);");
  w.line("const {0} *ga = reinterpret_cast<const {0} *>(&gq);", t);
  if (ln.hasInput(2)) {
    w.line("const uint4 bq = *reinterpret_cast<const uint4 *>(ln_bias + c);");
    w.line("const {0} *be = reinterpret_cast<const {0} *>(&bq);", t);
  }
  w.line("#pragma unroll");
  auto i = w.block("for (int i = 0; i < RPW; ++i)");
  w.line("if (!ok[i])");
  w.line("  continue;");
  w.line("uint4 oq;");
  w.line("{0} *o = reinterpret_cast<{0} *>(&oq);", t);
  w.line("#pragma unroll");
  w.line("for (int j = 0; j < 8; ++j)");
  w.line("  o[j] = dlc_store<{}>((v[i][k * 8 + j] - sum[i]) * dev[i] * dlc_load(ga[j]){});", t,
         ln.hasInput(2) ? " + dlc_load(be[j])" : "");
  w.line("*reinterpret_cast<uint4 *>(ln_out + base[i] + c) = oq;");
}

namespace {

/// Kernel parameters bound to `v` read a scratch buffer of the set instead (a value no other
/// group reads, which plan-memory gives no memory).
void toScratch(KernelSet &set, const Value *v) {
  const int index = static_cast<int>(set.scratchBytes.size());
  set.scratchBytes.push_back(static_cast<uint64_t>(v->shape().numElements().value_or(0)) *
                             dtypeSize(v->dtype()));
  for (Kernel &k : set.kernels)
    for (KernelParam &p : k.params)
      if (p.value == v && !p.map) {
        p.value = nullptr;
        p.scratch = index;
      }
}

} // namespace

Expected<KernelSet> writeNormGemm(const FusedGroup &group, const GemmSpec &specIn,
                                  const EmitOptions &opts, const std::optional<TileConfig> &cfgIn) {
  const Node &ln = *group.norm;
  const Value *x = ln.input(0), *y = ln.output(0);
  // The GEMM and its epilogue, whose result is the layer norm's input.
  FusedGroup gemm;
  gemm.id = group.id;
  gemm.name = group.name;
  gemm.anchor = group.anchor;
  for (const Node *n : group.nodes)
    if (n != &ln)
      gemm.nodes.push_back(n);
  for (const Value *v : group.inputs)
    if (std::any_of(gemm.nodes.begin(), gemm.nodes.end(), [&](const Node *n) {
          const auto &ins = n->inputs();
          return std::find(ins.begin(), ins.end(), v) != ins.end();
        }))
      gemm.inputs.push_back(v);
  gemm.outputs = {x};
  if (group.outputs.empty() || !group.writes(y) || !x->producer() || !gemm.contains(x->producer()))
    return internalError("group '{}': the layer norm {} does not end the group", group.name,
                         ln.describe());

  // The GEMM part's spec as writeGemmKernels completes it, so that the cost model prices
  // what will run.
  GemmSpec spec = groupSpec(gemm, specIn);
  std::optional<TileConfig> cfg = cfgIn;
  if (!cfg) {
    // The cost model's GEMM times with and without the clusters (which take tiles of at least
    // N / 8 columns: BERT's 1024 x 768 products then run 64 CTAs of 128 x 96 where 96 of
    // 128 x 64 would run), against the layer norm's kernel: a launch's gap (about 2 us) and
    // its read and write of the rows; the fused kernel's tail priced at 0.5 us. That price is
    // the guess that made the option lose on an H100 (session 43): ViT's fused
    // down-projection took 0.029 ms in --profile against 0.023 for the GEMM alone and about
    // 0.0056 for the layer norm's kernel, so the barrier and the tail cost about 6 us.
    // The plain tile is kept for the two-kernel form (chosen once).
    double plain = 0;
    cfg = chooseTile(spec, opts, &plain);
    if (opts.hopperGemms()) {
      double fused = 0;
      GemmSpec rows = spec;
      rows.maxTilesN = 8;
      const TileConfig c = chooseTile(rows, opts, &fused);
      const double norm =
          2e-6 + 2.0 * double(spec.m) * double(spec.n) * double(dtypeSize(x->dtype())) / 3.5e12;
      std::string why;
      if (c.rowCluster > 0 && tileFits(rows, c, opts, &why) && fused + 0.5e-6 < plain + norm)
        cfg = c;
    }
  }
  KernelSet set;
  if (cfg->rowCluster > 0) {
    DLC_ASSIGN_OR_RETURN(set, writeGemmKernels(gemm, spec, opts, cfg, &ln));
  } else {
    // Two kernels: the GEMM, then the layer norm as its own group would run it.
    DLC_ASSIGN_OR_RETURN(set, writeGemmKernels(gemm, spec, opts, cfg, nullptr));
    FusedGroup norm;
    norm.id = group.id;
    norm.name = group.name + "_norm";
    norm.anchor = &ln;
    norm.nodes = {&ln};
    for (const Value *v : ln.inputs())
      if (v && std::find(norm.inputs.begin(), norm.inputs.end(), v) == norm.inputs.end())
        norm.inputs.push_back(v);
    norm.outputs = {y};
    DLC_ASSIGN_OR_RETURN(KernelSet second, emitGroup(norm, opts));
    const int offset = static_cast<int>(set.scratchBytes.size());
    for (Kernel &k : second.kernels) {
      for (KernelParam &p : k.params)
        if (!p.value && p.scratch >= 0)
          p.scratch += offset;
      set.kernels.push_back(std::move(k));
    }
    set.scratchBytes.insert(set.scratchBytes.end(), second.scratchBytes.begin(),
                            second.scratchBytes.end());
    set.zeroedBytes = std::max(set.zeroedBytes, second.zeroedBytes);
  }
  // Read only by the layer norm: the group's scratch.
  if (!group.writes(x))
    toScratch(set, x);
  return set;
}

} // namespace dlc::codegen::gemm
