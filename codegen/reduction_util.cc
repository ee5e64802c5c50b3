#include "codegen/reduction_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "codegen/cuda_prelude.h"
#include "codegen/elementwise_chain.h"
#include "codegen/emitters.h"

namespace dlc::codegen::reduction {

bool wideIndex(int64_t n) { return n >= (int64_t{1} << 30); }

const char *indexType(int64_t n) { return wideIndex(n) ? "long long" : "int"; }

Expected<GroupParts> GroupParts::make(const FusedGroup &group, std::string kernel) {
  GroupParts p;
  p.group_ = &group;
  p.kernel_ = std::move(kernel);
  p.anchor_ = group.anchor;
  if (!p.anchor_)
    return invalidArgument("the group has no reduction anchor");
  if (group.outputs.empty())
    return invalidArgument("the group has no outputs");
  auto at = std::find(group.nodes.begin(), group.nodes.end(), p.anchor_);
  if (at == group.nodes.end())
    return invalidArgument("the anchor {} is not among the group's nodes", p.anchor_->describe());
  p.prologue_.assign(group.nodes.begin(), at);
  p.epilogue_.assign(at + 1, group.nodes.end());
  if (!p.data())
    return invalidArgument("{} has no input 0", p.anchor_->describe());
  p.inShape_ = staticSizes(p.data());
  p.outShape_ = staticSizes(p.anchor_->output(0));
  for (size_t i = 0; i < group.inputs.size(); ++i)
    p.names_[group.inputs[i]] = fmt::format("in{}", i);
  for (const Node *n : p.epilogue_)
    for (const Value *v : n->outputs())
      if (v && staticSizes(v) != p.outShape_)
        return invalidArgument("epilogue value '{}' has shape {}, not the shape [{}] of the "
                               "anchor's output",
                               v->name(), v->shape().str(), fmt::join(p.outShape_, ","));
  for (const Value *out : group.outputs) {
    bool ok = out == p.anchor_->output(0) || p.isSideOutput(out);
    for (const Node *n : p.epilogue_)
      ok = ok || out->producer() == n;
    if (!ok)
      return invalidArgument("group output '{}' is neither the anchor's output nor an epilogue "
                             "value",
                             out->name());
  }
  const bool computed =
      !p.prologue_.empty() && p.data()->producer() &&
      std::find(p.prologue_.begin(), p.prologue_.end(), p.data()->producer()) != p.prologue_.end();
  if (!computed && !p.names_.count(p.data()))
    return invalidArgument("the anchor's input '{}' is neither a group input nor computed by "
                           "the prologue",
                           p.data()->name());
  if (!computed) {
    p.leaves_.push_back(p.data());
  } else {
    for (const Value *v : group.inputs) {
      bool used = false;
      for (const Node *n : p.prologue_)
        for (const Value *in : n->inputs())
          used = used || in == v;
      if (used && staticSizes(v) == p.inShape_)
        p.leaves_.push_back(v);
    }
  }
  return p;
}

bool GroupParts::isSideOutput(const Value *v) const {
  for (int i = 1; i < anchor_->numOutputs(); ++i)
    if (v && anchor_->output(i) == v)
      return true;
  return false;
}

Expected<std::string> GroupParts::outputParam(const Value *v) const {
  for (size_t i = 0; i < group_->outputs.size(); ++i)
    if (group_->outputs[i] == v)
      return fmt::format("out{}", i);
  return invalidArgument("value '{}' is not an output of the group", v->name());
}

Expected<std::string> GroupParts::param(const Value *v) const {
  auto it = names_.find(v);
  if (it == names_.end())
    return invalidArgument("value '{}' is neither a group input nor computed in the group",
                           v->name());
  return it->second;
}

std::string GroupParts::declareParams(Kernel &k, bool scratch, bool scratchWritten) const {
  std::vector<std::string> decls;
  for (size_t i = 0; i < group_->inputs.size(); ++i) {
    decls.push_back(paramDecl(group_->inputs[i], fmt::format("in{}", i), false));
    k.params.push_back({group_->inputs[i], -1, false});
  }
  for (size_t i = 0; i < group_->outputs.size(); ++i) {
    decls.push_back(paramDecl(group_->outputs[i], fmt::format("out{}", i), true));
    k.params.push_back({group_->outputs[i], -1, true});
  }
  if (scratch) {
    decls.push_back(
        fmt::format("{}unsigned char* __restrict__ scratch", scratchWritten ? "" : "const "));
    k.params.push_back({nullptr, 0, scratchWritten});
  }
  return fmt::format("{}", fmt::join(decls, ", "));
}

Expected<std::string> GroupParts::element(CodeWriter &w, std::string_view idx,
                                          std::string_view prefix,
                                          const std::map<const Value *, std::string> &pre) const {
  ValueEnv env;
  for (const auto &[v, e] : pre)
    env[v] = fmt::format("dlc_load({})", e);
  if (prologue_.empty()) {
    if (auto it = env.find(data()); it != env.end())
      return it->second;
    DLC_ASSIGN_OR_RETURN(std::string name, param(data()));
    return loadExpr(name, idx);
  }
  LoadFn load = [&](const Value *v, const std::vector<int64_t> &shape) -> Expected<std::string> {
    DLC_ASSIGN_OR_RETURN(std::string name, param(v));
    return loadExpr(name, broadcastOffset(shape, inShape_, idx));
  };
  DLC_RETURN_IF_ERROR(emitElementwiseNodes(w, prologue_, env, load, prefix));
  return env.at(data());
}

Hoisted GroupParts::hoistEpilogueScalars(CodeWriter &w) const {
  return writeHoistedScalars(w, *group_, [&](const Value *v) -> std::string {
    if (group_->contains(v->producer()))
      return "";
    auto name = param(v);
    return name ? *name : "";
  });
}

Status GroupParts::store(CodeWriter &w, std::string_view idx, std::string_view value,
                         std::string_view prefix, std::string_view slot,
                         const Hoisted *hoisted) const {
  ValueEnv env;
  env[anchor_->output(0)] = std::string(value);
  LoadFn load = readingHoisted(
      hoisted, [&](const Value *v, const std::vector<int64_t> &shape) -> Expected<std::string> {
        DLC_ASSIGN_OR_RETURN(std::string name, param(v));
        return loadExpr(name, broadcastOffset(shape, outShape_, idx));
      });
  DLC_RETURN_IF_ERROR(emitElementwiseNodes(w, epilogue_, env, load, prefix));
  for (size_t i = 0; i < group_->outputs.size(); ++i) {
    const Value *out = group_->outputs[i];
    if (isSideOutput(out))
      continue;
    const std::string stored =
        fmt::format("dlc_store<{}>({})", cudaStorageType(out->dtype()), env.at(out));
    if (slot.empty())
      w.line("out{}[{}] = {};", i, idx, stored);
    else
      w.line("o{}.v[{}] = {};", i, slot, stored);
  }
  return Status::ok();
}

int GroupParts::vectorWidth(int64_t rowLength, bool outputs) const {
  int64_t bytes = 0;
  for (const Value *v : leaves_)
    bytes = std::max(bytes, dtypeSize(v->dtype()));
  if (bytes == 0)
    return 1;
  if (outputs)
    for (const Value *v : group_->outputs)
      if (!isSideOutput(v))
        bytes = std::max(bytes, dtypeSize(v->dtype()));
  int vec = static_cast<int>(16 / bytes);
  while (vec > 1 && rowLength % vec != 0)
    vec /= 2;
  return std::max(vec, 1);
}

std::string GroupParts::alignedCondition(int vec, bool outputs) const {
  std::vector<std::string> terms;
  auto add = [&](const std::string &name, const Value *v) {
    terms.push_back(fmt::format("reinterpret_cast<unsigned long long>({}) % {} == 0", name,
                                vec * dtypeSize(v->dtype())));
  };
  for (const Value *v : leaves_)
    add(names_.at(v), v);
  if (outputs)
    for (size_t i = 0; i < group_->outputs.size(); ++i)
      if (!isSideOutput(group_->outputs[i]))
        add(fmt::format("out{}", i), group_->outputs[i]);
  return terms.empty() ? "true" : fmt::format("{}", fmt::join(terms, " && "));
}

void GroupParts::emitVectorType(CodeWriter &w) const {
  auto type =
      w.blockSemi("template <class T, int N> struct alignas(sizeof(T) * N) {}_vec", kernel_);
  w.line("T v[N];");
}

Expected<std::map<const Value *, std::string>>
GroupParts::loadVectors(CodeWriter &w, std::string_view idx, int vec) const {
  std::map<const Value *, std::string> pre;
  for (size_t i = 0; i < leaves_.size(); ++i) {
    const Value *v = leaves_[i];
    const std::string type =
        fmt::format("{}_vec<{}, {}>", kernel_, cudaStorageType(v->dtype()), vec);
    w.line("const {0} t{1} = *reinterpret_cast<const {0} *>({2} + ({3}));", type, i, names_.at(v),
           idx);
    pre[v] = fmt::format("t{}.v[j]", i);
  }
  return pre;
}

void GroupParts::declareOutputVectors(CodeWriter &w, int vec) const {
  for (size_t i = 0; i < group_->outputs.size(); ++i)
    if (!isSideOutput(group_->outputs[i]))
      w.line("{}_vec<{}, {}> o{};", kernel_, cudaStorageType(group_->outputs[i]->dtype()), vec, i);
}

void GroupParts::flushOutputVectors(CodeWriter &w, std::string_view idx, int vec) const {
  for (size_t i = 0; i < group_->outputs.size(); ++i)
    if (!isSideOutput(group_->outputs[i]))
      w.line("*reinterpret_cast<{}_vec<{}, {}> *>(out{} + ({})) = o{};", kernel_,
             cudaStorageType(group_->outputs[i]->dtype()), vec, i, idx, i);
}

void emitCollectives(CodeWriter &w, const std::string &k) {
  {
    auto warp = w.block("template <class A> static __device__ __forceinline__ A {}_warp(A a)", k);
    w.line("#pragma unroll");
    w.line("for (int off = 16; off > 0; off >>= 1)");
    w.line("  a.merge(a.shfl(off));");
    w.line("return a;");
  }
  auto block = w.block("template <class A> static __device__ __forceinline__ A {}_block(A a)", k);
  w.line("__shared__ A sh[32];");
  w.line("a = {}_warp(a);", k);
  w.line("__syncthreads(); // sh may still be read by a previous call");
  w.line("if ((threadIdx.x & 31) == 0)");
  w.line("  sh[threadIdx.x >> 5] = a;");
  w.line("__syncthreads();");
  w.line("a = (threadIdx.x & 31) < (blockDim.x >> 5) ? sh[threadIdx.x & 31] : A::init();");
  w.line("return {}_warp(a);", k);
}

int64_t RowShape::slots() const {
  const int64_t vectors = (len + vec - 1) / vec;
  return std::max<int64_t>(1, (vectors + threads - 1) / threads);
}

std::string RowShape::collective(const std::string &kernel) const {
  if (threads == 1)
    return "";
  return kernel + (threads == 32 ? "_warp" : "_block");
}

RowLoop openRowLoop(CodeWriter &w, const RowShape &s, const std::string &lane, bool cached,
                    const std::string &begin, const std::string &end) {
  const char *col = indexType(s.len);
  if (cached) {
    w.line("#pragma unroll");
    RowLoop r{w.block("for (int k = 0; k < {}; ++k)", s.slots()), std::nullopt};
    w.line("[[maybe_unused]] const {} c = ({} + k * {}) * {};", col, lane, s.threads, s.vec);
    if (s.slots() * s.threads * s.vec != s.len)
      r.inRow.emplace(w.block("if (c < {})", s.len));
    return r;
  }
  return {w.block("for ({0} c = {1} + {2} * {3}; c < {4}; c += {5})", col, begin, lane, s.vec,
                  end.empty() ? std::to_string(s.len) : end, int64_t{s.threads} * s.vec),
          std::nullopt};
}

Status emitLoadPass(CodeWriter &w, const GroupParts &parts, const RowShape &s,
                    const std::string &base, const std::string &lane, const std::string &cache,
                    const RowHooks &hooks, const std::string &begin, const std::string &end) {
  RowLoop loop = openRowLoop(w, s, lane, !cache.empty(), begin, end);
  if (hooks.pre)
    DLC_RETURN_IF_ERROR(hooks.pre(w));
  std::map<const Value *, std::string> pre;
  if (s.vec > 1) {
    DLC_ASSIGN_OR_RETURN(pre, parts.loadVectors(w, fmt::format("{} + c", base), s.vec));
  }
  w.line("#pragma unroll");
  {
    auto elems = w.block("for (int j = 0; j < {}; ++j)", s.vec);
    w.line("[[maybe_unused]] const {} idx = {} + c + j;", s.wide ? "long long" : "int", base);
    DLC_ASSIGN_OR_RETURN(std::string x, parts.element(w, "idx", "p", pre));
    w.line("const {} x = {};", cudaComputeType(parts.data()->dtype()), x);
    std::string slot;
    if (!cache.empty()) {
      slot = fmt::format("{}[k * {} + j]", cache, s.vec);
      w.line("{} = x;", slot);
    }
    DLC_RETURN_IF_ERROR(hooks.body(w, "x", "(c + j)", slot));
  }
  if (hooks.post)
    DLC_RETURN_IF_ERROR(hooks.post(w));
  return Status::ok();
}

Status emitCachedPass(CodeWriter &w, const RowShape &s, const std::string &lane,
                      const std::string &cache, const RowHooks &hooks) {
  RowLoop loop = openRowLoop(w, s, lane, !cache.empty(), "0", "");
  if (hooks.pre)
    DLC_RETURN_IF_ERROR(hooks.pre(w));
  w.line("#pragma unroll");
  {
    auto elems = w.block("for (int j = 0; j < {}; ++j)", s.vec);
    const std::string slot = cache.empty() ? "" : fmt::format("{}[k * {} + j]", cache, s.vec);
    DLC_RETURN_IF_ERROR(hooks.body(w, slot, "(c + j)", slot));
  }
  if (hooks.post)
    DLC_RETURN_IF_ERROR(hooks.post(w));
  return Status::ok();
}

std::string scalarAccumulator(const std::string &name, const std::string &type,
                              const std::string &init, const std::string &add,
                              const std::string &merge) {
  CodeWriter w;
  {
    auto def = w.blockSemi("struct {}", name);
    w.line("{} v;", type);
    w.line("static __device__ __forceinline__ {} init() {{ return {{{}}}; }}", name, init);
    w.line("__device__ __forceinline__ void add({} x) {{ {} }}", type, add);
    w.line("__device__ __forceinline__ void merge(const {} &o) {{ {} }}", name, merge);
    auto shfl = w.block("__device__ __forceinline__ {} shfl(int off) const", name);
    w.line("return {{__shfl_xor_sync(0xffffffffu, v, off)}};");
  }
  return w.str();
}

} // namespace dlc::codegen::reduction
