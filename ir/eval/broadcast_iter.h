// Walks the elements of a numpy-broadcast result in row-major order, tracking the matching
// element offset in each operand. Used by the reference evaluators.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/status.h"

namespace dlc::eval {

class BroadcastIter {
public:
  /// Iterator over the broadcast of `shapes` (static shapes); error if they do not broadcast.
  static Expected<BroadcastIter> make(const std::vector<std::vector<int64_t>> &shapes);

  /// The broadcast result's shape.
  const std::vector<int64_t> &outShape() const { return out_; }
  int64_t numElements() const { return numElements_; }
  /// Element offset in operand k of the current output element.
  int64_t offset(size_t k) const { return offsets_[k]; }
  /// Advances to the next output element.
  void next();

private:
  std::vector<int64_t> out_;
  int64_t numElements_ = 1;
  std::vector<std::vector<int64_t>> strides_; // per operand, per output dim; 0 if broadcast
  std::vector<int64_t> counter_;
  std::vector<int64_t> offsets_;
};

} // namespace dlc::eval
