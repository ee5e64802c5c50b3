#include "ir/quant_layout.h"

namespace dlc {

std::vector<int64_t> QdqLayout::paramView() const {
  if (kind != Kind::kAxis)
    return {};
  std::vector<int64_t> view(static_cast<size_t>(rank), 1);
  view[static_cast<size_t>(axis)] = channels;
  return view;
}

bool isQdqNode(const Node &n) {
  return n.op() == Op::kQuantizeLinear || n.op() == Op::kDequantizeLinear;
}

Expected<QdqLayout> qdqLayout(const Node &n) {
  DLC_CHECK(isQdqNode(n), "qdqLayout on {}", n.describe());
  const Shape &xs = n.input(0)->shape();
  if (!xs.isRanked())
    return invalidArgument("the rank of input '{}' is not known", n.input(0)->name());
  for (int i = 1; i < n.numInputs(); ++i)
    if (n.hasInput(i) && !n.input(i)->shape().isStatic())
      return invalidArgument("input '{}' has a shape that is not static: {}", n.input(i)->name(),
                             n.input(i)->shape().str());
  const std::vector<int64_t> scale = n.input(1)->shape().sizes();
  int64_t scaleCount = 1;
  for (int64_t d : scale)
    scaleCount *= d;
  if (n.hasInput(2)) {
    const std::vector<int64_t> zp = n.input(2)->shape().sizes();
    int64_t zpCount = 1;
    for (int64_t d : zp)
      zpCount *= d;
    if (zp != scale && !(zpCount == 1 && scaleCount == 1))
      return invalidArgument("the zero point's shape {} differs from the scale's {}",
                             n.input(2)->shape().str(), n.input(1)->shape().str());
  }
  QdqLayout q;
  q.rank = xs.rank();
  const int64_t blockSize = n.getInt("block_size");
  if (scaleCount == 1 && (blockSize == 0 || static_cast<int64_t>(scale.size()) != q.rank))
    return q; // per tensor
  DLC_ASSIGN_OR_RETURN(q.axis, normalizeAxis(n.getInt("axis"), q.rank));
  if (blockSize < 0)
    return invalidArgument("block_size must be >= 0, got {}", blockSize);
  if (blockSize > 0) {
    q.kind = QdqLayout::Kind::kBlocked;
    return q;
  }
  const Dim &len = xs[q.axis];
  if (scale.size() != 1 || (len.isKnown() && len.value() != scale[0]))
    return invalidArgument("the scale of shape {} is neither one value nor a 1-D tensor of the "
                           "size {} of axis {}",
                           n.input(1)->shape().str(), len.str(), q.axis);
  q.kind = QdqLayout::Kind::kAxis;
  q.channels = scale[0];
  return q;
}

} // namespace dlc
