// GEMM family: MatMul (numpy rules: 1-D operands promoted, batch dims broadcast) and Gemm
// (transA, transB, alpha, beta, C broadcast to [M, N]) with their elementwise epilogue, written
// by the GEMM kernel writer (gemm_kernel.h). Operands are read in place in either layout; a
// MatMul whose B has no batch and whose A is not broadcast runs as one GEMM with the batch
// folded into M (the usual linear layer on [batch, seq, features]). MatMulInteger in
// realize-int8's form (int8, B stored [N, K]) runs the int8 tensor-core kernel; its int32
// accumulator reaches the epilogue (the rescale, bias, activation, quantize_linear) as float.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <numeric>

#include "codegen/elementwise_chain.h"
#include "codegen/emitters.h"
#include "codegen/gemm_kernel.h"
#include "ir/ops/util.h"
#include "ir/sizes.h"

namespace dlc::codegen {
namespace {

using gemm::GemmSpec;
using gemm::Operand;

bool claims(const Node *anchor) {
  return anchor && (anchor->op() == Op::kMatMul || anchor->op() == Op::kGemm ||
                    anchor->op() == Op::kMatMulInteger);
}

/// MatMulInteger runs on int8 tensor cores in the form realize-int8 writes: int8 operands
/// without zero points, B stored [N, K] (transB = 1), K a multiple of 16.
bool supportsInteger(const Node &node, std::string *why) {
  if (!gemm::int8Operands(node, why))
    return false;
  const Shape &b = node.input(1)->shape();
  if (node.getInt("transB") == 0 || b.rank() != 2) {
    *why = "MatMulInteger: the GPU kernel wants a 2-D B stored [N, K] (transB = 1)";
    return false;
  }
  if (b[1].value() % 16 != 0) {
    *why = fmt::format("MatMulInteger: K = {} is not a multiple of 16", b[1].value());
    return false;
  }
  return true;
}

bool gemmDType(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16; }

bool supports(const Node &node, std::string *why) {
  const DType t = node.input(0)->dtype();
  if (node.op() == Op::kMatMulInteger) {
    if (!supportsInteger(node, why))
      return false;
  } else if (!gemmDType(t)) {
    *why = fmt::format("{}: dtype {} has no GPU kernel (f32, f16 and bf16 only)",
                       opOnnxName(node.op()), dtypeName(t));
    return false;
  }
  for (const Value *v : node.outputs())
    if (v && product(v->shape().sizes()) == 0) {
      *why = fmt::format("{}: the output {} is empty", opOnnxName(node.op()), v->shape().str());
      return false;
    }
  return true;
}

/// Operand with free extent `extent` (K extent `kExtent`) whose element (i, k) sits at
/// i * si + k * sk: K-contiguous when sk is 1 (or K is 1), else i must be contiguous.
Expected<Operand> strided(const Value *v, int64_t si, int64_t sk, int64_t extent, int64_t kExtent,
                          std::string batchOffset) {
  Operand op;
  op.value = v;
  op.batchOffset = std::move(batchOffset);
  if (sk == 1 || kExtent == 1) {
    op.kContig = true;
    op.ld = extent == 1 ? 0 : si;
  } else if (si == 1 || extent == 1) {
    op.kContig = false;
    op.ld = sk;
  } else {
    return invalidArgument("MatMul: an operand view with no contiguous matrix dim (strides {} "
                           "and {}) cannot be read in place",
                           si, sk);
  }
  return op;
}

std::string scaled(const std::string &offset, int64_t stride) {
  return offset == "0" ? "0" : fmt::format("{} * {}LL", offset, stride);
}

/// A MatMul operand as the product reads it: its dims after perm_a / perm_b, and how many
/// elements apart each lies in the operand's (contiguous) buffer.
struct OperandView {
  std::vector<int64_t> dims, strides;
  bool permuted = false;
};

Expected<OperandView> operandView(const Node &n, int i) {
  OperandView v;
  v.dims = staticSizes(n.input(i));
  v.strides.assign(v.dims.size(), 1);
  for (size_t d = v.dims.size(); d-- > 1;)
    v.strides[d - 1] = v.strides[d] * v.dims[d];
  DLC_ASSIGN_OR_RETURN(
      std::vector<int64_t> perm,
      ops::matmulOperandPerm(n, i == 0 ? "perm_a" : "perm_b", static_cast<int64_t>(v.dims.size())));
  if (!perm.empty()) {
    OperandView p;
    for (int64_t d : perm) {
      p.dims.push_back(v.dims[static_cast<size_t>(d)]);
      p.strides.push_back(v.strides[static_cast<size_t>(d)]);
    }
    p.permuted = true;
    v = std::move(p);
  }
  // numpy's 1-D promotion: A [K] is [1, K], B [K] is [K, 1].
  if (v.dims.size() == 1) {
    if (i == 0) {
      v.dims.insert(v.dims.begin(), 1);
      v.strides.insert(v.strides.begin(), v.dims.back());
    } else {
      v.dims.push_back(1);
      v.strides.push_back(1);
    }
  }
  return v;
}

Expected<GemmSpec> matmulSpec(const Node &n) {
  DLC_ASSIGN_OR_RETURN(OperandView va, operandView(n, 0));
  DLC_ASSIGN_OR_RETURN(OperandView vb, operandView(n, 1));
  const std::vector<int64_t> &pa = va.dims, &pb = vb.dims;
  GemmSpec s;
  s.dtype = n.input(0)->dtype();
  s.m = pa[pa.size() - 2];
  s.k = pa.back();
  s.n = pb.back();
  std::vector<int64_t> aBatch(pa.begin(), pa.end() - 2), bBatch(pb.begin(), pb.end() - 2);
  // The output's batch dims: numpy broadcasting of both operands' batch dims.
  std::vector<int64_t> outBatch(std::max(aBatch.size(), bBatch.size()), 1);
  for (size_t i = 0; i < outBatch.size(); ++i) {
    auto dim = [&](const std::vector<int64_t> &d) {
      const size_t lead = outBatch.size() - d.size();
      return i < lead ? int64_t{1} : d[i - lead];
    };
    outBatch[i] = std::max(dim(aBatch), dim(bBatch));
  }
  const int64_t batch = product(outBatch);
  s.outRowStride = s.n;
  const size_t ra = pa.size(), rb = pb.size();
  // Element (i, k) of A at i * strides[-2] + k * strides[-1]; (k, n) of B likewise.
  // perm_y: the product is stored transposed; product axis j lies strides[j] apart there.
  const size_t ry = outBatch.size() + 2;
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> permY,
                       ops::matmulOperandPerm(n, "perm_y", static_cast<int64_t>(ry)));
  std::vector<int64_t> yStrides;
  if (!permY.empty()) {
    if (n.input(0)->shape().rank() < 2 || n.input(1)->shape().rank() < 2)
      return invalidArgument("MatMul: perm_y needs 2-D or batched operands");
    std::vector<int64_t> dims = outBatch;
    dims.push_back(s.m);
    dims.push_back(s.n);
    std::vector<int64_t> stored(ry), storedStride(ry, 1);
    for (size_t j = 0; j < ry; ++j)
      stored[j] = dims[static_cast<size_t>(permY[j])];
    for (size_t j = ry - 1; j-- > 0;)
      storedStride[j] = storedStride[j + 1] * stored[j + 1];
    yStrides.assign(ry, 0);
    for (size_t j = 0; j < ry; ++j)
      yStrides[static_cast<size_t>(permY[j])] = storedStride[j];
    if (yStrides[ry - 1] != 1)
      return invalidArgument("MatMul: perm_y [{}] moves the product's columns from the "
                             "contiguous axis",
                             fmt::join(permY, ", "));
  }
  if (product(bBatch) == 1 && product(aBatch) == batch && !va.permuted && permY.empty()) {
    // One GEMM: A's batch rows stacked.
    s.m *= batch;
    DLC_ASSIGN_OR_RETURN(s.a, strided(n.input(0), s.k, 1, s.m, s.k, "0"));
    DLC_ASSIGN_OR_RETURN(
        s.b, strided(n.input(1), vb.strides[rb - 1], vb.strides[rb - 2], s.n, s.k, "0"));
  } else {
    s.batch = batch;
    auto offset = [&](const OperandView &v, const std::vector<int64_t> &dims) {
      const size_t r = v.dims.size();
      if (!v.permuted) // batches of whole matrices
        return scaled(broadcastOffset(dims, outBatch, "b"), v.dims[r - 2] * v.dims[r - 1]);
      const std::vector<int64_t> strides(v.strides.begin(), v.strides.end() - 2);
      return broadcastOffset(dims, strides, outBatch, "b");
    };
    DLC_ASSIGN_OR_RETURN(s.a, strided(n.input(0), va.strides[ra - 2], va.strides[ra - 1], s.m, s.k,
                                      offset(va, aBatch)));
    DLC_ASSIGN_OR_RETURN(s.b, strided(n.input(1), vb.strides[rb - 1], vb.strides[rb - 2], s.n, s.k,
                                      offset(vb, bBatch)));
    s.outBatchStride = s.m * s.n;
  }
  if (!permY.empty()) {
    const std::vector<int64_t> batchStrides(yStrides.begin(), yStrides.end() - 2);
    s.outRowStride = yStrides[ry - 2];
    s.outBatchOffset = broadcastOffset(outBatch, batchStrides, outBatch, "b");
    // A common divisor of the batch strides, for the alignment checks (stagedWidth).
    s.outBatchStride = 0;
    for (size_t j = 0; j < batchStrides.size(); ++j)
      if (outBatch[j] > 1)
        s.outBatchStride = std::gcd(s.outBatchStride, batchStrides[j]);
  }
  return s;
}

/// MatMulInteger with transB: A [..., M, K] rows stacked, B [N, K].
Expected<GemmSpec> matmulIntegerSpec(const Node &n) {
  const std::vector<int64_t> a = staticSizes(n.input(0)), b = staticSizes(n.input(1));
  GemmSpec s;
  s.dtype = DType::kI8;
  s.k = a.back();
  s.n = b[0];
  s.m = 1;
  for (size_t i = 0; i + 1 < a.size(); ++i)
    s.m *= a[i];
  DLC_ASSIGN_OR_RETURN(s.a, strided(n.input(0), s.k, 1, s.m, s.k, "0"));
  DLC_ASSIGN_OR_RETURN(s.b, strided(n.input(1), s.k, 1, s.n, s.k, "0"));
  s.outRowStride = s.n;
  return s;
}

Expected<GemmSpec> gemmSpec(const Node &n) {
  const std::vector<int64_t> a = staticSizes(n.input(0)), b = staticSizes(n.input(1));
  const bool ta = n.getInt("transA") != 0, tb = n.getInt("transB") != 0;
  GemmSpec s;
  s.dtype = n.input(0)->dtype();
  s.m = ta ? a[1] : a[0];
  s.k = ta ? a[0] : a[1];
  s.n = tb ? b[0] : b[1];
  // A(m, k): row-major [M, K] or, transposed, [K, M]; B(k, n): [K, N] or [N, K].
  DLC_ASSIGN_OR_RETURN(s.a, ta ? strided(n.input(0), 1, s.m, s.m, s.k, "0")
                               : strided(n.input(0), s.k, 1, s.m, s.k, "0"));
  DLC_ASSIGN_OR_RETURN(s.b, tb ? strided(n.input(1), s.k, 1, s.n, s.k, "0")
                               : strided(n.input(1), 1, s.n, s.n, s.k, "0"));
  s.outRowStride = s.n;
  s.alpha = n.getFloat("alpha");
  const float beta = n.getFloat("beta");
  if (n.hasInput(2) && beta != 0.0f)
    s.addends.push_back({n.input(2), beta, staticSizes(n.input(2))});
  return s;
}

} // namespace

namespace gemm {

Expected<KernelSet> emitGemmGroup(const FusedGroup &group, const EmitOptions &opts,
                                  const std::optional<TileConfig> &cfg) {
  const Node *n = group.anchor;
  if (!claims(n))
    return invalidArgument("the group's anchor is not a MatMul or Gemm");
  std::string why;
  if (!supports(*n, &why))
    return invalidArgument("{}", why);
  DLC_ASSIGN_OR_RETURN(GemmSpec spec, n->op() == Op::kMatMul          ? matmulSpec(*n)
                                      : n->op() == Op::kMatMulInteger ? matmulIntegerSpec(*n)
                                                                      : gemmSpec(*n));
  return writeGemm(group, spec, opts, cfg);
}

} // namespace gemm

Family gemmFamily() {
  return {"gemm", claims, supports, [](const FusedGroup &g, const EmitOptions &o) {
            return gemm::emitWithTileOverride(g, o, [&](const std::optional<gemm::TileConfig> &c) {
              return gemm::emitGemmGroup(g, o, c);
            });
          }};
}

} // namespace dlc::codegen
