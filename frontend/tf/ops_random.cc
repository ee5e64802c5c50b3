// TensorFlow's random sources and the inference dropout mask built from them -> dlc IR (see
// convert.h).
#include "frontend/tf/ops_random.h"

#include <cmath>

#include "ir/match.h"

namespace dlc::tf::detail {

namespace {

/// RandomUniform / RandomStandardNormal(shape): the IR's random sources. TensorFlow's streams
/// (Philox) are not reproduced; seed and seed2 only make the IR op deterministic when set.
Status convertRandom(NodeConverter &c) {
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> shape, c.constInts(0, "shape"));
  DLC_ASSIGN_OR_RETURN(DType dtype, c.attrType("dtype"));
  DLC_ASSIGN_OR_RETURN(int64_t seed, c.attrInt("seed", 0));
  DLC_ASSIGN_OR_RETURN(int64_t seed2, c.attrInt("seed2", 0));
  AttrMap attrs{{"shape", Attribute(shape)}, {"dtype", Attribute(dtype)}};
  if (seed || seed2) // exactly representable in the IR's float seed
    attrs["seed"] = Attribute(static_cast<float>((seed * 1000003 + seed2) & 0xffffff));
  const bool uniform = c.opType() == "RandomUniform";
  DLC_ASSIGN_OR_RETURN(
      Value * y, c.op(uniform ? Op::kRandomUniform : Op::kRandomNormal, {}, std::move(attrs)));
  c.setOutputs({y});
  return Status::ok();
}

/// [lo, hi): the values `v` can take when it is a uniform random value shifted and scaled by
/// constants, or nullopt.
std::optional<std::pair<double, double>> uniformRange(const Value *v, int depth = 0) {
  const Node *n = v ? v->producer() : nullptr;
  if (!n || depth > 8)
    return std::nullopt;
  if (n->op() == Op::kRandomUniform)
    return std::pair<double, double>(n->getFloat("low"), n->getFloat("high"));
  if (n->op() != Op::kAdd && n->op() != Op::kSub && n->op() != Op::kMul)
    return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    std::optional<double> k = scalarConstant(n->input(1 - side));
    if (!k || (n->op() == Op::kSub && side == 1))
      continue;
    std::optional<std::pair<double, double>> r = uniformRange(n->input(side), depth + 1);
    if (!r)
      return std::nullopt;
    if (n->op() == Op::kMul)
      return *k > 0 ? std::optional(std::pair(r->first * *k, r->second * *k)) : std::nullopt;
    const double shift = n->op() == Op::kSub ? -*k : *k;
    return std::pair(r->first + shift, r->second + shift);
  }
  return std::nullopt;
}

} // namespace

Expected<Value *> foldDropoutMask(NodeConverter &c) {
  Value *sum = c.numInputs() == 1 ? c.input(0) : nullptr;
  std::optional<std::pair<double, double>> range = uniformRange(sum);
  if (!range || !sum->shape().isStatic())
    return nullptr;
  const double floor = std::floor(range->first);
  if (range->second > floor + 1.0)
    return nullptr; // the floor can take two values
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < sum->shape().rank(); ++d)
    dims.push_back(sum->shape()[d].value());
  Tensor value = Tensor::fromVector<double>(DType::kF64, {1}, {floor}).castTo(sum->dtype());
  return c.op(Op::kConstantOfShape, {c.constI64(dims, "mask_shape")},
              {{"value", Attribute(std::move(value))}});
}

std::vector<ConverterRow> randomConverters() {
  return {
      {"RandomUniform", 1, 1, convertRandom},
      {"RandomStandardNormal", 1, 1, convertRandom},
  };
}

} // namespace dlc::tf::detail
