// Row-wise kernels of the reduction family: Softmax, LogSoftmax, Hardmax, LayerNormalization,
// InstanceNormalization, GroupNormalization, LpNormalization.
//
// Each op normalises rows of contiguous elements ([rows, len]):
//   LayerNormalization      rows = prod(shape[:axis]),  len = prod(shape[axis:])
//   InstanceNormalization   rows = N * C,               len = prod(shape[2:])
//   GroupNormalization      rows = N * groups,          len = C / groups * prod(shape[2:])
//   Softmax, LogSoftmax, Hardmax, LpNormalization: the axis, when it is the innermost non-1 dim;
//   otherwise ([outer, len, inner]) one thread owns each (outer, inner) column and loops over the
//   axis twice, reading `inner` consecutive elements per warp.
// Rows of up to 8 elements take a thread, up to 1024 a warp (8 rows per block), longer ones a
// block of 256/512/1024 threads. A thread keeps its part of the row in registers when it is at
// most 32 elements (warps) or 16 (blocks); longer rows are read again on each pass (softmax then
// uses the online (max, scaled sum) form so that it needs one pass before the write).
// Statistics are computed in float (double for f64): layer norms by two passes (mean, then the
// mean squared deviation), like the reference. With aligned buffers and rows a multiple of the
// vector width, loads and stores are 16 bytes; a layer norm's scale and bias are then loaded
// with the row, so that their latency overlaps its loads instead of following its statistics.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>

#include "codegen/cuda_prelude.h"
#include "codegen/elementwise_chain.h"
#include "codegen/emitters.h"
#include "codegen/reduction_util.h"

namespace dlc::codegen::reduction {
namespace {

struct Layout {
  int64_t rows = 1, len = 1, inner = 1;
};

Expected<Layout> layoutOf(const Node &n, const std::vector<int64_t> &shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  Layout l;
  switch (n.op()) {
  case Op::kLayerNormalization: {
    DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(n.getInt("axis"), rank));
    l.rows = product(shape, 0, static_cast<size_t>(axis));
    l.len = product(shape, static_cast<size_t>(axis), shape.size());
    return l;
  }
  case Op::kInstanceNormalization:
  case Op::kGroupNormalization: {
    if (rank < 2)
      return invalidArgument("{}: input has rank {}, expected at least 2", n.describe(), rank);
    const int64_t groups = n.op() == Op::kGroupNormalization ? n.getInt("num_groups") : shape[1];
    if (groups < 1 || shape[1] % groups != 0)
      return invalidArgument("{}: {} channels do not split into {} groups", n.describe(), shape[1],
                             groups);
    l.rows = shape[0] * groups;
    l.len = shape[1] / groups * product(shape, 2, shape.size());
    return l;
  }
  default: {
    DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(n.getInt("axis"), rank));
    l.rows = product(shape, 0, static_cast<size_t>(axis));
    l.len = shape[static_cast<size_t>(axis)];
    l.inner = product(shape, static_cast<size_t>(axis) + 1, shape.size());
    if (l.inner == 1 || l.len == 1) { // a row of contiguous elements
      l.rows *= l.inner;
      l.inner = 1;
    }
    return l;
  }
  }
}

class RowEmitter {
public:
  RowEmitter(const GroupParts &parts, const Layout &l, const EmitOptions &opts)
      : parts_(parts), n_(parts.anchor()), op_(n_.op()), l_(l), opts_(opts), k_(parts.kernel()),
        c_(cudaComputeType(parts.data()->dtype())), wide_(wideIndex(product(parts.inShape()))),
        idx_(wide_ ? "long long" : "int") {}

