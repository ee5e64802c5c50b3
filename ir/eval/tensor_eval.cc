// Reference evaluation of the shape-arithmetic ops: Shape, Size, Reshape / Squeeze /
// Unsqueeze / Flatten / Identity, ConstantOfShape, Range, Expand, Tile.
//
// Every eval first runs the op's shape inference on its constant inputs (staticOutputTypes),
// so evaluation and inference agree on output shapes and on every error message. The code
// moves bytes of the element size and so works for every dtype.
#include <algorithm>
#include <cstring>

#include "ir/eval/eval_util.h"
#include "ir/eval/families.h"
#include "ir/eval/tensor_eval.h"
#include "ir/ops/tensor_internal.h"

namespace dlc::eval::tensor {

using namespace ops::tensor;

Expected<Tensors> evalShape(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, inputs));
  const std::vector<int64_t> &s = inputs[0].shape();
  const int64_t r = static_cast<int64_t>(s.size());
  auto clampIndex = [r](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + r : v, 0, r); };
  int64_t start = clampIndex(node.getInt("start"));
  int64_t end = std::max(start, node.hasAttr("end") ? clampIndex(node.getInt("end")) : r);
  return Tensors{Tensor::vectorI64(std::vector<int64_t>(s.begin() + start, s.begin() + end))};
}

Expected<Tensors> evalSize(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, inputs));
  return Tensors{Tensor::scalarI64(inputs[0].numElements())};
}

Expected<Tensors> evalReshapeLike(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, inputs));
  std::vector<int64_t> sizes = types[0].shape.sizes();
  auto n = checkedNumElements(sizes, "output");
  if (!n || *n != inputs[0].numElements())
    return internalError("output {} does not hold the {} elements of the input", types[0].str(),
                         inputs[0].numElements());
  return Tensors{inputs[0].reshaped(std::move(sizes))};
}

Expected<Tensors> evalConstantOfShape(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, inputs));
  const Tensor &value = node.getTensor("value");
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(value.dtype(), types[0].shape.sizes()));
  const size_t es = static_cast<size_t>(dtypeSize(value.dtype()));
  auto *dst = static_cast<uint8_t *>(out.mutableRaw());
  for (int64_t i = 0; i < out.numElements(); ++i)
    std::memcpy(dst + static_cast<size_t>(i) * es, value.raw(), es);
  return Tensors{std::move(out)};
}

Expected<Tensors> evalRange(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, inputs));
  const Tensor &start = inputs[0], &delta = inputs[2];
  const int64_t n = types[0].shape[0].value();
  const DType dtype = start.dtype();
  if (isFloat(dtype)) {
    DLC_ASSIGN_OR_RETURN(Tensor wide, newTensor(DType::kF64, {n}));
    const double s = start.elementAsDouble(0), d = delta.elementAsDouble(0);
    for (int64_t i = 0; i < n; ++i)
      wide.mutableData<double>()[i] = s + static_cast<double>(i) * d;
    return Tensors{wide.castTo(dtype)};
  }
  DLC_ASSIGN_OR_RETURN(Tensor wide, newTensor(DType::kI64, {n}));
  const __int128 s = start.elementAsInt64(0), d = delta.elementAsInt64(0);
  for (int64_t i = 0; i < n; ++i)
    wide.mutableData<int64_t>()[i] = static_cast<int64_t>(s + i * d);
  return Tensors{wide.castTo(dtype)};
}

Expected<Tensors> evalExpand(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, inputs));
  const Tensor &in = inputs[0];
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(in.dtype(), types[0].shape.sizes()));
  const std::vector<int64_t> inStrides = stridesOf(in.shape());
  const int64_t shift = out.rank() - in.rank();
  std::vector<int64_t> strides(static_cast<size_t>(out.rank()), 0);
  for (int64_t d = std::max<int64_t>(shift, 0); d < out.rank(); ++d) {
    const size_t j = static_cast<size_t>(d - shift);
    if (in.shape()[j] != 1)
      strides[static_cast<size_t>(d)] = inStrides[j];
  }
  stridedCopy(in, out, 0, strides);
  return Tensors{std::move(out)};
}

Expected<Tensors> evalTile(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, inputs));
  const Tensor &in = inputs[0];
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(in.dtype(), types[0].shape.sizes()));
  if (out.numElements() == 0)
    return Tensors{std::move(out)};
  // Seen as [rep0, in0, rep1, in1, ...], the output reads the input with stride 0 on the
  // repeat dims.
  const std::vector<int64_t> inStrides = stridesOf(in.shape());
  std::vector<int64_t> view, strides;
  for (size_t d = 0; d < in.shape().size(); ++d) {
    view.push_back(out.shape()[d] / in.shape()[d]);
    view.push_back(in.shape()[d]);
    strides.push_back(0);
    strides.push_back(inStrides[d]);
  }
  Tensor viewed = out.reshaped(view);
  stridedCopy(in, viewed, 0, strides);
  return Tensors{std::move(out)};
}

} // namespace dlc::eval::tensor

namespace dlc::eval {

std::vector<EvalRow> tensorEvals() {
  return {
      {Op::kCompress, tensor::evalCompress},
      {Op::kConcat, tensor::evalConcat},
      {Op::kConstantOfShape, tensor::evalConstantOfShape},
      {Op::kDepthToSpace, tensor::evalDepthToSpace},
      {Op::kExpand, tensor::evalExpand},
      {Op::kEyeLike, tensor::evalEyeLike},
      {Op::kFlatten, tensor::evalReshapeLike},
      {Op::kGather, tensor::evalGather},
      {Op::kGatherElements, tensor::evalGatherElements},
      {Op::kGatherND, tensor::evalGatherND},
      {Op::kIdentity, tensor::evalReshapeLike},
      {Op::kCopy, tensor::evalReshapeLike},
      {Op::kNonZero, tensor::evalNonZero},
      {Op::kOneHot, tensor::evalOneHot},
      {Op::kPad, tensor::evalPad},
      {Op::kRange, tensor::evalRange},
      {Op::kReshape, tensor::evalReshapeLike},
      {Op::kReverseSequence, tensor::evalReverseSequence},
      {Op::kScatterElements, tensor::evalScatterElements},
      {Op::kScatterND, tensor::evalScatterND},
      {Op::kShape, tensor::evalShape},
      {Op::kSize, tensor::evalSize},
      {Op::kSlice, tensor::evalSlice},
      {Op::kSpaceToDepth, tensor::evalSpaceToDepth},
      {Op::kSplit, tensor::evalSplit},
      {Op::kSqueeze, tensor::evalReshapeLike},
      {Op::kTile, tensor::evalTile},
      {Op::kTranspose, tensor::evalTranspose},
      {Op::kTrilu, tensor::evalTrilu},
      {Op::kUnique, tensor::evalUnique},
      {Op::kUnsqueeze, tensor::evalReshapeLike},
      {Op::kCenterCropPad, tensor::evalCenterCropPad},
  };
}

} // namespace dlc::eval
