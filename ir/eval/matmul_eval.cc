// Reference evaluation of MatMul, Gemm, MatMulInteger, QLinearMatMul and Det.
//
// The quantized matmuls subtract zero points into i32 first (a scalar zero point is per
// tensor; a's may also be per row: [M] or [..., M, 1]; b's per column: [N] or [..., 1, N]),
// multiply exactly in i32, and QLinearMatMul requantizes each result with the multiplier
// a_scale * b_scale / y_scale computed in f32 (as onnxruntime and the ONNX reference do),
// rounding half to even and saturating. Det factors each matrix by LU with partial pivoting
// in double.
#include <cmath>
#include <numeric>

#include "ir/eval/cpu_gemm.h"
#include "ir/eval/eval_util.h"
#include "ir/eval/families.h"
#include "ir/eval/linalg_eval.h"
#include "ir/ops/util.h"
#include "ir/sizes.h"

namespace dlc::eval {

namespace {

std::string shapeStr(const std::vector<int64_t> &s) { return Shape::fromSizes(s).str(); }

struct MatMulDims {
  std::vector<int64_t> aBatch, bBatch; // the operands' batch dims
  int64_t m = 1, k = 1, n = 1;
  std::vector<int64_t> outShape; // numpy's result shape (promoted 1-D dims dropped)
};

Expected<MatMulDims> matmulDims(const std::vector<int64_t> &a, const std::vector<int64_t> &b) {
  if (a.empty() || b.empty())
    return invalidArgument("operands must have rank >= 1, got shapes {} and {}", shapeStr(a),
                           shapeStr(b));
  std::vector<int64_t> pa = a, pb = b;
  if (pa.size() == 1)
    pa.insert(pa.begin(), 1);
  if (pb.size() == 1)
    pb.push_back(1);
  MatMulDims d;
  d.m = pa[pa.size() - 2];
  d.k = pa.back();
  d.n = pb.back();
  if (pb[pb.size() - 2] != d.k)
    return invalidArgument("inner dimensions differ: {} vs {} (shapes {} and {})", d.k,
                           pb[pb.size() - 2], shapeStr(a), shapeStr(b));
  d.aBatch.assign(pa.begin(), pa.end() - 2);
  d.bBatch.assign(pb.begin(), pb.end() - 2);
  DLC_ASSIGN_OR_RETURN(BroadcastIter it, BroadcastIter::make({d.aBatch, d.bBatch}));
  d.outShape = it.outShape();
  if (a.size() > 1)
    d.outShape.push_back(d.m);
  if (b.size() > 1)
    d.outShape.push_back(d.n);
  return d;
}

/// C[m,n] = A[m,k] B[k,n], row-major, C zero on entry; floats through the GEMM kernels,
/// integers exactly (wrapping).
template <typename T>
void gemmKernel(int64_t m, int64_t n, int64_t k, const T *a, const T *b, T *c) {
  if constexpr (std::is_same_v<T, float>) {
    sgemm(false, false, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
  } else if constexpr (std::is_same_v<T, double>) {
    dgemm(false, false, m, n, k, 1.0, a, k, b, n, 0.0, c, n);
  } else {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p) {
        T x = a[i * k + p];
        for (int64_t j = 0; j < n; ++j)
          c[i * n + j] = wrapAdd(c[i * n + j], wrapMul(x, b[p * n + j]));
      }
  }
}

/// `x - zeroPoint` as i32, with the zero point per tensor, per row (`perRow`: a 1-D zero
/// point of length M is taken as [M, 1]) or any shape that broadcasts to x's.
Expected<Tensor> minusZeroPoint(const Tensor &x, const Tensor *zp, bool perRow, const char *what) {
  if (!isInteger(x.dtype()))
    return noEval(x.dtype());
  Tensor xi = castTensor(x, DType::kI32);
  if (!zp || zp->empty())
    return xi;
  if (zp->dtype() != x.dtype())
    return invalidArgument("{} has dtype {}, but its input has dtype {}", what,
                           dtypeName(zp->dtype()), dtypeName(x.dtype()));
  std::vector<int64_t> zs = zp->shape();
  if (perRow && zs.size() == 1 && zs[0] != 1 && x.rank() >= 2)
    zs = {zs[0], 1};
  DLC_ASSIGN_OR_RETURN(BroadcastIter it, BroadcastIter::make({x.shape(), zs}));
  if (it.outShape() != x.shape())
    return invalidArgument("{} of shape {} does not broadcast to its input's shape {}", what,
                           shapeStr(zp->shape()), shapeStr(x.shape()));
  Tensor z = castTensor(*zp, DType::kI32).reshaped(zs);
  return zipWith<int32_t, int32_t, int32_t>(xi, z, DType::kI32,
                                            [](int32_t v, int32_t o, int32_t &r) {
                                              r = wrapSub(v, o);
                                              return true;
                                            });
}

/// The product's matrix dims, with 1-D operands promoted (so zero points and scales line up
/// with rows and columns).
Tensor promoted(const Tensor &t, bool isA) {
  if (t.rank() != 1)
    return t;
  return t.reshaped(isA ? std::vector<int64_t>{1, t.shape()[0]}
                        : std::vector<int64_t>{t.shape()[0], 1});
}

/// The matmul's result shape for the original (unpromoted) operand shapes.
std::vector<int64_t> finalShape(const Tensor &c, const Tensor &a, const Tensor &b) {
  std::vector<int64_t> s = c.shape();
  if (b.rank() == 1)
    s.erase(s.end() - 1);
  if (a.rank() == 1)
    s.erase(s.end() - (b.rank() == 1 ? 1 : 2));
  return s;
}

/// The determinant of the n x n row-major matrix `m` (destroyed): LU with partial pivoting.
double determinant(std::vector<double> &m, int64_t n) {
  double det = 1.0;
  auto at = [&](int64_t r, int64_t c) -> double & { return m[static_cast<size_t>(r * n + c)]; };
  for (int64_t c = 0; c < n; ++c) {
    int64_t pivot = c;
    for (int64_t r = c + 1; r < n; ++r)
      if (std::fabs(at(r, c)) > std::fabs(at(pivot, c)))
        pivot = r;
    if (at(pivot, c) == 0.0)
      return 0.0;
    if (pivot != c) {
      for (int64_t j = 0; j < n; ++j)
        std::swap(at(pivot, j), at(c, j));
      det = -det;
    }
    det *= at(c, c);
    for (int64_t r = c + 1; r < n; ++r) {
      double f = at(r, c) / at(c, c);
      for (int64_t j = c + 1; j < n; ++j)
        at(r, j) -= f * at(c, j);
    }
  }
  return det;
}

} // namespace

Expected<Tensor> matmulTensors(const Tensor &a0, const Tensor &b0) {
  if (a0.dtype() != b0.dtype())
    return invalidArgument("inputs 0 and 1 have different dtypes ({} vs {})", dtypeName(a0.dtype()),
                           dtypeName(b0.dtype()));
  if (!isNumeric(a0.dtype()))
    return noEval(a0.dtype());
  DLC_ASSIGN_OR_RETURN(MatMulDims d, matmulDims(a0.shape(), b0.shape()));
  DLC_ASSIGN_OR_RETURN(BroadcastIter it, BroadcastIter::make({d.aBatch, d.bBatch}));
  Tensor a = widenHalf(a0), b = widenHalf(b0);
  Tensor out = Tensor::zeros(a.dtype(), d.outShape);
  int64_t batches = it.numElements();
  dispatch(a.dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      const T *pa = a.data<T>(), *pb = b.data<T>();
      T *pc = out.mutableData<T>();
      if (product(d.bBatch) == 1 && product(d.aBatch) == batches) {
        // One shared right operand: the batches of a stack into one tall matrix.
        gemmKernel(batches * d.m, d.n, d.k, pa, pb, pc);
        return;
      }
      for (int64_t i = 0; i < batches; ++i, it.next())
        gemmKernel(d.m, d.n, d.k, pa + it.offset(0) * d.m * d.k, pb + it.offset(1) * d.k * d.n,
                   pc + i * d.m * d.n);
    }
  });
  return narrowTo(out, a0.dtype());
}

