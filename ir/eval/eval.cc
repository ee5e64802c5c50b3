#include "ir/eval/eval.h"

#include <array>

#include "ir/eval/families.h"
#include "ir/ops/infer_checks.h"

namespace dlc::eval {

namespace {

struct EvalTable {
  std::array<EvalFn, kNumOps> fns{};

  EvalTable() {
    std::array<bool, kNumOps> seen{};
    for (const EvalRow &r : allEvalRows()) {
      size_t i = static_cast<size_t>(r.op);
      DLC_CHECK(!seen[i], "op '{}' has two reference kernels", opName(r.op));
      DLC_CHECK(r.fn != nullptr, "op '{}' has a null reference kernel", opName(r.op));
      seen[i] = true;
      fns[i] = r.fn;
    }
  }
};

const EvalTable &table() {
  static const EvalTable t;
  return t;
}

std::array<const EvalFn *, kNumOps> &overrides() {
  static std::array<const EvalFn *, kNumOps> o{};
  return o;
}

} // namespace

std::vector<EvalRow> allEvalRows() {
  std::vector<EvalRow> all;
  for (auto family : {elementwiseEvals, reductionEvals, nnEvals, linalgEvals, tensorEvals,
                      quantEvals, miscEvals, controlFlowEvals})
    for (const EvalRow &r : family())
      all.push_back(r);
  return all;
}

EvalFn findEval(Op op) {
  size_t i = static_cast<size_t>(op);
  if (const EvalFn *o = overrides()[i])
    return *o;
  return table().fns[i];
}

Expected<std::vector<Tensor>> evaluate(const Node &node, const std::vector<Tensor> &inputs) {
  EvalFn fn = findEval(node.op());
  if (!fn)
    return unimplemented("{}: no reference evaluation for op '{}'", node.describe(), node.opName());
  if (static_cast<int>(inputs.size()) != node.numInputs())
    return internalError("{}: {} inputs given for {} node inputs", node.describe(), inputs.size(),
                         node.numInputs());
  // The same schema check as inferNode: a kernel may index inputs and read attributes.
  std::vector<TensorType> types;
  for (const Tensor &t : inputs)
    types.push_back(t.empty() ? TensorType() : t.type());
  InferContext ctx(node, std::move(types), {}, {});
  DLC_RETURN_IF_ERROR(ops::checkSchema(ctx).withContext(node.describe()));
  auto result = fn(node, inputs);
  if (!result)
    return result.status().withContext(node.describe());
  return result;
}

ScopedEvalOverride::ScopedEvalOverride(Op op, EvalFn fn)
    : op_(op), fn_(fn), previous_(overrides()[static_cast<size_t>(op)]) {
  overrides()[static_cast<size_t>(op_)] = &fn_;
}

ScopedEvalOverride::~ScopedEvalOverride() { overrides()[static_cast<size_t>(op_)] = previous_; }

} // namespace dlc::eval
