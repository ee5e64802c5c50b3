// Reduction family: Reduce* (axes from the constant input 1, keepdims, noop_with_empty_axes),
// ArgMax/ArgMin here; Softmax, LogSoftmax, Hardmax and the normalisations in
// reduction_rows.cc. Prologues and epilogues of elementwise nodes are fused (reduction_util.h).
//
// A reduction over any set of axes views the input as outputs x reduced elements: dims of size
// 1 are dropped, adjacent kept (or reduced) dims merged, and each output `o` and reduced element
// `r` become offsets by div/mod against baked constants. Then, by where the innermost dim goes:
//
//   innermost dim reduced (rows):  R <= 16      one thread per output
//                                  R <= 2048    one warp per output (8 per block)
//                                  R >= 32768, fewer outputs than SMs
//                                               two passes: blocks reduce chunks of a row into
//                                               a scratch buffer, a second kernel merges them
//                                  otherwise    one block per output
//   innermost dim kept (columns):  R <= 16      one thread per output (coalesced across threads)
//                                  otherwise    32 x 8 blocks: 32 consecutive outputs, 8 threads
//                                               splitting the reduced elements, merged in
//                                               shared memory (two passes, chunks of R, when
//                                               R >= 4096 and there are fewer blocks than SMs)
//
// Rows whose reduced elements are contiguous use 16-byte loads when the buffers are aligned
// (checked at run time). Accumulators are per-kernel structs (add, merge, shfl); every merge
// order is fixed, so results are deterministic (no atomics). Floats accumulate in float (double
// for f64); integers wrap in 64 bits like the reference's wrapping arithmetic in the element
// type; Max/Min let NaN win; LogSumExp keeps (max, scaled sum) so exp cannot overflow.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "codegen/cuda_prelude.h"
#include "codegen/emitters.h"
#include "codegen/reduction_util.h"