EvalResult evalMatMul(const Node &node, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 2));
  // perm_a / perm_b: the operand transposed first; perm_y: the product after.
  std::vector<Tensor> ops = {in[0], in[1]};
  for (size_t i : {size_t{0}, size_t{1}}) {
    DLC_ASSIGN_OR_RETURN(auto perm,
                         ops::matmulOperandPerm(node, i == 0 ? "perm_a" : "perm_b", ops[i].rank()));
    if (!perm.empty()) {
      DLC_ASSIGN_OR_RETURN(ops[i], permuted(ops[i], perm));
    }
  }
  DLC_ASSIGN_OR_RETURN(Tensor out, matmulTensors(ops[0], ops[1]));
  DLC_ASSIGN_OR_RETURN(auto permY, ops::matmulOperandPerm(node, "perm_y", out.rank()));
  if (!permY.empty()) {
    DLC_ASSIGN_OR_RETURN(out, permuted(out, permY));
  }
  return std::vector<Tensor>{out};
}

EvalResult evalGemm(const Node &node, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 2));
  DLC_RETURN_IF_ERROR(checkSameDType(in));
  DType dtype = in[0].dtype();
  if (!isNumeric(dtype))
    return noEval(dtype);
  for (int i : {0, 1})
    if (in[static_cast<size_t>(i)].rank() != 2)
      return invalidArgument("input {} must be 2-D, got shape {}", i == 0 ? "A" : "B",
                             shapeStr(in[static_cast<size_t>(i)].shape()));
  bool transA = node.getInt("transA") != 0, transB = node.getInt("transB") != 0;
  const std::vector<int64_t> &sa = in[0].shape(), &sb = in[1].shape();
  int64_t m = transA ? sa[1] : sa[0], k = transA ? sa[0] : sa[1];
  int64_t kb = transB ? sb[1] : sb[0], n = transB ? sb[0] : sb[1];
  if (k != kb)
    return invalidArgument("inner dimensions differ: {} vs {} (shapes {} and {})", k, kb,
                           shapeStr(sa), shapeStr(sb));
  float alpha = node.getFloat("alpha"), beta = node.getFloat("beta");
  // Like the ONNX reference, beta == 0 ignores C (so NaN or inf in C do not leak through).
  bool useC = in.size() > 2 && !in[2].empty() && beta != 0.0f;
  std::vector<int64_t> cShape = useC ? in[2].shape() : std::vector<int64_t>{};
  DLC_ASSIGN_OR_RETURN(BroadcastIter it, BroadcastIter::make({{m, n}, cShape}));
  if (it.outShape() != std::vector<int64_t>{m, n})
    return invalidArgument("C of shape {} does not broadcast to the result's shape [{},{}]",
                           shapeStr(cShape), m, n);
  Tensor a = widenHalf(in[0]), b = widenHalf(in[1]), c = useC ? widenHalf(in[2]) : Tensor();
  Tensor out = Tensor::zeros(a.dtype(), {m, n});
  dispatch(a.dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      const T *pa = a.data<T>(), *pb = b.data<T>();
      const T *pc = useC ? c.data<T>() : nullptr;
      T *y = out.mutableData<T>();
      if constexpr (std::is_floating_point_v<T>) {
        if constexpr (std::is_same_v<T, float>)
          sgemm(transA, transB, m, n, k, alpha, pa, sa[1], pb, sb[1], 0.0f, y, n);
        else
          dgemm(transA, transB, m, n, k, alpha, pa, sa[1], pb, sb[1], 0.0, y, n);
        for (int64_t i = 0; useC && i < m * n; ++i, it.next())
          y[i] += static_cast<T>(beta) * pc[it.offset(1)];
      } else { // exact when alpha and beta are 1, else through double, truncated
        bool exact = alpha == 1.0f && (!useC || beta == 1.0f);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j, it.next()) {
            T acc = 0;
            for (int64_t p = 0; p < k; ++p)
              acc = wrapAdd(acc, wrapMul(pa[transA ? p * sa[1] + i : i * sa[1] + p],
                                         pb[transB ? j * sb[1] + p : p * sb[1] + j]));
            T cv = useC ? pc[it.offset(1)] : T(0);
            y[i * n + j] = exact ? wrapAdd(acc, cv)
                                 : truncSaturate<T>(alpha * static_cast<double>(acc) +
                                                    (useC ? beta * static_cast<double>(cv) : 0.0));
          }
      }
    }
  });
  return std::vector<Tensor>{narrowTo(out, dtype)};
}

