#include "ir/op.h"

#include <array>
#include <charconv>
#include <unordered_map>

#include "ir/graph.h"
#include "ir/limits.h"
#include "ir/ops/families.h"
#include "ir/ops/infer_checks.h"

namespace dlc {

namespace {

struct OpNames {
  std::string_view text;
  std::string_view onnx;
};

constexpr std::array<OpNames, kNumOps> kOpNames = {{
#define DLC_OP(e, text, onnx) {text, onnx},
#include "ir/ops.def"
#undef DLC_OP
}};

struct OpTable {
  std::vector<OpDef> defs;
  std::unordered_map<std::string_view, Op> byText;
  std::unordered_map<std::string_view, Op> byOnnx;

  OpTable() {
    defs.resize(kNumOps);
    std::vector<bool> seen(kNumOps, false);
    for (auto family : {ops::elementwiseOps, ops::reductionOps, ops::nnOps, ops::linalgOps,
                        ops::tensorOps, ops::quantOps, ops::miscOps, ops::controlFlowOps}) {
      for (OpDef &d : family()) {
        size_t i = static_cast<size_t>(d.op);
        DLC_CHECK(!seen[i], "op '{}' has two definitions", kOpNames[i].text);
        seen[i] = true;
        defs[i] = std::move(d);
      }
    }
    for (size_t i = 0; i < kNumOps; ++i) {
      if (!seen[i]) { // declared in ops.def but not defined yet: accepts anything, infers nothing
        defs[i].op = static_cast<Op>(i);
        defs[i].minInputs = 0;
        defs[i].maxInputs = -1;
        defs[i].minOutputs = 0;
        defs[i].maxOutputs = -1;
      }
      DLC_CHECK(byText.emplace(kOpNames[i].text, static_cast<Op>(i)).second, "duplicate name");
      DLC_CHECK(byOnnx.emplace(kOpNames[i].onnx, static_cast<Op>(i)).second, "duplicate name");
    }
  }
};

const OpTable &table() {
  static const OpTable t;
  return t;
}

} // namespace

const char *fusionKindName(FusionKind k) {
  switch (k) {
  case FusionKind::kElementwise:
    return "elementwise";
  case FusionKind::kBroadcast:
    return "broadcast";
  case FusionKind::kInjective:
    return "injective";
  case FusionKind::kReduction:
    return "reduction";
  case FusionKind::kOutFusable:
    return "out-fusable";
  case FusionKind::kOpaque:
    return "opaque";
  }
  return "?";
}

const AttrSpec *OpDef::findAttr(std::string_view name) const {
  for (const AttrSpec &a : attrs)
    if (a.name == name)
      return &a;
  return nullptr;
}

std::string_view opName(Op op) { return kOpNames[static_cast<size_t>(op)].text; }
std::string_view opOnnxName(Op op) { return kOpNames[static_cast<size_t>(op)].onnx; }

std::optional<Op> parseOpName(std::string_view textName) {
  auto it = table().byText.find(textName);
  if (it == table().byText.end())
    return std::nullopt;
  return it->second;
}

std::optional<Op> opFromOnnx(std::string_view onnxType) {
  auto it = table().byOnnx.find(onnxType);
  if (it == table().byOnnx.end())
    return std::nullopt;
  return it->second;
}

namespace {
std::array<const OpDef *, kNumOps> &opDefOverrides() {
  static std::array<const OpDef *, kNumOps> overrides{};
  return overrides;
}
} // namespace

const OpDef &opDef(Op op) {
  size_t i = static_cast<size_t>(op);
  if (const OpDef *o = opDefOverrides()[i])
    return *o;
  return table().defs[i];
}

ScopedOpDefOverride::ScopedOpDefOverride(OpDef def)
    : def_(std::move(def)), previous_(opDefOverrides()[static_cast<size_t>(def_.op)]) {
  opDefOverrides()[static_cast<size_t>(def_.op)] = &def_;
}

ScopedOpDefOverride::~ScopedOpDefOverride() {
  opDefOverrides()[static_cast<size_t>(def_.op)] = previous_;
}

InferContext::InferContext(const Node &node, std::vector<TensorType> inputTypes,
                           std::vector<const Tensor *> inputConstants,
                           std::vector<const std::vector<Dim> *> inputShapeValues)
    : node_(node), inputTypes_(std::move(inputTypes)), inputConstants_(std::move(inputConstants)),
      inputShapeValues_(std::move(inputShapeValues)),
      outputTypes_(static_cast<size_t>(node.numOutputs())),
      outputShapeValues_(static_cast<size_t>(node.numOutputs())) {
  inputConstants_.resize(inputTypes_.size(), nullptr);
  inputShapeValues_.resize(inputTypes_.size(), nullptr);
}

bool InferContext::hasInput(int i) const { return node_.hasInput(i); }

const Tensor *InferContext::inputConstant(int i) const {
  return i < numInputs() ? inputConstants_[static_cast<size_t>(i)] : nullptr;
}

const std::vector<Dim> *InferContext::inputShapeValue(int i) const {
  return i < numInputs() ? inputShapeValues_[static_cast<size_t>(i)] : nullptr;
}

Dim shapeValueDim(int64_t v) { return v >= 0 ? Dim(v) : Dim::symbol(std::to_string(v)); }

std::optional<int64_t> shapeValueInt(const Dim &d) {
  if (d.isKnown())
    return d.value();
  const std::string &s = d.symbolName();
  if (!d.isSymbol() || s.size() < 2 || s[0] != '-')
    return std::nullopt;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size())
    return std::nullopt;
  return v;
}