namespace dlc::codegen {
namespace {

using namespace reduction;

bool isReduce(Op op) {
  switch (op) {
  case Op::kReduceL1:
  case Op::kReduceL2:
  case Op::kReduceLogSum:
  case Op::kReduceLogSumExp:
  case Op::kReduceMax:
  case Op::kReduceMean:
  case Op::kReduceMin:
  case Op::kReduceProd:
  case Op::kReduceSum:
  case Op::kReduceSumSquare:
    return true;
  default:
    return false;
  }
}

bool isRowOp(Op op) {
  switch (op) {
  case Op::kSoftmax:
  case Op::kLogSoftmax:
  case Op::kHardmax:
  case Op::kLayerNormalization:
  case Op::kInstanceNormalization:
  case Op::kGroupNormalization:
  case Op::kLpNormalization:
    return true;
  default:
    return false;
  }
}

bool claims(const Node *anchor) {
  return anchor && (isReduce(anchor->op()) || anchor->op() == Op::kArgMax ||
                    anchor->op() == Op::kArgMin || isRowOp(anchor->op()));
}

/// Which input dims a Reduce*/ArgMax node reduces.
std::vector<bool> reducedDims(const Node &n) {
  const int64_t rank = n.input(0)->shape().rank();
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  if (!isReduce(n.op())) {
    reduced[static_cast<size_t>(*normalizeAxis(n.getInt("axis"), rank))] = true;
    return reduced;
  }
  const Value *axes = n.input(1);
  if (axes && axes->constant().numElements() > 0) {
    for (int64_t a : axes->constant().toInt64Vector())
      reduced[static_cast<size_t>(*normalizeAxis(a, rank))] = true;
  } else if (n.getInt("noop_with_empty_axes") == 0) {
    reduced.assign(reduced.size(), true);
  }
  return reduced;
}

bool supports(const Node &node, std::string *why) {
  const DType t = node.input(0)->dtype();
  const Op op = node.op();
  auto no = [&](std::string reason) {
    *why = fmt::format("{}: {}", node.opName(), reason);
    return false;
  };
  if (isReduce(op)) {
    const bool maxMin = op == Op::kReduceMax || op == Op::kReduceMin;
    if (!isNumeric(t) && !(maxMin && t == DType::kBool))
      return no(fmt::format("{} input has no GPU kernel", dtypeName(t)));
    if (node.hasInput(1) && !node.input(1)->isConstant())
      return no(fmt::format("axes input '{}' is not a constant", node.input(1)->name()));
    if (op == Op::kReduceMean && isInteger(t)) {
      const auto shape = node.input(0)->shape().sizes();
      const auto reduced = reducedDims(node);
      int64_t len = 1;
      for (size_t d = 0; d < shape.size(); ++d)
        len *= reduced[d] ? shape[d] : 1;
      if (len == 0)
        return no("the integer mean of an empty set is undefined");
    }
    return true;
  }
  if (op == Op::kArgMax || op == Op::kArgMin) {
    if (!isNumeric(t))
      return no(fmt::format("{} input has no GPU kernel", dtypeName(t)));
    const auto shape = node.input(0)->shape().sizes();
    auto axis = normalizeAxis(node.getInt("axis"), static_cast<int64_t>(shape.size()));
    if (!axis)
      return no(std::string(axis.status().message()));
    if (shape[static_cast<size_t>(*axis)] == 0)
      return no(fmt::format("axis {} is empty", *axis));
    return true;
  }
  if (!isFloat(t))
    return no(fmt::format("{} input has no GPU kernel", dtypeName(t)));
  return true;
}

// --- The [outputs x reduced] view -------------------------------------------------------------

struct AxisRun {
  int64_t size, stride;
};

struct ReduceView {
  std::vector<AxisRun> kept, reduced; // outer to inner
  int64_t outputs = 1, len = 1;
  bool innerReduced = true; // the innermost dim is reduced (or none is kept)
  bool contiguous = true;   // element r of output o is at base(o) + r
  bool wide = false;        // 64-bit flat indices
};

ReduceView makeView(const std::vector<int64_t> &shape, const std::vector<bool> &reduced) {
  ReduceView v;
  for (size_t d = 0; d < shape.size(); ++d)
    (reduced[d] ? v.len : v.outputs) *= shape[d];
  v.wide = wideIndex(product(shape)) || wideIndex(v.outputs);
  if (v.len == 0 || v.outputs == 0)
    return v;
  std::vector<std::pair<int64_t, bool>> runs;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1)
      continue;
    if (!runs.empty() && runs.back().second == reduced[d])
      runs.back().first *= shape[d];
    else
      runs.emplace_back(shape[d], reduced[d]);
  }
  int64_t stride = 1;
  std::vector<AxisRun> kept, red;
  for (size_t i = runs.size(); i-- > 0;) {
    std::vector<AxisRun> &list = runs[i].second ? red : kept;
    list.insert(list.begin(), AxisRun{runs[i].first, stride});
    stride *= runs[i].first;
  }
  v.kept = std::move(kept);
  v.reduced = std::move(red);
  v.innerReduced = runs.empty() || runs.back().second;
  v.contiguous = v.innerReduced && v.reduced.size() <= 1;
  return v;
}

/// The flat input offset of index `idx` over `runs` (innermost fastest).
std::string offsetExpr(const std::vector<AxisRun> &runs, const std::string &idx, bool wide) {
  const char *ll = wide ? "LL" : "";
  std::string e;
  int64_t inner = 1;
  for (size_t i = runs.size(); i-- > 0;) {
    std::string coord = inner == 1 ? idx : fmt::format("({} / {}{})", idx, inner, ll);
    if (i != 0)
      coord = fmt::format("({} % {}{})", coord, runs[i].size, ll);
    const std::string term =
        runs[i].stride == 1 ? coord : fmt::format("{} * {}{}", coord, runs[i].stride, ll);
    e = e.empty() ? term : term + " + " + e;
    inner *= runs[i].size;
  }
  return e.empty() ? "0" : "(" + e + ")";
}

// --- Accumulators -----------------------------------------------------------------------------

/// Writes statements of an accumulator's member function.
using Statements = std::function<void(CodeWriter &)>;

