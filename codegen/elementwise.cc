// Elementwise family: a group of elementwise/broadcast nodes becomes one grid-stride kernel
// over the elements of the group's widest value. Every group output must have that full shape
// (the fuse pass guarantees it); operands of smaller shape are read with broadcast indexing.
//
// Vectorised: each thread of the main loop handles 16 / sizeof(widest full-shape operand)
// consecutive elements, loading and storing the full-shape operands as 16-byte (or narrower,
// for narrower dtypes) vectors, and reading broadcast operands per element. A scalar loop does
// the tail, and everything when some buffer is not aligned to its vector size (checked at run
// time, so callers may pass any pointers). Indices are 32-bit below 2^31 elements.
#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "codegen/cuda_prelude.h"
#include "codegen/elementwise_chain.h"
#include "codegen/emitters.h"
#include "ir/match.h"

namespace dlc::codegen {
namespace {

int64_t count(const std::vector<int64_t> &dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

bool claims(const Node *anchor) { return anchor == nullptr; }

bool supports(const Node &node, std::string *why) {
  if (!elementwiseExpr(node.op())) {
    *why = fmt::format("op '{}' has no CUDA expression", node.opName());
    return false;
  }
  for (int i = 1; i < node.numOutputs(); ++i)
    if (!isUnused(node.output(i))) {
      *why = fmt::format("output {} of '{}' is used (only output 0 has a GPU kernel)", i,
                         node.opName());
      return false;
    }
  if (node.op() == Op::kDropout && node.hasInput(2) && !isConstantFalse(node.input(2))) {
    *why = "Dropout in training mode has no GPU kernel";
    return false;
  }
  return true;
}

/// Elements per thread and access: 16 bytes of the widest full-shape operand (1: no
/// vectorisation).
int vectorWidth(const FusedGroup &group, int64_t n) {
  int64_t widest = 1;
  for (const Value *v : group.inputs)
    if (count(staticSizes(v)) == n)
      widest = std::max(widest, dtypeSize(v->dtype()));
  for (const Value *v : group.outputs)
    widest = std::max(widest, dtypeSize(v->dtype()));
  const int64_t width = 16 / widest;
  return width > 1 && n >= width ? static_cast<int>(width) : 1;
}

/// Whether a group node reads an input with fewer than n elements.
bool readsBroadcast(const FusedGroup &group, int64_t n) {
  for (const Node *node : group.nodes)
    for (const Value *v : node->inputs())
      if (v && !group.contains(v->producer()) && count(staticSizes(v)) != n)
        return true;
  return false;
}

Expected<KernelSet> emit(const FusedGroup &group, const EmitOptions &opts) {
  if (group.outputs.empty())
    return invalidArgument("the group has no outputs");
  // The iteration space: the largest output.
  std::vector<int64_t> iter;
  for (const Value *v : group.outputs) {
    auto s = staticSizes(v);
    if (count(s) > count(iter) || iter.empty())
      iter = s;
  }
  for (const Value *v : group.outputs)
    if (staticSizes(v) != iter)
      return invalidArgument("output '{}' has shape {}, not the group's iteration shape [{}]",
                             v->name(), v->shape().str(), fmt::join(iter, ","));
  const int64_t n = count(iter);
  const bool wide = n >= (int64_t{1} << 31);
  const int vec = vectorWidth(group, n);

  Kernel k;
  k.name = group.name;
  std::vector<std::string> decls;
  std::map<const Value *, std::string> names;
  // Operands with as many elements as the iteration space are read at the flat index itself
  // (broadcasting cannot reorder them); in the vector loop they come in 16-byte vectors.
  std::vector<const Value *> full;
  for (size_t i = 0; i < group.inputs.size(); ++i) {
    names[group.inputs[i]] = fmt::format("in{}", i);
    decls.push_back(paramDecl(group.inputs[i], names[group.inputs[i]], false));
    k.params.push_back({group.inputs[i], -1, false});
    if (count(staticSizes(group.inputs[i])) == n)
      full.push_back(group.inputs[i]);
  }
  for (size_t i = 0; i < group.outputs.size(); ++i) {
    names[group.outputs[i]] = fmt::format("out{}", i);
    decls.push_back(paramDecl(group.outputs[i], names[group.outputs[i]], true));
    k.params.push_back({group.outputs[i], -1, true});
  }
  const char *idxType = wide ? "long long" : "int";
  CodeWriter w;
  w.line("extern \"C\" __global__ void __launch_bounds__(256) {}({}) {{", k.name,
         fmt::join(decls, ", "));
  w.indent();

  // The body for element i: `elem(v)` is the expression of a full-shape operand's element.
  auto body = [&](const std::function<std::string(const Value *)> &elem,
                  const std::function<std::string(size_t, const std::string &)> &store) -> Status {
    ValueEnv env;
    LoadFn load = [&](const Value *v) -> Expected<std::string> {
      auto it = names.find(v);
      if (it == names.end())
        return invalidArgument("value '{}' is neither a group input nor computed in the group",
                               v->name());
      if (count(staticSizes(v)) == n)
        return elem(v);
      return loadExpr(it->second, broadcastOffset(staticSizes(v), iter, "i"));
    };
    DLC_RETURN_IF_ERROR(emitElementwiseNodes(w, group.nodes, env, load, "v"));
    for (size_t i = 0; i < group.outputs.size(); ++i) {
      const Value *out = group.outputs[i];
      auto it = env.find(out);
      if (it == env.end())
        return invalidArgument("output '{}' is not computed by the group", out->name());
      w.line("{}",
             store(i, fmt::format("dlc_store<{}>({})", cudaStorageType(out->dtype()), it->second)));
    }
    return Status::ok();
  };

  std::string scalarStart = "0";
  if (vec > 1) {
    const int64_t nv = n / vec;
    // Every full-shape buffer must be aligned to its vector size; else all of it runs scalar.
    std::vector<std::string> checks;
    auto aligned = [&](const Value *v) {
      checks.push_back(fmt::format("((unsigned long long){} & {}) == 0", names[v],
                                   dtypeSize(v->dtype()) * vec - 1));
    };
    for (const Value *v : full)
      aligned(v);
    for (const Value *v : group.outputs)
      aligned(v);
    w.line("const bool aligned = {};", fmt::join(checks, " && "));
    w.line("if (aligned) {{");
    w.indent();
    w.line("for ({0} t = blockIdx.x * ({0})blockDim.x + threadIdx.x; t < {1}; t += ({0})gridDim.x "
           "* blockDim.x) {{",
           idxType, nv);
    w.indent();
    for (const Value *v : full)
      w.line("const dlc_vec<{0}, {1}> {2}v = *reinterpret_cast<const dlc_vec<{0}, {1}> *>({2} + t "
             "* {1});",
             cudaStorageType(v->dtype()), vec, names[v]);
    for (size_t i = 0; i < group.outputs.size(); ++i)
      w.line("dlc_vec<{}, {}> out{}v;", cudaStorageType(group.outputs[i]->dtype()), vec, i);
    w.line("#pragma unroll");
    w.line("for (int j = 0; j < {}; ++j) {{", vec);
    w.indent();
    if (readsBroadcast(group, n)) // broadcast operands index with i
      w.line("const {} i = t * {} + j;", idxType, vec);
    DLC_RETURN_IF_ERROR(body(
        [&](const Value *v) { return fmt::format("dlc_load({}v.v[j])", names[v]); },
        [&](size_t i, const std::string &e) { return fmt::format("out{}v.v[j] = {};", i, e); }));
    w.dedent();
    w.line("}}");
    for (size_t i = 0; i < group.outputs.size(); ++i)
      w.line("*reinterpret_cast<dlc_vec<{0}, {1}> *>(out{2} + t * {1}) = out{2}v;",
             cudaStorageType(group.outputs[i]->dtype()), vec, i);
    w.dedent();
    w.line("}}");
    w.dedent();
    w.line("}}");
    // The tail (and everything when a buffer is misaligned) runs one element per step.
    scalarStart = fmt::format("(aligned ? {} : 0)", nv * vec);
  }
  w.line("for ({0} i = {1} + blockIdx.x * ({0})blockDim.x + threadIdx.x; i < {2}; i += "
         "({0})gridDim.x * blockDim.x) {{",
         idxType, scalarStart, n);
  w.indent();
  DLC_RETURN_IF_ERROR(
      body([&](const Value *v) { return loadExpr(names[v], "i"); },
           [&](size_t i, const std::string &e) { return fmt::format("out{}[i] = {};", i, e); }));
  w.dedent();
  w.line("}}");
  w.dedent();
  w.line("}}");
  k.source = w.str();
  k.launch = gridStrideLaunch(vec > 1 ? n / vec : n, opts);
  KernelSet set;
  set.kernels.push_back(std::move(k));
  return set;
}

} // namespace

Family elementwiseFamily() { return {"elementwise", claims, supports, emit}; }

} // namespace dlc::codegen