std::optional<std::vector<Dim>> InferContext::inputAsDims(int i) const {
  if (const auto *dims = inputShapeValue(i))
    return *dims;
  if (const Tensor *t = inputConstant(i); t && isInteger(t->dtype()) && t->rank() <= 1) {
    std::vector<Dim> dims;
    for (int64_t v : t->toInt64Vector())
      dims.push_back(shapeValueDim(v));
    return dims;
  }
  return std::nullopt;
}

void InferContext::setOutputType(int i, TensorType t) {
  if (i < numOutputs())
    outputTypes_[static_cast<size_t>(i)] = std::move(t);
}

void InferContext::setOutputShapeValue(int i, std::vector<Dim> dims) {
  if (i < numOutputs())
    outputShapeValues_[static_cast<size_t>(i)] = std::move(dims);
}

void InferContext::setBodyInputTypes(std::string attr, std::vector<TensorType> types) {
  for (auto &[name, t] : bodyInputTypes_) {
    if (name == attr) {
      t = std::move(types);
      return;
    }
  }
  bodyInputTypes_.emplace_back(std::move(attr), std::move(types));
}

Status inferNode(InferContext &ctx) {
  const OpDef &def = ctx.node().def();
  if (!def.infer)
    return unimplemented("{}: no shape inference for op '{}'", ctx.node().describe(),
                         opName(def.op));
  // Every inference function may index required inputs and read attributes freely.
  DLC_RETURN_IF_ERROR(ops::checkSchema(ctx).withContext(ctx.node().describe()));
  DLC_RETURN_IF_ERROR(def.infer(ctx).withContext(ctx.node().describe()));
  // A shape whose element count int64 cannot hold (a Resize by 1e12, say) is refused here,
  // where the node is known, not by whatever later tries to size it.
  for (int i = 0; i < ctx.numOutputs(); ++i) {
    const Shape &shape = ctx.outputType(i).shape;
    if (!shape.isRanked())
      continue;
    int64_t n = 1;
    bool overflow = false;
    for (const Dim &d : shape.dims())
      if (d.isKnown() && d.value() > 0)
        overflow |= __builtin_mul_overflow(n, d.value(), &n);
    if (overflow)
      return invalidArgument("{}: output {} would have shape {}, more elements than int64 holds",
                             ctx.node().describe(), i, shape.str());
    // ... and so is one past the per-tensor limit (ir/limits.h).
    const TensorType &type = ctx.outputType(i);
    if (type.isKnown() && shape.isStatic() && dtypeSize(type.dtype) > 0)
      DLC_RETURN_IF_ERROR(checkTensorBytes(type.dtype, shape.sizes(),
                                           fmt::format("{}: output {}", ctx.node().describe(), i)));
  }
  return Status::ok();
}

} // namespace dlc
