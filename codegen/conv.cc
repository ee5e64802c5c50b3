// Conv family: 1-D and 2-D Conv on NCHW tensors with its elementwise epilogue.
//
// * Depthwise (each group reads one input channel): a direct kernel, one output element per
//   thread, the window in registers; it is memory-bound, a GEMM would waste the tensor cores.
// * A stem (at most 4 input channels, f16/bf16, `EmitOptions::stemConv`): conv_stem.cc's direct
//   tensor-core kernel, its input window staged in shared memory.
// * Everything else: implicit GEMM per group (gemm_kernel.h), computed in place on the model's
//   layouts with no weight transform (emitters create no constants): A = the OIHW weight as an
//   [M, C/group * KH * KW] row-major matrix (K in channel, kernel-row, kernel-column order);
//   B = the im2col matrix of the input, gathered with the window index math in the kernel
//   (K rows by N = images * OH * OW columns). A 1x1, stride-1, unpadded conv without groups
//   whose planes are 16-byte aligned reads B as a plain strided matrix with cp.async instead.
//   The output [images, M, OH, OW] is written at (m, column) -> image * M * OHW + m * OHW + pixel.
// 3-D convolutions are refused.
// * Channels-last convolutions: ConvInteger from realize-int8 (int8 NHWC input, OHWI weight)
//   and f16/bf16 Conv from the layout pass, 2-D, group 1, input channels a multiple of one
//   16-byte chunk (16 int8, 8 halves): implicit GEMM with A = the im2col rows of the NHWC
//   input (one per output pixel, gathered in 16-byte chunks by cp.async: one tap's channels
//   each; a 1x1, stride-1, unpadded conv's A is the input itself, a plain matrix that the
//   Hopper kernels load with TMA) and B = the weight as [M, KH * KW * C]; the output
//   [images, OH, OW, M] is the row-major M x N result, its rows the channels (the staged
//   epilogue's 16-byte stores).
#include <fmt/format.h>

#include "codegen/cuda_prelude.h"
#include "codegen/elementwise_chain.h"
#include "codegen/emitters.h"
#include "codegen/gemm_kernel.h"
#include "codegen/gemm_writer.h"
#include "ir/ops/conv_util.h"

