// The scan family: CumSum (exclusive, reverse) along an axis given at run time.
//
// The axis is an input (ONNX's CumSum reads it from a tensor), so the kernel reads it from
// device memory and derives the line length and stride from the shape, which is static. One
// block of 256 threads scans each line (grid-stride over the lines) in chunks of 256 elements:
// a warp-level inclusive scan with shuffles, the warps' totals scanned by the first warp
// through shared memory, a running carry between chunks. Floats accumulate in double and each
// output is rounded once, as the reference does (ir/eval/softmax_eval.cc); integers wrap in
// 64-bit unsigned arithmetic, then take the element type's bits. A line split across blocks
// (decoupled look-back) is not done: one block walks each line, which suits the many short
// lines of CumSum in models (positions, masks); a single line of millions of elements would
// want it.
#include <fmt/format.h>

#include <algorithm>

#include "codegen/anchor_epilogue.h"
#include "codegen/elementwise_chain.h"
#include "codegen/emitters.h"

namespace dlc::codegen {

namespace {

constexpr int kThreads = 256;

bool claims(const Node *anchor) { return anchor && anchor->op() == Op::kCumSum; }

bool supports(const Node &node, std::string *why) {
  const DType t = node.input(0)->dtype(), a = node.input(1)->dtype();
  if (!isNumeric(t) || t == DType::kBool) {
    *why = fmt::format("CumSum: {} has no GPU kernel", dtypeName(t));
    return false;
  }
  if (a != DType::kI32 && a != DType::kI64) {
    *why = fmt::format("CumSum: the axis must be i32 or i64, got {}", dtypeName(a));
    return false;
  }
  return true;
}

Expected<KernelSet> emit(const FusedGroup &group, const EmitOptions &opts) {
  const Node &n = *group.anchor;
  if (group.nodes.size() != 1)
    return invalidArgument("a CumSum group is the CumSum node alone");
  const Value *x = n.input(0), *y = n.output(0);
  const std::vector<int64_t> shape = staticSizes(x);
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t total = x->shape().numElements().value_or(0);
  const bool floating = isFloat(x->dtype());
  const std::string acc = floating ? "double" : "unsigned long long";
  const std::string st = cudaStorageType(y->dtype());
  const bool exclusive = n.getInt("exclusive") != 0, reverse = n.getInt("reverse") != 0;
  ParamList params;
  const std::string xn = params.read(x), an = params.read(n.input(1)), yn = params.write(y);

  CodeWriter body;
  body.line("__shared__ {} warpSum[{}];", acc, kThreads / 32);
  if (total == 0) {
    body.line("// an empty tensor: nothing to scan");
  } else if (rank == 0) { // a scalar: its own (inclusive) sum, or 0
    body.line("if (blockIdx.x == 0 && threadIdx.x == 0)");
    body.line("  {}[0] = {};", yn, exclusive ? fmt::format("({})0", st) : fmt::format("{}[0]", xn));
  } else {
    std::string dims;
    for (int64_t d : shape)
      dims += fmt::format("{}{}LL", dims.empty() ? "" : ", ", d);
    body.line("const long long dims[{}] = {{{}}};", rank, dims);
    body.line("long long ax = (long long){}[0];", an);
    body.line("if (ax < 0)");
    body.line("  ax += {};", rank);
    body.line("if (ax < 0 || ax >= {})", rank);
    body.line("  return; // the reference backend names the bad axis");
    body.line("long long inner = 1;");
    body.line("for (long long d = ax + 1; d < {}; ++d)", rank);
    body.line("  inner *= dims[d];");
    body.line("const long long len = dims[ax], lines = {}LL / (len * inner) * inner;", total);
    body.line("const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;");
    auto lineLoop =
        body.block("for (long long line = blockIdx.x; line < lines; line += gridDim.x)");
    body.line("const long long base = (line / inner) * len * inner + line % inner;");
    body.line("{} carry = 0;", acc);
    auto chunk = body.block("for (long long c0 = 0; c0 < len; c0 += {})", kThreads);
    body.line("const long long k = c0 + threadIdx.x;");
    body.line("const long long at = base + ({}) * inner;", reverse ? "len - 1 - k" : "k");
    body.line("const {0} v = k < len ? ({0}){1}(dlc_load({2}[at])) : ({0})0;", acc,
              floating ? "" : "(long long)", xn);
    body.line("{} s = v;", acc);
    body.line("#pragma unroll");
    {
      auto up = body.block("for (int off = 1; off < 32; off <<= 1)");
      body.line("const {} t = __shfl_up_sync(0xffffffffu, s, off);", acc);
      body.line("if (lane >= off)");
      body.line("  s += t;");
    }
    body.line("if (lane == 31)");
    body.line("  warpSum[warp] = s;");
    body.line("__syncthreads();");
    {
      auto first = body.block("if (warp == 0)");
      body.line("{0} w = lane < {1} ? warpSum[lane] : ({0})0;", acc, kThreads / 32);
      body.line("#pragma unroll");
      {
        auto up = body.block("for (int off = 1; off < {}; off <<= 1)", kThreads / 32);
        body.line("const {} t = __shfl_up_sync(0xffffffffu, w, off);", acc);
        body.line("if (lane >= off)");
        body.line("  w += t;");
      }
      body.line("if (lane < {})", kThreads / 32);
      body.line("  warpSum[lane] = w;");
    }
    body.line("__syncthreads();");
    body.line("const {0} incl = carry + (warp > 0 ? warpSum[warp - 1] : ({0})0) + s;", acc);
    body.line("if (k < len)");
    body.line("  {}[at] = dlc_store<{}>({}{});", yn, st, floating ? "" : "(long long)",
              exclusive ? "(incl - v)" : "incl");
    body.line("carry += warpSum[{}];", kThreads / 32 - 1);
    body.line("__syncthreads();");
  }
  Kernel k;
  k.name = group.name;
  finishKernel(k, params, kThreads, body);
  k.launch.block[0] = kThreads;
  // Lines are total / len for the run's axis: at least total / the largest dim. Blocks stride
  // over the lines, so more lines than blocks is fine.
  int64_t largest = 1;
  for (int64_t d : shape)
    largest = std::max(largest, d);
  k.launch.grid[0] =
      static_cast<uint32_t>(std::clamp<int64_t>(total / largest, 1, int64_t{opts.numSms} * 8));
  return single(std::move(k));
}

} // namespace

Family scanFamily() { return {"scan", claims, supports, emit}; }

} // namespace dlc::codegen