  Expected<KernelSet> emit();

private:
  bool normalises() const {
    return op_ == Op::kLayerNormalization || op_ == Op::kInstanceNormalization ||
           op_ == Op::kGroupNormalization;
  }
  std::string lit(double v) const {
    return cudaLiteral(v, parts_.data()->dtype() == DType::kF64 ? DType::kF64 : DType::kF32);
  }
  void structs(CodeWriter &w) const;
  /// `y = gamma * x + beta` operands of the normalisations at column `col` of row `row`.
  Expected<std::pair<std::string, std::string>> affine(const std::string &col) const;
  /// LayerNormalization's scale and bias, when each spans the normalised axes exactly: on the
  /// vector path of a cached row they are loaded into registers with the row (`ga`, `be`), not
  /// after its statistics, whose reductions their loads' latency would follow.
  std::vector<const Value *> affineOperands(const RowShape &s, bool cached) const;
  /// LayerNormalization's normalised axes: shape[axis:].
  std::vector<int64_t> normalisedShape() const;
  Status prefetchAffine(CodeWriter &w, const RowShape &s) const;
  Status rowSetup(CodeWriter &w) const;
  Status rowBody(CodeWriter &w, const RowShape &s, bool cached) const;
  Status writeStatistics(CodeWriter &w, const RowShape &s) const;
  Status columnBody(CodeWriter &w) const;
  /// Computes the output from x (compute type; empty for Hardmax) at `col` into `y`.
  Expected<std::string> outputValue(CodeWriter &w, const std::string &x,
                                    const std::string &col) const;
  RowHooks writeHooks(const RowShape &s, const Hoisted *hoisted = nullptr) const;

  const GroupParts &parts_;
  const Node &n_;
  Op op_;
  Layout l_;
  const EmitOptions &opts_;
  std::string k_, c_;
  bool wide_;
  std::string idx_;
  /// Set while the row body reads the affine operands from `ga`/`be` (prefetchAffine).
  bool affineInRegs_ = false;
};

void RowEmitter::structs(CodeWriter &w) const {
  const std::string ninf = lit(-std::numeric_limits<double>::infinity());
  w.raw(scalarAccumulator(k_ + "_sum", c_, "0", "v += x;", "v += o.v;"));
  // Softmax's peak ignores NaN like the reference's std::max; NaN still poisons the sum.
  w.raw(scalarAccumulator(k_ + "_max", c_, ninf, "v = v < x ? x : v;", "v = v < o.v ? o.v : v;"));
  // (peak v, sum s of exp(x - v)); exp(x - x) is NaN for x = +inf, as exp(peak - peak) is.
  {
    auto online = w.blockSemi("struct {}_online", k_);
    w.line("{} v, s;", c_);
    w.line("static __device__ __forceinline__ {}_online init() {{ return {{{}, 0}}; }}", k_, ninf);
    {
      auto add = w.block("__device__ __forceinline__ void add({} x)", c_);
      auto above = w.block("if (x > v)");
      w.line("s = s * exp(v - x) + exp(x - x);");
      w.line("v = x;");
      above.chain("else if (x != {})", ninf);
      w.line("s += exp(x - v);");
    }
    {
      auto merge = w.block("__device__ __forceinline__ void merge(const {}_online &o)", k_);
      w.line("const {} m = v < o.v ? o.v : v;", c_);
      w.line("s = (v == m ? s : s * exp(v - m)) + (o.v == m ? o.s : o.s * exp(o.v - m));");
      w.line("v = m;");
    }
    auto shfl = w.block("__device__ __forceinline__ {}_online shfl(int off) const", k_);
    w.line(
        "return {{__shfl_xor_sync(0xffffffffu, v, off), __shfl_xor_sync(0xffffffffu, s, off)}};");
  }
  // Hardmax: the first largest element; NaN ranks above every number.
  {
    auto arg = w.blockSemi("struct {}_arg", k_);
    w.line("{} v;", c_);
    w.line("long long i;");
    w.line("static __device__ __forceinline__ {}_arg init() {{ return {{0, -1LL}}; }}", k_);
    {
      auto beats = w.block("__device__ __forceinline__ bool beats({} x, long long j) const", c_);
      w.line("if (i < 0)");
      w.line("  return true;");
      w.line("if (x != x)");
      w.line("  return v == v || j < i;");
      w.line("return v == v && (x > v || (x == v && j < i));");
    }
    {
      auto add = w.block("__device__ __forceinline__ void add({} x, long long j)", c_);
      w.line("if (beats(x, j)) {{ v = x; i = j; }}");
    }
    {
      auto merge = w.block("__device__ __forceinline__ void merge(const {}_arg &o)", k_);
      w.line("if (o.i >= 0 && beats(o.v, o.i)) {{ v = o.v; i = o.i; }}");
    }
    auto shfl = w.block("__device__ __forceinline__ {}_arg shfl(int off) const", k_);
    w.line(
        "return {{__shfl_xor_sync(0xffffffffu, v, off), __shfl_xor_sync(0xffffffffu, i, off)}};");
  }
  emitCollectives(w, k_);
}

