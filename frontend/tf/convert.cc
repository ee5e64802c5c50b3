#include "frontend/tf/convert.h"

#include <algorithm>
#include <unordered_map>

#include "frontend/tf/tensor_proto.h"
#include "ir/ops/conv_util.h"

namespace dlc::tf::detail {

NodeConverter::NodeConverter(Graph &graph, const tfproto::NodeDef &def, std::vector<Value *> inputs,
                             ShapeValues &shapeValues)
    : graph_(graph), def_(def), inputs_(std::move(inputs)), shapeValues_(shapeValues) {}

// --- Inputs -----------------------------------------------------------------------------------

Status NodeConverter::checkInputCount(int min, int max) const {
  const int n = numInputs();
  if (n >= min && (max < 0 || n <= max))
    return Status::ok();
  if (min == max)
    return error("expected {} data input{}, got {}", min, min == 1 ? "" : "s", n);
  if (max < 0)
    return error("expected at least {} data inputs, got {}", min, n);
  return error("expected {} to {} data inputs, got {}", min, max, n);
}

const Tensor *NodeConverter::constInput(int i) const {
  Value *v = input(i);
  return v && v->isConstant() ? &v->constant() : nullptr;
}

Expected<std::vector<int64_t>> NodeConverter::constInts(int i, std::string_view what) const {
  const Tensor *t = constInput(i);
  if (!t) {
    // Shape arithmetic that import-time inference resolved counts as constant too.
    auto sv = shapeValues_.find(input(i));
    if (sv != shapeValues_.end() && std::all_of(sv->second.begin(), sv->second.end(),
                                                [](const Dim &d) { return d.isKnown(); })) {
      std::vector<int64_t> out;
      for (const Dim &d : sv->second)
        out.push_back(d.value());
      return out;
    }
    return unsupported("input {} ({}) must be a constant; '{}' is computed at run time", i, what,
                       input(i)->name());
  }
  if (!isInteger(t->dtype()))
    return error("input {} ({}) must be integer, got {}", i, what, dtypeName(t->dtype()));
  return t->toInt64Vector();
}

Expected<int64_t> NodeConverter::inputRank(int i, std::string_view why) const {
  const Shape &s = input(i)->shape();
  if (!s.isRanked())
    return unsupported("{} needs the rank of input {} ('{}'), which is unknown here (give the "
                       "graph's input shapes with --input-shape)",
                       why, i, input(i)->name());
  return s.rank();
}

// --- Attributes -------------------------------------------------------------------------------

const tfproto::AttrValue *NodeConverter::attr(std::string_view name) const {
  auto it = def_.attr().find(std::string(name));
  return it == def_.attr().end() ? nullptr : &it->second;
}

namespace {

template <typename T> Expected<T> missing(const NodeConverter &c, std::string_view name) {
  return c.error("attribute '{}' is missing", name);
}

} // namespace

Expected<int64_t> NodeConverter::attrInt(std::string_view name, std::optional<int64_t> def) const {
  const tfproto::AttrValue *a = attr(name);
  if (!a)
    return def ? Expected<int64_t>(*def) : missing<int64_t>(*this, name);
  if (a->value_case() != tfproto::AttrValue::kI)
    return error("attribute '{}' must be an int", name);
  return a->i();
}

Expected<float> NodeConverter::attrFloat(std::string_view name, std::optional<float> def) const {
  const tfproto::AttrValue *a = attr(name);
  if (!a)
    return def ? Expected<float>(*def) : missing<float>(*this, name);
  if (a->value_case() != tfproto::AttrValue::kF)
    return error("attribute '{}' must be a float", name);
  return a->f();
}

Expected<bool> NodeConverter::attrBool(std::string_view name, std::optional<bool> def) const {
  const tfproto::AttrValue *a = attr(name);
  if (!a)
    return def ? Expected<bool>(*def) : missing<bool>(*this, name);
  if (a->value_case() != tfproto::AttrValue::kB)
    return error("attribute '{}' must be a bool", name);
  return a->b();
}

Expected<std::string> NodeConverter::attrString(std::string_view name,
                                                std::optional<std::string> def) const {
  const tfproto::AttrValue *a = attr(name);
  if (!a)
    return def ? Expected<std::string>(*def) : missing<std::string>(*this, name);
  if (a->value_case() != tfproto::AttrValue::kS)
    return error("attribute '{}' must be a string", name);
  return a->s();
}

Expected<std::vector<int64_t>>
NodeConverter::attrInts(std::string_view name, std::optional<std::vector<int64_t>> def) const {
  const tfproto::AttrValue *a = attr(name);
  if (!a)
    return def ? Expected<std::vector<int64_t>>(*def) : missing<std::vector<int64_t>>(*this, name);
  if (a->value_case() != tfproto::AttrValue::kList)
    return error("attribute '{}' must be a list of ints", name);
  return std::vector<int64_t>(a->list().i().begin(), a->list().i().end());
}

Expected<std::vector<float>>
NodeConverter::attrFloats(std::string_view name, std::optional<std::vector<float>> def) const {
  const tfproto::AttrValue *a = attr(name);
  if (!a)
    return def ? Expected<std::vector<float>>(*def) : missing<std::vector<float>>(*this, name);
  if (a->value_case() != tfproto::AttrValue::kList)
    return error("attribute '{}' must be a list of floats", name);
  return std::vector<float>(a->list().f().begin(), a->list().f().end());
}

Expected<DType> NodeConverter::attrType(std::string_view name, std::optional<DType> def) const {
  const tfproto::AttrValue *a = attr(name);
  if (!a)
    return def ? Expected<DType>(*def) : missing<DType>(*this, name);
  if (a->value_case() != tfproto::AttrValue::kType)
    return error("attribute '{}' must be a type", name);
  TfType t = fromTfType(a->type());
  if (t.dtype == DType::kUnknown)
    return unsupported("attribute '{}' is {}, which dlc has no dtype for", name,
                       tfTypeName(a->type()));
  return t.dtype;
}

Expected<bool> NodeConverter::channelsLast() const {
  DLC_ASSIGN_OR_RETURN(std::string format, attrString("data_format", std::string("NHWC")));
  if (format == "NHWC" || format == "NDHWC" || format == "NWC")
    return true;
  if (format == "NCHW" || format == "NCDHW" || format == "NCW")
    return false;
  return unsupported("data_format '{}' is not supported (NHWC, NCHW, NDHWC, NCDHW)", format);
}

// --- Building ---------------------------------------------------------------------------------

Expected<Node *> NodeConverter::node(Op op, std::vector<Value *> inputs, AttrMap attrs,
                                     int numOutputs, std::string_view role) {
  std::string nodeName;
  if (role.empty() && !named_) {
    nodeName = name();
    named_ = true;
  } else {
    nodeName = fmt::format("{}/{}", name(), role.empty() ? dlc::opName(op) : role);
  }
  Node *n = graph_.createNode(op, std::move(inputs), numOutputs, nodeName);
  n->setName(nodeName);
  for (auto &[k, v] : attrs)
    n->setAttr(k, std::move(v));
  built_.push_back(n);

  std::vector<TensorType> types;
  std::vector<const Tensor *> constants;
  std::vector<const std::vector<Dim> *> shapeValues;
  for (Value *in : n->inputs()) {
    types.push_back(in ? in->type() : TensorType());
    constants.push_back(in && in->isConstant() ? &in->constant() : nullptr);
    auto sv = in ? shapeValues_.find(in) : shapeValues_.end();
    shapeValues.push_back(sv == shapeValues_.end() ? nullptr : &sv->second);
  }
  InferContext ctx(*n, std::move(types), std::move(constants), std::move(shapeValues));
  Status st = inferNode(ctx);
  if (!st.isOk()) {
    // The message starts with the IR node's description; name the TensorFlow node instead.
    std::string msg = st.message(), prefix = n->describe() + ": ";
    if (msg.rfind(prefix, 0) == 0)
      msg = msg.substr(prefix.size());
    return Status(st.code(), fmt::format("node '{}' ({}): {}", name(), opType(), msg));
  }
  for (int i = 0; i < n->numOutputs(); ++i) {
    n->output(i)->setType(ctx.outputType(i));
    if (const auto &sv = ctx.outputShapeValue(i))
      shapeValues_[n->output(i)] = *sv;
  }
  return n;
}

Expected<Value *> NodeConverter::op(Op op, std::vector<Value *> inputs, AttrMap attrs,
                                    std::string_view role) {
  DLC_ASSIGN_OR_RETURN(Node * n, node(op, std::move(inputs), std::move(attrs), 1, role));
  return n->output(0);
}

Value *NodeConverter::constant(Tensor t, std::string_view role) {
  return graph_.addConstant(fmt::format("{}/{}", name(), role), std::move(t));
}

Value *NodeConverter::constI64(const std::vector<int64_t> &values, std::string_view role) {
  return constant(Tensor::vectorI64(values), role);
}

Value *NodeConverter::scalar(DType dtype, double v, std::string_view role) {
  return constant(Tensor::fromVector<double>(DType::kF64, {}, {v}).castTo(dtype), role);
}

Expected<Value *> NodeConverter::transpose(Value *v, std::vector<int64_t> perm,
                                           std::string_view role) {
  return op(Op::kTranspose, {v}, {{"perm", Attribute(std::move(perm))}}, role);
}

Expected<Value *> NodeConverter::toChannelsFirst(Value *v) {
  DLC_ASSIGN_OR_RETURN(int64_t rank, [&]() -> Expected<int64_t> {
    const Shape &s = v->shape();
    if (!s.isRanked())
      return unsupported("a channels-last input needs a known rank (give --input-shape)");
    return s.rank();
  }());
  return transpose(v, ops::channelsFirstPerm(rank), "to_channels_first");
}

Expected<Value *> NodeConverter::toChannelsLast(Value *v) {
  if (!v->shape().isRanked())
    return unsupported("a channels-first result needs a known rank");
  const int64_t rank = v->shape().rank();
  std::vector<int64_t> perm = {0};
  for (int64_t i = 2; i < rank; ++i)
    perm.push_back(i);
  perm.push_back(1);
  return transpose(v, perm, "to_channels_last");
}

Expected<Value *> NodeConverter::cast(Value *v, DType to, std::string_view role) {
  if (v->dtype() == to)
    return v;
  return op(Op::kCast, {v}, {{"to", Attribute(to)}}, role);
}

// --- Tables -----------------------------------------------------------------------------------

const ConverterRow *findConverter(std::string_view tfOp) {
  static const auto *table = [] {
    auto *t = new std::unordered_map<std::string_view, ConverterRow>();
    for (auto rows : {mathConverters(), nnConverters(), arrayConverters(), randomConverters()})
      for (const ConverterRow &r : rows)
        t->emplace(r.op, r);
    return t;
  }();
  auto it = table->find(tfOp);
  return it == table->end() ? nullptr : &it->second;
}

} // namespace dlc::tf::detail