/// Statements that are `text`, one line each (a brace-less body indents itself).
Statements lines(std::vector<std::string> text) {
  return [text = std::move(text)](CodeWriter &w) {
    for (const std::string &l : text)
      w.line("{}", l);
  };
}

struct Accumulator {
  std::string type;   // field type
  bool pair = false;  // LogSumExp: (max v, scaled sum s)
  bool index = false; // ArgMax/ArgMin: (value v, index i)
  std::string init;
  Statements add;     // the body of add(x, j) (beats(x, j) for index accumulators)
  Statements merge;   // the body of merge(o)
  std::string result; // C expression of the result from accumulator `a`
  uint64_t bytes() const {
    const uint64_t t = type == "float" || type == "int" ? 4 : 8;
    return pair ? 2 * t : index ? 16 : t;
  }
};

std::string source(const Accumulator &acc, const std::string &name, DType in) {
  const std::string c = cudaComputeType(in);
  CodeWriter w;
  auto def = w.blockSemi("struct {}", name);
  w.line("{} v;", acc.type);
  if (acc.pair)
    w.line("{} s;", acc.type);
  if (acc.index)
    w.line("long long i;");
  w.line("static __device__ __forceinline__ {} init() {{ return {{{}}}; }}", name, acc.init);
  if (acc.index) {
    {
      auto beats =
          w.block("__device__ __forceinline__ bool beats({} x, long long j) const", acc.type);
      if (acc.add)
        acc.add(w);
    }
    auto add = w.block("__device__ __forceinline__ void add({} x, long long j)", c);
    w.line("if (beats(x, j)) {{ v = x; i = j; }}");
  } else {
    auto add = w.block("__device__ __forceinline__ void add({} x, long long)", c);
    if (acc.add)
      acc.add(w);
  }
  {
    auto merge = w.block("__device__ __forceinline__ void merge(const {} &o)", name);
    if (acc.merge)
      acc.merge(w);
  }
  {
    auto shfl = w.block("__device__ __forceinline__ {} shfl(int off) const", name);
    w.line("return {{__shfl_xor_sync(0xffffffffu, v, off){}}};",
           acc.pair    ? ", __shfl_xor_sync(0xffffffffu, s, off)"
           : acc.index ? ", __shfl_xor_sync(0xffffffffu, i, off)"
                       : "");
  }
  def.close();
  return w.str();
}

Accumulator argAccumulator(const Node &n) {
  const DType t = n.input(0)->dtype();
  Accumulator a;
  a.index = true;
  a.type = isFloat(t) ? (t == DType::kF64 ? "double" : "float")
                      : (isSignedInt(t) ? "long long" : "unsigned long long");
  a.init = fmt::format("({})0, -1LL", a.type);
  const char *cmp = n.op() == Op::kArgMax ? ">" : "<";
  const char *order = n.getInt("select_last_index") != 0 ? ">" : "<";
  // Like the reference: NaN ranks above every number; equal values go by index.
  a.add = lines({"if (i < 0)", "  return true;", "if (x != x)",
                 fmt::format("  return v == v || j {} i;", order), "if (v != v)", "  return false;",
                 fmt::format("return x {0} v || (x == v && j {1} i);", cmp, order)});
  a.merge = [](CodeWriter &w) {
    auto won = w.block("if (o.i >= 0 && beats(o.v, o.i))");
    w.line("v = o.v;");
    w.line("i = o.i;");
  };
  a.result = "a.i";
  return a;
}