Expected<std::pair<std::string, std::string>> RowEmitter::affine(const std::string &col) const {
  const Value *scale = n_.input(1), *bias = n_.input(2);
  std::string gamma = "1", beta = "0";
  if (op_ == Op::kInstanceNormalization)
    return std::pair<std::string, std::string>("gamma", "beta"); // per row: rowSetup
  std::string offset;
  if (op_ == Op::kLayerNormalization) {
    const std::vector<int64_t> norm = normalisedShape();
    if (affineInRegs_)
      return std::pair<std::string, std::string>("dlc_load(ga[k].v[j])",
                                                 bias ? "dlc_load(be[k].v[j])" : "0");
    DLC_ASSIGN_OR_RETURN(std::string s, parts_.param(scale));
    gamma = loadExpr(s, broadcastOffset(staticSizes(scale), norm, col));
    if (bias) {
      DLC_ASSIGN_OR_RETURN(std::string b, parts_.param(bias));
      beta = loadExpr(b, broadcastOffset(staticSizes(bias), norm, col));
    }
    return std::pair(gamma, beta);
  }
  // GroupNormalization: channel (row % groups) * (C / groups) + col / spatial.
  const std::vector<int64_t> &shape = parts_.inShape();
  const int64_t groups = n_.getInt("num_groups");
  const int64_t spatial = product(shape, 2, shape.size());
  const std::string channel =
      fmt::format("((row % {}) * {} + {} / {})", groups, shape[1] / groups, col, spatial);
  DLC_ASSIGN_OR_RETURN(std::string s, parts_.param(scale));
  DLC_ASSIGN_OR_RETURN(std::string b, parts_.param(bias));
  return std::pair(loadExpr(s, channel), loadExpr(b, channel));
}

std::vector<int64_t> RowEmitter::normalisedShape() const {
  const std::vector<int64_t> &shape = parts_.inShape();
  const int64_t axis = *normalizeAxis(n_.getInt("axis"), static_cast<int64_t>(shape.size()));
  return {shape.begin() + axis, shape.end()};
}

std::vector<const Value *> RowEmitter::affineOperands(const RowShape &s, bool cached) const {
  if (op_ != Op::kLayerNormalization || !cached || s.vec == 1 || s.threads == 1)
    return {};
  auto trimmed = [](std::vector<int64_t> v) {
    v.erase(v.begin(), std::find_if(v.begin(), v.end(), [](int64_t d) { return d != 1; }));
    return v;
  };
  const std::vector<int64_t> norm = trimmed(normalisedShape());
  std::vector<const Value *> out;
  for (int i : {1, 2}) {
    const Value *v = n_.numInputs() > i ? n_.input(i) : nullptr;
    if (!v)
      continue;
    if (trimmed(staticSizes(v)) != norm)
      return {};
    out.push_back(v);
  }
  return out;
}

Status RowEmitter::prefetchAffine(CodeWriter &w, const RowShape &s) const {
  std::vector<std::string> loads;
  for (const auto &[i, regs] : {std::pair<int, const char *>{1, "ga"}, {2, "be"}}) {
    const Value *v = n_.numInputs() > i ? n_.input(i) : nullptr;
    if (!v)
      continue;
    DLC_ASSIGN_OR_RETURN(std::string ptr, parts_.param(v));
    const std::string type = fmt::format("{}_vec<{}, {}>", k_, cudaStorageType(v->dtype()), s.vec);
    w.line("{} {}[{}];", type, regs, s.slots());
    loads.push_back(fmt::format("{}[k] = *reinterpret_cast<const {} *>({} + c);", regs, type, ptr));
  }
  RowLoop loop = openRowLoop(w, s, "lane", true, "0", "");
  for (const std::string &load : loads)
    w.line("{}", load);
  return Status::ok();
}

Status RowEmitter::rowSetup(CodeWriter &w) const {
  if (op_ != Op::kInstanceNormalization)
    return Status::ok();
  DLC_ASSIGN_OR_RETURN(std::string s, parts_.param(n_.input(1)));
  DLC_ASSIGN_OR_RETURN(std::string b, parts_.param(n_.input(2)));
  const int64_t channels = parts_.inShape()[1];
  w.line("const {} gamma = {};", c_, loadExpr(s, fmt::format("row % {}", channels)));
  w.line("const {} beta = {};", c_, loadExpr(b, fmt::format("row % {}", channels)));
  return Status::ok();
}

