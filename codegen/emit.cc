#include <fmt/format.h>

#include <algorithm>

#include "codegen/cuda_prelude.h"
#include "codegen/emitters.h"
#include "ir/annotations/fusion_roles.h"

namespace dlc::codegen {

bool FusedGroup::contains(const Node *n) const {
  return std::find(nodes.begin(), nodes.end(), n) != nodes.end();
}

bool FusedGroup::writes(const Value *v) const {
  return std::find(outputs.begin(), outputs.end(), v) != outputs.end();
}

const std::vector<Family> &families() {
  static const std::vector<Family> all = {
      dataMovementFamily(),  poolFamily(), elementwiseFamily(), reductionFamily(),
      gemmFamily(),          convFamily(), attentionFamily(),   lossFamily(),
      convTransposeFamily(), scanFamily(), gridSampleFamily(),  scatterFamily(),
      topKFamily(),          nmsFamily(),  randomFamily(),
  };
  return all;
}

namespace {

const Family *familyFor(const Node *anchor) {
  for (const Family &f : families())
    if (f.claims(anchor))
      return &f;
  return nullptr;
}

bool staticTypes(const Node &node, std::string *why) {
  for (const Value *v : node.inputs())
    if (v && !v->shape().isStatic()) {
      *why = fmt::format("input '{}' has a dynamic shape {}", v->name(), v->shape().str());
      return false;
    }
  for (const Value *v : node.outputs())
    if (v && !v->shape().isStatic()) {
      *why = fmt::format("output '{}' has a dynamic shape {}", v->name(), v->shape().str());
      return false;
    }
  return true;
}

} // namespace

bool gpuSupports(const Node &node, std::string *why) {
  std::string ignored;
  if (!why)
    why = &ignored;
  if (!staticTypes(node, why))
    return false;
  if (isViewNode(node)) // lowering aliases the buffer: no kernel
    return true;
  const bool elementwise = elementwiseExpr(node.op()) != nullptr;
  const Family *f = familyFor(elementwise ? nullptr : &node);
  if (!f) {
    *why = fmt::format("op '{}' has no GPU kernel", node.opName());
    return false;
  }
  return f->supports(node, why);
}

Expected<KernelSet> emitGroup(const FusedGroup &group, const EmitOptions &opts) {
  const Family *f = familyFor(group.anchor);
  if (!f)
    return invalidArgument("group '{}': op '{}' has no GPU kernel family", group.name,
                           group.anchor ? group.anchor->opName() : "elementwise");
  auto set = f->emit(group, opts);
  if (!set)
    return set.status().withContext(fmt::format("{} kernel for group '{}'", f->name, group.name));
  return set;
}

std::string paramDecl(const Value *v, const std::string &name, bool written) {
  return fmt::format("{}{}* __restrict__ {}", written ? "" : "const ", cudaStorageType(v->dtype()),
                     name);
}

LaunchDims gridStrideLaunch(int64_t n, const EmitOptions &opts, uint32_t threads) {
  LaunchDims d;
  d.block[0] = threads;
  const int64_t blocks = std::max<int64_t>(1, (n + threads - 1) / threads);
  // Enough blocks to fill every SM several times; the loop covers the rest.
  d.grid[0] = static_cast<uint32_t>(std::min<int64_t>(blocks, int64_t{opts.numSms} * 32));
  return d;
}

} // namespace dlc::codegen
