// The GEMM epilogue writers (see gemm_writer.h): the per-element epilogue body (alpha,
// addends, the group's elementwise nodes, the store), the fragment-order store of the
// accumulators, and the staged epilogue through shared memory.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "codegen/cuda_prelude.h"
#include "codegen/elementwise_chain.h"
#include "codegen/emitters.h"
#include "codegen/gemm_writer.h"

namespace dlc::codegen::gemm {

std::string outColOffset(const KernelContext &ctx, const std::string &col) {
  const GemmSpec &spec = ctx.spec;
  const char *t = ctx.narrow ? "int" : "long long";
  if (spec.outSplit == 0)
    return fmt::format("({})({})", t, col);
  return fmt::format("(({})(({}) / {}) * {} + ({}) % {})", t, col, spec.outSplit,
                     spec.outSplitStride, col, spec.outSplit);
}

std::string indexType(const KernelContext &ctx) { return ctx.narrow ? "int" : "long long"; }

std::string outBatchExpr(const KernelContext &ctx) {
  const GemmSpec &s = ctx.spec;
  if (!s.outBatchOffset.empty())
    return fmt::format("({})({})", indexType(ctx), s.outBatchOffset);
  return fmt::format("({})b * {}", indexType(ctx), s.outBatchStride);
}

void writeAccStore(CodeWriter &w, const KernelContext &ctx, const std::string &row,
                   const std::string &col, const std::string &v0, const std::string &v1) {
  const GemmSpec &s = ctx.spec;
  const bool split = ctx.cfg.splitK > 1;
  // Where the tiles cover M (N) exactly, every row (column) is inside and takes no test: the
  // epilogue's loads (bias, residual, scales) are then in one block, free to be issued together
  // instead of one branch's latency after another.
  std::optional<CodeWriter::Scope> inRows;
  if (s.m % ctx.cfg.bm != 0)
    inRows.emplace(w.block("if ({} < {})", row, s.m));
  const bool colsInside = s.n % ctx.cfg.bn == 0;
  w.line("const {0} ob = {1} + ({0})({2}) * {3};", indexType(ctx), outBatchExpr(ctx), row,
         s.outRowStride);
  const std::string c0 = outColOffset(ctx, col), c1 = outColOffset(ctx, col + " + 1");
  if (split) {
    const char *acc = s.accType();
    w.line("{} *wp = ws + (long long)blockIdx.y * {}LL;", acc, ctx.total);
    if (ctx.outPairs && ctx.total % 2 == 0) {
      w.line("if ({0} + 1 < {1}) *reinterpret_cast<{5}2 *>(wp + ob + {2}) = make_{5}2({3}, {4});",
             col, s.n, c0, v0, v1, acc);
      w.line("else if ({} < {}) wp[ob + {}] = {};", col, s.n, c0, v0);
    } else {
      w.line("if ({} < {}) wp[ob + {}] = {};", col, s.n, c0, v0);
      w.line("if ({} + 1 < {}) wp[ob + {}] = {};", col, s.n, c1, v1);
    }
  } else if (ctx.outPairs && colsInside) {
    w.line("dlc_ep2({}, {}, ob + {});", v0, v1, c0);
  } else if (ctx.outPairs && s.n % 2 == 0) { // col is even: no lone last column
    w.line("if ({} < {}) dlc_ep2({}, {}, ob + {});", col, s.n, v0, v1, c0);
  } else if (ctx.outPairs) {
    w.line("if ({0} + 1 < {1}) dlc_ep2({2}, {3}, ob + {4});", col, s.n, v0, v1, c0);
    w.line("else if ({} < {}) dlc_ep({}, ob + {});", col, s.n, v0, c0);
  } else {
    w.line("if ({} < {}) dlc_ep({}, ob + {});", col, s.n, v0, c0);
    w.line("if ({} + 1 < {}) dlc_ep({}, ob + {});", col, s.n, v1, c1);
  }
}

namespace {

std::string epilogueOffset(const KernelContext &ctx, const std::vector<int64_t> &in,
                           const std::vector<int64_t> &out, const std::string &idx) {
  // Narrow kernels: every offset is below 2^31, so 32-bit arithmetic.
  return broadcastOffset(in, out, idx, !ctx.narrow);
}

Hoisted writeHoistedScalars(CodeWriter &w, const KernelContext &ctx, CodeWriter *late = nullptr) {
  // A deferred table fill loads its own operands (writeEpilogueLambdas): hoisted here, one
  // that only the table reads would make the block wait for it before its first tile loads
  // (a quantization scale's reciprocal is computed, and branched on, where it is declared).
  auto tableOnly = [&](const Value *v) {
    if (!ctx.table || !ctx.deferTableFill)
      return false;
    const std::vector<const Node *> &tail = ctx.table->nodes;
    return std::all_of(v->uses().begin(), v->uses().end(), [&](const Use &u) {
      return std::find(tail.begin(), tail.end(), u.node) != tail.end() ||
             !ctx.group.contains(u.node);
    });
  };
  return codegen::writeHoistedScalars(
      w, ctx.group,
      [&](const Value *v) -> std::string {
        auto it = ctx.names.find(v);
        return it == ctx.names.end() || tableOnly(v) ? "" : it->second;
      },
      late);
}

/// How an epilogue operand varies over a staged-epilogue chunk (stagedV adjacent outputs
/// starting at a multiple of stagedV).
enum class ChunkAccess {
  kFull,     // as many elements as the output: the chunk's own V elements
  kRow,      // equal to the output on trailing dims of product Q (Q % V == 0) and 1 before:
             // V adjacent elements from oidx % Q (a bias or per-channel scale along N)
  kConstant, // 1 on trailing dims of product P (P % V == 0): one element for the chunk
  kOther,
};

struct ChunkOperand {
  ChunkAccess access;
  int64_t q = 0; // kRow: the period
};

ChunkOperand chunkAccess(const std::vector<int64_t> &in, const std::vector<int64_t> &out, int v) {
  auto count = [](const std::vector<int64_t> &s) {
    int64_t n = 1;
    for (int64_t d : s)
      n *= d;
    return n;
  };
  if (count(in) == count(out))
    return {ChunkAccess::kFull};
  const int rank = static_cast<int>(out.size()), lead = rank - static_cast<int>(in.size());
  auto inDim = [&](int d) { return d < lead ? int64_t{1} : in[d - lead]; };
  int64_t p = 1;
  for (int d = rank - 1; d >= 0 && inDim(d) == 1; --d)
    p *= out[d];
  if (p % v == 0)
    return {ChunkAccess::kConstant};
  int64_t q = 1;
  int d = rank - 1;
  for (; d >= 0 && inDim(d) == out[d]; --d)
    q *= out[d];
  for (int e = d; e >= 0; --e)
    if (inDim(e) != 1)
      return {ChunkAccess::kOther};
  return q % v == 0 ? ChunkOperand{ChunkAccess::kRow, q} : ChunkOperand{ChunkAccess::kOther};
}

/// The staged epilogue's element loop reads its operands from registers filled before the loop:
/// `v_<param>` (kFull) and `r_<param>` (kRow) by vector loads, `c_<param>` (kConstant) by one
/// load; element `lane` inside the loop.
struct VecOperands {
  std::string lane;
  int width = 0;
  std::string rowLane; // the element of r_<param> where it holds a sub-chunk; else `lane`
  std::map<std::string, std::pair<const Value *, ChunkOperand>> used; // by parameter name
  std::map<std::string, std::string> constants; // parameter name -> the chunk's offset
};

/// The epilogue of one element: alpha, addends, the elementwise chain; returns the final
/// expression. `acc` names the accumulator, `oidx` the flat output offset expression. With
/// `vec`, operands broadcast as the identity (as many elements as the output) are read from
/// the vector registers instead, and recorded in vec->used.
Expected<std::string> writeEpilogueBody(CodeWriter &w, const KernelContext &ctx,
                                        const Hoisted &hoisted, const std::string &acc,
                                        const std::string &oidx, const std::string &prefix,
                                        VecOperands *vec = nullptr) {
  const GemmSpec &s = ctx.spec;
  const Value *out = ctx.group.outputs[0];
  const std::vector<int64_t> outShape = staticSizes(out);
  auto operand = [&](const Value *val, const std::string &name, const std::vector<int64_t> &shape) {
    if (vec) {
      const ChunkOperand c = chunkAccess(shape, outShape, vec->width);
      switch (c.access) {
      case ChunkAccess::kFull:
      case ChunkAccess::kRow:
        vec->used[name] = {val, c};
        return fmt::format(
            "dlc_load({}_{}.v[{}])", c.access == ChunkAccess::kFull ? "v" : "r", name,
            c.access == ChunkAccess::kRow && !vec->rowLane.empty() ? vec->rowLane : vec->lane);
      case ChunkAccess::kConstant:
        vec->constants[name] = epilogueOffset(ctx, shape, outShape, "oidx");
        return fmt::format("c_{}", name);
      case ChunkAccess::kOther:
        break;
      }
    }
    return loadExpr(name, epilogueOffset(ctx, shape, outShape, oidx));
  };
  std::string v = prefix + "a";
  std::string init =
      s.alpha == 1.0 ? acc : fmt::format("{} * {}", acc, cudaLiteral(s.alpha, DType::kF32));
  // An int8 product's int32 accumulator stays an int until the epilogue's cast (exact).
  w.line("{} {} = {};", s.accType(), v, init);
  for (const Addend &ad : s.addends) {
    std::string load = operand(ad.value, ctx.names.at(ad.value), ad.shape);
    if (ad.coef == 1.0)
      w.line("{} += {};", v, load);
    else
      w.line("{} += {} * {};", v, cudaLiteral(ad.coef, DType::kF32), load);
  }
  const Node *anchor = ctx.group.anchor;
  std::vector<const Node *> chain;
  for (const Node *n : ctx.group.nodes)
    if (n != anchor &&
        !(ctx.table && std::count(ctx.table->nodes.begin(), ctx.table->nodes.end(), n)))
      chain.push_back(n);
  ValueEnv env;
  env[anchor->output(0)] = v;
  LoadFn load = [&](const Value *val, const std::vector<int64_t> &shape) -> Expected<std::string> {
    if (auto h = hoisted.find(val); h != hoisted.end())
      return h->second;
    auto it = ctx.names.find(val);
    if (it == ctx.names.end())
      return invalidArgument("value '{}' is neither a group input nor computed in the group",
                             val->name());
    return operand(val, it->second, shape);
  };
  DLC_RETURN_IF_ERROR(emitElementwiseNodes(w, chain, env, load, prefix));
  if (ctx.table) { // the tail's result from the block's table (writeEpilogueLambdas)
    auto x = env.find(ctx.table->index);
    if (x == env.end())
      return invalidArgument("the epilogue table's index '{}' is not computed",
                             ctx.table->index->name());
    const std::string var = w.fresh(prefix);
    w.line("const {} {} = {};", cudaComputeType(out->dtype()), var, ctx.table->lookup(x->second));
    env[out] = var;
  }
  auto it = env.find(out);
  if (it == env.end())
    return invalidArgument("output '{}' is not computed by the group", out->name());
  return it->second;
}

/// `dlc_epv(a, oidx)`: the epilogue of ctx.stagedV adjacent outputs from offset `oidx`, their
/// accumulators at `a` (shared memory). Operands that vary along the chunk (full-size ones, a
/// bias along N) and the output move as vectors when every such buffer is aligned to one
/// (dlc_va, tested once), else element by element; an operand constant over the chunk is
/// loaded once. With ctx.subChunkEpilogue (EmitOptions::epilogueSubChunks) the accumulators and the
/// operands along N are read 16 bytes of accumulators at a time, each sub-chunk finished before the
/// next is read: registers for 4 elements of each instead of stagedV (16 for an 8-bit output).
Status writeVectorEpilogue(CodeWriter &w, const KernelContext &ctx, const Hoisted &hoisted,
                           const char *accType) {
  const int v = ctx.stagedV;
  const int sub = ctx.subChunkEpilogue ? std::min(v, 4) : v; // 16 bytes of 4-byte accumulators
  const bool split = sub < v;
  // The element loop: element j of the chunk, jj of the sub-chunk.
  CodeWriter elements;
  VecOperands vec{"j", v, split ? "jj" : "", {}, {}};
  {
    elements.line("#pragma unroll");
    const char *e = split ? "jj" : "j";
    auto loop = elements.block("for (int {0} = 0; {0} < {1}; ++{0})", e, sub);
    if (split)
      elements.line("const int j = j0 + jj;");
    DLC_ASSIGN_OR_RETURN(std::string r,
                         writeEpilogueBody(elements, ctx, hoisted, fmt::format("av.v[{}]", e),
                                           "(oidx + j)", "e", &vec));
    elements.line("o.v[j] = dlc_store<{}>({});", ctx.outStorage, r);
  }
  auto isFull = [](const auto &use) { return use.second.second.access == ChunkAccess::kFull; };
  // An operand along N, a whole chunk's or a sub-chunk's (from element j0).
  auto rowLoad = [](CodeWriter &to, const auto &use, int width, const char *from) {
    to.line("dlc_vec<{}, {}> r_{};", cudaStorageType(use.second.first->dtype()), width, use.first);
    to.line("dlc_vload(r_{0}, {0} + oidx % {1}{2}, dlc_va);", use.first, use.second.second.q, from);
  };
  CodeWriter body;
  {
    std::optional<CodeWriter::Scope> chunks;
    if (split) {
      body.line("#pragma unroll");
      chunks.emplace(body.block("for (int j0 = 0; j0 < {}; j0 += {})", v, sub));
      body.line("dlc_vec<{}, {}> av;", accType, sub);
      body.line("dlc_vload(av, a + j0, true);");
      for (const auto &use : vec.used)
        if (!isFull(use))
          rowLoad(body, use, sub, " + j0");
    }
    body.embed(elements);
  }
  std::vector<std::string> align;
  auto alignOf = [&](const std::string &ptr, DType t) {
    const int bytes = std::min(16, v * static_cast<int>(dtypeSize(t)));
    align.push_back(fmt::format("((unsigned long long){} & {})", ptr, bytes - 1));
  };
  alignOf("out0", ctx.group.outputs[0]->dtype());
  for (const auto &[name, use] : vec.used)
    alignOf(name, use.first->dtype());
  w.line("const bool dlc_va = (({}) == 0);", fmt::join(align, " | "));
  const bool prefetch = ctx.prefetchPasses > 0;
  if (prefetch) {
    // The full-size operands of one chunk, loaded by dlc_epl before the main loop, as raw
    // words: a vector of bytes would be unpacked into a register per byte.
    {
      auto fields = w.blockSemi("struct dlc_epre");
      for (const auto &use : vec.used)
        if (isFull(use)) {
          const size_t bytes = v * dtypeSize(use.second.first->dtype());
          w.line("{} v_{};", bytes == 16 ? "uint4" : bytes == 8 ? "uint2" : "unsigned", use.first);
        }
    }
    // One aligned load each (an element-by-element fallback merged in here would hold every
    // element in its own register through the main loop): buffers not aligned to a chunk are
    // read by dlc_epv instead.
    auto epl = w.blockSemi("auto dlc_epl = [&]({} oidx, dlc_epre &p)", indexType(ctx));
    w.line("if (!dlc_va)");
    w.line("  return;");
    for (const auto &use : vec.used)
      if (isFull(use))
        w.line("p.v_{0} = *reinterpret_cast<const decltype(p.v_{0}) *>({0} + oidx);", use.first);
  }
  auto epv = w.blockSemi("auto dlc_epv = [&](const {} *a, {} oidx{})", accType, indexType(ctx),
                         prefetch ? ", const dlc_epre &p" : "");
  if (!split) {
    w.line("dlc_vec<{}, {}> av;", accType, v);
    w.line("dlc_vload(av, a, true);");
  }
  w.line("dlc_vec<{}, {}> o;", ctx.outStorage, v);
  for (const auto &use : vec.used) {
    const std::string &name = use.first;
    if (!isFull(use)) {
      if (!split) // else read per sub-chunk
        rowLoad(w, use, v, "");
      continue;
    }
    w.line("dlc_vec<{}, {}> v_{};", cudaStorageType(use.second.first->dtype()), v, name);
    if (prefetch)
      w.line("if (dlc_va) v_{0} = *reinterpret_cast<const decltype(v_{0}) *>(&p.v_{0}); "
             "else dlc_vload(v_{0}, {0} + oidx, false);",
             name);
    else
      w.line("dlc_vload(v_{0}, {0} + oidx, dlc_va);", name);
  }
  for (const auto &[name, offset] : vec.constants)
    w.line("const auto c_{} = {};", name, loadExpr(name, offset));
  w.embed(body);
  w.line("dlc_vstore(out0 + oidx, o, dlc_va);");
  return Status::ok();
}

/// For the staged chunk at `row`, `col` (declared before): the test that it lies inside the
/// output, opened in `inside` (nothing where every chunk of every tile does), and `ob`, its
/// row's output offset. Returns the chunk's output offset.
std::string writeChunkOffset(CodeWriter &w, const KernelContext &ctx,
                             std::optional<CodeWriter::Scope> &inside) {
  const GemmSpec &s = ctx.spec;
  std::vector<std::string> tests;
  // B multicast pairs row tiles: with an odd count the last pair's second lies past M.
  if (s.m % ctx.cfg.bm != 0 || (ctx.cfg.multicast && ctx.tilesM % 2 != 0))
    tests.push_back(fmt::format("row < {}", s.m));
  if (s.n % ctx.cfg.bn != 0)
    tests.push_back(fmt::format("col < {}", s.n)); // n % stagedV == 0: whole chunks
  if (!tests.empty())
    inside.emplace(w.block("if ({})", fmt::join(tests, " && ")));
  w.line("const {0} ob = {1} + ({0})row * {2};", indexType(ctx), outBatchExpr(ctx), s.outRowStride);
  return "ob + " + outColOffset(ctx, "col");
}

} // namespace

Expected<int> stagedFullOperandBytes(const KernelContext &ctx) {
  CodeWriter scratch;
  const Hoisted hoisted = writeHoistedScalars(scratch, ctx);
  VecOperands vec{"j", ctx.stagedV, {}, {}, {}};
  DLC_RETURN_IF_ERROR(
      writeEpilogueBody(scratch, ctx, hoisted, "av.v[j]", "(oidx + j)", "e", &vec).status());
  int bytes = 0;
  for (const auto &[name, use] : vec.used) {
    const int chunk = ctx.stagedV * static_cast<int>(dtypeSize(use.first->dtype()));
    if (use.second.access != ChunkAccess::kFull)
      continue;
    if (chunk > 16) // one aligned load per operand chunk (dlc_epl)
      return -1;
    bytes += chunk;
  }
  return bytes;
}

void writeEpiloguePrefetch(CodeWriter &w, const KernelContext &ctx) {
  const int v = ctx.stagedV, wn = ctx.cfg.bn / ctx.cfg.warpsN;
  w.line("dlc_epre pf[{}][{}];", ctx.prefetchPasses, ctx.prefetchChunks);
  w.line("#pragma unroll");
  auto passes = w.block("for (int pi = 0; pi < {}; ++pi)", ctx.prefetchPasses);
  w.line("#pragma unroll");
  auto chunks = w.block("for (int qi = 0; qi < {}; ++qi)", ctx.prefetchChunks);
  // The chunk the staged store's pass pi gives lane q (writeStagedChunks).
  w.line("const int q = lane + qi * 32, r = q / {0}, c = (q % {0}) * {1};", wn / v, v);
  w.line("const int row = m0 + wm * WM + pi * {} + r, col = n0 + wn * WN + c;", ctx.stagedRows);
  std::optional<CodeWriter::Scope> inside;
  const std::string offset = writeChunkOffset(w, ctx, inside);
  w.line("dlc_epl({}, pf[pi][qi]);", offset);
}

int stagedWidth(const GemmSpec &spec, const TileConfig &cfg, int64_t splits, DType out) {
  if (cfg.simt || splits > 1)
    return 0;
  const int wn = cfg.bn / cfg.warpsN;
  for (int v = 16 / static_cast<int>(dtypeSize(out)); v >= 4; v /= 2) {
    auto divides = [&](int64_t x) { return x % v == 0; };
    if (divides(spec.n) && divides(wn) && (spec.m == 1 || divides(spec.outRowStride)) &&
        (spec.batch == 1 || divides(spec.outBatchStride)) &&
        (spec.outSplit == 0 || (divides(spec.outSplit) && divides(spec.outSplitStride))))
      return v * static_cast<int>(dtypeSize(out)) >= 8 ? v : 0;
  }
  return 0;
}

bool heavyEpilogue(const FusedGroup &group) {
  // A division, and a quantization's (a handful of FMAs), unroll cheaply enough.
  for (const Node *n : group.nodes)
    if (n != group.anchor && !isPlainArithmetic(n->op()) && n->op() != Op::kQuantizeLinear &&
        n->op() != Op::kDiv)
      return true;
  return false;
}

Status writeEpilogueLambdas(CodeWriter &w, const KernelContext &ctx, CodeWriter *late) {
  // GNU attribute syntax on a lambda; NVRTC and nvcc accept it.
  const char *attr = ctx.outlineEpilogue ? " __attribute__((noinline))" : "";
  const bool intAcc = ctx.spec.dtype == DType::kI8;
  const char *accType = ctx.spec.accType();
  // A table filled at once reads the scales' reciprocals at once.
  const Hoisted hoisted =
      writeHoistedScalars(w, ctx, ctx.table && !ctx.deferTableFill ? nullptr : late);
  if (ctx.table) {
    LoadFn load = readingHoisted(
        &hoisted, [&](const Value *v, const std::vector<int64_t> &) -> Expected<std::string> {
          auto name = ctx.names.find(v);
          if (!ctx.deferTableFill || name == ctx.names.end() || !v->shape().isStatic() ||
              v->shape().numElements() != 1)
            return invalidArgument("the epilogue table reads '{}', which is not one element",
                                   v->name());
          return loadExpr(name->second, "0"); // inside the deferred fill: loaded there
        });
    DLC_RETURN_IF_ERROR(writeByteTableInit(w, *ctx.table, load, ctx.deferTableFill));
  }
  if (ctx.stagedV > 0)
    return writeVectorEpilogue(w, ctx, hoisted, accType);
  {
    auto ep = w.blockSemi("auto dlc_ep = [&]({} acc, {} oidx){}", accType, indexType(ctx), attr);
    DLC_ASSIGN_OR_RETURN(std::string r, writeEpilogueBody(w, ctx, hoisted, "acc", "oidx", "e"));
    w.line("out0[oidx] = dlc_store<{}>({});", ctx.outStorage, r);
  }
  w.line("(void)dlc_ep;");
  if (ctx.outPairs) {
    auto ep2 = w.blockSemi("auto dlc_ep2 = [&]({0} acc0, {0} acc1, {1} oidx){2}", accType,
                           indexType(ctx), attr);
    DLC_ASSIGN_OR_RETURN(std::string r0, writeEpilogueBody(w, ctx, hoisted, "acc0", "oidx", "e"));
    DLC_ASSIGN_OR_RETURN(std::string r1,
                         writeEpilogueBody(w, ctx, hoisted, "acc1", "(oidx + 1)", "f"));
    if (intAcc && !isFloat(ctx.group.outputs[0]->dtype())) { // no round trip through float
      w.line("dlc_store2_exact<{0}>(out0 + oidx, dlc_store<{0}>({1}), dlc_store<{0}>({2}));",
             ctx.outStorage, r0, r1);
    } else {
      w.line("dlc_store2<{}>(out0 + oidx, {}, {});", ctx.outStorage, r0, r1);
    }
  }
  return Status::ok();
}

uint32_t stagedEpilogueBytes(const TileConfig &cfg, int rows) {
  const int wn = cfg.bn / cfg.warpsN;
  return static_cast<uint32_t>(cfg.warpsM * cfg.warpsN * rows * (wn + 8) * 4);
}

void writeStagedStore(CodeWriter &w, const KernelContext &ctx) {
  const GemmSpec &s = ctx.spec;
  const int v = ctx.stagedV;
  const char *acc = s.accType();
  // A slab row is WN + 8 words: 8 banks apart, the fragment writes of a half-warp (4 rows x 8
  // words) hit 32 different banks.
  w.line("constexpr int EP_PITCH = WN + 8, EP_CHUNKS = WN / {}, EP_ROWS = {};", v, ctx.stagedRows);
  w.line("{0} *ep = reinterpret_cast<{0} *>(dlc_smem) + warp * (EP_ROWS * EP_PITCH);", acc);
  w.line("#pragma unroll");
  auto slabs = w.block("for (int s0 = 0; s0 < MI; s0 += EP_ROWS / 16)");
  w.line("#pragma unroll");
  w.line("for (int mj = 0; mj < EP_ROWS / 16; ++mj)");
  w.line("#pragma unroll");
  w.line("  for (int ni = 0; ni < NI; ++ni)");
  w.line("#pragma unroll");
  w.line("    for (int h = 0; h < 2; ++h)");
  w.line("      *reinterpret_cast<{0}2 *>(ep + (mj * 16 + (lane >> 2) + h * 8) * EP_PITCH + "
         "ni * 8 + (lane & 3) * 2) = make_{0}2(acc[s0 + mj][ni][2 * h], "
         "acc[s0 + mj][ni][2 * h + 1]);",
         acc);
  w.line("__syncwarp();");
  writeStagedChunks(w, ctx, "wm * WM + s0 * 16", "wn * WN");
  w.line("__syncwarp();");
}

void writeStagedChunks(CodeWriter &w, const KernelContext &ctx, const std::string &rowOrigin,
                       const std::string &colOrigin) {
  const int v = ctx.stagedV;
  const bool prefetched = ctx.prefetchPasses > 0; // never with a heavy epilogue
  w.line("#pragma unroll{}", heavyEpilogue(ctx.group) ? " 1" : "");
  {
    // Prefetched operands are indexed by the chunk's number, a constant once unrolled, and by
    // the pass (writeStagedStore's s0, the only caller that prefetches).
    auto chunks = prefetched ? w.block("for (int qi = 0; qi < {}; ++qi)", ctx.prefetchChunks)
                             : w.block("for (int q = lane; q < EP_ROWS * EP_CHUNKS; q += 32)");
    if (prefetched)
      w.line("const int q = lane + qi * 32;");
    w.line("const int r = q / EP_CHUNKS, c = (q % EP_CHUNKS) * {};", v);
    w.line("const int row = m0e + {} + r, col = n0e + {} + c;", rowOrigin, colOrigin);
    std::optional<CodeWriter::Scope> inside;
    const std::string offset = writeChunkOffset(w, ctx, inside);
    w.line("dlc_epv(ep + r * EP_PITCH + c, {}{});", offset,
           prefetched ? ", pf[s0 / (EP_ROWS / 16)][qi]" : "");
  }
}

} // namespace dlc::codegen::gemm