Accumulator reduceAccumulator(const Node &n, int64_t len) {
  const DType t = n.input(0)->dtype();
  const Op op = n.op();
  const std::string c = cudaComputeType(t);
  const bool viaDouble =
      op == Op::kReduceL2 || op == Op::kReduceLogSum || op == Op::kReduceLogSumExp;
  const bool maxMin = op == Op::kReduceMax || op == Op::kReduceMin;
  Accumulator a;
  if (isFloat(t))
    a.type = t == DType::kF64 ? "double" : "float";
  else if (t == DType::kBool)
    a.type = "int";
  else if (viaDouble)
    a.type = "double";
  else if (maxMin)
    a.type = isSignedInt(t) ? "long long" : "unsigned long long";
  else
    a.type = "unsigned long long"; // wraps like the reference's arithmetic in the element type
  const DType accFloat = a.type == "float" ? DType::kF32 : DType::kF64;
  const double inf = std::numeric_limits<double>::infinity();
  auto finish = [&](const std::string &e) {
    return isFloat(t) ? fmt::format("({})({})", c, e)
                      : fmt::format("dlc_float_to_int<{}>({})", c, e);
  };
  a.init = "0";
  a.merge = lines({"v += o.v;"});
  a.result = fmt::format("({})(a.v)", c);
  switch (op) {
  case Op::kReduceSum:
  case Op::kReduceMean:
  case Op::kReduceLogSum:
    a.add = lines({fmt::format("v += ({})x;", a.type)});
    break;
  case Op::kReduceSumSquare:
  case Op::kReduceL2:
    a.add = lines({fmt::format("const {0} y = ({0})x;", a.type), "v += y * y;"});
    break;
  case Op::kReduceL1:
    a.add = lines({fmt::format("v += ({})dlc_abs(x);", a.type)});
    break;
  case Op::kReduceProd:
    a.init = "1";
    a.add = lines({fmt::format("v *= ({})x;", a.type)});
    a.merge = lines({"v *= o.v;"});
    break;
  case Op::kReduceMax:
  case Op::kReduceMin: {
    const bool isMax = op == Op::kReduceMax;
    if (t == DType::kBool)
      a.init = isMax ? "0" : "1";
    else if (isFloat(t))
      a.init = cudaLiteral(isMax ? -inf : inf, accFloat);
    else
      a.init = fmt::format("({})dlc_limits<{}>::{}()", a.type, c, isMax ? "min" : "max");
    const char *f = isMax ? "dlc_max" : "dlc_min";
    a.add = lines({fmt::format("v = {}(v, ({})x);", f, a.type)});
    a.merge = lines({fmt::format("v = {}(v, o.v);", f)});
    break;
  }
  case Op::kReduceLogSumExp: {
    a.pair = true;
    const std::string ninf = cudaLiteral(-inf, accFloat);
    a.init = ninf + ", 0";
    // v is the largest element so far (NaN sticks), s the sum of exp(element - v).
    a.add = [type = a.type, ninf](CodeWriter &w) {
      w.line("const {0} y = ({0})x;", type);
      auto larger = w.block("if (y > v || y != y)");
      w.line("s = s * exp(v - y) + 1;");
      w.line("v = y;");
      larger.chain("else if (y != {})", ninf);
      w.line("s += exp(y - v);");
    };
    a.merge = lines({fmt::format("const {} m = dlc_max(v, o.v);", a.type),
                     "s = (v == m ? s : s * exp(v - m)) + (o.v == m ? o.s : o.s * exp(o.v - m));",
                     "v = m;"});
    a.result = finish("isinf(a.v) || isnan(a.v) ? a.v : a.v + log(a.s)");
    break;
  }
  default:
    break;
  }
  if (op == Op::kReduceMean && isFloat(t) && len == 0) // 0 / 0, without NVRTC's warning
    a.result = fmt::format("({}){}", c, cudaLiteral(std::nan(""), accFloat));
  else if (op == Op::kReduceMean)
    a.result = isFloat(t)       ? fmt::format("({})(a.v / ({}){})", c, a.type, len)
               : isSignedInt(t) ? fmt::format("({})((long long)a.v / {}LL)", c, len)
                                : fmt::format("({})(a.v / {}ULL)", c, len);
  else if (op == Op::kReduceL2)
    a.result = finish("sqrt(a.v)");
  else if (op == Op::kReduceLogSum)
    a.result = finish("log(a.v)");
  return a;
}

// --- Kernels ----------------------------------------------------------------------------------

enum class Strategy { kThread, kWarpRow, kBlockRow, kColumn, kTwoPassRow, kTwoPassColumn };

