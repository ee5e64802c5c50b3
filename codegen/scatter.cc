// The scatter family: ScatterElements and ScatterND, every reduction (none, add, mul, max,
// min), deterministic.
//
// Written as gathers: one thread per output element starts from data's element and applies,
// in the order the reference applies them (ir/eval/tensor_eval_index.cc: the updates in
// row-major order), every update that lands on it, so duplicates combine in a fixed order and
// no atomics are needed. ScatterElements: only the updates on the element's line along `axis`
// can land on it (the other coordinates must match), so the thread walks that line of indices.
// ScatterND: the thread compares its leading k coordinates with each index tuple. f16/bf16
// combine in float and round once; integers wrap in 64-bit unsigned arithmetic; max/min with
// a NaN give NaN. An index outside its axis (the reference names it as an error) is skipped.
#include <fmt/format.h>

#include "codegen/anchor_epilogue.h"
#include "codegen/data_movement_internal.h"
#include "codegen/elementwise_chain.h"
#include "codegen/emitters.h"

namespace dlc::codegen {

namespace {

bool claims(const Node *anchor) {
  return anchor && (anchor->op() == Op::kScatterElements || anchor->op() == Op::kScatterND);
}

bool supports(const Node &node, std::string *why) {
  const std::string &r = node.getString("reduction");
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min") {
    *why = fmt::format("{}: reduction '{}' has no GPU kernel", node.opName(), r);
    return false;
  }
  const DType idx = node.input(1)->dtype();
  if (idx != DType::kI32 && idx != DType::kI64) {
    *why = fmt::format("{}: indices of dtype {} have no GPU kernel", node.opName(), dtypeName(idx));
    return false;
  }
  return true;
}

/// `val = combine(val, u)` for the reduction, in compute type `t` (the data's dtype `d`).
std::string combine(const std::string &r, DType d) {
  if (r == "none")
    return "val = u;";
  if (d == DType::kBool)
    return r == "add" || r == "max" ? "val = val || u;" : "val = val && u;";
  if (isFloat(d)) {
    if (r == "add")
      return "val = val + u;";
    if (r == "mul")
      return "val = val * u;";
    return fmt::format("val = (val != val || u != u) ? val + u : ({});",
                       r == "max" ? "val < u ? u : val" : "u < val ? u : val");
  }
  if (r == "add" || r == "mul")
    return fmt::format("val = (decltype(val))((unsigned long long)val {} (unsigned long long)u);",
                       r == "add" ? "+" : "*");
  return r == "max" ? "val = val < u ? u : val;" : "val = u < val ? u : val;";
}

Expected<KernelSet> emit(const FusedGroup &group, const EmitOptions &opts) {
  const Node &node = *group.anchor;
  std::string why;
  if (!supports(node, &why))
    return invalidArgument("{}", why);
  const Value *data = node.input(0), *indices = node.input(1), *updates = node.input(2);
  const Value *y = node.output(0);
  const std::vector<int64_t> ds = staticSizes(data), is = staticSizes(indices);
  const size_t rank = ds.size();
  const int64_t count = y->shape().numElements().value_or(0);
  const DType dt = data->dtype();
  const std::string ct = cudaComputeType(dt);
  ParamList params;
  const std::string dn = params.read(data), in = params.read(indices), un = params.read(updates);

  CodeWriter body;
  auto loop = body.block("{}", gridStrideLoop("long long", count));
  // The element's coordinates p0..p{rank-1} in data's shape.
  body.line("long long r = i;");
  for (size_t a = rank; a-- > 0;) {
    body.line("const long long p{} = r % {};", a, ds[a]);
    body.line("r /= {};", ds[a]);
  }
  body.line("{} val = dlc_load({}[i]);", ct, dn);
  const std::string step = combine(node.getString("reduction"), dt);
  if (node.op() == Op::kScatterElements) {
    const int64_t axis = *normalizeAxis(node.getInt("axis"), static_cast<int64_t>(rank));
    const size_t ax = static_cast<size_t>(axis);
    // Only elements whose other coordinates lie inside indices' shape receive updates.
    std::string inside = "true";
    for (size_t a = 0; a < rank; ++a)
      if (a != ax)
        inside += fmt::format(" && p{} < {}", a, is[a]);
    auto recv = body.block("if ({})", inside);
    // Updates' (= indices') row-major offset of (p with p{ax} = j).
    std::string base = "0";
    for (size_t a = 0; a < rank; ++a)
      base = fmt::format("({} * {} + {})", base, is[a], a == ax ? "0" : fmt::format("p{}", a));
    int64_t axisStride = 1;
    for (size_t a = ax + 1; a < rank; ++a)
      axisStride *= is[a];
    body.line("const long long q0 = {};", base);
    auto line = body.block("for (long long j = 0; j < {}; ++j)", is[ax]);
    body.line("const long long q = q0 + j * {};", axisStride);
    body.line("long long v = (long long){}[q];", in);
    body.line("if (v < 0)");
    body.line("  v += {};", ds[ax]);
    body.line("if (v != p{})", ax);
    body.line("  continue;");
    body.line("const {} u = dlc_load({}[q]);", ct, un);
    body.line("{}", step);
  } else {
    const int64_t k = is.back();
    int64_t tuples = 1, slice = 1;
    for (size_t a = 0; a + 1 < is.size(); ++a)
      tuples *= is[a];
    for (size_t a = static_cast<size_t>(k); a < rank; ++a)
      slice *= ds[a];
    // The element's place in its slice.
    std::string inSlice = "0";
    for (size_t a = static_cast<size_t>(k); a < rank; ++a)
      inSlice = fmt::format("({} * {} + p{})", inSlice, ds[a], a);
    body.line("const long long s = {};", inSlice);
    auto tupleLoop = body.block("for (long long t = 0; t < {}; ++t)", tuples);
    body.line("bool hit = true;");
    for (int64_t j = 0; j < k; ++j) {
      body.line("{{ long long v = (long long){}[t * {} + {}];", in, k, j);
      body.line("  if (v < 0) v += {};", ds[static_cast<size_t>(j)]);
      body.line("  hit = hit && v == p{}; }}", j);
    }
    body.line("if (!hit)");
    body.line("  continue;");
    body.line("const {} u = dlc_load({}[t * {} + s]);", ct, un, slice);
    body.line("{}", step);
  }
  body.line("const {} y = val;", ct);
  return finishPerOutput(body, loop, group, y, params, count, opts);
}

} // namespace

Family scatterFamily() { return {"scatter", claims, supports, emit}; }

} // namespace dlc::codegen
