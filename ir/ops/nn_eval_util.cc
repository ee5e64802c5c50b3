#include "ir/ops/nn_eval_util.h"

#include "ir/ops/tensor_internal.h"

namespace dlc::ops {

namespace {
/// The largest tensor the reference backend creates (4 GiB, as the tensor family).
constexpr int64_t kMaxEvalBytes = int64_t{1} << 32;
} // namespace

Expected<std::vector<TensorType>> evalOutputTypes(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(std::vector<TensorType> out, tensor::constantOutputTypes(node, in));
  for (size_t i = 0; i < out.size(); ++i) {
    const TensorType &t = out[i];
    if (node.output(static_cast<int>(i)) && (!t.isKnown() || !t.shape.isStatic()))
      return invalidArgument("cannot evaluate: output {} has no static type ({})", i, t.str());
  }
  return out;
}

Expected<Tensor> newEvalTensor(DType dtype, const std::vector<int64_t> &shape) {
  DLC_ASSIGN_OR_RETURN(int64_t n, checkedNumElements(shape, "tensor"));
  int64_t bytes;
  if (__builtin_mul_overflow(n, dtypeSize(dtype), &bytes) || bytes > kMaxEvalBytes)
    return outOfRange("a {} tensor of {} elements exceeds the reference backend's limit of {} "
                      "bytes per tensor",
                      dtypeName(dtype), n, kMaxEvalBytes);
  return Tensor::zeros(dtype, shape);
}

Expected<DType> floatComputeType(DType t, std::string_view what) {
  switch (t) {
  case DType::kF32:
  case DType::kF16:
  case DType::kBF16:
    return DType::kF32;
  case DType::kF64:
    return DType::kF64;
  default:
    return invalidArgument("{} must be a float tensor, got {}", what, dtypeName(t));
  }
}

Tensor toCompute(const Tensor &t, DType compute) {
  if (t.empty() || t.dtype() == compute)
    return t;
  return t.castTo(compute);
}

std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    s[i - 1] = s[i] * shape[i];
  return s;
}

int64_t sizeProduct(const std::vector<int64_t> &shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < shape.size(); ++i)
    p *= shape[i];
  return p;
}

} // namespace dlc::ops