struct Plan {
  ReduceView view;
  Accumulator acc;
  Strategy strategy = Strategy::kThread;
  int threads = 256;    // block size of the main kernel
  int64_t chunks = 1;   // two-pass: partials per output
  int64_t chunkLen = 0; // two-pass: reduced elements per partial
};

Plan choose(const ReduceView &v, const EmitOptions &opts) {
  Plan p;
  p.view = v;
  const int64_t o = v.outputs, r = v.len;
  if (r <= 16 || o == 0) {
    p.strategy = Strategy::kThread;
  } else if (v.innerReduced) {
    if (r <= 2048) {
      p.strategy = Strategy::kWarpRow;
    } else if (o < opts.numSms && r >= 32768) {
      p.strategy = Strategy::kTwoPassRow;
      const int64_t want = std::max<int64_t>(2, std::min((4 * opts.numSms + o - 1) / o, r / 8192));
      p.chunkLen = ((r + want - 1) / want + 15) / 16 * 16;
      p.chunks = (r + p.chunkLen - 1) / p.chunkLen;
    } else {
      p.strategy = Strategy::kBlockRow;
      p.threads = r <= 16384 ? 256 : 512;
    }
  } else {
    const int64_t blocks = (o + 31) / 32;
    if (blocks < opts.numSms && r >= 4096) {
      p.strategy = Strategy::kTwoPassColumn;
      const int64_t want =
          std::max<int64_t>(2, std::min((2 * opts.numSms + blocks - 1) / blocks, r / 512));
      p.chunkLen = (r + want - 1) / want;
      p.chunks = (r + p.chunkLen - 1) / p.chunkLen;
    } else {
      p.strategy = Strategy::kColumn;
    }
  }
  return p;
}

class ReduceEmitter {
public:
  ReduceEmitter(GroupParts &parts, const Plan &plan, const EmitOptions &opts)
      : parts_(parts), plan_(plan), v_(plan.view), opts_(opts), idx_(v_.wide ? "long long" : "int"),
        cType_(cudaComputeType(parts.data()->dtype())) {}

  Expected<KernelSet> emit();

private:
  std::string k() const { return parts_.kernel(); }
  std::string acc() const { return k() + "_acc"; }
  std::string base() const { return offsetExpr(v_.kept, "o", v_.wide); }
  void header(CodeWriter &w, bool vectors) const {
    w.raw(source(plan_.acc, acc(), parts_.data()->dtype()));
    emitCollectives(w, k());
    if (vectors)
      parts_.emitVectorType(w);
  }
  /// Reduces elements [begin, end) (stepping by `step` from `first`) of output `o` into `a`.
  Status stridedLoop(CodeWriter &w, const std::string &first, const std::string &end,
                     int64_t step) const;
  /// Reduces the contiguous row of output `o` over columns [begin, end) into `a`, with vector
  /// loads when aligned.
  Status rowLoop(CodeWriter &w, int threads, const std::string &begin, const std::string &end,
                 int vec) const;
  Status finishOutput(CodeWriter &w) const { return parts_.store(w, "o", plan_.acc.result, "e"); }
  Expected<Kernel> threadKernel();
  Expected<Kernel> rowKernel(bool partial);
  Expected<Kernel> columnKernel(bool partial);
  Expected<Kernel> finishKernel(bool rows);

  GroupParts &parts_;
  const Plan &plan_;
  const ReduceView &v_;
  const EmitOptions &opts_;
  std::string idx_, cType_;
};

Status ReduceEmitter::stridedLoop(CodeWriter &w, const std::string &first, const std::string &end,
                                  int64_t step) const {
  auto loop = w.block("for ({0} r = {1}; r < {2}; r += {3})", idx_, first, end, step);
  w.line("const {} idx = base + {};", idx_, offsetExpr(v_.reduced, "r", v_.wide));
  DLC_ASSIGN_OR_RETURN(std::string x, parts_.element(w, "idx", "p"));
  w.line("a.add({}, r);", x);
  return Status::ok();
}

