// Data-movement family: Transpose, Concat, Split, Slice, Gather, GatherElements, Pad,
// CenterCropPad, Resize, Expand, Tile, DepthToSpace, SpaceToDepth, Trilu, EyeLike, OneHot,
// ConstantOfShape and Range, each with its group's elementwise epilogue.
//
// Most ops are one grid-stride kernel over the output that evaluates the op's index plan
// (data_movement_plan.h) at each element, copies the element without converting it, and runs
// the epilogue on it (anchor_epilogue.h). Split iterates over its input and writes every
// output in one kernel. Resize bakes the reference's per-axis taps and weights
// (ir/ops/resize_plan.h) into tables, so every mode and coordinate transformation samples
// exactly the input elements the reference does. Transposes that move the innermost axis go
// through shared-memory tiles (data_movement_transpose.cc).
//
// Not here: Reshape, Flatten, Squeeze, Unsqueeze and Identity, which lowering turns into views;
// Where and Cast, which are elementwise.
#include <fmt/format.h>

#include <optional>
#include <set>

#include "codegen/anchor_epilogue.h"
#include "codegen/cuda_prelude.h"
#include "codegen/data_movement_internal.h"
#include "codegen/data_movement_plan.h"
#include "codegen/elementwise_chain.h"
#include "codegen/emitters.h"
#include "ir/ops/resize_plan.h"
#include "ir/ops/tensor_internal.h"