EvalResult evalMatMulInteger(const Node &node, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 2));
  const Tensor *azp = in.size() > 2 ? &in[2] : nullptr, *bzp = in.size() > 3 ? &in[3] : nullptr;
  DLC_ASSIGN_OR_RETURN(Tensor a, minusZeroPoint(in[0], azp, true, "a_zero_point"));
  Tensor bIn = in[1];
  if (node.getInt("transB") != 0) { // B is [..., N, K] (realize-int8's form)
    if (bIn.rank() < 2)
      return invalidArgument("transB needs B of rank >= 2, got {}", shapeStr(bIn.shape()));
    std::vector<int64_t> perm(static_cast<size_t>(bIn.rank()));
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    DLC_ASSIGN_OR_RETURN(bIn, permuted(bIn, perm));
  }
  DLC_ASSIGN_OR_RETURN(Tensor b, minusZeroPoint(bIn, bzp, false, "b_zero_point"));
  DLC_ASSIGN_OR_RETURN(Tensor out, matmulTensors(a, b));
  return std::vector<Tensor>{out};
}

// Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
EvalResult evalQLinearMatMul(const Node &node, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 8));
  for (size_t i : {6, 7})
    if (in[i].numElements() != 1)
      return invalidArgument("{} must be a scalar, got shape {}",
                             i == 6 ? "y_scale" : "y_zero_point", shapeStr(in[i].shape()));
  if (!isInteger(in[7].dtype()))
    return noEval(in[7].dtype());
  Tensor pa = promoted(in[0], true), pb = promoted(in[3], false);
  DLC_ASSIGN_OR_RETURN(Tensor a, minusZeroPoint(pa, &in[2], true, "a_zero_point"));
  DLC_ASSIGN_OR_RETURN(Tensor b, minusZeroPoint(pb, &in[5], false, "b_zero_point"));
  DLC_ASSIGN_OR_RETURN(Tensor acc, matmulTensors(a, b));
  // Scales line up with the product like the zero points: per row for a, per column for b.
  Tensor as = castTensor(in[1], DType::kF32), bs = castTensor(in[4], DType::kF32);
  if (as.rank() == 1 && as.numElements() != 1)
    as = as.reshaped({as.numElements(), 1});
  DLC_ASSIGN_OR_RETURN(BroadcastIter it,
                       BroadcastIter::make({acc.shape(), as.shape(), bs.shape()}));
  if (it.outShape() != acc.shape())
    return invalidArgument("scales of shapes {} and {} do not match the product's shape {}",
                           shapeStr(in[1].shape()), shapeStr(in[4].shape()), shapeStr(acc.shape()));
  float ys = static_cast<float>(in[6].elementAsDouble(0));
  int64_t yzp = in[7].elementAsInt64(0);
  Tensor out = Tensor::zeros(in[7].dtype(), acc.shape());
  const int32_t *c = acc.data<int32_t>();
  for (int64_t i = 0; i < acc.numElements(); ++i, it.next()) {
    float multiplier = as.data<float>()[it.offset(1)] * bs.data<float>()[it.offset(2)] / ys;
    storeQuantized(out, i, static_cast<double>(c[i]) * multiplier, yzp);
  }
  return std::vector<Tensor>{out.reshaped(finalShape(out, in[0], in[3]))};
}

