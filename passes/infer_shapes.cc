// infer-shapes: gives every node output a dtype and a shape.
//
// Walks the nodes in order (the graph keeps them topologically sorted) and runs each op's
// inference (inferNode, ir/op.h) on the types of its inputs, the data of its constant inputs
// and the symbolic values of small integer tensors met earlier in the walk: the output of
// Shape on f32[N,3] is known to hold [N,3] though it is no constant, so a Reshape fed by it
// still gets a shape.
//
// Types already on values (hints from the model's value_info, or from an earlier run) are
// merged with what inference says: a known inferred dim wins; where inference gives an
// unknown dim or dtype, the hint fills it; two known dims (or dtypes, or ranks) that differ
// are an error naming the node.
//
// Before: nodes in topological order. After: every output of a node whose op has inference
// and whose inputs have known dtypes carries the merged type; the pass reports a change only
// when some type changed, so a second run is a no-op.
// Not done here: ops without an inference row and nodes with an input of unknown dtype keep
// their hints (reported under --debug-only); graph inputs and the declared types of graph
// outputs are left alone; symbolic values are not kept between runs.
#include <optional>
#include <unordered_map>

#include "passes/registry.h"

namespace dlc {

namespace {

/// One dim of the merged type: known beats symbolic beats unknown; the inferred dim wins a
/// tie. nullopt when both are known and differ.
std::optional<Dim> mergeDim(const Dim &inferred, const Dim &hint) {
  if (inferred.isKnown()) {
    if (hint.isKnown() && hint.value() != inferred.value())
      return std::nullopt;
    return inferred;
  }
  if (hint.isKnown() || inferred.isUnknown())
    return hint;
  return inferred;
}

/// The inferred type completed by the hint, or nullopt on a contradiction.
std::optional<TensorType> mergeTypes(const TensorType &inferred, const TensorType &hint) {
  TensorType out = inferred;
  if (out.dtype == DType::kUnknown)
    out.dtype = hint.dtype;
  else if (hint.dtype != DType::kUnknown && hint.dtype != out.dtype)
    return std::nullopt;
  if (!hint.shape.isRanked())
    return out;
  if (!out.shape.isRanked()) {
    out.shape = hint.shape;
    return out;
  }
  if (out.shape.rank() != hint.shape.rank())
    return std::nullopt;
  for (int64_t i = 0; i < out.shape.rank(); ++i) {
    std::optional<Dim> d = mergeDim(out.shape[i], hint.shape[i]);
    if (!d)
      return std::nullopt;
    out.shape[i] = *d;
  }
  return out;
}

class InferShapes : public Pass {
public:
  Expected<bool> run(Graph &g, const PassOptions &options) override {
    shapeValues_.clear();
    bool changed = false;
    for (Node *n : g.nodes()) {
      DLC_ASSIGN_OR_RETURN(bool c, inferOne(*n, options));
      changed |= c;
    }
    return changed;
  }

private:
  Expected<bool> inferOne(Node &n, const PassOptions &options) {
    if (!n.def().infer) {
      options.debugf("{}: not inferred: op '{}' has no shape inference; kept existing types",
                     n.describe(), n.opName());
      return false;
    }
    std::vector<TensorType> types;
    std::vector<const Tensor *> constants;
    std::vector<const std::vector<Dim> *> shapeValues;
    for (Value *in : n.inputs()) {
      if (in && !in->type().isKnown()) {
        options.debugf("{}: not inferred: input '{}' has an unknown dtype", n.describe(),
                       in->name());
        return false;
      }
      types.push_back(in ? in->type() : TensorType());
      constants.push_back(in && in->isConstant() ? &in->constant() : nullptr);
      auto sv = in ? shapeValues_.find(in) : shapeValues_.end();
      shapeValues.push_back(sv == shapeValues_.end() ? nullptr : &sv->second);
    }
    InferContext ctx(n, std::move(types), std::move(constants), std::move(shapeValues));
    DLC_RETURN_IF_ERROR(inferNode(ctx));

    bool changed = false;
    for (int i = 0; i < n.numOutputs(); ++i) {
      Value *out = n.output(i);
      if (!out)
        continue;
      std::optional<TensorType> merged = mergeTypes(ctx.outputType(i), out->type());
      if (!merged)
        return invalidArgument("{}: output '{}' is inferred as {} but its type was given as {}",
                               n.describe(), out->name(), ctx.outputType(i).str(),
                               out->type().str());
      if (*merged != out->type()) {
        out->setType(std::move(*merged));
        changed = true;
      }
      if (const auto &sv = ctx.outputShapeValue(i))
        shapeValues_[out] = *sv;
    }
    return changed;
  }

  std::unordered_map<const Value *, std::vector<Dim>> shapeValues_;
};

} // namespace

std::unique_ptr<Pass> createInferShapes() { return std::make_unique<InferShapes>(); }

} // namespace dlc
