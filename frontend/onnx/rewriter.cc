#include "frontend/onnx/rewriter.h"

#include "frontend/onnx/attributes.h"

namespace dlc::onnx::detail {

namespace {

template <typename T>
Expected<std::optional<T>> take(Rewriter &r, const std::string &name, AttrKind kind,
                                T (*get)(const Attribute &)) {
  DLC_ASSIGN_OR_RETURN(std::optional<Attribute> a, takeAttr(r.attrs, name, kind, r.desc));
  if (!a)
    return std::optional<T>();
  return std::optional<T>(get(*a));
}

} // namespace

Expected<std::optional<std::vector<int64_t>>> Rewriter::takeInts(const std::string &name) {
  return take<std::vector<int64_t>>(*this, name, AttrKind::kInts,
                                    [](const Attribute &a) { return a.ints(); });
}
Expected<std::optional<std::vector<float>>> Rewriter::takeFloats(const std::string &name) {
  return take<std::vector<float>>(*this, name, AttrKind::kFloats,
                                  [](const Attribute &a) { return a.floats(); });
}
Expected<std::optional<int64_t>> Rewriter::takeInt(const std::string &name) {
  return take<int64_t>(*this, name, AttrKind::kInt, [](const Attribute &a) { return a.i(); });
}
Expected<std::optional<float>> Rewriter::takeFloat(const std::string &name) {
  return take<float>(*this, name, AttrKind::kFloat, [](const Attribute &a) { return a.f(); });
}
Expected<std::optional<std::string>> Rewriter::takeString(const std::string &name) {
  return take<std::string>(*this, name, AttrKind::kString,
                           [](const Attribute &a) { return a.s(); });
}

std::string Rewriter::base() const {
  if (!node->name().empty())
    return node->name();
  for (Value *out : node->outputs())
    if (out)
      return out->name();
  return std::string(node->opName());
}

Value *Rewriter::constant(const std::string &suffix, Tensor t) {
  return graph.addConstant(base() + "_" + suffix, std::move(t));
}

Node *Rewriter::createBefore(Op op, std::vector<Value *> inputs, const std::string &suffix) {
  std::string name = node->name().empty() ? "" : node->name() + "/" + suffix;
  Node *n = graph.createNode(op, std::move(inputs), 1, name, node);
  if (name.empty()) // output names derive from the node's name; give unnamed ones a readable one
    graph.renameValue(n->output(0), base() + "_" + suffix);
  return n;
}

Status Rewriter::setInputSlot(int i, Value *v, const std::string &what) {
  if (node->hasInput(i))
    return error("'{}' is given both as an attribute and as input {}", what, i);
  while (node->numInputs() <= i)
    node->appendInput(nullptr);
  node->setInput(i, v);
  return Status::ok();
}

Value *Rewriter::scalarLike(const std::string &suffix, double v, Value *like) {
  DType dt = like ? like->dtype() : DType::kUnknown;
  if (isNumeric(dt))
    return constant(suffix, Tensor::fromVector<double>(DType::kF64, {}, {v}).castTo(dt));
  Value *f = constant(suffix, Tensor::scalarF32(static_cast<float>(v)));
  if (!like)
    return f;
  return createBefore(Op::kCastLike, {f, like}, suffix + "_cast")->output(0);
}

} // namespace dlc::onnx::detail
