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
#include <map>

#include "codegen/cuda_prelude.h"
#include "codegen/elementwise_chain.h"
#include "codegen/emitters.h"
#include "codegen/quant_expr.h"
#include "ir/match.h"
#include "ir/quant_layout.h"

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
  if (isQdqNode(node))
    return qdqSupported(node, why);
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

/// Whether a group node reads an input with fewer than n elements, more than one (a single
/// element is read at offset 0, without the index).
bool readsBroadcast(const FusedGroup &group, int64_t n) {
  for (const Node *node : group.nodes)
    for (const Value *v : node->inputs())
      if (v && !group.contains(v->producer()) && count(staticSizes(v)) != n &&
          count(staticSizes(v)) != 1)
        return true;
  return false;
}

/// What the kernel's loops share: the group, its iteration space and the operands' names.
struct Loops {
  explicit Loops(const FusedGroup &g) : group(g) {}
  const FusedGroup &group;
  std::vector<int64_t> iter;
  int64_t n = 0;
  int vec = 1;
  const char *idxType = "int";
  std::map<const Value *, std::string> names;
  // Operands with as many elements as the iteration space are read at the flat index itself
  // (broadcasting cannot reorder them); in the vector loop they come in 16-byte vectors.
  std::vector<const Value *> full;
};

using ElementFn = std::function<std::string(const Value *)>;
using StoreFn = std::function<std::string(size_t, const std::string &)>;

/// The body for element i: `elem(v)` is the expression of a full-shape operand's element,
/// `store(i, e)` the statement storing output i; one-element operands in `hoisted` (the vector
/// loop's, loaded once per step) are read from their copies.
Status writeBody(CodeWriter &w, const Loops &l, const ElementFn &elem, const StoreFn &store,
                 const Hoisted *hoisted = nullptr) {
  ValueEnv env;
  LoadFn load = readingHoisted(
      hoisted, [&](const Value *v, const std::vector<int64_t> &shape) -> Expected<std::string> {
        auto it = l.names.find(v);
        if (it == l.names.end())
          return invalidArgument("value '{}' is neither a group input nor computed in the group",
                                 v->name());
        if (count(staticSizes(v)) == l.n) // any shape of n elements broadcasts as the identity
          return elem(v);
        return loadExpr(it->second, broadcastOffset(shape, l.iter, "i"));
      });
  DLC_RETURN_IF_ERROR(emitElementwiseNodes(w, l.group.nodes, env, load, "v"));
  for (size_t i = 0; i < l.group.outputs.size(); ++i) {
    const Value *out = l.group.outputs[i];
    auto it = env.find(out);
    if (it == env.end())
      return invalidArgument("output '{}' is not computed by the group", out->name());
    w.line("{}",
           store(i, fmt::format("dlc_store<{}>({})", cudaStorageType(out->dtype()), it->second)));
  }
  return Status::ok();
}

/// The vector loop, run when every full-shape buffer is aligned to its vector size (else all
/// of it runs scalar): vec elements per step, full-shape operands moved as dlc_vec.
Status writeVectorLoop(CodeWriter &w, const Loops &l) {
  const int64_t nv = l.n / l.vec;
  std::vector<std::string> checks;
  auto aligned = [&](const Value *v) {
    checks.push_back(fmt::format("((unsigned long long){} & {}) == 0", l.names.at(v),
                                 dtypeSize(v->dtype()) * l.vec - 1));
  };
  for (const Value *v : l.full)
    aligned(v);
  for (const Value *v : l.group.outputs)
    aligned(v);
  w.line("const bool aligned = {};", fmt::join(checks, " && "));
  auto ifAligned = w.block("if (aligned)");
  auto loop = w.block("for ({0} t = blockIdx.x * ({0})blockDim.x + threadIdx.x; t < {1}; t += "
                      "({0})gridDim.x * blockDim.x)",
                      l.idxType, nv);
  for (const Value *v : l.full)
    w.line("const dlc_vec<{0}, {1}> {2}v = *reinterpret_cast<const dlc_vec<{0}, {1}> *>({2} + t "
           "* {1});",
           cudaStorageType(v->dtype()), l.vec, l.names.at(v));
  for (size_t i = 0; i < l.group.outputs.size(); ++i)
    w.line("dlc_vec<{}, {}> out{}v;", cudaStorageType(l.group.outputs[i]->dtype()), l.vec, i);
  // A quantization's scale (with its reciprocal) and zero point once per step, after the
  // step's loads: the compiler computes the reciprocal per element otherwise.
  const Hoisted hoisted = writeHoistedScalars(w, l.group, [&](const Value *v) -> std::string {
    auto it = l.names.find(v);
    return it == l.names.end() || l.group.contains(v->producer()) ? "" : it->second;
  });
  w.line("#pragma unroll");
  {
    auto lanes = w.block("for (int j = 0; j < {}; ++j)", l.vec);
    if (readsBroadcast(l.group, l.n)) // broadcast operands index with i
      w.line("const {} i = t * {} + j;", l.idxType, l.vec);
    DLC_RETURN_IF_ERROR(writeBody(
        w, l, [&](const Value *v) { return fmt::format("dlc_load({}v.v[j])", l.names.at(v)); },
        [&](size_t i, const std::string &e) { return fmt::format("out{}v.v[j] = {};", i, e); },
        &hoisted));
  }
  for (size_t i = 0; i < l.group.outputs.size(); ++i)
    w.line("*reinterpret_cast<dlc_vec<{0}, {1}> *>(out{2} + t * {1}) = out{2}v;",
           cudaStorageType(l.group.outputs[i]->dtype()), l.vec, i);
  return Status::ok();
}

