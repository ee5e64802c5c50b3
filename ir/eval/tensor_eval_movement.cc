// Reference evaluation of the data-movement ops: Gather, Concat, Slice, Transpose, Split.
// Output shapes come from shape inference (staticOutputTypes); elements are copied as bytes
// of the element size, so every dtype works.
#include <cstring>

#include "ir/eval/eval_util.h"
#include "ir/eval/tensor_eval.h"
#include "ir/ops/tensor_internal.h"
#include "ir/sizes.h"

namespace dlc::eval::tensor {

using namespace ops::tensor;

namespace {
std::optional<std::vector<int64_t>> optionalInts(const Tensor &t) {
  if (t.empty())
    return std::nullopt;
  return t.toInt64Vector();
}
} // namespace

Expected<Tensors> evalGather(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, inputs));
  const Tensor &data = inputs[0];
  const std::vector<int64_t> indices = inputs[1].toInt64Vector();
  DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(node.getInt("axis"), data.rank()));
  const std::vector<int64_t> &s = data.shape();
  const size_t a = static_cast<size_t>(axis);
  const int64_t outer = product(s, 0, a), dim = s[a], inner = product(s, a + 1, s.size());
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(data.dtype(), types[0].shape.sizes()));
  const size_t es = static_cast<size_t>(dtypeSize(data.dtype()));
  const size_t chunk = static_cast<size_t>(inner) * es;
  const auto *src = static_cast<const uint8_t *>(data.raw());
  auto *dst = static_cast<uint8_t *>(out.mutableRaw());
  const int64_t n = static_cast<int64_t>(indices.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < n; ++k) {
      int64_t v = indices[static_cast<size_t>(k)];
      if (v < -dim || v >= dim)
        return outOfRange("index {} is out of range for axis {} of size {}", v, axis, dim);
      if (v < 0)
        v += dim;
      std::memcpy(dst + static_cast<size_t>(o * n + k) * chunk,
                  src + static_cast<size_t>(o * dim + v) * chunk, chunk);
    }
  }
  return Tensors{std::move(out)};
}

Expected<Tensors> evalConcat(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, inputs));
  const std::vector<int64_t> sizes = types[0].shape.sizes();
  DLC_ASSIGN_OR_RETURN(int64_t axis,
                       normalizeAxis(node.getInt("axis"), static_cast<int64_t>(sizes.size())));
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(types[0].dtype, sizes));
  const size_t a = static_cast<size_t>(axis);
  const int64_t outer = product(sizes, 0, a), inner = product(sizes, a + 1, sizes.size());
  const size_t es = static_cast<size_t>(dtypeSize(out.dtype()));
  auto *dst = static_cast<uint8_t *>(out.mutableRaw());
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor &in : inputs) {
      const size_t bytes = static_cast<size_t>(in.shape()[a] * inner) * es;
      if (bytes == 0)
        continue;
      std::memcpy(dst, static_cast<const uint8_t *>(in.raw()) + static_cast<size_t>(o) * bytes,
                  bytes);
      dst += bytes;
    }
  }
  return Tensors{std::move(out)};
}

Expected<Tensors> evalSlice(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, inputs));
  const Tensor &data = inputs[0];
  static const Tensor kAbsent;
  const Tensor &axesT = inputs.size() > 3 ? inputs[3] : kAbsent;
  const Tensor &stepsT = inputs.size() > 4 ? inputs[4] : kAbsent;
  DLC_ASSIGN_OR_RETURN(auto axes,
                       sliceAxes(data.rank(), inputs[1].toInt64Vector(), inputs[2].toInt64Vector(),
                                 optionalInts(axesT), optionalInts(stepsT)));
  std::vector<int64_t> strides = stridesOf(data.shape());
  const std::vector<int64_t> inStrides = strides;
  int64_t base = 0;
  for (const SliceAxis &s : axes) {
    const size_t a = static_cast<size_t>(s.axis);
    base += sliceRange(data.shape()[a], s).first * inStrides[a];
    strides[a] = s.step * inStrides[a];
  }
  DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(data.dtype(), types[0].shape.sizes()));
  stridedCopy(data, out, base, strides);
  return Tensors{std::move(out)};
}

Expected<Tensors> evalTranspose(const Node &node, const Tensors &inputs) {
  DLC_RETURN_IF_ERROR(staticOutputTypes(node, inputs).status()); // the op's checks
  const Tensor &in = inputs[0];
  DLC_ASSIGN_OR_RETURN(auto perm, transposePerm(node, in.rank()));
  DLC_ASSIGN_OR_RETURN(Tensor out, permuted(in, perm));
  return Tensors{std::move(out)};
}

Expected<Tensors> evalSplit(const Node &node, const Tensors &inputs) {
  DLC_ASSIGN_OR_RETURN(auto types, staticOutputTypes(node, inputs));
  const Tensor &in = inputs[0];
  DLC_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(node.getInt("axis"), in.rank()));
  const std::vector<int64_t> strides = stridesOf(in.shape());
  const size_t a = static_cast<size_t>(axis);
  Tensors outs;
  int64_t offset = 0;
  for (size_t k = 0; k < types.size(); ++k) {
    const int64_t size = types[k].shape[axis].value();
    if (node.output(static_cast<int>(k))) {
      DLC_ASSIGN_OR_RETURN(Tensor out, newTensor(in.dtype(), types[k].shape.sizes()));
      stridedCopy(in, out, offset * strides[a], strides);
      outs.push_back(std::move(out));
    } else {
      outs.emplace_back();
    }
    offset += size;
  }
  return outs;
}

} // namespace dlc::eval::tensor
