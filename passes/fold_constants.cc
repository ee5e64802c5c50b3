// fold-constants: evaluates nodes whose inputs are all constants.
//
// A node whose present inputs are all constants and whose op has a reference evaluation
// (ir/eval/eval.h) is run on the host; each used output becomes a new constant that keeps the
// output's name, and the node is erased. Nodes are visited in order, so a chain of constant
// nodes folds in one run. Shape and Size are folded without evaluating anything when their
// input's type is static, since their result depends only on that type.
//
// Before: output types inferred (infer-shapes): a fold needs every output's shape to be
// static, so that the `size-limit` option (elements per output, default 1048576) is checked
// before anything is materialised. After: no foldable node is left.
// Not done here: random ops are never folded; nor is dequantize_linear (an int8 weight stays
// int8 for realize-int8, which folds the ones it leaves float); constants left unused are removed
// by dce; values whose symbolic shape value is fully known are not turned into constants; an
// evaluation that says "unimplemented" leaves the node alone. Every refusal is reported
// under --debug-only=fold-constants.
#include <algorithm>

#include "ir/eval/eval.h"
#include "ir/match.h"
#include "passes/registry.h"

namespace dlc {

namespace {

constexpr int64_t kDefaultSizeLimit = int64_t{1} << 20;

/// Shape (with its start/end attributes) or Size of a value of static type `t`.
Tensor shapeOf(const Node &n, const TensorType &t) {
  std::vector<int64_t> sizes = t.shape.sizes();
  if (n.op() == Op::kSize) {
    int64_t count = 1;
    for (int64_t s : sizes)
      count *= s;
    return Tensor::scalarI64(count);
  }
  int64_t rank = static_cast<int64_t>(sizes.size());
  auto bound = [&](std::string_view name, int64_t dflt) {
    const Attribute *a = n.findAttr(name);
    int64_t v = a && a->kind() == AttrKind::kInt ? a->i() : dflt;
    if (v < 0)
      v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  int64_t start = bound("start", 0), end = bound("end", rank);
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i)
    dims.push_back(sizes[static_cast<size_t>(i)]);
  return Tensor::vectorI64(dims);
}

class FoldConstants : public Pass {
public:
  std::vector<PassOptionSpec> options() const override {
    return {{"size-limit", PassOptionSpec::Kind::kInt,
             "largest output, in elements, a fold may create (default 1048576)"}};
  }

  Expected<bool> run(Graph &g, const PassOptions &options) override {
    DLC_ASSIGN_OR_RETURN(limit_, options.getInt("size-limit", kDefaultSizeLimit));
    if (limit_ < 0)
      return invalidArgument("option 'size-limit' must be >= 0, got {}", limit_);
    bool changed = false;
    for (Node *n : g.nodes()) {
      DLC_ASSIGN_OR_RETURN(std::optional<std::vector<Tensor>> results, fold(*n, options));
      if (!results)
        continue;
      options.debugf("{}: folded", n->describe());
      replaceWithConstants(g, n, *results);
      changed = true;
    }
    return changed;
  }

private:
  /// The node's results, or nullopt when it is not folded (the reason goes to the log).
  Expected<std::optional<std::vector<Tensor>>> fold(const Node &n, const PassOptions &options) {
    using Result = std::optional<std::vector<Tensor>>;
    if ((n.op() == Op::kShape || n.op() == Op::kSize) && n.hasInput(0) && n.numOutputs() == 1 &&
        n.output(0)) {
      const TensorType &t = n.input(0)->type();
      if (t.shape.isStatic())
        return Result(std::vector<Tensor>{shapeOf(n, t)});
      options.debugf("{}: not folded: input '{}' has no static shape", n.describe(),
                     n.input(0)->name());
      return Result();
    }
    std::vector<Tensor> inputs;
    for (Value *in : n.inputs()) {
      if (in && !in->isConstant())
        return Result();
      inputs.push_back(in ? in->constant() : Tensor());
    }
    if (opDef(n.op()).random)
      return refuse(n, options, "op is random");
    if (n.op() == Op::kDequantizeLinear)
      return refuse(n, options, "a quantized constant stays quantized (realize-int8 reads it)");
    const eval::EvalFn kernel = eval::findEval(n.op());
    if (!kernel)
      return refuse(n, options, fmt::format("op '{}' has no reference evaluation", n.opName()));
    for (Value *out : n.outputs()) {
      if (!out)
        continue;
      std::optional<int64_t> count = out->shape().numElements();
      if (!count || !out->type().isKnown())
        return refuse(
            n, options,
            fmt::format("output '{}' has no static type ({})", out->name(), out->type().str()));
      if (*count > limit_)
        return refuse(n, options,
                      fmt::format("output has {} elements > size-limit {}", *count, limit_));
    }
    Expected<std::vector<Tensor>> results = kernel(n, inputs);
    if (!results) {
      if (results.status().code() == StatusCode::kUnimplemented)
        return refuse(n, options, results.status().message());
      return results.status().withContext(n.describe());
    }
    DLC_RETURN_IF_ERROR(checkResults(n, *results));
    return Result(std::move(*results));
  }

  static std::optional<std::vector<Tensor>> refuse(const Node &n, const PassOptions &options,
                                                   const std::string &reason) {
    options.debugf("{}: not folded: {}", n.describe(), reason);
    return std::nullopt;
  }

  /// The evaluation must agree with inference; a disagreement is a bug in dlc.
  static Status checkResults(const Node &n, const std::vector<Tensor> &results) {
    if (static_cast<int>(results.size()) != n.numOutputs())
      return internalError("{}: reference evaluation gave {} results for {} outputs", n.describe(),
                           results.size(), n.numOutputs());
    for (int i = 0; i < n.numOutputs(); ++i) {
      const Value *out = n.output(i);
      if (out && results[i].type() != out->type())
        return internalError("{}: reference evaluation gave {} for output '{}' of type {}",
                             n.describe(), results[i].type().str(), out->name(), out->type().str());
    }
    return Status::ok();
  }

  /// Each used output becomes a constant under the output's name; the node goes.
  static void replaceWithConstants(Graph &g, Node *n, const std::vector<Tensor> &results) {
    std::vector<std::pair<Value *, std::string>> renames;
    std::vector<Value *> replacements(static_cast<size_t>(n->numOutputs()), nullptr);
    for (int i = 0; i < n->numOutputs(); ++i) {
      Value *out = n->output(i);
      if (isUnused(out))
        continue;
      Value *c = g.addConstant(out->name(), results[static_cast<size_t>(i)]);
      replacements[static_cast<size_t>(i)] = c;
      renames.emplace_back(c, out->name());
    }
    replaceNode(g, n, replacements);
    for (auto &[c, name] : renames)
      g.renameValue(c, name);
  }

  int64_t limit_ = kDefaultSizeLimit;
};

} // namespace

std::unique_ptr<Pass> createFoldConstants() { return std::make_unique<FoldConstants>(); }

} // namespace dlc
