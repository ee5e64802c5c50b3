#include "codegen/elementwise_chain.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "codegen/cuda_prelude.h"
#include "codegen/quant_expr.h"

namespace dlc::codegen {

Status emitElementwiseNodes(CodeWriter &w, const std::vector<const Node *> &nodes, ValueEnv &env,
                            const LoadFn &load, std::string_view prefix) {
  // Values bound before the nodes run or computed by them: never loaded.
  std::set<const Value *> computed;
  for (const auto &[v, e] : env)
    computed.insert(v);
  for (const Node *n : nodes)
    for (const Value *out : n->outputs())
      if (out)
        computed.insert(out);
  // Operands read with a shape other than their own (per-axis Q/DQ parameters).
  std::map<std::pair<const Value *, std::vector<int64_t>>, std::string> viewed;
  for (const Node *n : nodes) {
    const CudaExprFn cuda = elementwiseExpr(n->op());
    if (!cuda)
      return invalidArgument("{}: op '{}' has no CUDA expression", n->describe(), n->opName());
    std::vector<std::string> args;
    for (int i = 0; i < n->numInputs(); ++i) {
      const Value *in = n->input(i);
      if (!in || unreadOperand(*n, i)) {
        args.emplace_back();
        continue;
      }
      if (auto view = operandView(*n, i)) {
        if (computed.count(in))
          return invalidArgument("{}: per-axis operand '{}' is computed in the kernel, so it "
                                 "cannot be read along axis {}",
                                 n->describe(), in->name(), n->getInt("axis"));
        auto it = viewed.find({in, *view});
        if (it == viewed.end()) {
          DLC_ASSIGN_OR_RETURN(std::string e, load(in, *view));
          it = viewed.emplace(std::pair{in, *view}, std::move(e)).first;
        }
        args.push_back(it->second);
        continue;
      }
      auto it = env.find(in);
      if (it == env.end()) {
        DLC_ASSIGN_OR_RETURN(std::string e, load(in, staticSizes(in)));
        it = env.emplace(in, std::move(e)).first;
      }
      args.push_back(it->second);
    }
    auto expr = cuda(*n, args);
    if (!expr)
      return expr.status().withContext(n->describe());
    const Value *out = n->output(0);
    std::string var = w.fresh(prefix);
    w.line("const {} {} = {};", cudaComputeType(out->dtype()), var, *expr);
    env[out] = var;
  }
  return Status::ok();
}

std::vector<int64_t> staticSizes(const Value *v) { return v->shape().sizes(); }

std::string broadcastOffset(const std::vector<int64_t> &in, const std::vector<int64_t> &out,
                            std::string_view idx, bool wide) {
  std::vector<int64_t> inStride(in.size(), 1);
  for (size_t i = in.size(); i-- > 1;)
    inStride[i - 1] = inStride[i] * in[i];
  return broadcastOffset(in, inStride, out, idx, wide);
}

std::string broadcastOffset(const std::vector<int64_t> &in, const std::vector<int64_t> &inStride,
                            const std::vector<int64_t> &out, std::string_view idx, bool wide) {
  const char *ll = wide ? "LL" : "";
  int64_t inCount = 1;
  for (int64_t d : in)
    inCount *= d;
  if (inCount == 1)
    return "0";
  // Right-align `in` against `out`; leading size-1 dims of `in` beyond out's rank cannot occur
  // (broadcasting never lowers rank), but size-1 dims anywhere are skipped.
  const size_t rank = out.size(), lead = rank - in.size();
  bool same = in.size() == out.size();
  for (size_t i = 0; same && i < in.size(); ++i)
    same = in[i] == out[i];
  // Equal shapes, contiguous: the offset is the index itself.
  for (size_t i = in.size(), s = 1; same && i-- > 0; s *= static_cast<size_t>(in[i]))
    same = in[i] == 1 || inStride[i] == static_cast<int64_t>(s);
  if (same)
    return std::string(idx);
  // offset = sum over dims d kept in `in` of ((idx / outStride[d]) % out[d]) * inStride[d].
  std::vector<int64_t> outStride(rank, 1);
  for (size_t i = rank; i-- > 1;)
    outStride[i - 1] = outStride[i] * out[i];
  std::string e;
  for (size_t j = 0; j < in.size(); ++j) {
    if (in[j] == 1)
      continue;
    const size_t d = j + lead;
    std::string coord = outStride[d] == 1 ? fmt::format("({})", idx)
                                          : fmt::format("(({}) / {}{})", idx, outStride[d], ll);
    if (d != 0)
      coord = fmt::format("({} % {}{})", coord, out[d], ll);
    if (!e.empty())
      e += " + ";
    e += inStride[j] == 1 ? coord : fmt::format("{} * {}{}", coord, inStride[j], ll);
  }
  return e.empty() ? "0" : "(" + e + ")";
}

std::string loadExpr(std::string_view ptr, std::string_view offset) {
  return fmt::format("dlc_load({}[{}])", ptr, offset);
}

LoadFn readingHoisted(const Hoisted *hoisted, LoadFn load) {
  if (!hoisted)
    return load;
  return [hoisted, load = std::move(load)](
             const Value *v, const std::vector<int64_t> &shape) -> Expected<std::string> {
    if (auto h = hoisted->find(v); h != hoisted->end())
      return h->second;
    return load(v, shape);
  };
}

Hoisted writeHoistedScalars(CodeWriter &w, const FusedGroup &group,
                            const std::function<std::string(const Value *)> &param,
                            CodeWriter *assign) {
  Hoisted hoisted;
  for (const Node *n : group.nodes) {
    if (n == group.anchor)
      continue;
    for (const Value *v : n->inputs()) {
      if (!v || hoisted.count(v) || !v->shape().isStatic() || v->shape().numElements() != 1)
        continue;
      const std::string p = param(v);
      if (p.empty())
        continue;
      auto quantizes = [&](const Use &u) {
        return u.node->op() == Op::kQuantizeLinear && u.index == 1 && group.contains(u.node);
      };
      const bool qScaleOnly =
          v->dtype() != DType::kF64 && std::any_of(v->uses().begin(), v->uses().end(), quantizes) &&
          std::all_of(v->uses().begin(), v->uses().end(), [&](const Use &u) {
            const Op op = u.node->op();
            return ((op == Op::kQuantizeLinear || op == Op::kDequantizeLinear) && u.index == 1) ||
                   u.node == group.anchor || !group.contains(u.node);
          });
      // Read by no expression of the group (a unit quantization scale): nothing to hoist.
      if (std::none_of(v->uses().begin(), v->uses().end(), [&](const Use &u) {
            return group.contains(u.node) && !unreadOperand(*u.node, u.index);
          }))
        continue;
      const std::string name = "h_" + p, load = loadExpr(p, "0");
      if (v->isConstant() && isInteger(v->dtype()) && dtypeSize(v->dtype()) <= 4) {
        // A constant zero point or bound: a literal the compiler folds (x - 0, a clamp with
        // immediates) and that holds no register.
        w.line("constexpr {} {} = {};", cudaStorageType(v->dtype()), name,
               cudaLiteral(static_cast<double>(v->constant().toInt64Vector().at(0)), v->dtype()));
      } else if (!qScaleOnly) {
        w.line("const auto {} = {};", name, load);
      } else if (!assign) {
        w.line("const dlc_qscale {} = dlc_qscale_of({});", name, load);
      } else {
        w.line("const float {}_raw = {};", name, load);
        w.line("dlc_qscale {};", name);
        assign->line("{0} = dlc_qscale_of({0}_raw);", name);
      }
      hoisted[v] = name;
    }
  }
  return hoisted;
}

} // namespace dlc::codegen