EvalResult evalDet(const Node &node, const std::vector<Tensor> &in) {
  DLC_RETURN_IF_ERROR(checkInputs(in, 1));
  DType dtype = in[0].dtype();
  if (!isFloat(dtype))
    return noEval(dtype);
  const std::vector<int64_t> &shape = in[0].shape();
  size_t r = shape.size();
  if (r < 2 || shape[r - 1] != shape[r - 2])
    return invalidArgument("input must be a batch of square matrices, got shape {}",
                           shapeStr(shape));
  int64_t n = shape[r - 1];
  Tensor x = castTensor(in[0], DType::kF64);
  Tensor out = Tensor::zeros(dtype, std::vector<int64_t>(shape.begin(), shape.end() - 2));
  std::vector<double> m(static_cast<size_t>(n * n));
  for (int64_t b = 0; b < out.numElements(); ++b) {
    const double *src = x.data<double>() + b * n * n;
    m.assign(src, src + n * n);
    storeFloat(out, b, determinant(m, n));
  }
  return std::vector<Tensor>{out};
}

std::vector<EvalRow> linalgEvals() {
  return {
      {Op::kMatMul, evalMatMul},
      {Op::kMatMulInteger, evalMatMulInteger},
      {Op::kGemm, evalGemm},
      {Op::kEinsum, evalEinsum},
      {Op::kDet, evalDet},
      {Op::kQLinearMatMul, evalQLinearMatMul},
      {Op::kAttention, evalAttention},
  };
}

} // namespace dlc::eval