Status ReduceEmitter::rowLoop(CodeWriter &w, int threads, const std::string &begin,
                              const std::string &end, int vec) const {
  const std::string lane = threads == 1 ? "0" : "lane";
  RowHooks hooks;
  hooks.body = [](CodeWriter &w, const std::string &x, const std::string &col,
                  const std::string &) {
    w.line("a.add({}, {});", x, col);
    return Status::ok();
  };
  auto pass = [&](int vw) {
    RowShape s{v_.len, threads, vw, v_.wide};
    return emitLoadPass(w, parts_, s, "base", lane, "", hooks, begin, end);
  };
  if (vec == 1)
    return pass(1);
  auto aligned = w.block("if (aligned)");
  DLC_RETURN_IF_ERROR(pass(vec));
  aligned.chain("else");
  return pass(1);
}

Expected<Kernel> ReduceEmitter::threadKernel() {
  Kernel kern;
  kern.name = k();
  CodeWriter w;
  header(w, false);
  const std::string params = parts_.declareParams(kern);
  {
    auto fn = w.block("extern \"C\" __global__ void __launch_bounds__(256) {}({})", k(), params);
    auto loop = w.block("for ({0} o = blockIdx.x * ({0})blockDim.x + threadIdx.x; o < {1}; o += "
                        "({0})gridDim.x * blockDim.x)",
                        idx_, v_.outputs);
    w.line("const {} base = {};", idx_, base());
    w.line("{0} a = {0}::init();", acc());
    DLC_RETURN_IF_ERROR(stridedLoop(w, "0", std::to_string(v_.len), 1));
    DLC_RETURN_IF_ERROR(finishOutput(w));
  }
  kern.source = w.str();
  kern.prelude = w.requirements();
  kern.launch = gridStrideLaunch(v_.outputs, opts_);
  return kern;
}

Expected<Kernel> ReduceEmitter::rowKernel(bool partial) {
  const bool warp = plan_.strategy == Strategy::kWarpRow;
  const int threads = warp ? 32 : plan_.threads;
  int vec = v_.contiguous ? parts_.vectorWidth(v_.len, false) : 1;
  while (vec > 1 && v_.len / vec < threads) // keep every thread busy
    vec /= 2;
  Kernel kern;
  kern.name = k();
  CodeWriter w;
  header(w, vec > 1);
  const std::string params = parts_.declareParams(kern, partial, true);
  auto fn = w.block("extern \"C\" __global__ void __launch_bounds__({}) {}({})", plan_.threads, k(),
                    params);
  w.line("const int lane = threadIdx.x{};", warp ? " & 31" : "");
  if (vec > 1)
    w.line("const bool aligned = {};", parts_.alignedCondition(vec, false));
  std::string begin = "0", end = std::to_string(v_.len);
  if (partial) {
    w.line("const {} o = blockIdx.x / {};", idx_, plan_.chunks);
    w.line("const {0} c0 = ({0})(blockIdx.x % {1}) * {2};", idx_, plan_.chunks, plan_.chunkLen);
    w.line("const {0} c1 = min(c0 + {1}, ({0}){2});", idx_, plan_.chunkLen, v_.len);
    begin = "c0";
    end = "c1";
  }
  const int perBlock = plan_.threads / 32;
  auto outputs =
      partial ? w.block("")
      : warp  ? w.block("for ({0} o = ({0})blockIdx.x * {1} + (threadIdx.x >> 5); o < {2}; o += "
                         "({0})gridDim.x * {1})",
                        idx_, perBlock, v_.outputs)
              : w.block("for ({0} o = blockIdx.x; o < {1}; o += gridDim.x)", idx_, v_.outputs);
  w.line("const {} base = {};", idx_, base());
  w.line("{0} a = {0}::init();", acc());
  if (v_.contiguous) {
    DLC_RETURN_IF_ERROR(rowLoop(w, threads, begin, end, vec));
  } else {
    DLC_RETURN_IF_ERROR(stridedLoop(w, begin + " + lane", end, threads));
  }
  w.line("a = {}(a);", RowShape{0, threads, 1, false}.collective(k()));
  {
    auto first = w.block("if (lane == 0)");
    if (partial)
      w.line("reinterpret_cast<{} *>(scratch)[blockIdx.x] = a;", acc());
    else
      DLC_RETURN_IF_ERROR(finishOutput(w));
  }
  outputs.close();
  fn.close();
  kern.source = w.str();
  kern.prelude = w.requirements();
  kern.launch.block[0] = static_cast<uint32_t>(plan_.threads);
  const int64_t blocks = partial ? v_.outputs * plan_.chunks
                         : warp  ? (v_.outputs + plan_.threads / 32 - 1) / (plan_.threads / 32)
                                 : v_.outputs;
  kern.launch.grid[0] = static_cast<uint32_t>(
      std::clamp<int64_t>(blocks, 1, partial ? blocks : int64_t{opts_.numSms} * 32));
  return kern;
}