Expected<KernelSet> emit(const FusedGroup &group, const EmitOptions &opts) {
  if (group.outputs.empty())
    return invalidArgument("the group has no outputs");
  Loops l(group);
  // The iteration space: the largest output.
  for (const Value *v : group.outputs) {
    auto s = staticSizes(v);
    if (count(s) > count(l.iter) || l.iter.empty())
      l.iter = s;
  }
  for (const Value *v : group.outputs)
    if (staticSizes(v) != l.iter)
      return invalidArgument("output '{}' has shape {}, not the group's iteration shape [{}]",
                             v->name(), v->shape().str(), fmt::join(l.iter, ","));
  l.n = count(l.iter);
  l.idxType = l.n >= (int64_t{1} << 31) ? "long long" : "int";
  l.vec = vectorWidth(group, l.n);

  Kernel k;
  k.name = group.name;
  std::vector<std::string> decls;
  for (size_t i = 0; i < group.inputs.size(); ++i) {
    l.names[group.inputs[i]] = fmt::format("in{}", i);
    decls.push_back(paramDecl(group.inputs[i], l.names[group.inputs[i]], false));
    k.params.push_back({group.inputs[i], -1, false});
    if (count(staticSizes(group.inputs[i])) == l.n)
      l.full.push_back(group.inputs[i]);
  }
  for (size_t i = 0; i < group.outputs.size(); ++i) {
    l.names[group.outputs[i]] = fmt::format("out{}", i);
    decls.push_back(paramDecl(group.outputs[i], l.names[group.outputs[i]], true));
    k.params.push_back({group.outputs[i], -1, true});
  }
  CodeWriter w;
  {
    auto fn = w.block("extern \"C\" __global__ void __launch_bounds__(256) {}({})", k.name,
                      fmt::join(decls, ", "));
    std::string scalarStart = "0";
    if (l.vec > 1) {
      DLC_RETURN_IF_ERROR(writeVectorLoop(w, l));
      // The tail (and everything when a buffer is misaligned) runs one element per step.
      scalarStart = fmt::format("(aligned ? {} : 0)", l.n / l.vec * l.vec);
    }
    auto loop = w.block("for ({0} i = {1} + blockIdx.x * ({0})blockDim.x + threadIdx.x; i < {2}; "
                        "i += ({0})gridDim.x * blockDim.x)",
                        l.idxType, scalarStart, l.n);
    DLC_RETURN_IF_ERROR(writeBody(
        w, l, [&](const Value *v) { return loadExpr(l.names.at(v), "i"); },
        [&](size_t i, const std::string &e) { return fmt::format("out{}[i] = {};", i, e); }));
  }
  k.source = w.str();
  k.prelude = w.requirements();
  k.launch = gridStrideLaunch(l.vec > 1 ? l.n / l.vec : l.n, opts);
  KernelSet set;
  set.kernels.push_back(std::move(k));
  return set;
}

} // namespace

Family elementwiseFamily() { return {"elementwise", claims, supports, emit}; }

} // namespace dlc::codegen