Expected<std::string> RowEmitter::outputValue(CodeWriter &w, const std::string &x,
                                              const std::string &col) const {
  switch (op_) {
  case Op::kSoftmax:
    return fmt::format("exp({} - st.v) / st.s", x);
  case Op::kLogSoftmax:
    return fmt::format("{} - st.v - logSum", x);
  case Op::kHardmax:
    return fmt::format("({} == st.i ? {} : {})", col, lit(1), lit(0));
  case Op::kLpNormalization:
    return fmt::format("{} / norm", x);
  default: {
    DLC_ASSIGN_OR_RETURN(auto ab, affine(col));
    w.line("const {} y = ({} - mean) * invStd * {} + {};", c_, x, ab.first, ab.second);
    return std::string("y");
  }
  }
}

RowHooks RowEmitter::writeHooks(const RowShape &s, const Hoisted *hoisted) const {
  RowHooks h;
  if (s.vec > 1) {
    h.pre = [this, s](CodeWriter &w) {
      parts_.declareOutputVectors(w, s.vec);
      return Status::ok();
    };
    h.post = [this, s](CodeWriter &w) {
      parts_.flushOutputVectors(w, "base + c", s.vec);
      return Status::ok();
    };
  }
  h.body = [this, s, hoisted](CodeWriter &w, const std::string &x, const std::string &col,
                              const std::string &) -> Status {
    DLC_ASSIGN_OR_RETURN(std::string y, outputValue(w, x, col));
    return parts_.store(w, fmt::format("base + {}", col), y, "e", s.vec > 1 ? "j" : "", hoisted);
  };
  return h;
}

/// LayerNormalization's Mean and InvStdDev (one element per row, in the stash type), where the
/// group writes them: by the row's first thread.
Status RowEmitter::writeStatistics(CodeWriter &w, const RowShape &s) const {
  if (op_ != Op::kLayerNormalization)
    return Status::ok();
  const std::pair<int, const char *> stats[] = {{1, "mean"}, {2, "invStd"}};
  for (const auto &[i, var] : stats) {
    const Value *v = n_.numOutputs() > i ? n_.output(i) : nullptr;
    if (!v || !parts_.isSideOutput(v))
      continue;
    DLC_ASSIGN_OR_RETURN(std::string out, parts_.outputParam(v));
    w.line("{}{}[row] = dlc_store<{}>({});", s.threads == 1 ? "" : "if (lane == 0) ", out,
           cudaStorageType(v->dtype()), var);
  }
  return Status::ok();
}

