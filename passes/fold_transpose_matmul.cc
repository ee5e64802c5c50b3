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
// must stay one of the two matrix axes; other transposes stay (said under
// --debug-only=fold-transpose-matmul). The transpose itself stays for its other readers; run
// dce after this pass. The reference backend applies the permutation before the product, and
// the ONNX exporter writes it back as a Transpose.
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
        // Up a chain of transposes, one at a time.
        for (bool folded = true; folded;) {
          DLC_ASSIGN_OR_RETURN(folded, foldOperand(*n, i, options));
          changed = changed || folded;
        }
      }
    }
    return changed;
  }

private:
  /// Folds the transpose producing operand `i` of `n`, if there is one the kernels can read.
  static Expected<bool> foldOperand(Node &n, int i, const PassOptions &options) {
    const Node *t = n.input(i) ? n.input(i)->producer() : nullptr;
    if (!t || t->op() != Op::kTranspose || !t->input(0)->shape().isRanked())
      return false;
    const int64_t rank = t->input(0)->shape().rank();
    std::optional<std::vector<int64_t>> tp = transposePerm(*t);
    if (!tp || rank < 2 || static_cast<int64_t>(tp->size()) != rank)
      return false;
    const char *attr = i == 0 ? "perm_a" : "perm_b";
    DLC_ASSIGN_OR_RETURN(std::vector<int64_t> mine, ops::matmulOperandPerm(n, attr, rank));
    // The product reads axis j of its operand, which is axis tp[mine[j]] of the source.
    std::vector<int64_t> composed(static_cast<size_t>(rank));
    for (int64_t j = 0; j < rank; ++j)
      composed[static_cast<size_t>(j)] =
          (*tp)[static_cast<size_t>(mine.empty() ? j : mine[static_cast<size_t>(j)])];
    const int64_t last = rank - 1;
    if (composed[static_cast<size_t>(last)] != last &&
        composed[static_cast<size_t>(last - 1)] != last) {
      options.debugf("{} -> {}: keeps the transpose {}: the source's contiguous axis {} would "
                     "be a batch axis of the product",
                     n.describe(), n.output(0)->name(), n.input(i)->name(), last);
      return false;
    }
    bool identity = true;
    for (int64_t j = 0; j < rank; ++j)
      identity = identity && composed[static_cast<size_t>(j)] == j;
    if (identity)
      options.debugf("{} -> {}: reads {} as it is (the transposes cancel)", n.describe(),
                     n.output(0)->name(), t->input(0)->name());
    else
      options.debugf("{} -> {}: reads {} through {} = [{}]", n.describe(), n.output(0)->name(),
                     t->input(0)->name(), attr, fmt::join(composed, ", "));
    n.setInput(i, t->input(0));
    if (identity)
      n.removeAttr(attr);
    else
      n.setAttr(attr, Attribute(std::move(composed)));
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> createFoldTransposeMatmul() {
  return std::make_unique<FoldTransposeMatmul>();
}

} // namespace dlc
