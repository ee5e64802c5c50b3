#include "ir/annotations/fusion_roles.h"

#include "ir/match.h"
#include "ir/quant_layout.h"

namespace dlc {

bool isElementwiseOp(Op op) {
  FusionKind k = opDef(op).fusion;
  return k == FusionKind::kElementwise || k == FusionKind::kBroadcast;
}

bool isElementwiseNode(const Node &n) {
  if (isQdqNode(n)) {
    auto layout = qdqLayout(n);
    return layout && layout->kind != QdqLayout::Kind::kBlocked;
  }
  return isElementwiseOp(n.op());
}

bool isViewOp(Op op) {
  return op == Op::kReshape || op == Op::kFlatten || op == Op::kSqueeze || op == Op::kUnsqueeze ||
         op == Op::kIdentity || op == Op::kCopy;
}

bool isViewNode(const Node &n) {
  if (n.op() == Op::kDropout)
    return (!n.hasInput(2) || isConstantFalse(n.input(2))) && isUnused(n.output(1));
  return isViewOp(n.op());
}

FusionClass classifyForFusion(const Node &n) {
  using R = FusionRole;
  for (int i = 1; i < n.numOutputs(); ++i)
    if (!isUnused(n.output(i)))
      return {R::kOpaque, false, fmt::format("its output {} is used", i)};
  if (isElementwiseOp(n.op()))
    return {R::kElementwise, false, ""};
  if (isQdqNode(n)) {
    auto layout = qdqLayout(n);
    if (!layout)
      return {R::kOpaque, false, layout.status().message()};
    if (layout->kind == QdqLayout::Kind::kBlocked)
      return {R::kOpaque, false, "blocked quantization"};
    return {R::kElementwise, false, ""};
  }
  if (isViewOp(n.op()))
    return {R::kOpaque, false, fmt::format("a view: {}", n.opName())};
  // Rows whose fusion kind does not say it all.
  switch (n.op()) {
  case Op::kLayerNormalization:
    return {R::kAnchor, true, ""};
  case Op::kArgMax:
  case Op::kArgMin:
  case Op::kHardmax:
    return {R::kOpaque, false, ""};
  case Op::kAveragePool:
  case Op::kMaxPool:
  case Op::kLpPool:
  case Op::kGlobalAveragePool:
  case Op::kGlobalMaxPool:
  case Op::kGlobalLpPool:
  case Op::kLRN:
  case Op::kResize:
  case Op::kAttention: // its epilogue: Y's quantization in int8 models
    return {R::kAnchor, false, ""};
  default:
    break;
  }
  switch (n.def().fusion) {
  case FusionKind::kReduction:
    return {R::kAnchor, true, ""};
  case FusionKind::kOutFusable:
  case FusionKind::kInjective:
    return {R::kAnchor, false, ""};
  default:
    return {R::kOpaque, false, ""};
  }
}

} // namespace dlc
