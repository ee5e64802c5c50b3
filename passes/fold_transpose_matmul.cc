// fold-transpose-matmul: a MatMul reads a transposed operand, and stores a transposed
// product, in place.
//
// Attention as exporters write it splits heads with transposes that feed MatMuls, and merges
// them with one after:
//
//     %qt = transpose(%q) {perm = [0, 2, 1, 3]}         // [B, S, H, D] -> [B, H, S, D]
//     %kt = transpose(%k) {perm = [0, 2, 3, 1]}         // [B, S, H, D] -> [B, H, D, S]
//     %s  = matmul(%qt, %kt)
//     %c  = matmul(%p, %vt)                             // [B, H, S, D]
//     %ct = transpose(%c) {perm = [0, 2, 1, 3]}         // [B, S, H, D]
//  =>
//     %s  = matmul(%q, %k) {perm_a = [0, 2, 1, 3], perm_b = [0, 2, 3, 1]}
//     %ct = matmul(%p, %v) {perm_b = [0, 2, 1, 3], perm_y = [0, 2, 1, 3]}
//
// perm_a / perm_b (dlc's MatMul attributes) say the product reads the operand through that
// permutation, perm_y that it is stored through one. The GEMM kernels address such views
// directly: each batch of the product is a strided matrix of the untransposed buffer (batch
// offset h * D, rows H * D apart), so the transposes cost no kernel and no memory traffic.
// Chains of transposes compose. Folded only where the kernels can read or write the view:
// an operand's innermost (stride-1) axis must stay one of its two matrix axes, the product's
// columns must stay contiguous. Not folded either: a permuted batched A times an unbatched B,
// nor a permuted output of such a product (one GEMM over A's stacked rows, which the
// permutation would split into a GEMM per batch). What stays is said under
// --debug-only=fold-transpose-matmul. A transpose before a product stays for its other
// readers; run dce after this pass. The reference backend applies the permutations, and the
// ONNX exporter writes them back as Transposes.
#include "ir/match.h"
#include "ir/ops/util.h"
#include "passes/registry.h"
#include "passes/util/transpose_sink.h"

namespace dlc {

namespace {

class FoldTransposeMatmul : public Pass {
public:
  Expected<bool> run(Graph &g, const PassOptions &options) override {
    bool changed = false;
    // The MatMuls first: folding an output erases the transpose after it, which a walk over
    // every node would reach afterwards.
    std::vector<Node *> matmuls;
    for (Node *n : g.nodes())
      if (n->op() == Op::kMatMul)
        matmuls.push_back(n);
    for (Node *n : matmuls) {
      for (int i : {0, 1}) {
        DLC_ASSIGN_OR_RETURN(bool folded, foldOperand(*n, i, options));
        changed = changed || folded;
      }
      DLC_ASSIGN_OR_RETURN(bool folded, foldOutput(g, *n, options));
      changed = changed || folded;
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

  /// Folds the transpose that is the only reader of `n`'s product into perm_y (the product is
  /// stored transposed), when both operands are batched and the columns stay contiguous.
  static Expected<bool> foldOutput(Graph &g, Node &n, const PassOptions &options) {
    Value *y = n.output(0);
    if (!y || y->uses().size() != 1 || g.isOutput(y) || !y->shape().isRanked())
      return false;
    Node *t = y->uses()[0].node;
    if (t->op() != Op::kTranspose)
      return false;
    const int64_t rank = y->shape().rank();
    std::optional<std::vector<int64_t>> tp = transposePerm(*t);
    if (!tp || static_cast<int64_t>(tp->size()) != rank)
      return false;
    // Batched operands only: with an unbatched B the product is one GEMM over A's stacked
    // rows, which a permuted output would split into a GEMM per batch.
    for (int i : {0, 1})
      if (!n.input(i)->shape().isRanked() || n.input(i)->shape().rank() < 3) {
        options.debugf("{} -> {}: keeps the transpose {} after it: the product is not a batch of "
                       "products of batched operands",
                       n.describe(), y->name(), t->output(0)->name());
        return false;
      }
    DLC_ASSIGN_OR_RETURN(std::vector<int64_t> permY, ops::matmulOperandPerm(n, "perm_y", rank));
    std::vector<int64_t> composed(static_cast<size_t>(rank));
    for (int64_t j = 0; j < rank; ++j) {
      const int64_t k = (*tp)[static_cast<size_t>(j)];
      composed[static_cast<size_t>(j)] = permY.empty() ? k : permY[static_cast<size_t>(k)];
    }
    if (composed.back() != rank - 1) {
      options.debugf("{} -> {}: keeps the transpose {} after it: the product's columns would "
                     "not be contiguous",
                     n.describe(), y->name(), t->output(0)->name());
      return false;
    }
    std::vector<std::pair<std::string, Attribute>> attrs;
    for (const char *a : {"perm_a", "perm_b"})
      if (n.hasAttr(a))
        attrs.emplace_back(a, Attribute(n.getInts(a)));
    if (!isIdentity(composed))
      attrs.emplace_back("perm_y", Attribute(composed));
    DLC_ASSIGN_OR_RETURN(Value * stored,
                         addTypedNode(g, Op::kMatMul, {n.input(0), n.input(1)},
                                      n.name().empty() ? y->name() : n.name(), t, n, attrs));
    stored->producer()->setName(n.name());
    options.debugf("{} -> {}: stores the product through perm_y = [{}] (the transpose {} after it)",
                   n.describe(), y->name(), fmt::join(composed, ", "), t->output(0)->name());
    replaceOutputNamed(g, t, stored);
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
