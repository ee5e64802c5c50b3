// The attention family: an Attention node (ir/ops/attention.h, made by fuse-attention), with
// the elementwise consumers of its output the fuser gives it (an int8 model's quantization of
// the context), as one flash-attention kernel. The algorithm is the CUDA template
// codegen/attention.cuh (prelude helper dlc_attn); this file checks what it supports and writes the
// entry point, which binds the operands' strides, the sizes and the scale as constants.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "codegen/anchor_epilogue.h"
#include "codegen/code_writer.h"
#include "codegen/elementwise_chain.h"
#include "codegen/emitters.h"
#include "ir/ops/attention.h"

namespace dlc::codegen {

namespace {

constexpr int kThreads = 128; // dlc_attn::THREADS
constexpr int kRows = 64;     // dlc_attn::BM
constexpr int kKeys = 64;     // dlc_attn::BN

bool claims(const Node *anchor) { return anchor && anchor->op() == Op::kAttention; }

Expected<ops::AttentionLayout> layoutOf(const Node &n) {
  return ops::attentionLayout(n, staticSizes(n.input(0)), staticSizes(n.input(1)),
                              staticSizes(n.input(2)));
}

/// Why the kernel cannot run `n`, or "" when it can.
std::string refusal(const Node &n) {
  const DType t = n.input(0)->dtype();
  if (t != DType::kF16 && t != DType::kBF16)
    return fmt::format("Attention runs on the GPU in f16 and bf16, not {}", dtypeName(t));
  auto l = layoutOf(n);
  if (!l)
    return std::string(l.status().message());
  if (l->headSize != l->vHeadSize || (l->headSize != 64 && l->headSize != 128))
    return fmt::format("the attention kernel takes head size 64 or 128 for Q, K and V (here "
                       "{} and {})",
                       l->headSize, l->vHeadSize);
  if (l->softcap != 0.0f)
    return "the attention kernel has no softcap";
  if (l->qSeq == 0 || l->kvSeq == 0 || l->batch == 0 || l->qHeads == 0)
    return "an empty attention has no kernel";
  if (l->qHeads > 65535 || l->batch > 65535)
    return "more than 65535 heads or batches";
  for (const ops::AttentionOperand *op : {&l->q, &l->k, &l->v, &l->y}) {
    const auto s = op->strides();
    if (s[3] != 1 || s[0] % 8 != 0 || s[1] % 8 != 0 || s[2] % 8 != 0 || op->offset % 8 != 0)
      return "the attention kernel reads and writes rows of whole 16-byte chunks (a "
             "contiguous head-size axis)";
  }
  if (n.numInputs() > 3 && n.input(3)) {
    const DType m = n.input(3)->dtype();
    if (m != DType::kBool && m != DType::kF32 && m != DType::kF16 && m != DType::kBF16)
      return fmt::format("the attention kernel reads a bool, f32, f16 or bf16 mask, not {}",
                         dtypeName(m));
  }
  return "";
}

bool supports(const Node &node, std::string *why) {
  *why = refusal(node);
  return why->empty();
}

/// Dynamic shared memory of the kernel for head size `d` and `kvTiles` resident key/value
/// tiles (0: two streamed stages): dlc_attn::shared_bytes<D, KV_TILES>().
uint32_t sharedBytes(int64_t d, int64_t kvTiles) {
  return static_cast<uint32_t>((kRows + 2 * std::max<int64_t>(kvTiles, 2) * kKeys) * d * 2);
}

/// The key/value tiles the kernel keeps resident (0: it streams them): with
/// EmitOptions::attentionResidentKv, every tile of a sequence of at most 256 keys at head size
/// 64 (72 KiB of shared memory: three blocks per SM), or of at most 128 at 128 (as much as the
/// two stages).
int64_t residentKvTiles(const ops::AttentionLayout &l, const EmitOptions &opts) {
  const int64_t tiles = (l.kvSeq + kKeys - 1) / kKeys;
  if (!opts.attentionResidentKv || tiles > (l.headSize == 64 ? 4 : 2))
    return 0;
  return tiles;
}

Expected<KernelSet> emit(const FusedGroup &group, const EmitOptions &opts) {
  const Node &n = *group.anchor;
  if (std::string no = refusal(n); !no.empty())
    return invalidArgument("{}: {}", n.describe(), no);
  DLC_ASSIGN_OR_RETURN(ops::AttentionLayout l, layoutOf(n));
  const std::string t = cudaStorageType(n.input(0)->dtype());
  const bool masked = n.numInputs() > 3 && n.input(3);
  const std::string m = masked ? cudaStorageType(n.input(3)->dtype()) : "float";
  ParamList params;
  const std::string q = params.read(n.input(0)), k = params.read(n.input(1)),
                    v = params.read(n.input(2));
  const std::string mask = masked ? params.read(n.input(3)) : "nullptr";
  // With elementwise consumers of Y in the group (its quantization), each element goes
  // through them; Y itself is stored only when it leaves the group.
  const bool epilogue = group.nodes.size() > 1;
  const std::string y =
      !epilogue || group.writes(n.output(0)) ? params.write(n.output(0)) : "nullptr";

  CodeWriter body;
  body.line("extern __shared__ __align__(16) unsigned char dlc_smem[];");
  if (epilogue) {
    std::vector<const Value *> stored;
    // The quantization's scale and zero point, loaded once (with the scale's reciprocal) by
    // `prepare`, which the kernel calls once its first tiles' loads are in flight.
    CodeWriter assign;
    const Hoisted hoisted = writeHoistedEpilogueScalars(body, group, params, &assign);
    {
      auto f = body.blockSemi("auto prepare = [&]()");
      body.embed(assign);
    }
    {
      auto f = body.blockSemi("auto epilogue = [&](long long i, float y)");
      DLC_RETURN_IF_ERROR(
          emitEpilogue(body, group, n.output(0), {"y", false}, "i", params, "v", stored, &hoisted));
    }
    DLC_RETURN_IF_ERROR(checkAllStored(group, stored));
  }
  const int64_t kvTiles = residentKvTiles(l, opts);
  body.line("static_assert(dlc_attn::shared_bytes<{}, {}>() == {}, \"shared memory layout\");",
            l.headSize, kvTiles, sharedBytes(l.headSize, kvTiles));
  body.line("dlc_attn::Params<{}, {}> p;", t, m);
  // A strided operand starts at its offset into the buffer.
  auto at = [](const std::string &base, const ops::AttentionOperand &op) {
    return op.offset ? fmt::format("{} + {}LL", base, op.offset) : base;
  };
  body.line("p.q = {};", at(q, l.q));
  body.line("p.k = {};", at(k, l.k));
  body.line("p.v = {};", at(v, l.v));
  body.line("p.y = {};", y);
  body.line("p.mask = {};", mask);
  auto strides = [&](const char *field, const ops::AttentionOperand &op) {
    const auto s = op.strides();
    body.line("p.{} = {{{}LL, {}LL, {}LL}};", field, s[0], s[1], s[2]);
  };
  strides("qs", l.q);
  strides("ks", l.k);
  strides("vs", l.v);
  strides("ys", l.y);
  const auto ms =
      masked ? ops::attentionMaskStrides(staticSizes(n.input(3))) : std::array<int64_t, 4>{};
  body.line("p.mb = {}LL;", ms[0]);
  body.line("p.mh = {}LL;", ms[1]);
  body.line("p.mq = {}LL;", ms[2]);
  body.line("p.mk = {}LL;", ms[3]);
  body.line("p.group = {};", l.qHeads / l.kvHeads);
  body.line("p.sq = {};", l.qSeq);
  body.line("p.sk = {};", l.kvSeq);
  body.line("p.scale_log2 = {:.9g}f;", static_cast<double>(l.scale) / std::log(2.0));
  const std::string end =
      epilogue ? "dlc_attn::Epilogue<decltype(epilogue), decltype(prepare)>" : "dlc_attn::StoreY";
  body.line("dlc_attn::attention<{}, {}, {}, {}, {}, {}>(p, dlc_smem{});", t, l.headSize, m,
            l.causal ? "true" : "false", end, kvTiles,
            epilogue ? fmt::format(", {}{{epilogue, prepare}}", end) : "");

  Kernel kernel;
  kernel.name = group.name;
  finishKernel(kernel, params, kThreads, body);
  kernel.launch.block[0] = kThreads;
  kernel.launch.grid[0] = static_cast<uint32_t>((l.qSeq + kRows - 1) / kRows);
  kernel.launch.grid[1] = static_cast<uint32_t>(l.qHeads);
  kernel.launch.grid[2] = static_cast<uint32_t>(l.batch);
  kernel.launch.sharedBytes = sharedBytes(l.headSize, kvTiles);
  KernelSet set;
  set.kernels.push_back(std::move(kernel));
  return set;
}

} // namespace

Family attentionFamily() { return {"attention", claims, supports, emit}; }

} // namespace dlc::codegen
