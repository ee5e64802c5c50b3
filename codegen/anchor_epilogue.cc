#include "codegen/anchor_epilogue.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "codegen/cuda_prelude.h"
#include "codegen/elementwise_chain.h"
#include "codegen/emitters.h"

namespace dlc::codegen {

const std::string &ParamList::read(const Value *v) {
  auto [it, added] = names_.try_emplace({v, false});
  if (added) {
    it->second = fmt::format("in{}", reads_++);
    params_.push_back({v, -1, false});
    decls_.push_back(paramDecl(v, it->second, false));
  }
  return it->second;
}

const std::string &ParamList::write(const Value *v) {
  auto [it, added] = names_.try_emplace({v, true});
  if (added) {
    it->second = fmt::format("out{}", writes_++);
    params_.push_back({v, -1, true});
    decls_.push_back(paramDecl(v, it->second, true));
  }
  return it->second;
}

std::string ParamList::decls() const { return fmt::format("{}", fmt::join(decls_, ", ")); }

bool ParamList::allSmall() const {
  return std::all_of(params_.begin(), params_.end(), [](const KernelParam &p) {
    auto n = p.value->shape().numElements();
    return n && *n < (int64_t{1} << 31);
  });
}

std::string indexType(const ParamList &params) { return params.allSmall() ? "int" : "long long"; }

std::string kernelSignature(const std::string &name, const ParamList &params, int threads) {
  return fmt::format("extern \"C\" __global__ void __launch_bounds__({}) {}({})", threads, name,
                     params.decls());
}

KernelSet single(Kernel k) {
  KernelSet set;
  set.kernels.push_back(std::move(k));
  return set;
}

Expected<KernelSet>
finishPerOutput(CodeWriter &body, CodeWriter::Scope &loop, const FusedGroup &group, const Value *y,
                ParamList &params, int64_t count, const EmitOptions &opts,
                const std::vector<std::pair<const Value *, AnchorElement>> &moreRoots) {
  std::vector<const Value *> stored;
  DLC_RETURN_IF_ERROR(emitEpilogue(body, group, y, {"y", false}, "i", params, "v", stored));
  for (size_t r = 0; r < moreRoots.size(); ++r)
    DLC_RETURN_IF_ERROR(emitEpilogue(body, group, moreRoots[r].first, moreRoots[r].second, "i",
                                     params, fmt::format("r{}v", r), stored));
  DLC_RETURN_IF_ERROR(checkAllStored(group, stored));
  loop.close();
  Kernel k;
  k.name = group.name;
  finishKernel(k, params, 256, body);
  k.launch = gridStrideLaunch(count, opts);
  return single(std::move(k));
}

void finishKernel(Kernel &k, const ParamList &params, int threads, const CodeWriter &body) {
  CodeWriter w;
  {
    auto fn = w.block("{}", kernelSignature(k.name, params, threads));
    w.embed(body);
  }
  k.source = w.str();
  k.prelude = w.requirements();
  k.params = params.params();
}

namespace {

const Node *producerIn(const FusedGroup &g, const Value *v) {
  const Node *p = v->producer();
  return p && g.contains(p) ? p : nullptr;
}

} // namespace

Hoisted writeHoistedEpilogueScalars(CodeWriter &w, const FusedGroup &group, ParamList &params,
                                    CodeWriter *assign) {
  return writeHoistedScalars(
      w, group,
      [&](const Value *v) -> std::string { return producerIn(group, v) ? "" : params.read(v); },
      assign);
}

Status emitEpilogue(CodeWriter &w, const FusedGroup &group, const Value *root,
                    const AnchorElement &value, std::string_view idx, ParamList &params,
                    std::string_view prefix, std::vector<const Value *> &stored,
                    const Hoisted *hoisted) {
  const std::vector<int64_t> shape = staticSizes(root);
  // The nodes that derive from root, in order.
  std::set<const Value *> derived{root};
  std::vector<const Node *> chain;
  for (const Node *n : group.nodes) {
    if (n == group.anchor)
      continue;
    bool uses = false;
    for (const Value *in : n->inputs())
      uses = uses || (in && derived.count(in));
    if (!uses)
      continue;
    for (const Value *in : n->inputs())
      if (in && !derived.count(in) && producerIn(group, in))
        return invalidArgument("{}: epilogue operand '{}' is computed in the group but not from "
                               "the anchor output '{}'",
                               n->describe(), in->name(), root->name());
    for (const Value *out : n->outputs()) {
      if (!out)
        continue;
      if (staticSizes(out) != shape)
        return invalidArgument("{}: epilogue value '{}' has shape {}, not the anchor output's {}",
                               n->describe(), out->name(), out->shape().str(), root->shape().str());
      derived.insert(out);
    }
    chain.push_back(n);
  }

  ValueEnv env;
  const bool storeRawRoot = value.storage && chain.empty();
  if (!storeRawRoot) {
    std::string computeExpr = value.storage ? fmt::format("dlc_load({})", value.expr) : value.expr;
    if (!chain.empty()) {
      std::string var = fmt::format("{}a", prefix);
      w.line("const {} {} = {};", cudaComputeType(root->dtype()), var, computeExpr);
      computeExpr = var;
    }
    env[root] = computeExpr;
  }
  LoadFn load = readingHoisted(
      hoisted, [&](const Value *v, const std::vector<int64_t> &view) -> Expected<std::string> {
        if (producerIn(group, v))
          return invalidArgument(
              "value '{}' is computed in the group but not from the anchor output", v->name());
        return loadExpr(params.read(v), broadcastOffset(view, shape, idx));
      });
  DLC_RETURN_IF_ERROR(emitElementwiseNodes(w, chain, env, load, prefix));

  std::vector<const Value *> candidates{root};
  for (const Node *n : chain)
    for (const Value *out : n->outputs())
      if (out)
        candidates.push_back(out);
  for (const Value *v : candidates) {
    if (!group.writes(v))
      continue;
    const std::string &name = params.write(v);
    if (v == root && value.storage)
      w.line("{}[{}] = {};", name, idx, value.expr);
    else
      w.line("{}[{}] = dlc_store<{}>({});", name, idx, cudaStorageType(v->dtype()), env.at(v));
    stored.push_back(v);
  }
  return Status::ok();
}

Status checkAllStored(const FusedGroup &group, const std::vector<const Value *> &stored) {
  for (const Value *v : group.outputs)
    if (std::find(stored.begin(), stored.end(), v) == stored.end())
      return invalidArgument("group output '{}' is not computed from the anchor's outputs",
                             v->name());
  return Status::ok();
}

} // namespace dlc::codegen