namespace dlc::codegen {

std::string storageLiteral(const Tensor &scalar) {
  const DType t = scalar.dtype();
  const std::string s = cudaStorageType(t);
  if (isFloat(t))
    return fmt::format("dlc_store<{}>({})", s, cudaLiteral(scalar.elementAsDouble(0), t));
  if (t == DType::kBool)
    return scalar.elementAsInt64(0) != 0 ? "true" : "false";
  if (t == DType::kU64)
    return fmt::format("({})({}ULL)", s, static_cast<uint64_t>(scalar.elementAsInt64(0)));
  const int64_t v = scalar.elementAsInt64(0);
  if (v == std::numeric_limits<int64_t>::min())
    return fmt::format("({})(-9223372036854775807LL - 1)", s);
  return fmt::format("({})({}LL)", s, v);
}

void emitDecode(CodeWriter &w, const std::vector<int64_t> &iter, const std::set<std::string> &used,
                std::string_view idxType) {
  size_t lowest = iter.size();
  for (size_t d = 0; d < iter.size(); ++d)
    if (used.count(fmt::format("c{}", d))) {
      lowest = d;
      break;
    }
  if (lowest == iter.size())
    return;
  if (lowest == 0 && iter.size() == 1) {
    w.line("const {} c0 = i;", idxType);
    return;
  }
  w.line("{} r = i;", idxType);
  for (size_t d = iter.size(); d-- > lowest;) {
    const std::string c = fmt::format("c{}", d);
    if (d == 0) {
      w.line("const {} c0 = r;", idxType);
      break;
    }
    if (used.count(c))
      w.line("const {} {} = r % {};", idxType, c, iter[d]);
    if (d > lowest)
      w.line("r /= {};", iter[d]);
  }
}

std::string gridStrideLoop(std::string_view idxType, int64_t n) {
  return fmt::format("for ({0} i = blockIdx.x * ({0})blockDim.x + threadIdx.x; i < {1}; i += "
                     "({0})gridDim.x * blockDim.x)",
                     idxType, n);
}

Expected<KernelSet> finishGridStride(Kernel k, CodeWriter &body, const ParamList &params, int64_t n,
                                     const EmitOptions &opts) {
  finishKernel(k, params, 256, body);
  k.launch = gridStrideLaunch(n, opts);
  KernelSet set;
  set.kernels.push_back(std::move(k));
  return set;
}

namespace {

int64_t count(const Value *v) { return v->shape().numElements().value_or(0); }

bool claims(const Node *anchor) {
  if (!anchor)
    return false;
  const Op op = anchor->op();
  return isMoveOp(op) || op == Op::kSplit || op == Op::kResize || op == Op::kRange;
}

/// The constant tensor of optional input i; empty when absent or known to be empty (Resize's
/// "not given"), or when not constant and not `needed`; else an error.
Expected<Tensor> constantInput(const Node &n, int i, const char *what, bool needed = true) {
  if (!n.hasInput(i))
    return Tensor();
  const Value *v = n.input(i);
  if (v->isConstant())
    return v->constant();
  if (v->shape().numElements() == 0 || !needed)
    return Tensor();
  return unimplemented("input '{}' of {} is not a constant", what, n.opName());
}

Expected<ops::ResizePlan> resizePlan(const Node &n) {
  const bool crop = n.getString("coordinate_transformation_mode") == "tf_crop_and_resize";
  DLC_ASSIGN_OR_RETURN(Tensor roi, constantInput(n, 1, "roi", crop));
  DLC_ASSIGN_OR_RETURN(Tensor scales, constantInput(n, 2, "scales"));
  DLC_ASSIGN_OR_RETURN(Tensor sizes, constantInput(n, 3, "sizes"));
  const DType t = n.input(0)->dtype();
  if (n.getString("mode") != "nearest" && !isFloat(t))
    return unimplemented("mode '{}' on {} data is not supported (float types only)",
                         n.getString("mode"), dtypeName(t));
  return ops::planResize(n, staticSizes(n.input(0)), staticSizes(n.output(0)),
                         {Tensor(), roi, scales, sizes});
}

Status checkRange(const Node &n) {
  for (int i = 0; i < 3; ++i)
    if (n.input(i)->shape().numElements() != 1)
      return invalidArgument("input {} of range must hold one element, got {}", i,
                             n.input(i)->type().str());
  const DType t = n.output(0)->dtype();
  if (!isFloat(t) && !isSignedInt(t))
    return unimplemented("range of {} is not supported", dtypeName(t));
  return Status::ok();
}

bool supports(const Node &node, std::string *why) {
  Status s = Status::ok();
  switch (node.op()) {
  case Op::kSplit:
    s = planSplit(node).status();
    break;
  case Op::kResize:
    s = resizePlan(node).status();
    break;
  case Op::kRange:
    s = checkRange(node);
    break;
  default:
    s = planMove(node).status();
    break;
  }
  if (!s.isOk())
    *why = s.message();
  return s.isOk();
}

/// Whether every value has fewer than 2^31 elements.
bool small(const std::vector<const Value *> &values) {
  for (const Value *v : values)
    if (count(v) >= (int64_t{1} << 31))
      return false;
  return true;
}

Expected<KernelSet> emitMove(const FusedGroup &group, const EmitOptions &opts) {
  const Node &node = *group.anchor;
  DLC_ASSIGN_OR_RETURN(MovePlan plan, planMove(node));
  const Value *out = node.output(0);
  if (node.op() == Op::kTranspose) {
    if (auto set = emitVectorTranspose(group, opts))
      return std::move(*set);
    if (auto set = emitTiledTranspose(group, opts))
      return std::move(*set);
  }
  ParamList params;
  for (const Value *b : plan.buffers)
    params.read(b);
  std::vector<const Value *> all = plan.buffers;
  all.push_back(out);
  const std::string idx = small(all) ? "int" : "long long";
  const int64_t n = count(out);

  CodeWriter body;
  auto loop = body.block("{}", gridStrideLoop(idx, n));
  std::set<std::string> used;
  for (const auto &[name, e] : plan.lets)
    e.collectVars(used);
  for (const MoveSource &s : plan.sources) {
    s.when.collectVars(used);
    s.offset.collectVars(used);
  }
  emitDecode(body, plan.iter, used, idx);
  for (const auto &[name, e] : plan.lets)
    body.line("const long long {} = {};", name, e.str());
  const std::string st = cudaStorageType(out->dtype());
  auto sourceExpr = [&](const MoveSource &s) -> Expected<std::string> {
    if (s.buffer < 0)
      return storageLiteral(s.literal);
    const Value *b = plan.buffers[static_cast<size_t>(s.buffer)];
    if (b->dtype() != out->dtype())
      return internalError("{}: source '{}' is {}, the output {}", node.describe(), b->name(),
                           dtypeName(b->dtype()), dtypeName(out->dtype()));
    return fmt::format("in{}[{}]", s.buffer, s.offset.str());
  };
  if (plan.sources.size() == 1) {
    DLC_ASSIGN_OR_RETURN(std::string e, sourceExpr(plan.sources[0]));
    body.line("const {} e = {};", st, e);
  } else {
    body.line("{} e;", st);
    for (size_t k = 0; k < plan.sources.size(); ++k) {
      DLC_ASSIGN_OR_RETURN(std::string e, sourceExpr(plan.sources[k]));
      if (k == 0)
        body.line("if ({})", plan.sources[k].when.str());
      else if (k + 1 < plan.sources.size())
        body.line("else if ({})", plan.sources[k].when.str());
      else
        body.line("else");
      body.line("  e = {};", e);
    }
  }
  std::vector<const Value *> stored;
  DLC_RETURN_IF_ERROR(emitEpilogue(body, group, out, {"e", true}, "i", params, "v", stored));
  DLC_RETURN_IF_ERROR(checkAllStored(group, stored));
  loop.close();
  Kernel k;
  k.name = group.name;
  return finishGridStride(std::move(k), body, params, n, opts);
}

Expected<KernelSet> emitSplit(const FusedGroup &group, const EmitOptions &opts) {
  const Node &node = *group.anchor;
  DLC_ASSIGN_OR_RETURN(SplitPlan plan, planSplit(node));
  ParamList params;
  params.read(node.input(0));
  std::vector<const Value *> all{node.input(0)};
  for (const SplitTarget &t : plan.targets)
    all.push_back(t.output);
  const std::string idx = small(all) ? "int" : "long long";
  const int64_t n = count(node.input(0));

  CodeWriter body;
  auto loop = body.block("{}", gridStrideLoop(idx, n));
  std::set<std::string> used;
  for (const SplitTarget &t : plan.targets) {
    t.when.collectVars(used);
    t.offset.collectVars(used);
  }
  emitDecode(body, plan.iter, used, idx);
  body.line("const {} e = in0[i];", cudaStorageType(node.input(0)->dtype()));
  std::vector<const Value *> stored;
  std::optional<CodeWriter::Scope> branch; // if / else if / else over the outputs
  for (size_t k = 0; k < plan.targets.size(); ++k) {
    const SplitTarget &t = plan.targets[k];
    if (k == 0)
      branch.emplace(body.block("if ({})", t.when.str()));
    else if (k + 1 < plan.targets.size())
      branch->chain("else if ({})", t.when.str());
    else
      branch->chain("else");
    body.line("const {} o = {};", idx, t.offset.str());
    DLC_RETURN_IF_ERROR(emitEpilogue(body, group, t.output, {"e", true}, "o", params,
                                     fmt::format("v{}_", k), stored));
  }
  branch.reset();
  for (const Value *v : group.outputs) // an empty part (a zero split) has nothing to write
    if (count(v) == 0)
      stored.push_back(v);
  DLC_RETURN_IF_ERROR(checkAllStored(group, stored));
  loop.close();
  Kernel k;
  k.name = group.name;
  return finishGridStride(std::move(k), body, params, n, opts);
}

/// `static __device__ const T name[] = {...};`
template <typename T, typename F>
void emitTable(CodeWriter &w, std::string_view type, const std::string &name,
               const std::vector<T> &values, F &&format) {
  std::vector<std::string> items;
  for (const T &v : values)
    items.push_back(format(v));
  w.line("static __device__ const {} {}[{}] = {{{}}};", type, name, values.size(),
         fmt::join(items, ", "));
}

/// Adds to `e` (zero, unless every resized axis's tap lies inside; `tables` says which axes may
/// extrapolate) the weighted sum of the input elements over the taps of every resized axis,
/// from the tables <name>_b (first tap), _i (offsets), _w (weights) and _x (outside flags).
void writeInterpolation(CodeWriter &body, const std::string &name, const std::string &tables,
                        const std::vector<size_t> &resized, const MovePlan &coords,
                        const std::string &idx, const std::string &acc) {
  std::vector<std::string> outside;
  for (size_t a : resized)
    if (tables.find(fmt::format("{}_x{}[", name, a)) != std::string::npos)
      outside.push_back(fmt::format("{}_x{}[{}]", name, a, coords.coord(a).str()));
  auto inside =
      body.block("{}", outside.empty() ? std::string()
                                       : fmt::format("if (!({}))", fmt::join(outside, " || ")));
  body.line("e = 0;");
  std::vector<CodeWriter::Scope> taps; // one loop per resized axis, innermost last
  std::string prevOff = "base", prevW;
  for (size_t k = 0; k < resized.size(); ++k) {
    const size_t a = resized[k];
    const std::string c = coords.coord(a).str();
    taps.push_back(body.block("for (int t{0} = {1}_b{2}[{3}]; t{0} < {1}_b{2}[{3} + 1]; ++t{0})", k,
                              name, a, c));
    body.line("const {} o{} = {} + {}_i{}[t{}];", idx, k, prevOff, name, a, k);
    const std::string wk = prevW.empty() ? fmt::format("{}_w{}[t{}]", name, a, k)
                                         : fmt::format("{} * {}_w{}[t{}]", prevW, name, a, k);
    body.line("const {} w{} = {};", acc, k, wk);
    prevOff = fmt::format("o{}", k);
    prevW = fmt::format("w{}", k);
  }
  body.line("e += {} * ({})dlc_load(in0[{}]);", prevW, acc, prevOff);
  while (!taps.empty()) // innermost first
    taps.pop_back();
}

Expected<KernelSet> emitResize(const FusedGroup &group, const EmitOptions &opts) {
  const Node &node = *group.anchor;
  DLC_ASSIGN_OR_RETURN(ops::ResizePlan plan, resizePlan(node));
  const Value *x = node.input(0), *out = node.output(0);
  const std::vector<int64_t> xs = staticSizes(x), ys = staticSizes(out);
  const std::vector<int64_t> st = ops::tensor::stridesOf(xs);
  ParamList params;
  params.read(x);
  const std::string idx = small({x, out}) ? "int" : "long long";
  const int64_t n = count(out);
  const std::string name = group.name;

  // Nearest sampling everywhere: one tap of weight 1 per output index, no extrapolation.
  bool nearest = true;
  std::vector<size_t> resized;
  for (size_t a = 0; a < plan.axes.size(); ++a) {
    const ops::ResizeAxisPlan &ap = plan.axes[a];
    if (ap.identity)
      continue;
    resized.push_back(a);
    for (size_t o = 0; o + 1 < ap.begin.size(); ++o)
      nearest = nearest && !ap.extrapolate[o] && ap.begin[o + 1] == ap.begin[o] + 1 &&
                ap.weight[ap.begin[o]] == 1.0;
  }
  const bool dbl = x->dtype() == DType::kF64;
  const std::string acc = dbl ? "double" : "float";
  CodeWriter tables, body;
  auto offsetOf = [&](size_t a) {
    std::vector<int64_t> v;
    for (int64_t i : plan.axes[a].index)
      v.push_back(i * st[a]);
    return v;
  };
  auto integer = [](auto v) { return fmt::format("{}", v); };
  for (size_t a : resized) {
    const ops::ResizeAxisPlan &ap = plan.axes[a];
    emitTable(tables, idx, fmt::format("{}_i{}", name, a), offsetOf(a), integer);
    if (nearest)
      continue;
    emitTable(tables, "int", fmt::format("{}_b{}", name, a), ap.begin, integer);
    emitTable(tables, acc, fmt::format("{}_w{}", name, a), ap.weight, [&](double w) {
      return dbl ? cudaLiteral(w, DType::kF64) : cudaLiteral(w, DType::kF32);
    });
    if (std::find(ap.extrapolate.begin(), ap.extrapolate.end(), true) != ap.extrapolate.end()) {
      std::vector<int> flags(ap.extrapolate.begin(), ap.extrapolate.end());
      emitTable(tables, "unsigned char", fmt::format("{}_x{}", name, a), flags, integer);
    }
  }

  auto loop = body.block("{}", gridStrideLoop(idx, n));
  std::set<std::string> used;
  for (size_t d = 0; d < ys.size(); ++d)
    if (ys[d] > 1)
      used.insert(fmt::format("c{}", d));
  emitDecode(body, ys, used, idx);
  IndexExpr base = 0;
  MovePlan coords;
  coords.iter = ys;
  for (size_t a = 0; a < ys.size(); ++a)
    if (plan.axes[a].identity)
      base = base + coords.coord(a) * st[a];
  body.line("const {} base = {};", idx, base.str());
  if (nearest) {
    std::string off = "base";
    for (size_t a : resized)
      off += fmt::format(" + {}_i{}[{}]", name, a, coords.coord(a).str());
    body.line("const {} e = in0[{}];", cudaStorageType(x->dtype()), off);
  } else {
    body.line("{} e = {};", acc, cudaLiteral(plan.extrapolation, dbl ? DType::kF64 : DType::kF32));
    writeInterpolation(body, name, tables.str(), resized, coords, idx, acc);
  }
  std::vector<const Value *> stored;
  DLC_RETURN_IF_ERROR(emitEpilogue(body, group, out, {"e", nearest}, "i", params, "v", stored));
  DLC_RETURN_IF_ERROR(checkAllStored(group, stored));
  loop.close();
  Kernel k;
  k.name = name;
  auto set = finishGridStride(std::move(k), body, params, n, opts);
  if (set) {
    set->kernels[0].source = tables.str() + set->kernels[0].source;
    set->kernels[0].prelude.merge(tables.requirements());
  }
  return set;
}

Expected<KernelSet> emitRange(const FusedGroup &group, const EmitOptions &opts) {
  const Node &node = *group.anchor;
  DLC_RETURN_IF_ERROR(checkRange(node));
  const Value *out = node.output(0);
  ParamList params;
  const std::string start = params.read(node.input(0)), delta = params.read(node.input(2));
  const std::string idx = small({out}) ? "int" : "long long";
  const int64_t n = count(out);
  const DType t = out->dtype();
  CodeWriter body;
  auto loop = body.block("{}", gridStrideLoop(idx, n));
  // As the reference: start + i * delta in double (floats) or 64-bit integers.
  const std::string wide = isFloat(t) ? "double" : "long long";
  body.line("const {0} e = ({0})(({1})dlc_load({2}[0]) + ({1})i * ({1})dlc_load({3}[0]));",
            cudaComputeType(t), wide, start, delta);
  std::vector<const Value *> stored;
  DLC_RETURN_IF_ERROR(emitEpilogue(body, group, out, {"e", false}, "i", params, "v", stored));
  DLC_RETURN_IF_ERROR(checkAllStored(group, stored));
  loop.close();
  Kernel k;
  k.name = group.name;
  return finishGridStride(std::move(k), body, params, n, opts);
}

Expected<KernelSet> emit(const FusedGroup &group, const EmitOptions &opts) {
  if (!group.anchor)
    return invalidArgument("a data-movement group needs an anchor");
  switch (group.anchor->op()) {
  case Op::kSplit:
    return emitSplit(group, opts);
  case Op::kResize:
    return emitResize(group, opts);
  case Op::kRange:
    return emitRange(group, opts);
  default:
    return emitMove(group, opts);
  }
}

} // namespace

Family dataMovementFamily() { return {"data-movement", claims, supports, emit}; }

} // namespace dlc::codegen
