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
// Shape arithmetic that no op's inference tracks is evaluated with the reference kernels
// when all of a node's inputs are known small integer tensors (see evaluateShapeValues).
//
// Bodies (the graphs of If, Loop, Scan) are inferred too: their inputs take the types the
// node's inference worked out for them (InferContext::bodyInputTypes), then the pass runs on
// the body.
//
// Not done here: ops without an inference row and nodes with an input of unknown dtype keep
// their hints (reported under --debug-only); graph inputs (only checked against the per-tensor
// limit of ir/limits.h) and the declared types of graph outputs are left alone (only checked: a
// declared type that contradicts inference is an error naming the output); symbolic values are
// not kept between runs.
#include <optional>
#include <unordered_map>

#include "ir/eval/eval.h"
#include "ir/limits.h"
#include "passes/registry.h"

namespace dlc {

namespace {

class InferShapes : public Pass {
public:
  Expected<bool> run(Graph &g, const PassOptions &options) override {
    shapeValues_.clear();
    // A declared input past the per-tensor limit (ir/limits.h) is refused before anything
    // sizes it; inferred outputs are checked by inferNode.
    for (const Value *in : g.inputs()) {
      const TensorType &t = in->type();
      if (t.isKnown() && t.shape.isStatic() && dtypeSize(t.dtype) > 0)
        DLC_RETURN_IF_ERROR(
            checkTensorBytes(t.dtype, t.shape.sizes(), fmt::format("input '{}'", in->name())));
    }
    bool changed = false;
    for (Node *n : g.nodes()) {
      DLC_ASSIGN_OR_RETURN(bool c, inferOne(*n, options));
      changed |= c;
    }
    DLC_RETURN_IF_ERROR(checkDeclaredOutputs(g));
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
      std::optional<TensorType> merged = refineType(ctx.outputType(i), out->type());
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
    DLC_ASSIGN_OR_RETURN(bool bodies, inferBodies(n, ctx, options));
    evaluateShapeValues(n);
    return changed || bodies;
  }

  /// A graph output whose declared type contradicts what inference gave its value (another
  /// dtype, rank or known dim; the verifier's typesCompatible) is an error naming the output
  /// and the node computing it, here rather than at run time.
  static Status checkDeclaredOutputs(const Graph &g) {
    for (const Graph::Output &o : g.outputs()) {
      const TensorType &inferred = o.value->type();
      if (!o.declared.isKnown() || !inferred.isKnown() || typesCompatible(inferred, o.declared))
        continue;
      const Node *producer = o.value->producer();
      return invalidArgument("output '{}' is declared {} but {} gives {}", o.name, o.declared.str(),
                             producer ? producer->describe()
                                      : fmt::format("its value '{}'", o.value->name()),
                             inferred.str());
    }
    return Status::ok();
  }

  /// A node with bodies (If, Loop, Scan): each body's inputs take the types the node's
  /// inference gave them, and the body is inferred in turn.
  static Expected<bool> inferBodies(Node &n, const InferContext &ctx, const PassOptions &options) {
    bool changed = false;
    for (const auto &[attr, types] : ctx.bodyInputTypes()) {
      Attribute *a = n.mutableAttr(attr);
      if (!a || a->kind() != AttrKind::kGraph || a->graph().inputs().size() != types.size())
        return internalError("{}: inference gave types for a body '{}' it does not have",
                             n.describe(), attr);
      Graph &body = a->mutableGraph();
      for (size_t i = 0; i < types.size(); ++i) {
        if (body.inputs()[i]->type() != types[i]) {
          body.inputs()[i]->setType(types[i]);
          changed = true;
        }
      }
      Expected<bool> c = InferShapes().run(body, options);
      if (!c)
        return c.status().withContext(fmt::format("{}: body '{}'", n.describe(), attr));
      changed |= *c;
    }
    return changed;
  }

  /// A small integer tensor whose elements are all known: its data.
  std::optional<Tensor> knownData(const Value *v) const {
    if (v->isConstant())
      return v->constant();
    auto it = shapeValues_.find(v);
    if (it == shapeValues_.end() || !isInteger(v->dtype()) || !v->shape().isStatic() ||
        v->shape().rank() > 1)
      return std::nullopt;
    std::vector<int64_t> ints;
    for (const Dim &d : it->second) {
      std::optional<int64_t> x = shapeValueInt(d);
      if (!x)
        return std::nullopt;
      ints.push_back(*x);
    }
    if (static_cast<int64_t>(ints.size()) != v->shape().numElements().value_or(-1))
      return std::nullopt;
    return Tensor::fromVector<int64_t>(DType::kI64, v->shape().sizes(), ints).castTo(v->dtype());
  }

  /// Shape arithmetic the ops' own inference does not track (Size, Sub, ConstantOfShape,
  /// Range, ... on shape tensors): when every input is known data and the node makes small
  /// integer tensors, evaluate it with the reference kernels and record the results as shape
  /// values. The graph is not changed; fold-constants does that.
  void evaluateShapeValues(const Node &n) {
    constexpr int64_t kMaxElements = 64;
    const OpDef &def = n.def();
    if (!eval::hasEval(n.op()) || def.random)
      return;
    bool wanted = false;
    for (int i = 0; i < n.numOutputs(); ++i) {
      const Value *out = n.output(i);
      if (!out)
        continue;
      std::optional<int64_t> count = out->shape().numElements();
      if (!isInteger(out->dtype()) || !count || *count > kMaxElements || out->shape().rank() > 1)
        return;
      wanted |= !shapeValues_.count(out);
    }
    if (!wanted)
      return;
    std::vector<Tensor> inputs;
    for (const Value *in : n.inputs()) {
      if (!in) {
        inputs.emplace_back();
        continue;
      }
      std::optional<Tensor> data = knownData(in);
      if (!data)
        return;
      inputs.push_back(std::move(*data));
    }
    Expected<std::vector<Tensor>> results = eval::evaluate(n, inputs);
    if (!results)
      return; // inference already accepted the node; an evaluation error surfaces at run time
    for (int i = 0; i < n.numOutputs() && i < static_cast<int>(results->size()); ++i) {
      const Value *out = n.output(i);
      if (!out || shapeValues_.count(out))
        continue;
      std::vector<Dim> dims;
      for (int64_t v : (*results)[static_cast<size_t>(i)].toInt64Vector())
        dims.push_back(shapeValueDim(v));
      shapeValues_[out] = std::move(dims);
    }
  }

  std::unordered_map<const Value *, std::vector<Dim>> shapeValues_;
};

} // namespace

std::unique_ptr<Pass> createInferShapes() { return std::make_unique<InferShapes>(); }

} // namespace dlc
