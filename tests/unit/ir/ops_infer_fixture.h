// A fixture for op shape-inference tests: builds one node in a small graph and runs its
// inference, reporting output types (or the error) as text, e.g. "f32[N,64,112,112]".
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace dlc::testing {

/// Parses a type written like the text IR: `f32[N,3,?,224]`, `i64[]`, `f32[*]`.
inline TensorType parseType(std::string_view text) {
  size_t open = text.find('[');
  TensorType t;
  t.dtype = parseDType(text.substr(0, open)).value_or(DType::kUnknown);
  std::string_view body = text.substr(open + 1, text.size() - open - 2);
  if (body == "*")
    return t;
  std::vector<Dim> dims;
  while (!body.empty()) {
    size_t comma = body.find(',');
    std::string_view d = body.substr(0, comma);
    if (d == "?")
      dims.push_back(Dim::unknown());
    else if (d[0] >= '0' && d[0] <= '9')
      dims.push_back(Dim(std::stoll(std::string(d))));
    else
      dims.push_back(Dim::symbol(std::string(d)));
    body = comma == std::string_view::npos ? "" : body.substr(comma + 1);
  }
  t.shape = Shape(std::move(dims));
  return t;
}

class OpsInferTest : public ::testing::Test {
protected:
  /// A graph input of the given type.
  Value *input(std::string_view type) { return g.addInput("x", parseType(type)); }
  /// A zero-filled constant (weights whose values do not matter to inference).
  Value *weight(DType dtype, std::vector<int64_t> shape) {
    return g.addConstant("w", Tensor::zeros(dtype, std::move(shape)));
  }
  Value *i64s(const std::vector<int64_t> &v) { return g.addConstant("c", Tensor::vectorI64(v)); }
  Value *i64Scalar(int64_t v) { return g.addConstant("c", Tensor::scalarI64(v)); }
  Value *f32s(const std::vector<float> &v) {
    return g.addConstant(
        "c", Tensor::fromVector<float>(DType::kF32, {static_cast<int64_t>(v.size())}, v));
  }

  /// A node named "n" (so errors read "node 'n' (Op): ...").
  Node *node(Op op, std::vector<Value *> inputs, int numOutputs = 1) {
    return g.createNode(op, std::move(inputs), numOutputs, "n");
  }

  /// Runs inference on `n`; returns its output types joined by "; ", or "error: <message>".
  /// `shapeValues` gives symbolic values of small integer inputs, by input index.
  std::string infer(Node *n, const std::map<int, std::vector<Dim>> &shapeValues = {}) {
    std::vector<TensorType> types;
    std::vector<const Tensor *> constants;
    std::vector<const std::vector<Dim> *> values;
    for (int i = 0; i < n->numInputs(); ++i) {
      Value *v = n->input(i);
      types.push_back(v ? v->type() : TensorType());
      constants.push_back(v && v->isConstant() ? &v->constant() : nullptr);
      auto it = shapeValues.find(i);
      values.push_back(it == shapeValues.end() ? nullptr : &it->second);
    }
    InferContext ctx(*n, std::move(types), std::move(constants), std::move(values));
    Status s = inferNode(ctx);
    if (!s)
      return "error: " + s.message();
    std::string out;
    for (int i = 0; i < ctx.numOutputs(); ++i) {
      if (n->output(i))
        n->output(i)->setType(ctx.outputType(i));
      out += (i ? "; " : "") + ctx.outputType(i).str();
    }
    return out;
  }

  static Attribute ints(std::vector<int64_t> v) { return Attribute(std::move(v)); }

  Graph g;
};

} // namespace dlc::testing
