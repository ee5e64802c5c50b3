// Pooling family: MaxPool, AveragePool and LpPool over any number of spatial axes (pads,
// auto_pad, strides, dilations, ceil_mode, count_include_pad), GlobalAveragePool,
// GlobalMaxPool and GlobalLpPool, and LRN (a window over the channel axis); each with its
// group's elementwise epilogue.
//
// Windowed pools: one thread per output element walks its window (loops over the kernel
// offsets, taps in the padding skipped) in the compute type (float for f16/bf16). Semantics are
// the reference's (ir/eval/pool_eval.cc): MaxPool propagates NaN and yields -inf for a window
// wholly in the padding; AveragePool divides by the taps inside the input, or with
// count_include_pad by the taps inside the padded extent. MaxPool's Indices output is the flat
// index into X of the first maximum (a NaN wins, as in numpy), row-major or, with
// storage_order 1, with the spatial axes column-major; -1 for a window wholly in the padding.
//
// LRN: one thread per output element sums the squares of its channel window (floor((size-1)/2)
// channels before, the rest after, clipped to [0, C)) in the compute type, then divides x by
// (bias + alpha / size * sum)^beta, as the reference (ir/eval/norm_eval.cc) does.
//
// Global pools: one warp per (n, c) plane for planes up to kWarpPlane elements, one block of
// 256 threads per plane above that; each thread accumulates a strided share, then a fixed
// shuffle tree (and a shared-memory step across warps) combines the shares, so results are
// deterministic. Channels-last (channels_last = 1, X [N, spatial..., C]): a block per 32
// channels of an image, see emitGlobalChannelsLast.
#include <fmt/format.h>

#include <algorithm>

#include "codegen/anchor_epilogue.h"
#include "codegen/cuda_prelude.h"
#include "codegen/data_movement_internal.h"
#include "codegen/elementwise_chain.h"
#include "codegen/emitters.h"
#include "codegen/pool_plan.h"
#include "ir/ops/conv_util.h"

