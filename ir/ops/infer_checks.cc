#include "ir/ops/infer_checks.h"

#include "ir/ops/util.h"

namespace dlc::ops {

namespace {

std::string countRange(int lo, int hi) {
  if (hi < 0)
    return fmt::format("at least {}", lo);
  if (lo == hi)
    return std::to_string(lo);
  return fmt::format("{} to {}", lo, hi);
}

const char *typeClassName(TypeClass c) {
  switch (c) {
  case TypeClass::kAny:
    return "any type";
  case TypeClass::kFloat:
    return "a float type";
  case TypeClass::kNumeric:
    return "a numeric type";
  case TypeClass::kSignedNumeric:
    return "a signed numeric type";
  case TypeClass::kInteger:
    return "an integer type";
  case TypeClass::kUnsigned:
    return "an unsigned integer type";
  case TypeClass::kBool:
    return "bool";
  }
  return "?";
}

} // namespace

Status checkSchema(const InferContext &ctx) {
  const OpDef &def = ctx.node().def();
  int n = ctx.numInputs();
  if (n < def.minInputs || (def.maxInputs >= 0 && n > def.maxInputs))
    return ctx.error("expects {} inputs, got {}", countRange(def.minInputs, def.maxInputs), n);
  for (int i = 0; i < def.minInputs; ++i)
    if (!ctx.hasInput(i))
      return ctx.error("required input {} is missing", i);
  int m = ctx.numOutputs();
  if (m < def.minOutputs || (def.maxOutputs >= 0 && m > def.maxOutputs))
    return ctx.error("expects {} outputs, got {}", countRange(def.minOutputs, def.maxOutputs), m);
  for (const AttrSpec &spec : def.attrs) {
    const Attribute *a = ctx.node().findAttr(spec.name);
    if (!a) {
      if (spec.required)
        return ctx.error("missing required attribute '{}'", spec.name);
      continue;
    }
    if (a->kind() != spec.kind)
      return ctx.error("attribute '{}' is {}, expected {}", spec.name, attrKindName(a->kind()),
                       attrKindName(spec.kind));
  }
  if (def.verify)
    return def.verify(ctx.node());
  return Status::ok();
}

bool inTypeClass(DType t, TypeClass c) {
  switch (c) {
  case TypeClass::kAny:
    return true;
  case TypeClass::kFloat:
    return isFloat(t);
  case TypeClass::kNumeric:
    return isNumeric(t);
  case TypeClass::kSignedNumeric:
    return isFloat(t) || isSignedInt(t);
  case TypeClass::kInteger:
    return isInteger(t);
  case TypeClass::kUnsigned:
    return isUnsignedInt(t);
  case TypeClass::kBool:
    return t == DType::kBool;
  }
  return false;
}

Status checkInputDType(const InferContext &ctx, int i, TypeClass c) {
  DType t = inputDType(ctx, i);
  if (t == DType::kUnknown || inTypeClass(t, c))
    return Status::ok();
  return ctx.error("input {} has dtype {}, expected {}", i, dtypeName(t), typeClassName(c));
}

Expected<DType> commonDType(const InferContext &ctx, const std::vector<int> &indices) {
  DType common = DType::kUnknown;
  int first = -1;
  for (int i : indices) {
    DType t = inputDType(ctx, i);
    if (t == DType::kUnknown)
      continue;
    if (common == DType::kUnknown) {
      common = t;
      first = i;
    } else if (t != common) {
      return ctx.error("inputs {} and {} have different dtypes ({} vs {})", first, i,
                       dtypeName(common), dtypeName(t));
    }
  }
  return common;
}

DType inputDType(const InferContext &ctx, int i) {
  if (i >= ctx.numInputs() || !ctx.hasInput(i))
    return DType::kUnknown;
  return ctx.inputType(i).dtype;
}

Shape unknownDims(int64_t rank) {
  return Shape(std::vector<Dim>(static_cast<size_t>(rank), Dim::unknown()));
}

Status checkUnidirectional(const InferContext &ctx, const Shape &from, const Shape &to,
                           const std::string &what) {
  if (!from.isRanked() || !to.isRanked())
    return Status::ok();
  auto b = broadcastShapes(from, to);
  bool ok = b.hasValue() && from.rank() <= to.rank();
  for (int64_t i = 0; ok && i < from.rank(); ++i) {
    const Dim &f = from[i];
    const Dim &t = to[i + to.rank() - from.rank()];
    ok = (f.isKnown() && f.value() == 1) || dimsCompatible(f, t);
  }
  if (!ok)
    return ctx.error("{} of shape {} cannot be broadcast to {}", what, from.str(), to.str());
  return Status::ok();
}

std::optional<std::vector<int64_t>> constantInts(const InferContext &ctx, int i) {
  if (i >= ctx.numInputs() || !ctx.hasInput(i))
    return std::nullopt;
  const Tensor *t = ctx.inputConstant(i);
  if (!t || !isInteger(t->dtype()))
    return std::nullopt;
  return t->toInt64Vector();
}

} // namespace dlc::ops