namespace dlc::codegen {
namespace {

using gemm::ConvGather;
using gemm::GemmSpec;

bool claims(const Node *anchor) {
  return anchor && (anchor->op() == Op::kConv ||
                    (anchor->op() == Op::kConvInteger && anchor->getInt("channels_last") != 0));
}

bool channelsLast(const Node &n) { return n.getInt("channels_last") != 0; }

/// Geometry of a 1-D or 2-D conv node, 1-D as 2-D with H = 1.
struct ConvShape {
  ConvGather g;
  int64_t outChannels = 0, group = 1;
};

/// `v` with its last dim moved to position 1 (NHWC -> NCHW).
std::vector<int64_t> channelsFirst(std::vector<int64_t> v) {
  if (v.size() >= 3) {
    const int64_t c = v.back();
    v.pop_back();
    v.insert(v.begin() + 1, c);
  }
  return v;
}

Expected<ConvShape> convShape(const Node &n) {
  std::vector<int64_t> x = staticSizes(n.input(0)), w = staticSizes(n.input(1)),
                       y = staticSizes(n.output(0));
  if (channelsLast(n)) { // read the dims channels first
    x = channelsFirst(std::move(x));
    w = channelsFirst(std::move(w));
    y = channelsFirst(std::move(y));
  }
  const int64_t rank = static_cast<int64_t>(x.size()) - 2;
  if (rank != 1 && rank != 2)
    return invalidArgument("Conv: {}-D convolution has no GPU kernel (1-D and 2-D only)", rank);
  std::vector<int64_t> wk(w.begin() + 2, w.end());
  DLC_ASSIGN_OR_RETURN(ops::WindowGeometry geo, ops::readWindowGeometry(n, rank, &wk, {}));
  ConvShape s;
  ConvGather &g = s.g;
  s.group = n.getInt("group");
  s.outChannels = w[0];
  g.images = x[0];
  g.channels = x[1];
  g.groupChannels = w[1];
  const int64_t hAxis = rank == 2 ? 0 : -1, wAxis = rank - 1;
  g.h = rank == 2 ? x[2] : 1;
  g.w = x.back();
  g.oh = rank == 2 ? y[2] : 1;
  g.ow = y.back();
  g.kh = rank == 2 ? w[2] : 1;
  g.kw = w.back();
  if (hAxis >= 0) {
    g.strideH = geo.strides[0];
    g.dilationH = geo.dilations[0];
    g.padH = geo.resolvePads(0, g.h).first;
  }
  g.strideW = geo.strides[static_cast<size_t>(wAxis)];
  g.dilationW = geo.dilations[static_cast<size_t>(wAxis)];
  g.padW = geo.resolvePads(wAxis, g.w).first;
  return s;
}

/// The channels-last kernel's geometry: 2-D, group 1, input channels whole 16-byte chunks.
/// `kernel` opens the refusals ("Conv: the channels_last GPU kernel").
bool channelsLastGeometry(const Node &node, const char *kernel, std::string *why) {
  if (node.input(0)->shape().rank() != 4 || node.getInt("group") != 1) {
    *why = fmt::format("{} is 2-D with group 1", kernel);
    return false;
  }
  const int64_t chunk = 16 / dtypeSize(node.input(0)->dtype());
  if (node.input(0)->shape()[3].value() % chunk != 0) {
    *why = fmt::format("{} needs input channels a multiple of {}", kernel, chunk);
    return false;
  }
  return true;
}

bool supportsInteger(const Node &node, std::string *why) {
  return gemm::int8Operands(node, why) &&
         channelsLastGeometry(node, "ConvInteger: the GPU kernel", why);
}

/// A channels-last f16/bf16 Conv (the layout pass's form).
bool supportsChannelsLast(const Node &node, std::string *why) {
  const DType t = node.input(0)->dtype();
  if (t != DType::kF16 && t != DType::kBF16) {
    *why =
        fmt::format("Conv: channels_last has a GPU kernel for f16 and bf16, not {}", dtypeName(t));
    return false;
  }
  return channelsLastGeometry(node, "Conv: the channels_last GPU kernel", why);
}

bool supports(const Node &node, std::string *why) {
  const DType t = node.input(0)->dtype();
  if (node.op() == Op::kConvInteger) {
    if (!supportsInteger(node, why))
      return false;
  } else if (channelsLast(node)) {
    if (!supportsChannelsLast(node, why))
      return false;
  } else if (t != DType::kF32 && t != DType::kF16 && t != DType::kBF16) {
    *why = fmt::format("Conv: dtype {} has no GPU kernel (f32, f16 and bf16 only)", dtypeName(t));
    return false;
  }
  const int64_t rank = node.input(0)->shape().rank();
  if (rank != 3 && rank != 4) {
    *why = fmt::format("Conv: {}-D convolution has no GPU kernel (1-D and 2-D only)", rank - 2);
    return false;
  }
  int64_t count = 1;
  for (int64_t d : staticSizes(node.output(0)))
    count *= d;
  if (count == 0) {
    *why = fmt::format("Conv: the output {} is empty", node.output(0)->shape().str());
    return false;
  }
  auto s = convShape(node);
  if (!s) {
    *why = s.status().message();
    return false;
  }
  return true;
}

/// The bias input as broadcast against the output: [M, 1, ...].
gemm::Addend biasAddend(const Node &n) {
  std::vector<int64_t> shape(static_cast<size_t>(n.output(0)->shape().rank() - 1), 1);
  shape[0] = staticSizes(n.input(2))[0];
  return {n.input(2), 1.0, shape};
}

Expected<KernelSet> emitDepthwise(const FusedGroup &group, const ConvShape &cs,
                                  const EmitOptions &opts) {
  const Node &n = *group.anchor;
  const ConvGather &g = cs.g;
  GemmSpec spec; // only the epilogue terms are used
  spec.dtype = n.input(0)->dtype();
  if (n.hasInput(2))
    spec.addends.push_back(biasAddend(n));
  const Value *out = group.outputs[0];
  gemm::KernelContext ctx(group, spec, {});
  ctx.name = group.name;
  ctx.outStorage = cudaStorageType(out->dtype());
  Kernel k;
  k.name = group.name;
  const std::vector<std::string> decls = gemm::groupParams(ctx, k.params);
  int64_t total = 1;
  for (int64_t d : staticSizes(out))
    total *= d;
  const std::string x = ctx.names.at(n.input(0)), w = ctx.names.at(n.input(1));
  const int64_t mult = cs.outChannels / cs.group;
  CodeWriter cw;
  cw.line("// {}: depthwise conv, {} x {} window, {} outputs", group.name, g.kh, g.kw, total);
  {
    auto fn = cw.block("extern \"C\" __global__ void __launch_bounds__(256) {}({})", k.name,
                       fmt::join(decls, ", "));
    DLC_RETURN_IF_ERROR(gemm::writeEpilogueLambdas(cw, ctx));
    auto loop = cw.block("for (long long i = blockIdx.x * 256LL + threadIdx.x; i < {}LL; i += "
                         "(long long)gridDim.x * 256)",
                         total);
    cw.line("const int ow = (int)(i % {}), oh = (int)((i / {}) % {});", g.ow, g.ow, g.oh);
    cw.line("const long long t = i / {};", g.oh * g.ow);
    cw.line("const int co = (int)(t % {});", cs.outChannels);
    cw.line("const long long img = t / {};", cs.outChannels);
    cw.line("const {0} *xp = {1} + (img * {2} + co / {3}) * {4}LL;", cudaStorageType(spec.dtype), x,
            g.channels, mult, g.h * g.w);
    cw.line("const {0} *wp = {1} + co * {2};", cudaStorageType(spec.dtype), w, g.kh * g.kw);
    cw.line("float acc = 0.f;");
    cw.line("#pragma unroll");
    {
      auto rows = cw.block("for (int kh = 0; kh < {}; ++kh)", g.kh);
      cw.line("const int ih = oh * {} - {} + kh * {};", g.strideH, g.padH, g.dilationH);
      cw.line("if ((unsigned)ih >= {}u) continue;", g.h);
      cw.line("#pragma unroll");
      auto cols = cw.block("for (int kw = 0; kw < {}; ++kw)", g.kw);
      cw.line("const int iw = ow * {} - {} + kw * {};", g.strideW, g.padW, g.dilationW);
      cw.line("if ((unsigned)iw < {}u)", g.w);
      cw.line("  acc = fmaf(dlc_load(xp[ih * {} + iw]), dlc_load(__ldg(wp + kh * {} + kw)), acc);",
              g.w, g.kw);
    }
    cw.line("dlc_ep(acc, i);");
  }
  k.source = cw.str();
  k.prelude = cw.requirements();
  k.launch = gridStrideLaunch(total, opts);
  KernelSet set;
  set.kernels.push_back(std::move(k));
  return set;
}

} // namespace

namespace gemm {

Expected<KernelSet> emitConvGroup(const FusedGroup &group, const EmitOptions &opts,
                                  const std::optional<TileConfig> &cfg) {
  const Node *n = group.anchor;
  if (!claims(n))
    return invalidArgument("the group's anchor is not a Conv");
  std::string why;
  if (!supports(*n, &why))
    return invalidArgument("{}", why);
  DLC_ASSIGN_OR_RETURN(ConvShape cs, convShape(*n));
  const ConvGather &g = cs.g;
  const bool pointwise = cs.group == 1 && g.kh == 1 && g.kw == 1 && g.strideH == 1 &&
                         g.strideW == 1 && g.padH == 0 && g.padW == 0 && g.oh == g.h && g.ow == g.w;
  if (channelsLast(*n)) {
    GemmSpec s;
    s.dtype = n->op() == Op::kConvInteger ? DType::kI8 : n->input(0)->dtype();
    s.m = g.images * g.oh * g.ow;
    s.n = cs.outChannels;
    s.k = g.kh * g.kw * g.channels;
    s.a.value = n->input(0);
    s.a.kContig = true;
    s.a.ld = s.k;
    s.b.value = n->input(1);
    // A pointwise conv's A is its input itself, [images * h * w, channels]: a plain matrix,
    // which the Hopper kernels load with TMA (H100, session 44: ResNet-50 b32 fp16 1.799 ->
    // 1.639 ms). Other windows gather im2col rows, and so do most int8 pointwise ones: inside
    // ResNet-50 b32 (H100, session 45, `dlc run --profile`) the Hopper kernels took its int8
    // 1x1 convs over 1024 and 2048 channels without a residual from 0.018 to 0.014 ms and
    // 0.016 to 0.011, but those over 256 and 512 channels from 0.022 to 0.029 (512 -> 128 at
    // 28 x 28; kbench alone had it 0.0232 -> 0.0172) and 0.051 to 0.056 (256 -> 128 at 56 x
    // 56), and the expansions with the int8 residual from 0.047 to 0.056 (session 44).
    const bool int8Rows = s.dtype == DType::kI8 && !opts.int8PointwisePlain &&
                          (s.k < 1024 || groupSpec(group, s).fullEpilogueOperand);
    if (!pointwise || int8Rows)
      s.a.nhwc = g;
    s.b.kContig = true;
    s.b.ld = s.k;
    s.outRowStride = s.n;
    if (n->op() == Op::kConv && n->hasInput(2)) // bias along the output's channels (its rows)
      s.addends.push_back({n->input(2), 1.0, {cs.outChannels}});
    return writeGemm(group, s, opts, cfg);
  }
  if (g.groupChannels == 1 && cs.group > 1 && !cfg)
    return emitDepthwise(group, cs, opts);
  GemmSpec s;
  s.dtype = n->input(0)->dtype();
  const int64_t mg = cs.outChannels / cs.group, ohw = g.oh * g.ow, hw = g.h * g.w;
  s.batch = cs.group;
  s.m = mg;
  s.k = g.groupChannels * g.kh * g.kw;
  s.n = g.images * ohw;
  s.a.value = n->input(1);
  s.a.kContig = true;
  s.a.ld = s.k;
  s.a.batchOffset = cs.group == 1 ? "0" : fmt::format("b * {}LL", mg * s.k);
  s.b.value = n->input(0);
  const int64_t chunk = s.dtype == DType::kF32 ? 4 : 8;
  const bool simt = s.dtype == DType::kF32 && !opts.allowTf32;
  if (pointwise && (simt || hw % chunk == 0)) {
    // B(k, n) = X[image, k, pixel]: K-strided, columns split by image.
    s.b.kContig = false;
    s.b.ld = hw;
    if (g.images > 1) {
      s.b.split = hw;
      s.b.splitStride = g.channels * hw;
    }
  } else {
    s.b.gather = g;
  }
  s.outBatchStride = mg * ohw;
  s.outRowStride = ohw;
  if (g.images > 1) {
    s.outSplit = ohw;
    s.outSplitStride = cs.outChannels * ohw;
  }
  if (n->hasInput(2))
    s.addends.push_back(biasAddend(*n));
  // The stem kernel computes the same product and finishes it through the same epilogue.
  if (opts.stemConv && !cfg && n->op() == Op::kConv &&
      stemConvFits(g, cs.outChannels, cs.group, n->input(0)->dtype(), group.outputs[0]->dtype(),
                   opts.numSms, &why))
    return writeStemConv(group, s, g, opts);
  return writeGemm(group, s, opts, cfg);
}

} // namespace gemm

Family convFamily() {
  return {"conv", claims, supports, [](const FusedGroup &g, const EmitOptions &o) {
            return gemm::emitWithTileOverride(g, o, [&](const std::optional<gemm::TileConfig> &c) {
              return gemm::emitConvGroup(g, o, c);
            });
          }};
}

} // namespace dlc::codegen