namespace dlc::codegen {

IndexExpr PoolAxis::tap(const IndexExpr &o, const IndexExpr &k) const {
  return o * stride - padBegin + k * dilation;
}

IndexExpr PoolAxis::paddedCount(const IndexExpr &o) const {
  // Taps k with o * stride + k * dilation < in + padBegin + padEnd.
  const IndexExpr room = IndexExpr::max(in + padBegin + padEnd - o * stride, 0);
  return IndexExpr::min(kernel, (room + (dilation - 1)) / dilation);
}

Expected<std::vector<PoolAxis>> poolAxes(const Node &node) {
  const std::vector<int64_t> x = staticSizes(node.input(0)), y = staticSizes(node.output(0));
  const int64_t n = static_cast<int64_t>(x.size()) - 2;
  if (n < 1)
    return unimplemented("{} needs at least one spatial axis, got input rank {}", node.opName(),
                         x.size());
  DLC_ASSIGN_OR_RETURN(
      ops::WindowGeometry g,
      ops::readWindowGeometry(node, n, nullptr, {.dilations = true, .ceilMode = true}));
  if (static_cast<int64_t>(g.kernel.size()) != n)
    return invalidArgument("attribute 'kernel_shape' has {} values, expected {}", g.kernel.size(),
                           n);
  std::vector<PoolAxis> axes;
  for (int64_t a = 0; a < n; ++a) {
    const size_t i = static_cast<size_t>(a);
    auto [begin, end] = g.resolvePads(a, x[i + 2]);
    axes.push_back({x[i + 2], y[i + 2], g.kernel[i], g.strides[i], g.dilations[i], begin, end});
  }
  return axes;
}

namespace {

constexpr int64_t kWarpPlane = 2048;

bool claims(const Node *anchor) {
  if (!anchor)
    return false;
  const Op op = anchor->op();
  return ops::isGlobalPool(op) || op == Op::kMaxPool || op == Op::kAveragePool ||
         op == Op::kLpPool || op == Op::kLRN;
}

Status check(const Node &node) {
  const DType t = node.input(0)->dtype();
  const bool maxPool = node.op() == Op::kMaxPool;
  if (!isFloat(t) && !(maxPool && (t == DType::kI8 || t == DType::kU8)))
    return unimplemented("{} of {} is not supported", node.opName(), dtypeName(t));
  if (maxPool && node.getInt("storage_order") != 0 && node.getInt("storage_order") != 1)
    return invalidArgument("attribute 'storage_order' must be 0 or 1, got {}",
                           node.getInt("storage_order"));
  if (node.op() == Op::kLpPool || node.op() == Op::kGlobalLpPool)
    if (node.getInt("p") < 1)
      return invalidArgument("attribute 'p' must be positive, got {}", node.getInt("p"));
  if (node.op() == Op::kLRN) {
    if (node.input(0)->shape().rank() < 3)
      return invalidArgument("LRN needs an input of rank >= 3, got {}",
                             node.input(0)->shape().rank());
    if (node.getInt("size") < 1)
      return invalidArgument("attribute 'size' must be positive, got {}", node.getInt("size"));
    return Status::ok();
  }
  if (ops::isGlobalPool(node.op())) {
    const int64_t rank = node.getInt("channels_last") != 0 ? 3 : 2;
    if (node.input(0)->shape().rank() < rank)
      return invalidArgument("{} needs an input of rank >= {}", node.opName(), rank);
    return Status::ok();
  }
  return poolAxes(node).status();
}

bool supports(const Node &node, std::string *why) {
  Status s = check(node);
  if (!s.isOk())
    *why = s.message();
  return s.isOk();
}

/// The lowest value of the compute type (MaxPool's start).
std::string lowest(DType t) {
  if (t == DType::kI8)
    return "(signed char)(-128)";
  if (t == DType::kU8)
    return "(unsigned char)0";
  return cudaLiteral(-std::numeric_limits<double>::infinity(), t);
}

/// `acc` after every element of a window / plane is in: the pooled value.
std::string finalValue(const Node &node, const std::string &acc, const std::string &divisor) {
  const std::string ct = cudaComputeType(node.input(0)->dtype());
  switch (node.op()) {
  case Op::kMaxPool:
  case Op::kGlobalMaxPool:
    return acc;
  case Op::kLpPool:
  case Op::kGlobalLpPool: {
    const int64_t p = node.getInt("p");
    if (p == 1)
      return acc;
    if (p == 2)
      return fmt::format("sqrt({})", acc);
    return fmt::format("pow({}, ({})1 / ({}){})", acc, ct, ct, p);
  }
  default:
    return fmt::format("{} / ({})({})", acc, ct, divisor);
  }
}

/// The statement that adds compute-type value `v` to `acc`.
std::string accumulate(const Node &node, const std::string &v) {
  switch (node.op()) {
  case Op::kMaxPool:
  case Op::kGlobalMaxPool:
    return fmt::format("acc = dlc_max(acc, {});", v);
  case Op::kLpPool:
  case Op::kGlobalLpPool: {
    const int64_t p = node.getInt("p");
    if (p == 1)
      return fmt::format("acc += fabs({});", v);
    if (p == 2)
      return fmt::format("acc += {0} * {0};", v);
    return fmt::format("acc += pow(fabs({}), ({}){});", v, cudaComputeType(node.input(0)->dtype()),
                       p);
  }
  default:
    return fmt::format("acc += {};", v);
  }
}

std::string initValue(const Node &node) {
  const DType t = node.input(0)->dtype();
  const bool max = node.op() == Op::kMaxPool || node.op() == Op::kGlobalMaxPool;
  return max ? lowest(t) : fmt::format("({})0", cudaComputeType(t));
}

/// Decodes the output coordinates of axes [0, end) from `r` (the flat output index, or its part
/// left by the innermost axes already decoded), innermost first: `o<d>` for each axis of more
/// than one output (its IndexExpr variable in the result, 0 elsewhere); r is then the (n, c)
/// plane, and `x` its input plane.
std::vector<IndexExpr> writeOutputOrigin(CodeWriter &body, const std::vector<PoolAxis> &axes,
                                         size_t end, const std::string &idx, DType t,
                                         int64_t inPlane) {
  std::vector<IndexExpr> o(axes.size(), 0);
  for (size_t d = end; d-- > 0;) {
    if (axes[d].out == 1)
      continue;
    o[d] = IndexExpr::var(fmt::format("o{}", d));
    body.line("const {} o{} = r % {};", idx, d, axes[d].out);
    body.line("r /= {};", axes[d].out);
  }
  body.line("const {} *__restrict__ x = in0 + r * {};", cudaStorageType(t), inPlane);
  return o;
}

/// The product of the window's sizes along axes [0, end).
int64_t windowTaps(const std::vector<PoolAxis> &axes, size_t end) {
  int64_t taps = 1;
  for (size_t d = 0; d < end; ++d)
    taps *= axes[d].kernel;
  return taps;
}

/// The input elements between neighbours along axis d (the sizes of the axes inside it).
int64_t inputStride(const std::vector<PoolAxis> &axes, size_t d) {
  int64_t stride = 1;
  for (size_t e = d + 1; e < axes.size(); ++e)
    stride *= axes[e].in;
  return stride;
}

/// C expression: index `u` clamped into [0, in).
std::string clamped(const std::string &u, int64_t in) {
  return fmt::format("{0} < 0 ? 0 : {0} >= {1} ? {2} : {0}", u, in, in - 1);
}

/// Opens the loop over axis d's taps k<d> (after `unroll`, a pragma or ""), and writes u<d>,
/// the input index that tap reads for output o, ok<d> (whether it lies inside) when `withOk`,
/// and t<d>, u<d> clamped into the input.
CodeWriter::Scope writeTapLoop(CodeWriter &body, const PoolAxis &a, size_t d, const IndexExpr &o,
                               const std::string &idx, const char *unroll, bool withOk) {
  const IndexExpr k = a.kernel == 1 ? IndexExpr(0) : IndexExpr::var(fmt::format("k{}", d));
  if (*unroll)
    body.line("{}", unroll);
  auto loop = body.block("for (int k{0} = 0; k{0} < {1}; ++k{0})", d, a.kernel);
  body.line("const {} u{} = {};", idx, d, a.tap(o, k).str());
  if (withOk)
    body.line("const bool ok{0} = u{0} >= 0 && u{0} < {1};", d, a.in);
  body.line("const {} t{} = {};", idx, d, clamped(fmt::format("u{}", d), a.in));
  return loop;
}

/// Whether MaxPool's Indices output is read (by the graph or as a graph output).
const Value *readIndices(const Node &node) {
  return node.op() == Op::kMaxPool && node.numOutputs() > 1 && node.output(1) &&
                 (node.output(1)->hasUses() || node.graph()->isOutput(node.output(1)))
             ? node.output(1)
             : nullptr;
}

/// How many neighbouring outputs along the innermost axis one thread of a MaxPool computes
/// (emitMaxPoolRow), or 0 for one per thread: 8, 4 or 2, whichever divides the axis first, with
/// the columns they read together at most 40 wide and the other axes' window at most 49 taps.
/// 8-bit inputs only: ResNet-50 b32's stem pool (H100, session 49, `--profile` against
/// e38bd37) took 0.0376 -> 0.0340 ms on int8, but 0.0482 -> 0.0576 on fp16, whose 2-byte
/// column loads, 16 elements apart across a warp, touch more cache lines per load than one
/// output per thread does.
int64_t maxPoolRowWidth(const Node &node, const std::vector<PoolAxis> &axes) {
  if (node.op() != Op::kMaxPool || readIndices(node) || axes.empty() ||
      dtypeSize(node.input(0)->dtype()) != 1)
    return 0;
  const PoolAxis &a = axes.back();
  if (a.dilation != 1 || windowTaps(axes, axes.size() - 1) > 49)
    return 0;
  for (int64_t v : {8, 4, 2})
    if (a.out % v == 0 && (v - 1) * a.stride + a.kernel <= 40 && a.kernel > 1)
      return v;
  return 0;
}

/// Whether every window of a MaxPool holds at least one element of the input, along every
/// axis, without gaps (dilation 1): a tap in the padding may then read its index clamped into
/// the input, an element its window holds anyway, which leaves the max as it is.
bool windowsOverlapInput(const std::vector<PoolAxis> &axes) {
  for (const PoolAxis &a : axes)
    if (a.dilation != 1 || a.padBegin > a.kernel - 1 ||
        (a.out - 1) * a.stride - a.padBegin > a.in - 1)
      return false;
  return true;
}

/// MaxPool with V neighbouring outputs along the innermost axis per thread: the
/// (V - 1) * stride + kernel input columns they cover are loaded once per window row (clamped
/// into the input), maxed down the rows, then each output takes the max of its kernel's
/// columns. A tap in the padding counts as the lowest value, or where every window overlaps
/// the input (windowsOverlapInput) as the clamped element itself, with no select. One output
/// per thread loads its whole window and repeats the index arithmetic for each tap:
/// ResNet-50's 3x3/2 stem MaxPool (6.4 million outputs at batch 32) is bound by those
/// instructions, not by its bytes. NaN propagates through dlc_max in either order.
Expected<KernelSet> emitMaxPoolRow(const FusedGroup &group, const std::vector<PoolAxis> &axes,
                                   int64_t v, const EmitOptions &opts) {
  const Node &node = *group.anchor;
  const Value *x = node.input(0), *y = node.output(0);
  const DType t = x->dtype();
  const std::string ct = cudaComputeType(t), low = lowest(t);
  ParamList params;
  params.read(x);
  const int64_t xCount = x->shape().numElements().value_or(0);
  const int64_t yCount = y->shape().numElements().value_or(0);
  const std::string idx = std::max(xCount, yCount) < (int64_t{1} << 31) ? "int" : "long long";
  const size_t last = axes.size() - 1;
  const PoolAxis &a = axes[last];
  const int64_t cols = (v - 1) * a.stride + a.kernel;
  int64_t inPlane = 1;
  for (const PoolAxis &ax : axes)
    inPlane *= ax.in;
  const bool overlap = windowsOverlapInput(axes);

  CodeWriter body;
  auto loop = body.block("{}", gridStrideLoop(idx, yCount / v));
  body.line("{} r = i;", idx);
  if (a.out == v) {
    body.line("const {} o{} = 0;", idx, last);
  } else {
    body.line("const {} o{} = (r % {}) * {};", idx, last, a.out / v, v);
    body.line("r /= {};", a.out / v);
  }
  const std::vector<IndexExpr> o = writeOutputOrigin(body, axes, last, idx, t, inPlane);
  // The columns, clamped once for every row.
  body.line("const {} c0 = {};", idx, a.tap(IndexExpr::var(fmt::format("o{}", last)), 0).str());
  body.line("{} col[{}];", idx, cols);
  if (!overlap)
    body.line("bool colOk[{}];", cols);
  body.line("{} m[{}];", ct, cols);
  body.line("#pragma unroll");
  {
    auto c = body.block("for (int c = 0; c < {}; ++c)", cols);
    body.line("const {} u = c0 + c;", idx);
    if (!overlap)
      body.line("colOk[c] = u >= 0 && u < {};", a.in);
    body.line("col[c] = {};", clamped("u", a.in));
    body.line("m[c] = {};", low);
  }
  // The window's rows unrolled (every load issued at once) up to 64 loads in all; past that
  // (a 3-D window, wide columns) the rows loop and only the columns, which index the
  // registers, unroll.
  const char *rowUnroll =
      windowTaps(axes, last) * cols <= 64 ? "#pragma unroll" : "#pragma unroll 1";
  std::vector<CodeWriter::Scope> taps;
  std::string offset, inside;
  for (size_t d = 0; d < last; ++d) {
    taps.push_back(writeTapLoop(body, axes[d], d, o[d], idx, rowUnroll, !overlap));
    if (!overlap)
      inside += fmt::format("ok{} && ", d);
    const int64_t stride = inputStride(axes, d);
    offset += fmt::format("t{}{} + ", d, stride == 1 ? "" : fmt::format(" * {}", stride));
  }
  body.line("#pragma unroll");
  {
    auto c = body.block("for (int c = 0; c < {}; ++c)", cols);
    body.line("const {} raw = dlc_load(x[{}col[c]]);", ct, offset);
    if (overlap)
      body.line("m[c] = dlc_max(m[c], raw);");
    else
      body.line("m[c] = dlc_max(m[c], {}colOk[c] ? raw : {});", inside, low);
  }
  while (!taps.empty())
    taps.pop_back();
  body.line("#pragma unroll");
  auto outs = body.block("for (int j = 0; j < {}; ++j)", v);
  body.line("{} acc = m[j * {}];", ct, a.stride);
  body.line("#pragma unroll");
  body.line("for (int k = 1; k < {}; ++k)", a.kernel);
  body.line("  acc = dlc_max(acc, m[j * {} + k]);", a.stride);
  body.line("const {} y = acc;", ct);
  body.line("const {} e = i * {} + j;", idx, v);
  std::vector<const Value *> stored;
  DLC_RETURN_IF_ERROR(emitEpilogue(body, group, y, {"y", false}, "e", params, "v", stored));
  DLC_RETURN_IF_ERROR(checkAllStored(group, stored));
  outs.close();
  loop.close();
  Kernel k;
  k.name = group.name;
  finishKernel(k, params, 256, body);
  k.launch = gridStrideLaunch(yCount / v, opts);
  return single(std::move(k));
}

Expected<KernelSet> emitWindowed(const FusedGroup &group, const EmitOptions &opts) {
  const Node &node = *group.anchor;
  DLC_RETURN_IF_ERROR(check(node));
  DLC_ASSIGN_OR_RETURN(std::vector<PoolAxis> axes, poolAxes(node));
  if (const int64_t v = maxPoolRowWidth(node, axes))
    return emitMaxPoolRow(group, axes, v, opts);
  const Value *x = node.input(0), *y = node.output(0);
  const DType t = x->dtype();
  const std::string ct = cudaComputeType(t);
  ParamList params;
  params.read(x);
  const int64_t xCount = x->shape().numElements().value_or(0);
  const int64_t yCount = y->shape().numElements().value_or(0);
  const std::string idx = std::max(xCount, yCount) < (int64_t{1} << 31) ? "int" : "long long";
  const size_t n = axes.size();
  int64_t inPlane = 1;
  for (const PoolAxis &a : axes)
    inPlane *= a.in;
  const bool average = node.op() == Op::kAveragePool;
  const bool includePad = average && node.getInt("count_include_pad") != 0;

  CodeWriter body;
  auto loop = body.block("{}", gridStrideLoop(idx, yCount));
  body.line("{} r = i;", idx);
  const std::vector<IndexExpr> o = writeOutputOrigin(body, axes, n, idx, t, inPlane);
  body.line("{} acc = {};", ct, initValue(node));
  // MaxPool's Indices, when the model reads them: the flat index of the first maximum.
  const Value *indices = readIndices(node);
  if (indices)
    body.line("long long at = -1;");
  std::string columnOffset;
  if (average && !includePad)
    body.line("int cnt = 0;");
  std::string offset, inside;
  // Every tap's load is unconditional, from its index clamped into the input, and only its use
  // depends on whether it lies inside: with the window's loops unrolled (up to 32 taps), a
  // thread issues all of its loads at once instead of one per branch (ResNet-50's 3x3 stem
  // MaxPool is bound by that latency).
  const char *unroll = windowTaps(axes, n) <= 32 ? "#pragma unroll" : "";
  std::vector<CodeWriter::Scope> taps; // one loop per axis, innermost last
  for (size_t d = 0; d < n; ++d) {
    taps.push_back(writeTapLoop(body, axes[d], d, o[d], idx, unroll, true));
    inside += fmt::format("{}ok{}", inside.empty() ? "" : " && ", d);
    const int64_t stride = inputStride(axes, d);
    offset += fmt::format("{}t{}{}", offset.empty() ? "" : " + ", d,
                          stride == 1 ? "" : fmt::format(" * {}", stride));
    int64_t columnStride = 1;
    for (size_t e = 0; e < d; ++e)
      columnStride *= axes[e].in;
    columnOffset += fmt::format("{}(long long)t{}{}", columnOffset.empty() ? "" : " + ", d,
                                columnStride == 1 ? "" : fmt::format(" * {}", columnStride));
  }
  // A tap outside the input counts as the accumulation's neutral value, selected rather than
  // branched on (a branch would let the compiler sink the load into it again).
  const std::string neutral = node.op() == Op::kMaxPool ? lowest(t) : fmt::format("({})0", ct);
  body.line("const {} raw = dlc_load(x[{}]);", ct, offset);
  body.line("const {} v = {} ? raw : {};", ct, inside, neutral);
  if (indices) { // numpy's max: a NaN wins; ties keep the first (taps inside the input only)
    auto use = body.block("if ({})", inside);
    const std::string takes =
        isFloat(t) ? "!isnan(acc) && (v > acc || isnan(v))" : std::string("v > acc");
    const bool columnMajor = node.getInt("storage_order") == 1;
    body.line("if (at < 0 || ({})) {{", takes);
    body.line("  acc = v;");
    body.line("  at = (long long)r * {} + {};", inPlane,
              columnMajor ? columnOffset : "(long long)(" + offset + ")");
    body.line("}}");
  } else {
    body.line("{}", accumulate(node, "v"));
  }
  if (average && !includePad)
    body.line("cnt += {} ? 1 : 0;", inside);
  while (!taps.empty())
    taps.pop_back();
  std::string divisor = "cnt";
  if (includePad) {
    IndexExpr c = 1;
    for (size_t d = 0; d < n; ++d)
      c = c * axes[d].paddedCount(o[d]);
    divisor = c.str();
  }
  body.line("const {} y = {};", ct, finalValue(node, "acc", divisor));
  if (indices)
    return finishPerOutput(body, loop, group, y, params, yCount, opts, {{indices, {"at", false}}});
  return finishPerOutput(body, loop, group, y, params, yCount, opts);
}

Expected<KernelSet> emitLrn(const FusedGroup &group, const EmitOptions &opts) {
  const Node &node = *group.anchor;
  DLC_RETURN_IF_ERROR(check(node));
  const Value *x = node.input(0), *y = node.output(0);
  const std::vector<int64_t> xs = staticSizes(x);
  const int64_t channels = xs[1];
  int64_t inner = 1;
  for (size_t d = 2; d < xs.size(); ++d)
    inner *= xs[d];
  const int64_t count = x->shape().numElements().value_or(0);
  const int64_t size = node.getInt("size");
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  const DType t = x->dtype();
  const std::string ct = cudaComputeType(t);
  const std::string idx = count < (int64_t{1} << 31) ? "int" : "long long";
  ParamList params;
  params.read(x);

  CodeWriter body;
  auto loop = body.block("{}", gridStrideLoop(idx, count));
  body.line("const {} s = i % {};", idx, inner);
  body.line("const int c = (int)((i / {}) % {});", inner, channels);
  body.line("const {} *__restrict__ x = in0 + i / {} * {} + s;", cudaStorageType(t),
            channels * inner, channels * inner);
  body.line("{} acc = ({})0;", ct, ct);
  body.line("const int lo = c - {} < 0 ? 0 : c - {};", before, before);
  body.line("const int hi = c + {} > {} ? {} : c + {};", after, channels - 1, channels - 1, after);
  {
    auto window = body.block("for (int k = lo; k <= hi; ++k)");
    body.line("const {} v = dlc_load(x[({})k * {}]);", ct, idx, inner);
    body.line("acc += v * v;");
  }
  body.line("const {} scale = pow({} + {} * acc, {});", ct, cudaLiteral(node.getFloat("bias"), t),
            cudaLiteral(static_cast<double>(node.getFloat("alpha")) / static_cast<double>(size), t),
            cudaLiteral(node.getFloat("beta"), t));
  body.line("const {} y = dlc_load(x[({})c * {}]) / scale;", ct, idx, inner);
  return finishPerOutput(body, loop, group, y, params, count, opts);
}

/// The statement that merges another share `other` of a global pool into `acc`.
std::string mergeShare(const Node &node, const std::string &other) {
  return node.op() == Op::kGlobalMaxPool ? fmt::format("acc = dlc_max(acc, {});", other)
                                         : fmt::format("acc += {};", other);
}

/// Combines the shares of a warp: `acc` of every lane ends up holding the whole.
void warpReduce(CodeWriter &w, const Node &node) {
  auto loop = w.block("for (int s = 16; s > 0; s >>= 1)");
  w.line("const {} other = __shfl_xor_sync(0xffffffffu, acc, s);",
         cudaComputeType(node.input(0)->dtype()));
  w.line("{}", mergeShare(node, "other"));
}

/// A global pool of a channels-last X [N, spatial..., C]: a block per 32 consecutive channels
/// of an image, its 8 warps each taking every 8th pixel (a warp's loads are 32 neighbouring
/// channels of one pixel: coalesced), their shares combined through shared memory in a fixed
/// order by the first warp, which runs the epilogue on output n * C + c (Y is [N, C, 1, ...]).
/// The layout pass sets channels_last where the pool reads a channels-last convolution's
/// output, in place of a transpose to NCHW before the per-plane kernel.
Expected<KernelSet> emitGlobalChannelsLast(const FusedGroup &group, const EmitOptions &opts) {
  const Node &node = *group.anchor;
  const Value *x = node.input(0), *y = node.output(0);
  const std::vector<int64_t> xs = staticSizes(x);
  const int64_t images = xs[0], channels = xs.back();
  const int64_t pixels =
      images * channels == 0 ? 0 : x->shape().numElements().value_or(0) / (images * channels);
  const DType t = x->dtype();
  const std::string ct = cudaComputeType(t);
  const int64_t groups = (channels + 31) / 32, blocks = images * groups;
  ParamList params;
  params.read(x);
  const std::string idx = indexType(params);

  CodeWriter body;
  body.line("__shared__ {} part[8][33];", ct);
  body.line("const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;");
  auto loop = body.block("for ({0} b = blockIdx.x; b < {1}; b += gridDim.x)", idx, blocks);
  body.line("const {} n = b / {}, c = (b % {}) * 32 + lane;", idx, groups, groups);
  body.line("{} acc = {};", ct, initValue(node));
  {
    auto inside = body.block("if (c < {})", channels);
    body.line("const {} *__restrict__ x = in0 + n * {} + c;", cudaStorageType(t),
              pixels * channels);
    body.line("#pragma unroll 4");
    body.line("for (int j = warp; j < {}; j += 8)", pixels);
    body.line("  {}", accumulate(node, fmt::format("dlc_load(x[({})j * {}])", idx, channels)));
  }
  body.line("part[warp][lane] = acc;");
  body.line("__syncthreads();");
  {
    auto first = body.block("if (warp == 0 && c < {})", channels);
    body.line("acc = part[0][lane];");
    body.line("#pragma unroll");
    body.line("for (int w = 1; w < 8; ++w)");
    body.line("  {}", mergeShare(node, "part[w][lane]"));
    body.line("const {} y = {};", ct, finalValue(node, "acc", fmt::format("{}", pixels)));
    body.line("const {} p = n * {} + c;", idx, channels);
    std::vector<const Value *> stored;
    DLC_RETURN_IF_ERROR(emitEpilogue(body, group, y, {"y", false}, "p", params, "v", stored));
    DLC_RETURN_IF_ERROR(checkAllStored(group, stored));
  }
  body.line("__syncthreads();");
  loop.close();

  Kernel k;
  k.name = group.name;
  finishKernel(k, params, 256, body);
  k.launch.block[0] = 256;
  k.launch.grid[0] = static_cast<uint32_t>(
      std::max<int64_t>(1, std::min<int64_t>(blocks, int64_t{opts.numSms} * 8)));
  return single(std::move(k));
}

Expected<KernelSet> emitGlobal(const FusedGroup &group, const EmitOptions &opts) {
  const Node &node = *group.anchor;
  DLC_RETURN_IF_ERROR(check(node));
  if (node.getInt("channels_last") != 0)
    return emitGlobalChannelsLast(group, opts);
  const Value *x = node.input(0), *y = node.output(0);
  const std::vector<int64_t> xs = staticSizes(x);
  const int64_t planes = xs[0] * xs[1];
  const int64_t plane = planes == 0 ? 0 : x->shape().numElements().value_or(0) / planes;
  const DType t = x->dtype();
  const std::string ct = cudaComputeType(t);
  const bool perWarp = plane <= kWarpPlane;
  ParamList params;
  params.read(x);
  const std::string idx = indexType(params);

  CodeWriter body;
  if (perWarp) {
    body.line("const int lane = threadIdx.x & 31;");
  } else {
    body.line("__shared__ {} part[8];", ct);
    body.line("const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;");
  }
  auto loop = perWarp
                  ? body.block("for ({0} p = ({0})blockIdx.x * 8 + (threadIdx.x >> 5); p < {1}; "
                               "p += ({0})gridDim.x * 8)",
                               idx, planes)
                  : body.block("for ({0} p = blockIdx.x; p < {1}; p += gridDim.x)", idx, planes);
  body.line("const {} *__restrict__ x = in0 + p * {};", cudaStorageType(t), plane);
  body.line("{} acc = {};", ct, initValue(node));
  body.line("for (int j = {}; j < {}; j += {})", perWarp ? "lane" : "threadIdx.x", plane,
            perWarp ? 32 : 256);
  body.line("  {}", accumulate(node, "dlc_load(x[j])"));
  warpReduce(body, node);
  if (!perWarp) {
    body.line("if (lane == 0)");
    body.line("  part[warp] = acc;");
    body.line("__syncthreads();");
    body.line("acc = lane < 8 ? part[lane] : {};", initValue(node));
    warpReduce(body, node);
    body.line("__syncthreads();");
  }
  {
    auto first = body.block("if ({} == 0)", perWarp ? "lane" : "threadIdx.x");
    body.line("const {} y = {};", ct, finalValue(node, "acc", fmt::format("{}", plane)));
    std::vector<const Value *> stored;
    DLC_RETURN_IF_ERROR(emitEpilogue(body, group, y, {"y", false}, "p", params, "v", stored));
    DLC_RETURN_IF_ERROR(checkAllStored(group, stored));
  }
  loop.close();

  Kernel k;
  k.name = group.name;
  finishKernel(k, params, 256, body);
  k.launch.block[0] = 256;
  const int64_t blocks = perWarp ? (planes + 7) / 8 : planes;
  k.launch.grid[0] = static_cast<uint32_t>(
      std::max<int64_t>(1, std::min<int64_t>(blocks, int64_t{opts.numSms} * 32)));
  return single(std::move(k));
}

Expected<KernelSet> emit(const FusedGroup &group, const EmitOptions &opts) {
  if (!group.anchor)
    return invalidArgument("a pooling group needs an anchor");
  if (group.anchor->op() == Op::kLRN)
    return emitLrn(group, opts);
  return ops::isGlobalPool(group.anchor->op()) ? emitGlobal(group, opts)
                                               : emitWindowed(group, opts);
}

} // namespace

Family poolFamily() { return {"pool", claims, supports, emit}; }

} // namespace dlc::codegen
