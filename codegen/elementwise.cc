// Elementwise family: a group of elementwise/broadcast nodes becomes one grid-stride kernel
// over the elements of the group's widest value. Every group output must have that full shape
// (the fuse pass guarantees it); operands of smaller shape are read with broadcast indexing.
#include <fmt/format.h>

#include <algorithm>

#include "codegen/cuda_prelude.h"
#include "codegen/elementwise_chain.h"
#include "codegen/emitters.h"

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
  if (!node.def().cuda) {
    *why = fmt::format("op '{}' has no CUDA expression", node.opName());
    return false;
  }
  for (int i = 1; i < node.numOutputs(); ++i)
    if (node.output(i) && node.output(i)->hasUses()) {
      *why = fmt::format("output {} of '{}' is used (only output 0 has a GPU kernel)", i,
                         node.opName());
      return false;
    }
  return true;
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

  Kernel k;
  k.name = group.name;
  std::vector<std::string> decls;
  std::map<const Value *, std::string> names;
  for (size_t i = 0; i < group.inputs.size(); ++i) {
    names[group.inputs[i]] = fmt::format("in{}", i);
    decls.push_back(paramDecl(group.inputs[i], names[group.inputs[i]], false));
    k.params.push_back({group.inputs[i], -1, false});
  }
  for (size_t i = 0; i < group.outputs.size(); ++i) {
    decls.push_back(paramDecl(group.outputs[i], fmt::format("out{}", i), true));
    k.params.push_back({group.outputs[i], -1, true});
  }
  CodeWriter w;
  w.line("extern \"C\" __global__ void __launch_bounds__(256) {}({}) {{", k.name,
         fmt::join(decls, ", "));
  w.indent();
  const char *idxType = wide ? "long long" : "int";
  w.line("for ({0} i = blockIdx.x * ({0})blockDim.x + threadIdx.x; i < {1}; i += ({0})gridDim.x "
         "* blockDim.x) {{",
         idxType, n);
  w.indent();
  ValueEnv env;
  LoadFn load = [&](const Value *v) -> Expected<std::string> {
    auto it = names.find(v);
    if (it == names.end())
      return invalidArgument("value '{}' is neither a group input nor computed in the group",
                             v->name());
    return loadExpr(it->second, broadcastOffset(staticSizes(v), iter, "i"));
  };
  DLC_RETURN_IF_ERROR(emitElementwiseNodes(w, group.nodes, env, load, "v"));
  for (size_t i = 0; i < group.outputs.size(); ++i) {
    const Value *out = group.outputs[i];
    auto it = env.find(out);
    if (it == env.end())
      return invalidArgument("output '{}' is not computed by the group", out->name());
    w.line("out{}[i] = dlc_store<{}>({});", i, cudaStorageType(out->dtype()), it->second);
  }
  w.dedent();
  w.line("}}");
  w.dedent();
  w.line("}}");
  k.source = w.str();
  k.launch = gridStrideLaunch(n, opts);
  KernelSet set;
  set.kernels.push_back(std::move(k));
  return set;
}

} // namespace

Family elementwiseFamily() { return {"elementwise", claims, supports, emit}; }

} // namespace dlc::codegen