/// One row: statistics passes, then the write pass. Cached rows load once.
Status RowEmitter::rowBody(CodeWriter &w, const RowShape &s, bool cached) const {
  const std::string lane = s.threads == 1 ? "0" : "lane";
  const std::string coll = s.collective(k_);
  const std::string cache = cached ? "xc" : "";
  if (cached)
    w.line("{} xc[{}];", c_, s.slots() * s.vec);
  auto add = [](std::string stmt) {
    RowHooks h;
    h.body = [stmt](CodeWriter &w, const std::string &x, const std::string &col,
                    const std::string &slot) {
      w.line(fmt::runtime(stmt), fmt::arg("x", x), fmt::arg("col", col), fmt::arg("slot", slot));
      return Status::ok();
    };
    return h;
  };
  // A pass over the row: the first loads (and caches) it; later ones read the cache or reload.
  bool loaded = false;
  auto pass = [&](const RowHooks &h) -> Status {
    if (cached && loaded)
      return emitCachedPass(w, s, lane, cache, h);
    loaded = true;
    return emitLoadPass(w, parts_, s, "base", lane, cache, h);
  };
  auto reduceAll = [&](const char *var) {
    if (!coll.empty())
      w.line("{0} = {1}({0});", var, coll);
  };
  switch (op_) {
  case Op::kSoftmax:
  case Op::kLogSoftmax:
    if (cached) {
      w.line("{0}_online st = {{{0}_max::init().v, 0}};", k_);
      DLC_RETURN_IF_ERROR(pass(add("st.v = st.v < {x} ? {x} : st.v;")));
      {
        auto peak = w.block("");
        w.line("{0}_max m = {{st.v}};", k_);
        w.line("st.v = {}.v;", coll.empty() ? "m" : coll + "(m)");
      }
      w.line("{0}_sum total = {0}_sum::init();", k_);
      DLC_RETURN_IF_ERROR(pass(add("total.add(exp({x} - st.v));")));
      reduceAll("total");
      w.line("st.s = total.v;");
    } else {
      w.line("{0}_online st = {0}_online::init();", k_);
      DLC_RETURN_IF_ERROR(pass(add("st.add({x});")));
      reduceAll("st");
    }
    if (op_ == Op::kLogSoftmax)
      w.line("const {} logSum = log(st.s);", c_);
    break;
  case Op::kHardmax:
    w.line("{0}_arg st = {0}_arg::init();", k_);
    DLC_RETURN_IF_ERROR(pass(add("st.add({x}, {col});")));
    reduceAll("st");
    return emitCachedPass(w, s, lane, "", writeHooks(s));
  case Op::kLpNormalization:
    w.line("{0}_sum total = {0}_sum::init();", k_);
    DLC_RETURN_IF_ERROR(
        pass(add(n_.getInt("p") == 1 ? "total.add(dlc_abs({x}));" : "total.add({x} * {x});")));
    reduceAll("total");
    w.line("const {} norm = {};", c_, n_.getInt("p") == 1 ? "total.v" : "sqrt(total.v)");
    break;
  default: {
    if (affineInRegs_)
      DLC_RETURN_IF_ERROR(prefetchAffine(w, s));
    w.line("{0}_sum total = {0}_sum::init();", k_);
    DLC_RETURN_IF_ERROR(pass(add("total.add({x});")));
    reduceAll("total");
    w.line("const {} mean = total.v / {};", c_, lit(static_cast<double>(s.len)));
    w.line("{0}_sum dev = {0}_sum::init();", k_);
    DLC_RETURN_IF_ERROR(pass(add("dev.add(({x} - mean) * ({x} - mean));")));
    reduceAll("dev");
    w.line("const {0} invStd = {1} / sqrt(dev.v / {2} + {3});", c_, lit(1),
           lit(static_cast<double>(s.len)), lit(n_.getFloat("epsilon")));
    DLC_RETURN_IF_ERROR(writeStatistics(w, s));
    break;
  }
  }
  // The epilogue's scales (an int8 copy's quantization) once per row, after its statistics.
  const Hoisted hoisted = parts_.hoistEpilogueScalars(w);
  return pass(writeHooks(s, &hoisted));
}

/// One (outer, inner) column per thread: a statistics loop and a write loop over the axis.
Status RowEmitter::columnBody(CodeWriter &w) const {
  auto loop = [&](auto &&body) -> Status {
    auto axis = w.block("for (int k = 0; k < {}; ++k)", l_.len);
    w.line("const {} idx = base + ({})k * {};", idx_, idx_, l_.inner);
    return body();
  };
  auto load = [&]() -> Expected<std::string> {
    DLC_ASSIGN_OR_RETURN(std::string x, parts_.element(w, "idx", "p"));
    w.line("const {} x = {};", c_, x);
    return std::string("x");
  };
  const char *acc = op_ == Op::kHardmax ? "arg" : op_ == Op::kLpNormalization ? "sum" : "online";
  w.line("{0}_{1} st = {0}_{1}::init();", k_, acc);
  DLC_RETURN_IF_ERROR(loop([&]() -> Status {
    DLC_ASSIGN_OR_RETURN(std::string x, load());
    if (op_ == Op::kHardmax)
      w.line("st.add({}, k);", x);
    else if (op_ == Op::kLpNormalization)
      w.line("st.add({});", n_.getInt("p") == 1 ? "dlc_abs(x)" : "x * x");
    else
      w.line("st.add({});", x);
    return Status::ok();
  }));
  if (op_ == Op::kLogSoftmax)
    w.line("const {} logSum = log(st.s);", c_);
  if (op_ == Op::kLpNormalization)
    w.line("const {} norm = {};", c_, n_.getInt("p") == 1 ? "st.v" : "sqrt(st.v)");
  return loop([&]() -> Status {
    std::string x;
    if (op_ != Op::kHardmax) {
      DLC_ASSIGN_OR_RETURN(x, load());
    }
    DLC_ASSIGN_OR_RETURN(std::string y, outputValue(w, x, "k"));
    return parts_.store(w, "idx", y, "e");
  });
}

