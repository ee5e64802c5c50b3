#include "ir/ops/util.h"

#include <fmt/ranges.h>

#include <algorithm>

namespace dlc::ops {

Expected<Shape> broadcastShapes(const Shape &a, const Shape &b) {
  if (!a.isRanked() || !b.isRanked())
    return Shape::unranked();
  int64_t rank = std::max(a.rank(), b.rank());
  std::vector<Dim> out(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i) {
    int64_t ia = i - (rank - a.rank()), ib = i - (rank - b.rank());
    Dim da = ia >= 0 ? a[ia] : Dim(1);
    Dim db = ib >= 0 ? b[ib] : Dim(1);
    Dim &o = out[static_cast<size_t>(i)];
    if (da.isKnown() && da.value() == 1)
      o = db;
    else if (db.isKnown() && db.value() == 1)
      o = da;
    else if (da.isKnown() && db.isKnown()) {
      if (da.value() != db.value())
        return invalidArgument("shapes {} and {} cannot be broadcast (dim {} vs {})", a.str(),
                               b.str(), da.value(), db.value());
      o = da;
    } else if (da == db)
      o = da;
    else if (da.isKnown()) // a known size > 1 against a symbol: the symbol must equal it
      o = da;
    else if (db.isKnown())
      o = db;
    else
      o = Dim::unknown();
  }
  return Shape(std::move(out));
}

Expected<Shape> broadcastInputs(const InferContext &ctx) {
  Shape result; // scalar
  for (int i = 0; i < ctx.numInputs(); ++i) {
    if (!ctx.hasInput(i))
      continue;
    DLC_ASSIGN_OR_RETURN(result, broadcastShapes(result, ctx.inputType(i).shape));
  }
  return result;
}

Status inferSameAsInput(InferContext &ctx) {
  ctx.setOutputType(0, ctx.inputType(0));
  return Status::ok();
}

bool isPermutation(const std::vector<int64_t> &perm, int64_t rank) {
  if (static_cast<int64_t>(perm.size()) != rank)
    return false;
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[static_cast<size_t>(p)])
      return false;
    seen[static_cast<size_t>(p)] = true;
  }
  return true;
}

Expected<std::vector<int64_t>> matmulOperandPerm(const Node &node, std::string_view attr,
                                                 int64_t rank) {
  if (!node.hasAttr(attr))
    return std::vector<int64_t>{};
  std::vector<int64_t> perm = node.getInts(attr);
  if (perm.empty())
    return perm;
  if (!isPermutation(perm, rank))
    return invalidArgument("{} [{}] is not a permutation of the operand's {} axes", attr,
                           fmt::join(perm, ", "), rank);
  return perm;
}

} // namespace dlc::ops
