// The tensor family: shape and data-movement ops. One OpDef row per op; inference lives in
// tensor_*_infer.cc, shared rules and the shape-value convention in tensor_internal.h (the
// reference kernels are ir/eval/tensor_eval*.cc).
#include "ir/ops/families.h"
#include "ir/ops/tensor_internal.h"
#include "ir/ops/util.h"

namespace dlc::ops {

namespace {
/// ConstantOfShape's default `value`: a one-element f32 zero.
Attribute zeroF32() { return Attribute(Tensor::fromVector<float>(DType::kF32, {1}, {0.0f})); }
} // namespace

std::vector<OpDef> tensorOps() {
  using namespace tensor;
  constexpr FusionKind kInj = FusionKind::kInjective, kOpq = FusionKind::kOpaque;
  constexpr int kVar = -1;
  // clang-format off
  return {
    // op                   inputs   outputs  fusion attributes                              infer
    {Op::kCompress,          2, 2,    1, 1,    kOpq, {optionalAttr("axis", AttrKind::kInt)},
     inferCompress},
    {Op::kConcat,            1, kVar, 1, 1,    kInj, {requiredAttr("axis", AttrKind::kInt)},
     inferConcat},
    {Op::kConstantOfShape,   1, 1,    1, 1,    kInj,
     {{"value", AttrKind::kTensor, zeroF32(), false}},
     inferConstantOfShape},
    {Op::kDepthToSpace,      1, 1,    1, 1,    kInj,
     {requiredAttr("blocksize", AttrKind::kInt), stringAttr("mode", "DCR")}, inferDepthToSpace},
    {Op::kExpand,            2, 2,    1, 1,    kInj, {}, inferExpand},
    {Op::kEyeLike,           1, 1,    1, 1,    kInj,
     {optionalAttr("dtype", AttrKind::kDType), intAttr("k", 0)}, inferEyeLike},
    {Op::kFlatten,           1, 1,    1, 1,    kInj, {intAttr("axis", 1)},
     inferFlatten},
    {Op::kGather,            2, 2,    1, 1,    kInj, {intAttr("axis", 0)}, inferGather},
    {Op::kGatherElements,    2, 2,    1, 1,    kInj, {intAttr("axis", 0)}, inferGatherElements},
    {Op::kGatherND,          2, 2,    1, 1,    kInj, {intAttr("batch_dims", 0)}, inferGatherND},
    {Op::kIdentity,          1, 1,    1, 1,    kInj, {}, inferIdentity},
    // Opaque: a copy is a transfer between devices, never fused away (insert-copies).
    {Op::kCopy,              1, 1,    1, 1,    kOpq, {}, inferIdentity},
    {Op::kNonZero,           1, 1,    1, 1,    kOpq, {}, inferNonZero},
    {Op::kOneHot,            3, 3,    1, 1,    kInj, {intAttr("axis", -1)}, inferOneHot},
    {Op::kPad,               2, 4,    1, 1,    kInj, {stringAttr("mode", "constant")}, inferPad},
    {Op::kRange,             3, 3,    1, 1,    kInj, {}, inferRange},
    {Op::kReshape,           2, 2,    1, 1,    kInj, {intAttr("allowzero", 0)},
     inferReshape},
    {Op::kReverseSequence,   2, 2,    1, 1,    kInj,
     {intAttr("batch_axis", 1), intAttr("time_axis", 0)}, inferReverseSequence},
    {Op::kScatterElements,   3, 3,    1, 1,    kOpq,
     {intAttr("axis", 0), stringAttr("reduction", "none")}, inferScatterElements},
    {Op::kScatterND,         3, 3,    1, 1,    kOpq, {stringAttr("reduction", "none")},
     inferScatterND},
    {Op::kShape,             1, 1,    1, 1,    kOpq,
     {intAttr("start", 0), optionalAttr("end", AttrKind::kInt)}, inferShape},
    {Op::kSize,              1, 1,    1, 1,    kOpq, {}, inferSize},
    {Op::kSlice,             3, 5,    1, 1,    kInj, {}, inferSlice},
    {Op::kSpaceToDepth,      1, 1,    1, 1,    kInj, {requiredAttr("blocksize", AttrKind::kInt)},
     inferSpaceToDepth},
    {Op::kSplit,             1, 2,    1, kVar, kInj,
     {intAttr("axis", 0), optionalAttr("num_outputs", AttrKind::kInt)}, inferSplit},
    {Op::kSqueeze,           1, 2,    1, 1,    kInj, {}, inferSqueeze},
    {Op::kTile,              2, 2,    1, 1,    kInj, {}, inferTile},
    {Op::kTranspose,         1, 1,    1, 1,    kInj, {optionalAttr("perm", AttrKind::kInts)},
     inferTranspose},
    {Op::kTrilu,             1, 2,    1, 1,    kInj, {intAttr("upper", 1)}, inferTrilu},
    {Op::kUnique,            1, 1,    1, 4,    kOpq,
     {optionalAttr("axis", AttrKind::kInt), intAttr("sorted", 1)}, inferUnique},
    {Op::kUnsqueeze,         2, 2,    1, 1,    kInj, {}, inferUnsqueeze},
    {Op::kCenterCropPad,     2, 2,    1, 1,    kInj, {optionalAttr("axes", AttrKind::kInts)},
     inferCenterCropPad},
  };
  // clang-format on
}

} // namespace dlc::ops
