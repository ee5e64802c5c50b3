// The TopK family: the k largest (or smallest) elements along an axis and their indices,
// always sorted, equal values with the lower index first and NaN ranking above every number,
// as the reference (ir/eval/softmax_eval.cc) orders them. k is static here: a k given as an
// input is a shape input (runtime/jit/compile.h), bound before the pipeline.
//
// One thread per line (outer x inner): the r-th pick is the first element, in that strict
// order, after the (r-1)-th, found by a pass over the line; k passes in all. Right for the
// small k of classifiers' heads and detectors' candidate lists; a large k over long lines
// would want a block-wide radix select.
#include <fmt/format.h>

#include "codegen/anchor_epilogue.h"
#include "codegen/data_movement_internal.h"
#include "codegen/elementwise_chain.h"
#include "codegen/emitters.h"

namespace dlc::codegen {

namespace {

bool claims(const Node *anchor) { return anchor && anchor->op() == Op::kTopK; }

bool supports(const Node &node, std::string *why) {
  const DType t = node.input(0)->dtype();
  if (!isNumeric(t) || t == DType::kBool) {
    *why = fmt::format("TopK: {} input has no GPU kernel", dtypeName(t));
    return false;
  }
  return true;
}

Expected<KernelSet> emit(const FusedGroup &group, const EmitOptions &opts) {
  const Node &node = *group.anchor;
  if (group.nodes.size() != 1)
    return invalidArgument("a TopK group is the TopK node alone");
  // Each output is written when the group gives it a buffer (it is read or returned).
  auto used = [&](int i) -> const Value * {
    const Value *v = node.numOutputs() > i ? node.output(i) : nullptr;
    return v && group.writes(v) ? v : nullptr;
  };
  const Value *x = node.input(0), *values = used(0), *indices = used(1);
  if (!values && !indices)
    return invalidArgument("{}: neither output is used", node.describe());
  const std::vector<int64_t> xs = staticSizes(x), ys = staticSizes(node.output(0));
  const int64_t rank = static_cast<int64_t>(xs.size());
  DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(node.getInt("axis"), rank));
  const size_t ax = static_cast<size_t>(axis);
  int64_t outer = 1, inner = 1;
  for (size_t a = 0; a < ax; ++a)
    outer *= xs[a];
  for (size_t a = ax + 1; a < xs.size(); ++a)
    inner *= xs[a];
  const int64_t len = xs[ax], k = ys[ax], lines = outer * inner;
  const bool largest = node.getInt("largest") != 0;
  const std::string ct = cudaComputeType(x->dtype());
  ParamList params;
  const std::string xn = params.read(x);
  const std::string vn = values ? params.write(values) : "";
  const std::string in = indices ? params.write(indices) : "";

  CodeWriter body;
  // u ranks above v: NaN above every number (floats), else u > v.
  const std::string above =
      isFloat(x->dtype()) ? "(u != u ? v == v : (v != v ? false : u > v))" : "(u > v)";
  {
    auto loop = body.block("{}", gridStrideLoop("long long", lines));
    body.line("const long long base = (i / {0}) * {1}LL + i % {0};", inner, len * inner);
    body.line("const long long outBase = (i / {0}) * {1}LL + i % {0};", inner, k * inner);
    // Whether element a of the line comes before element b in the result's order.
    {
      auto precedes = body.blockSemi("auto precedes = [&](long long a, long long b) -> bool");
      body.line("const {0} xa = dlc_load({1}[base + a * {2}]), xb = dlc_load({1}[base + b * {2}]);",
                ct, xn, inner);
      body.line("{0} u = {1}, v = {2};", ct, largest ? "xa" : "xb", largest ? "xb" : "xa");
      body.line("const bool before = {};", above);
      body.line("u = {}; v = {};", largest ? "xb" : "xa", largest ? "xa" : "xb");
      body.line("const bool after = {};", above);
      body.line("return before || (!after && a < b);");
    }
    body.line("long long prev = -1;");
    auto pick = body.block("for (long long r = 0; r < {}; ++r)", k);
    body.line("long long best = -1;");
    {
      auto scan = body.block("for (long long j = 0; j < {}; ++j)", len);
      body.line("if (prev >= 0 && !precedes(prev, j))");
      body.line("  continue;");
      body.line("if (best < 0 || precedes(j, best))");
      body.line("  best = j;");
    }
    if (values)
      body.line("{}[outBase + r * {}] = {}[base + best * {}];", vn, inner, xn, inner);
    if (indices)
      body.line("{}[outBase + r * {}] = best;", in, inner);
    body.line("prev = best;");
  }
  Kernel kern;
  kern.name = group.name;
  finishKernel(kern, params, 256, body);
  kern.launch = gridStrideLaunch(lines, opts);
  return single(std::move(kern));
}

} // namespace

Family topKFamily() { return {"top-k", claims, supports, emit}; }

} // namespace dlc::codegen
