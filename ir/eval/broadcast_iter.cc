#include "ir/eval/broadcast_iter.h"

#include <algorithm>

#include "ir/ops/util.h"

namespace dlc::eval {

using ops::broadcastShapes;

Expected<BroadcastIter> BroadcastIter::make(const std::vector<std::vector<int64_t>> &shapes) {
  Shape result;
  for (const auto &s : shapes) {
    DLC_ASSIGN_OR_RETURN(result, broadcastShapes(result, Shape::fromSizes(s)));
  }
  BroadcastIter it;
  it.out_ = result.sizes();
  DLC_ASSIGN_OR_RETURN(it.numElements_, checkedNumElements(it.out_, "broadcast result"));
  size_t rank = it.out_.size();
  for (const auto &s : shapes) {
    std::vector<int64_t> strides(rank, 0);
    int64_t stride = 1;
    for (size_t j = 0; j < s.size(); ++j) {
      size_t d = s.size() - 1 - j; // operand dim, right-aligned with output dim
      if (s[d] != 1)
        strides[rank - 1 - j] = stride;
      stride *= s[d];
    }
    it.strides_.push_back(std::move(strides));
  }
  it.counter_.assign(rank, 0);
  it.offsets_.assign(shapes.size(), 0);
  return it;
}

void BroadcastIter::next() {
  for (size_t d = out_.size(); d-- > 0;) {
    ++counter_[d];
    for (size_t k = 0; k < offsets_.size(); ++k)
      offsets_[k] += strides_[k][d];
    if (counter_[d] < out_[d])
      return;
    for (size_t k = 0; k < offsets_.size(); ++k)
      offsets_[k] -= strides_[k][d] * out_[d];
    counter_[d] = 0;
  }
}

} // namespace dlc::eval
