// fold-transpose-matmul: a MatMul reads a transposed operand in place.
//
// Attention as exporters write it splits heads with transposes that feed MatMuls:
//
//     %qt = transpose(%q) {perm = [0, 2, 1, 3]}         // [B, S, H, D] -> [B, H, S, D]
//     %kt = transpose(%k) {perm = [0, 2, 3, 1]}         // [B, S, H, D] -> [B, H, D, S]
//     %s  = matmul(%qt, %kt)
//  =>
//     %s  = matmul(%q, %k) {perm_a = [0, 2, 1, 3], perm_b = [0, 2, 3, 1]}
//
// perm_a / perm_b (dlc's MatMul attributes) say the product reads the operand through that
// permutation. The GEMM kernels address such a view directly: each batch of the product is a
// strided matrix of the untransposed buffer (batch offset h * D, rows H * D apart), so the
// transpose costs no kernel and no memory traffic. A transpose of a transpose composes.
// Folded only where the kernels can read the view: the operand's innermost (stride-1) axis
// must stay one of the two matrix axes. Not folded either: a batched A times an unbatched B
// (one GEMM over A's stacked rows, which a permuted A would split into a GEMM per batch).
// What stays is said under --debug-only=fold-transpose-matmul. The transpose itself stays for its
// other readers; run dce after this pass. The reference backend applies the permutation before the
// product, and the ONNX exporter writes it back as a Transpose.
#include "ir/ops/util.h"
#include "passes/registry.h"
#include "passes/util/transpose_sink.h"

namespace dlc {

namespace {

class FoldTransposeMatmul : public Pass {
public:
  Expected<bool> run(Graph &g, const PassOptions &options) override {
    bool changed = false;
    for (Node *n : g.nodes()) {
      if (n->op() != Op::kMatMul)
        continue;
      for (int i : {0, 1}) {
        DLC_ASSIGN_OR_RETURN(bool folded, foldOperand(*n, i, options));
        changed = changed || folded;
      }
    }
    return changed;
  }

private:
  /// Folds the chain of transposes producing operand `i` of `n`, as far up as the kernels can
  /// read the result (a chain may pass through a permutation they cannot read and come back
  /// to one they can, or to the identity).
  static Expected<bool> foldOperand(Node &n, int i, const PassOptions &options) {
    const char *attr = i == 0 ? "perm_a" : "perm_b";
    Value *best = nullptr, *v = n.input(i);
    std::vector<int64_t> bestPerm;
    std::string why;
    if (!v || !v->shape().isRanked())
      return false;
    const int64_t rank = v->shape().rank();
    DLC_ASSIGN_OR_RETURN(std::vector<int64_t> perm, ops::matmulOperandPerm(n, attr, rank));
    if (perm.empty())
      for (int64_t j = 0; j < rank; ++j)
        perm.push_back(j);
    for (const Node *t = v->producer(); t && t->op() == Op::kTranspose; t = v->producer()) {
      std::optional<std::vector<int64_t>> tp = transposePerm(*t);
      if (!tp || static_cast<int64_t>(tp->size()) != rank || rank < 2)
        break;
      // The product reads axis j of its operand, which is axis tp[perm[j]] of the source.
      for (int64_t &p : perm)
        p = (*tp)[static_cast<size_t>(p)];
      v = t->input(0);
      const std::string no = refusal(n, i, perm);
      if (no.empty()) {
        best = v;
        bestPerm = perm;
      } else {
        why = fmt::format("keeps the transpose {}: {}", t->output(0)->name(), no);
      }
    }
    if (!best) {
      if (!why.empty())
        options.debugf("{} -> {}: {}", n.describe(), n.output(0)->name(), why);
      return false;
    }
    const bool identity = isIdentity(bestPerm);
    if (identity)
      options.debugf("{} -> {}: reads {} as it is (the transposes cancel)", n.describe(),
                     n.output(0)->name(), best->name());
    else
      options.debugf("{} -> {}: reads {} through {} = [{}]", n.describe(), n.output(0)->name(),
                     best->name(), attr, fmt::join(bestPerm, ", "));
    n.setInput(i, best);
    if (identity)
      n.removeAttr(attr);
    else
      n.setAttr(attr, Attribute(std::move(bestPerm)));
    return true;
  }

  static bool isIdentity(const std::vector<int64_t> &perm) {
    for (size_t j = 0; j < perm.size(); ++j)
      if (perm[j] != static_cast<int64_t>(j))
        return false;
    return true;
  }

  /// Why operand `i` of `n` cannot be read through `perm` of its source; "" when it can.
  static std::string refusal(const Node &n, int i, const std::vector<int64_t> &perm) {
    if (isIdentity(perm))
      return "";
    const int64_t last = static_cast<int64_t>(perm.size()) - 1;
    if (perm[static_cast<size_t>(last)] != last && perm[static_cast<size_t>(last - 1)] != last)
      return fmt::format("the source's contiguous axis {} would be a batch axis of the product",
                         last);
    // A GEMM whose B has no batch dims runs A's batch as rows of one big product. Read
    // through a permutation, A's batches no longer stack: the product would become one small
    // GEMM per batch (ViT's [B, S, E] -> [S, B, E] before a linear layer: 197 GEMMs of 8 rows).
    const Value *other = n.input(1 - i);
    if (i == 0 && last > 1 && other->shape().isRanked() && other->shape().rank() <= 2)
      return "B has no batch dims, and a permuted A's batches would not stack into one GEMM";
    return "";
  }
};

} // namespace

std::unique_ptr<Pass> createFoldTransposeMatmul() {
  return std::make_unique<FoldTransposeMatmul>();
}

} // namespace dlc