Expected<KernelSet> RowEmitter::emit() {
  Kernel kern;
  kern.name = k_;
  CodeWriter w;
  structs(w);
  const bool column = l_.inner > 1;
  RowShape s{l_.len, 1, 1, wide_};
  int block = 256;
  bool cached = true;
  if (!column && l_.len > 8) {
    s.threads = l_.len <= 1024 ? 32 : l_.len <= 4096 ? 256 : l_.len <= 8192 ? 512 : 1024;
    block = s.threads == 32 ? 256 : s.threads;
    cached = s.threads == 32 || (l_.len + s.threads - 1) / s.threads <= 16;
  }
  cached = cached && op_ != Op::kHardmax; // its write pass reads no element
  int vec = column || s.threads == 1 ? 1 : parts_.vectorWidth(l_.len, true);
  while (vec > 1 && l_.len / vec < s.threads) // keep every thread busy
    vec /= 2;
  if (vec > 1)
    parts_.emitVectorType(w);
  const std::string params = parts_.declareParams(kern);
  auto fn = w.block("extern \"C\" __global__ void __launch_bounds__({}) {}({})", block, k_, params);
  const int64_t rows = column ? l_.rows * l_.inner : l_.rows;
  std::optional<CodeWriter::Scope> loop;
  if (column || s.threads == 1) {
    loop.emplace(w.block("for ({0} row = blockIdx.x * ({0})blockDim.x + threadIdx.x; row < {1}; "
                         "row += ({0})gridDim.x * blockDim.x)",
                         idx_, rows));
    kern.launch = gridStrideLaunch(rows, opts_);
  } else if (s.threads == 32) {
    w.line("const int lane = threadIdx.x & 31;");
    loop.emplace(w.block("for ({0} row = ({0})blockIdx.x * 8 + (threadIdx.x >> 5); row < {1}; "
                         "row += ({0})gridDim.x * 8)",
                         idx_, rows));
    kern.launch.grid[0] =
        static_cast<uint32_t>(std::clamp<int64_t>((rows + 7) / 8, 1, int64_t{opts_.numSms} * 32));
  } else {
    w.line("const int lane = threadIdx.x;");
    loop.emplace(w.block("for ({0} row = blockIdx.x; row < {1}; row += gridDim.x)", idx_, rows));
    kern.launch.grid[0] =
        static_cast<uint32_t>(std::clamp<int64_t>(rows, 1, int64_t{opts_.numSms} * 32));
  }
  kern.launch.block[0] = static_cast<uint32_t>(block);
  if (column) {
    w.line("const {0} base = (row / {1}) * {2} + row % {1};", idx_, l_.inner, l_.len * l_.inner);
    DLC_RETURN_IF_ERROR(columnBody(w));
  } else {
    w.line("const {} base = row * {}{};", idx_, l_.len, wide_ ? "LL" : "");
    DLC_RETURN_IF_ERROR(rowSetup(w));
    if (vec > 1) {
      RowShape sv = s;
      sv.vec = vec;
      std::string condition = parts_.alignedCondition(vec, true);
      const std::vector<const Value *> affine = affineOperands(sv, cached);
      for (const Value *v : affine) {
        DLC_ASSIGN_OR_RETURN(std::string ptr, parts_.param(v));
        condition += fmt::format(" && reinterpret_cast<unsigned long long>({}) % {} == 0", ptr,
                                 vec * dtypeSize(v->dtype()));
      }
      auto aligned = w.block("if ({})", condition);
      affineInRegs_ = !affine.empty();
      const Status body = rowBody(w, sv, cached);
      affineInRegs_ = false;
      DLC_RETURN_IF_ERROR(body);
      aligned.chain("else");
      DLC_RETURN_IF_ERROR(rowBody(w, s, cached));
    } else {
      DLC_RETURN_IF_ERROR(rowBody(w, s, cached));
    }
  }
  loop.reset();
  fn.close();
  kern.source = w.str();
  kern.prelude = w.requirements();
  KernelSet set;
  set.kernels.push_back(std::move(kern));
  return set;
}

} // namespace

Expected<KernelSet> emitRows(const FusedGroup &group, const EmitOptions &opts) {
  DLC_ASSIGN_OR_RETURN(GroupParts parts, GroupParts::make(group, group.name));
  const Node &n = parts.anchor();
  if (parts.inShape() != parts.outShape())
    return invalidArgument("{}: output shape differs from the input's", n.describe());
  DLC_ASSIGN_OR_RETURN(Layout l, layoutOf(n, parts.inShape()));
  return RowEmitter(parts, l, opts).emit();
}

} // namespace dlc::codegen::reduction
