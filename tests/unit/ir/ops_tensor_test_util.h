// Helpers for the tensor-family op tests: building typed graphs, running shape inference
// node by node with shape values passed forward, and evaluating nodes on constant inputs.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ir/eval/eval.h"
#include "ir/graph.h"

namespace dlc::tensortest {

inline Dim sym(const char *name) { return Dim::symbol(name); }
inline TensorType ty(DType d, std::vector<Dim> dims) {
  return TensorType(d, Shape(std::move(dims)));
}
inline TensorType unranked(DType d) { return TensorType(d, Shape::unranked()); }

/// Runs inferNode on nodes in turn. Input types come from the node's input Values, constants
/// from constant Values, shape values from earlier runs (or setShapeValue); output types are
/// set on the output Values and output shape values remembered, so chains can be checked.
class InferRunner {
public:
  Status run(Node *n) {
    std::vector<TensorType> types;
    std::vector<const Tensor *> constants;
    std::vector<const std::vector<Dim> *> values;
    for (Value *v : n->inputs()) {
      types.push_back(v ? v->type() : TensorType());
      constants.push_back(v && v->isConstant() ? &v->constant() : nullptr);
      auto it = values_.find(v);
      values.push_back(v && it != values_.end() ? &it->second : nullptr);
    }
    InferContext ctx(*n, std::move(types), std::move(constants), std::move(values));
    Status s = inferNode(ctx);
    if (!s.isOk())
      return s;
    for (int i = 0; i < n->numOutputs(); ++i) {
      if (!n->output(i))
        continue;
      n->output(i)->setType(ctx.outputType(i));
      if (ctx.outputShapeValue(i))
        values_[n->output(i)] = *ctx.outputShapeValue(i);
      else
        values_.erase(n->output(i));
    }
    return s;
  }
  void setShapeValue(const Value *v, std::vector<Dim> dims) { values_[v] = std::move(dims); }
  /// `[N,768]`, or "none" when the value has no shape value.
  std::string shapeValue(const Value *v) const {
    auto it = values_.find(v);
    return it == values_.end() ? "none" : Shape(it->second).str();
  }

private:
  std::map<const Value *, std::vector<Dim>> values_;
};

/// Infers `n` and returns output `i`'s type as text, or the error message.
inline std::string inferStr(Node *n, int i = 0) {
  InferRunner r;
  Status s = r.run(n);
  if (!s.isOk())
    return "error: " + s.message();
  return n->output(i)->type().str();
}

/// Evaluates `n` on its constant inputs (absent inputs as empty tensors).
inline Expected<std::vector<Tensor>> evalConstants(const Node *n) {
  std::vector<Tensor> inputs;
  for (Value *v : n->inputs())
    inputs.push_back(v ? v->constant() : Tensor());
  return eval::evaluate(*n, inputs);
}

template <typename T> std::vector<T> values(const Tensor &t) {
  const T *p = t.data<T>();
  return std::vector<T>(p, p + t.numElements());
}

inline Value *constI64(Graph &g, std::vector<int64_t> v) {
  return g.addConstant("c", Tensor::vectorI64(v));
}
inline Value *scalarI64(Graph &g, int64_t v) { return g.addConstant("c", Tensor::scalarI64(v)); }

} // namespace dlc::tensortest