Expected<Kernel> ReduceEmitter::columnKernel(bool partial) {
  Kernel kern;
  kern.name = k();
  CodeWriter w;
  header(w, false);
  const std::string params = parts_.declareParams(kern, partial, true);
  auto fn = w.block("extern \"C\" __global__ void __launch_bounds__(256) {}({})", k(), params);
  w.line("__shared__ {} sh[8][32];", acc());
  std::string first = "threadIdx.y", end = std::to_string(v_.len);
  if (partial) {
    w.line("const {0} r0 = ({0})blockIdx.y * {1};", idx_, plan_.chunkLen);
    w.line("const {0} r1 = min(r0 + {1}, ({0}){2});", idx_, plan_.chunkLen, v_.len);
    first = "r0 + threadIdx.y";
    end = "r1";
  }
  {
    auto loop = w.block("for ({0} ob = ({0})blockIdx.x * 32; ob < {1}; ob += ({0})gridDim.x * 32)",
                        idx_, v_.outputs);
    w.line("const {} o = ob + threadIdx.x;", idx_);
    w.line("{0} a = {0}::init();", acc());
    {
      auto inRange = w.block("if (o < {})", v_.outputs);
      w.line("const {} base = {};", idx_, base());
      DLC_RETURN_IF_ERROR(stridedLoop(w, first, end, 8));
    }
    w.line("sh[threadIdx.y][threadIdx.x] = a;");
    w.line("__syncthreads();");
    {
      auto merge = w.block("if (threadIdx.y == 0 && o < {})", v_.outputs);
      w.line("#pragma unroll");
      w.line("for (int y = 1; y < 8; ++y)");
      w.line("  a.merge(sh[y][threadIdx.x]);");
      if (partial)
        w.line("reinterpret_cast<{} *>(scratch)[blockIdx.y * {}LL + o] = a;", acc(), v_.outputs);
      else
        DLC_RETURN_IF_ERROR(finishOutput(w));
    }
    w.line("__syncthreads();");
  }
  fn.close();
  kern.source = w.str();
  kern.prelude = w.requirements();
  kern.launch.block[0] = 32;
  kern.launch.block[1] = 8;
  kern.launch.grid[0] = static_cast<uint32_t>(
      std::clamp<int64_t>((v_.outputs + 31) / 32, 1, int64_t{opts_.numSms} * 64));
  kern.launch.grid[1] = static_cast<uint32_t>(partial ? plan_.chunks : 1);
  return kern;
}

