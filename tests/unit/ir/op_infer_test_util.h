// Test helpers for op shape inference and reference evaluation: build a node in a small
// graph, run inferNode through an InferContext made from the node's input values, and read
// back the output types as text.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "ir/graph.h"
#include "ir/op.h"

namespace dlc::optest {

/// Parses a type written like the text IR: "f32[N,3,?]", "i64[]", "f32[*]", "?".
inline TensorType ty(std::string_view text) {
  if (text == "?")
    return TensorType();
  size_t open = text.find('[');
  std::optional<DType> dtype = parseDType(text.substr(0, open));
  EXPECT_TRUE(dtype.has_value()) << "bad dtype in " << text;
  std::string_view body = text.substr(open + 1, text.size() - open - 2);
  if (body == "*")
    return TensorType(dtype.value_or(DType::kUnknown), Shape::unranked());
  std::vector<Dim> dims;
  while (!body.empty()) {
    size_t comma = body.find(',');
    std::string d(body.substr(0, comma));
    if (d == "?")
      dims.push_back(Dim::unknown());
    else if (d.find_first_not_of("0123456789") == std::string::npos)
      dims.emplace_back(std::stoll(d));
    else
      dims.push_back(Dim::symbol(d));
    body = comma == std::string_view::npos ? std::string_view() : body.substr(comma + 1);
  }
  return TensorType(dtype.value_or(DType::kUnknown), Shape(std::move(dims)));
}

struct InferResult {
  Status status;
  std::vector<TensorType> types;
  std::vector<std::optional<std::vector<Dim>>> shapeValues;

  /// Output i's type as text ("f32[N,3]").
  std::string type(int i = 0) const { return types.at(static_cast<size_t>(i)).str(); }
  /// Output i's shape value as text ("[N,6]"), or "none".
  std::string shapeValue(int i = 0) const {
    const auto &v = shapeValues.at(static_cast<size_t>(i));
    return v ? Shape(*v).str() : "none";
  }
};

/// Runs inferNode on `node`. Input types and constants come from the input values;
/// `shapeValues` gives the symbolic values of some inputs (by input index).
inline InferResult runInfer(const Node *node, std::map<int, std::vector<Dim>> shapeValues = {}) {
  std::vector<TensorType> types;
  std::vector<const Tensor *> constants;
  std::vector<const std::vector<Dim> *> values;
  for (int i = 0; i < node->numInputs(); ++i) {
    const Value *v = node->input(i);
    types.push_back(v ? v->type() : TensorType());
    constants.push_back(v && v->isConstant() ? &v->constant() : nullptr);
    auto it = shapeValues.find(i);
    values.push_back(it == shapeValues.end() ? nullptr : &it->second);
  }
  InferContext ctx(*node, types, constants, values);
  InferResult r;
  r.status = inferNode(ctx);
  for (int i = 0; i < ctx.numOutputs(); ++i) {
    r.types.push_back(ctx.outputType(i));
    r.shapeValues.push_back(ctx.outputShapeValue(i));
  }
  return r;
}

/// A graph plus shorthands to add typed inputs, constants and nodes.
class OpTest : public ::testing::Test {
protected:
  Value *in(std::string_view type) { return g.addInput("x", ty(type)); }
  Value *constI64(std::vector<int64_t> v, std::vector<int64_t> shape = {}) {
    if (shape.empty() && v.size() != 1)
      shape = {static_cast<int64_t>(v.size())};
    return g.addConstant("c", Tensor::fromVector<int64_t>(DType::kI64, shape, v));
  }
  Value *constT(Tensor t) { return g.addConstant("c", std::move(t)); }
  /// A node named `name` (errors read "node 'name' (OnnxType): ...").
  Node *node(Op op, std::vector<Value *> inputs, std::string name = "n", int numOutputs = 1) {
    return g.createNode(op, std::move(inputs), numOutputs, std::move(name));
  }
  /// Creates the node and runs inference on it.
  InferResult infer(Op op, std::vector<Value *> inputs, AttrMap attrs = {},
                    std::map<int, std::vector<Dim>> shapeValues = {}, int numOutputs = 1) {
    Node *n = node(op, std::move(inputs), "n", numOutputs);
    for (auto &[k, a] : attrs)
      n->setAttr(k, a);
    return runInfer(n, std::move(shapeValues));
  }

  Graph g;
};

/// Dims shorthand: dims({Dim::symbol("N"), 3}).
inline std::vector<Dim> dims(std::vector<Dim> d) { return d; }

} // namespace dlc::optest
