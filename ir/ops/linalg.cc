// Linear-algebra family: MatMul (numpy rules: 1-D operands are promoted and the added dim
// dropped again, batch dims broadcast; perm_a / perm_b transpose an operand first), Gemm,
// MatMulInteger, QLinearMatMul, Einsum and Det.
#include "ir/ops/einsum.h"
#include "ir/ops/families.h"
#include "ir/ops/infer_checks.h"
#include "ir/ops/util.h"

namespace dlc::ops {

namespace {

using TC = TypeClass;

/// numpy matmul of shapes `a` and `b`.
Expected<Shape> matmulShape(const InferContext &ctx, const Shape &a, const Shape &b) {
  if (!a.isRanked() || !b.isRanked())
    return Shape::unranked();
  if (a.rank() == 0 || b.rank() == 0)
    return ctx.error("operands must have rank >= 1, got shapes {} and {}", a.str(), b.str());
  std::vector<Dim> da = a.dims(), db = b.dims();
  if (da.size() == 1)
    da.insert(da.begin(), Dim(1));
  if (db.size() == 1)
    db.emplace_back(1);
  const Dim &ka = da[da.size() - 1], &kb = db[db.size() - 2];
  if (!dimsCompatible(ka, kb))
    return ctx.error("inner dimensions differ: {} vs {} (shapes {} and {})", ka.str(), kb.str(),
                     a.str(), b.str());
  Shape batchA(std::vector<Dim>(da.begin(), da.end() - 2));
  Shape batchB(std::vector<Dim>(db.begin(), db.end() - 2));
  auto batch = broadcastShapes(batchA, batchB);
  if (!batch)
    return ctx.error("batch dimensions of shapes {} and {} cannot be broadcast", a.str(), b.str());
  std::vector<Dim> out = batch->dims();
  if (a.rank() > 1)
    out.push_back(da[da.size() - 2]);
  if (b.rank() > 1)
    out.push_back(db[db.size() - 1]);
  return Shape(std::move(out));
}

/// `s` read through MatMul permutation attribute `attr` (perm_a, perm_b, perm_y): unchanged
/// when the attribute is absent or `s` unranked.
Expected<Shape> permutedBy(const InferContext &ctx, const Shape &s, const char *attr) {
  if (!s.isRanked())
    return s;
  auto perm = matmulOperandPerm(ctx.node(), attr, s.rank());
  if (!perm)
    return ctx.error("{}", perm.status().message());
  if (perm->empty())
    return s;
  std::vector<Dim> dims;
  for (int64_t p : *perm)
    dims.push_back(s[p]);
  return Shape(std::move(dims));
}

Status inferMatMul(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkInputDType(ctx, 0, TC::kNumeric));
  DLC_ASSIGN_OR_RETURN(DType dtype, commonDType(ctx, {0, 1}));
  // The operands as the product sees them, and the product as it is stored.
  DLC_ASSIGN_OR_RETURN(Shape a, permutedBy(ctx, ctx.inputType(0).shape, "perm_a"));
  DLC_ASSIGN_OR_RETURN(Shape b, permutedBy(ctx, ctx.inputType(1).shape, "perm_b"));
  DLC_ASSIGN_OR_RETURN(Shape product, matmulShape(ctx, a, b));
  DLC_ASSIGN_OR_RETURN(Shape shape, permutedBy(ctx, product, "perm_y"));
  ctx.setOutputType(0, TensorType(dtype, std::move(shape)));
  return Status::ok();
}

/// Error unless zero point `zp` (if present) has the dtype of the data input `data`.
Status checkZeroPoint(const InferContext &ctx, int data, int zp) {
  DType d = inputDType(ctx, data), z = inputDType(ctx, zp);
  if (d != DType::kUnknown && z != DType::kUnknown && d != z)
    return ctx.error("zero point (input {}) has dtype {}, but input {} has dtype {}", zp,
                     dtypeName(z), data, dtypeName(d));
  return Status::ok();
}

Status inferMatMulInteger(InferContext &ctx) {
  for (int i : {0, 1})
    DLC_RETURN_IF_ERROR(checkInputDType(ctx, i, TC::kInteger));
  DLC_RETURN_IF_ERROR(checkZeroPoint(ctx, 0, 2));
  DLC_RETURN_IF_ERROR(checkZeroPoint(ctx, 1, 3));
  // transB = 1 (dlc's form for int8 kernels, set by realize-int8): B is [..., N, K].
  Shape b = ctx.inputType(1).shape;
  if (ctx.node().getInt("transB") != 0) {
    if (b.isRanked() && b.rank() < 2)
      return ctx.error("transB needs B of rank >= 2, got {}", b.str());
    if (b.isRanked())
      std::swap(b[b.rank() - 1], b[b.rank() - 2]);
  }
  DLC_ASSIGN_OR_RETURN(Shape shape, matmulShape(ctx, ctx.inputType(0).shape, b));
  ctx.setOutputType(0, TensorType(DType::kI32, std::move(shape)));
  return Status::ok();
}

// Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
Status inferQLinearMatMul(InferContext &ctx) {
  for (int i : {0, 3, 7})
    DLC_RETURN_IF_ERROR(checkInputDType(ctx, i, TC::kInteger));
  DLC_RETURN_IF_ERROR(checkZeroPoint(ctx, 0, 2));
  DLC_RETURN_IF_ERROR(checkZeroPoint(ctx, 3, 5));
  DLC_ASSIGN_OR_RETURN(Shape shape,
                       matmulShape(ctx, ctx.inputType(0).shape, ctx.inputType(3).shape));
  ctx.setOutputType(0, TensorType(ctx.inputType(7).dtype, std::move(shape)));
  return Status::ok();
}

/// Gemm's operand `i` as (rows, cols) after the optional transpose; unknown when unranked.
Expected<std::pair<Dim, Dim>> gemmOperand(const InferContext &ctx, int i, bool transpose) {
  const Shape &s = ctx.inputType(i).shape;
  if (!s.isRanked())
    return std::pair<Dim, Dim>(Dim::unknown(), Dim::unknown());
  if (s.rank() != 2)
    return ctx.error("input {} must be 2-D, got shape {}", i == 0 ? "A" : "B", s.str());
  return transpose ? std::pair<Dim, Dim>(s[1], s[0]) : std::pair<Dim, Dim>(s[0], s[1]);
}

Status inferGemm(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkInputDType(ctx, 0, TC::kNumeric));
  DLC_ASSIGN_OR_RETURN(DType dtype, commonDType(ctx, {0, 1, 2}));
  DLC_ASSIGN_OR_RETURN(auto a, gemmOperand(ctx, 0, ctx.node().getInt("transA") != 0));
  DLC_ASSIGN_OR_RETURN(auto b, gemmOperand(ctx, 1, ctx.node().getInt("transB") != 0));
  if (!dimsCompatible(a.second, b.first))
    return ctx.error("inner dimensions differ: {} vs {} (shapes {} and {})", a.second.str(),
                     b.first.str(), ctx.inputType(0).shape.str(), ctx.inputType(1).shape.str());
  Shape out(std::vector<Dim>{a.first, b.second});
  if (ctx.hasInput(2))
    DLC_RETURN_IF_ERROR(checkUnidirectional(ctx, ctx.inputType(2).shape, out, "C"));
  ctx.setOutputType(0, TensorType(dtype, std::move(out)));
  return Status::ok();
}