/// Merges the partials of each output (rows: o * chunks + c, by a warp; columns:
/// c * outputs + o, by a thread) and stores the result.
Expected<Kernel> ReduceEmitter::finishKernel(bool rows) {
  Kernel kern;
  kern.name = k();
  CodeWriter w;
  header(w, false);
  const std::string params = parts_.declareParams(kern, true, false);
  auto fn = w.block("extern \"C\" __global__ void __launch_bounds__(256) {}({})", k(), params);
  w.line("const {0} *partials = reinterpret_cast<const {0} *>(scratch);", acc());
  if (rows)
    w.line("const int lane = threadIdx.x & 31;");
  auto loop = rows ? w.block("for ({0} o = ({0})blockIdx.x * 8 + (threadIdx.x >> 5); o < {1}; o += "
                             "({0})gridDim.x * 8)",
                             idx_, v_.outputs)
                   : w.block("for ({0} o = blockIdx.x * ({0})blockDim.x + threadIdx.x; o < {1}; "
                             "o += ({0})gridDim.x * blockDim.x)",
                             idx_, v_.outputs);
  w.line("{0} a = {0}::init();", acc());
  if (rows) {
    w.line("for (int c = lane; c < {0}; c += 32)", plan_.chunks);
    w.line("  a.merge(partials[o * {} + c]);", plan_.chunks);
    w.line("a = {}_warp(a);", k());
  } else {
    w.line("for (int c = 0; c < {}; ++c)", plan_.chunks);
    w.line("  a.merge(partials[c * {}LL + o]);", v_.outputs);
  }
  {
    auto store = w.block("{}", rows ? "if (lane == 0)" : "");
    DLC_RETURN_IF_ERROR(finishOutput(w));
  }
  loop.close();
  fn.close();
  kern.source = w.str();
  kern.prelude = w.requirements();
  kern.launch =
      rows ? gridStrideLaunch(v_.outputs * 32, opts_) : gridStrideLaunch(v_.outputs, opts_);
  return kern;
}

Expected<KernelSet> ReduceEmitter::emit() {
  KernelSet set;
  switch (plan_.strategy) {
  case Strategy::kThread: {
    DLC_ASSIGN_OR_RETURN(Kernel kern, threadKernel());
    set.kernels.push_back(std::move(kern));
    return set;
  }
  case Strategy::kWarpRow:
  case Strategy::kBlockRow: {
    DLC_ASSIGN_OR_RETURN(Kernel kern, rowKernel(false));
    set.kernels.push_back(std::move(kern));
    return set;
  }
  case Strategy::kColumn: {
    DLC_ASSIGN_OR_RETURN(Kernel kern, columnKernel(false));
    set.kernels.push_back(std::move(kern));
    return set;
  }
  case Strategy::kTwoPassRow:
  case Strategy::kTwoPassColumn:
    break;
  }
  const bool rows = plan_.strategy == Strategy::kTwoPassRow;
  const std::string name = k();
  set.scratchBytes.push_back(static_cast<uint64_t>(v_.outputs * plan_.chunks) * plan_.acc.bytes());
  parts_.setKernel(name + "_partial");
  DLC_ASSIGN_OR_RETURN(Kernel first, rows ? rowKernel(true) : columnKernel(true));
  parts_.setKernel(name + "_finish");
  DLC_ASSIGN_OR_RETURN(Kernel second, finishKernel(rows));
  parts_.setKernel(name);
  set.kernels.push_back(std::move(first));
  set.kernels.push_back(std::move(second));
  return set;
}

Expected<KernelSet> emitReduce(const FusedGroup &group, const EmitOptions &opts) {
  DLC_ASSIGN_OR_RETURN(GroupParts parts, GroupParts::make(group, group.name));
  const Node &n = parts.anchor();
  ReduceView view = makeView(parts.inShape(), reducedDims(n));
  Plan plan = choose(view, opts);
  plan.acc = isReduce(n.op()) ? reduceAccumulator(n, view.len) : argAccumulator(n);
  return ReduceEmitter(parts, plan, opts).emit();
}

Expected<KernelSet> emit(const FusedGroup &group, const EmitOptions &opts) {
  if (!group.anchor)
    return invalidArgument("the group has no reduction anchor");
  std::string why;
  if (!supports(*group.anchor, &why))
    return invalidArgument("{}: {}", group.anchor->describe(), why);
  if (isRowOp(group.anchor->op()))
    return emitRows(group, opts);
  return emitReduce(group, opts);
}

} // namespace

Family reductionFamily() { return {"reduction", claims, supports, emit}; }

} // namespace dlc::codegen