Status inferEinsum(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkInputDType(ctx, 0, TC::kNumeric));
  std::vector<int> all;
  std::vector<Shape> shapes;
  for (int i = 0; i < ctx.numInputs(); ++i) {
    all.push_back(i);
    shapes.push_back(ctx.inputType(i).shape);
  }
  DLC_ASSIGN_OR_RETURN(DType dtype, commonDType(ctx, all));
  auto shape = einsumShape(ctx.node().getString("equation"), shapes);
  if (!shape)
    return ctx.error("{}", shape.status().message());
  ctx.setOutputType(0, TensorType(dtype, std::move(*shape)));
  return Status::ok();
}

Status inferDet(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkInputDType(ctx, 0, TC::kFloat));
  const TensorType &in = ctx.inputType(0);
  if (!in.shape.isRanked()) {
    ctx.setOutputType(0, in);
    return Status::ok();
  }
  int64_t r = in.shape.rank();
  if (r < 2)
    return ctx.error("input must have rank >= 2, got shape {}", in.shape.str());
  if (!dimsCompatible(in.shape[r - 2], in.shape[r - 1]))
    return ctx.error("input matrices must be square, got shape {}", in.shape.str());
  std::vector<Dim> dims(in.shape.dims().begin(), in.shape.dims().end() - 2);
  ctx.setOutputType(0, TensorType(in.dtype, Shape(std::move(dims))));
  return Status::ok();
}

OpDef row(Op op, int minIn, int maxIn, FusionKind fusion, InferFn infer,
          std::vector<AttrSpec> attrs = {}) {
  OpDef d;
  d.op = op;
  d.minInputs = minIn;
  d.maxInputs = maxIn;
  d.fusion = fusion;
  d.attrs = std::move(attrs);
  d.infer = infer;
  return d;
}

} // namespace

std::vector<OpDef> linalgOps() {
  return {
      // perm_a / perm_b (dlc's, not ONNX's): the operand is read through that transpose; perm_y:
      // the product is stored through it. As fold-transpose-matmul writes them (the GEMM
      // kernels address the permuted views in place).
      row(Op::kMatMul, 2, 2, FusionKind::kOutFusable, inferMatMul,
          {intsAttr("perm_a", {}), intsAttr("perm_b", {}), intsAttr("perm_y", {})}),
      row(Op::kMatMulInteger, 2, 4, FusionKind::kOutFusable, inferMatMulInteger,
          {intAttr("transB", 0)}),
      row(Op::kGemm, 2, 3, FusionKind::kOutFusable, inferGemm,
          {floatAttr("alpha", 1.0f), floatAttr("beta", 1.0f), intAttr("transA", 0),
           intAttr("transB", 0)}),
      row(Op::kEinsum, 1, -1, FusionKind::kOpaque, inferEinsum,
          {requiredAttr("equation", AttrKind::kString)}),
      row(Op::kDet, 1, 1, FusionKind::kOpaque, inferDet),
      row(Op::kQLinearMatMul, 8, 8, FusionKind::kOpaque, inferQLinearMatMul),
      attentionRow(),
  };
}

} // namespace dlc::ops
