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
// --debug-only=fold-transpose-matmul. A per-tensor quantize_linear between a product and the
// transpose after it swaps with the transpose (the same values) so that it folds too: int8
// layers reading attention's merged heads. So do up to five such elementwise nodes with
// one-element operands (a cast, realize-int8's multiply by the inverse scale, the quantization). A
// transpose before a product stays for its other readers; run dce after this pass. The reference
// backend applies the permutations, and the ONNX exporter writes them back as Transposes.
#include "ir/annotations/fusion_roles.h"
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
        DLC_ASSIGN_OR_RETURN(bool folded, foldOperand(g, *n, i, options));
        changed = changed || folded;
      }
      DLC_ASSIGN_OR_RETURN(bool folded, foldOutput(g, *n, options));
      changed = changed || folded;
    }
    return changed;
  }

private:
  /// Where a walk up from a MatMul operand stands: the product reads value `v`, seen as shape
  /// `f` (v's shape with some axes split into consecutive factors, as many axes as the
  /// operand has), through `perm` (operand axis j is axis perm[j] of `f`).
  struct View {
    Value *v = nullptr;
    std::vector<int64_t> f, perm;
    /// Elementwise nodes with one-element constant operands passed on the way up (nearest
    /// the product first): they do not care about layout, so the product's operand becomes
    /// them applied to the source instead (exporters scale Q and K between the head split and
    /// the product).
    std::vector<const Node *> pointwise = {};
  };

  /// Whether `t` is elementwise on its first input alone (every other input a one-element
  /// constant), with one output read by one node.
  static bool pointwiseOnData(const Node &t) {
    if (!isElementwiseOp(t.op()) || t.numOutputs() != 1 || !t.output(0) ||
        t.output(0)->uses().size() != 1 || !t.input(0) ||
        t.input(0)->shape() != t.output(0)->shape())
      return false;
    for (int k = 1; k < t.numInputs(); ++k)
      if (t.input(k) && (!t.input(k)->isConstant() || t.input(k)->constant().numElements() != 1))
        return false;
    return true;
  }

  /// For each axis of `coarse`, the consecutive axes of `fine` whose sizes multiply to it;
  /// nullopt when `coarse` is not such a grouping of `fine`. A size-1 axis of `coarse` takes a
  /// size-1 axis of `fine` where one comes next, else none (an unsqueezed axis); other size-1
  /// axes of `fine` join the group they stand in.
  static std::optional<std::vector<std::vector<int64_t>>>
  groups(const std::vector<int64_t> &fine, const std::vector<int64_t> &coarse) {
    std::vector<std::vector<int64_t>> out(coarse.size());
    size_t j = 0;
    for (size_t a = 0; a < coarse.size(); ++a) {
      if (coarse[a] == 1) {
        if (j < fine.size() && fine[j] == 1)
          out[a].push_back(static_cast<int64_t>(j++));
        continue;
      }
      int64_t prod = 1;
      while (j < fine.size() && prod < coarse[a]) {
        prod *= fine[j];
        out[a].push_back(static_cast<int64_t>(j++));
      }
      if (prod != coarse[a])
        return std::nullopt;
      // Size-1 axes right after a group belong to it, unless a size-1 axis of `coarse` is next.
      while (j < fine.size() && fine[j] == 1 && !(a + 1 < coarse.size() && coarse[a + 1] == 1))
        out[a].push_back(static_cast<int64_t>(j++));
    }
    if (j != fine.size())
      return std::nullopt;
    return out;
  }

  /// One step up: through the transpose, reshape (squeeze, unsqueeze, flatten) or elementwise
  /// node producing view.v; nullopt when it is none of those, or when the view's axes do not
  /// map through it one to one.
  static std::optional<View> stepUp(const View &view) {
    const Node *t = view.v->producer();
    if (!t || !t->input(0)->shape().isStatic())
      return std::nullopt;
    const std::vector<int64_t> x = t->input(0)->shape().sizes();
    auto g = groups(view.f, view.v->shape().sizes());
    if (!g)
      return std::nullopt;
    View up{t->input(0), {}, {}, view.pointwise};
    if (pointwiseOnData(*t)) {
      up.f = view.f;
      up.perm = view.perm;
      up.pointwise.push_back(t);
      return up;
    }
    if (t->op() == Op::kReshape || t->op() == Op::kSqueeze || t->op() == Op::kUnsqueeze ||
        t->op() == Op::kFlatten) {
      // The same elements in the same order: the view's axes must group into x's too.
      if (!groups(view.f, x))
        return std::nullopt;
      up.f = view.f;
      up.perm = view.perm;
      return up;
    }
    if (t->op() != Op::kTranspose)
      return std::nullopt;
    std::optional<std::vector<int64_t>> p = transposePerm(*t);
    if (!p || p->size() != x.size())
      return std::nullopt;
    // v axis a is x axis p[a]; its factors (group a of f) move with it.
    std::vector<int64_t> inv(p->size()), where(view.f.size());
    for (size_t a = 0; a < p->size(); ++a)
      inv[static_cast<size_t>((*p)[a])] = static_cast<int64_t>(a);
    for (size_t xi = 0; xi < x.size(); ++xi)
      for (int64_t fa : (*g)[static_cast<size_t>(inv[xi])]) {
        where[static_cast<size_t>(fa)] = static_cast<int64_t>(up.f.size());
        up.f.push_back(view.f[static_cast<size_t>(fa)]);
      }
    for (int64_t j : view.perm)
      up.perm.push_back(where[static_cast<size_t>(j)]);
    return up;
  }

  /// Folds the chain of transposes (and reshapes that only split or merge axes between them)
  /// producing operand `i` of `n`, as far up as the kernels can read the result: a chain may
  /// pass through a permutation they cannot read and come back to one they can, or to the
  /// identity. The candidates are transposes' inputs. Where one is read split into more axes
  /// than it has, a reshape (a view: no kernel) of it is put in front of the product.
  static Expected<bool> foldOperand(Graph &g, Node &n, int i, const PassOptions &options) {
    const char *attr = i == 0 ? "perm_a" : "perm_b";
    Value *in = n.input(i);
    if (!in || !in->shape().isStatic())
      return false;
    const int64_t rank = in->shape().rank();
    DLC_ASSIGN_OR_RETURN(std::vector<int64_t> perm, ops::matmulOperandPerm(n, attr, rank));
    if (perm.empty())
      for (int64_t j = 0; j < rank; ++j)
        perm.push_back(j);
    View view{in, in->shape().sizes(), perm};
    std::optional<View> best;
    std::string why;
    while (rank >= 2) {
      const Node *t = view.v->producer();
      std::optional<View> up = stepUp(view);
      if (!up)
        break;
      view = std::move(*up);
      // Candidates are the transposes' inputs: a step past the last transpose would read the
      // same memory (a reshape) or move an elementwise op for nothing.
      if (t->op() != Op::kTranspose)
        continue;
      const std::string no = refusal(n, i, view.perm);
      if (no.empty())
        best = view;
      else
        why = fmt::format("keeps the transpose {}: {}", t->output(0)->name(), no);
    }
    if (!best) {
      if (!why.empty())
        options.debugf("{} -> {}: {}", n.describe(), n.output(0)->name(), why);
      return false;
    }
    Value *src = best->v;
    // The elementwise nodes passed, applied to the source, nearest the source first.
    for (auto it = best->pointwise.rbegin(); it != best->pointwise.rend(); ++it) {
      const Node &e = **it;
      std::vector<Value *> inputs{src};
      for (int k = 1; k < e.numInputs(); ++k)
        inputs.push_back(e.input(k));
      DLC_ASSIGN_OR_RETURN(src, addTypedNode(g, e.op(), inputs, e.output(0)->name() + "/source", &n,
                                             e, ownAttributes(e)));
    }
    if (src->shape().sizes() != best->f) {
      // Read split: a reshape of the source to the view's axes.
      Value *shape =
          g.addConstant(g.uniqueName(src->name() + "/split_shape"), Tensor::vectorI64(best->f));
      DLC_ASSIGN_OR_RETURN(
          src, addTypedNode(g, Op::kReshape, {src, shape}, src->name() + "/split", &n, n));
    }
    const bool identity = isIdentityPerm(best->perm);
    if (identity)
      options.debugf("{} -> {}: reads {} as it is (the transposes cancel)", n.describe(),
                     n.output(0)->name(), src->name());
    else
      options.debugf("{} -> {}: reads {} through {} = [{}]", n.describe(), n.output(0)->name(),
                     src->name(), attr, fmt::join(best->perm, ", "));
    n.setInput(i, src);
    if (identity)
      n.removeAttr(attr);
    else
      n.setAttr(attr, Attribute(std::move(best->perm)));
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
      t = transposeBeforeElementwise(g, y, options);
    if (!t || t->op() != Op::kTranspose)
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
    if (!isIdentityPerm(composed))
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

  /// Whether `n` computes each element from the same element of its data input `v` and
  /// one-element operands: a per-tensor quantize_linear, a cast, arithmetic with a scalar
  /// (realize-int8's inverse scale before a quantization). Such a node commutes with moving
  /// elements.
  static bool elementwiseOfOne(const Node &n, const Value *v) {
    if (n.numOutputs() != 1 || !n.output(0) || n.input(0) == nullptr)
      return false;
    auto scalar = [](const Value *x) { return !x || x->shape().numElements() == 1; };
    switch (n.op()) {
    case Op::kQuantizeLinear:
      return n.input(0) == v && (n.numInputs() < 2 || scalar(n.input(1))) &&
             (n.numInputs() < 3 || scalar(n.input(2)));
    case Op::kCast:
      return n.input(0) == v;
    case Op::kMul:
    case Op::kAdd:
    case Op::kSub:
    case Op::kDiv:
      return n.numInputs() == 2 && (n.input(0) == v || n.input(1) == v) &&
             scalar(n.input(n.input(0) == v ? 1 : 0)) && n.input(0) != n.input(1);
    default:
      return false;
    }
  }

  /// y -> f1 -> ... -> fk -> transpose, each f elementwiseOfOne and the only reader of what it
  /// reads, computes what transpose(y) -> f1 -> ... -> fk does. Moves the transpose up, so that
  /// it can fold into the product before it: attention's heads merged for an int8 layer arrive
  /// quantized before the merge (insert-fake-quant moves quantization above transposes), and
  /// with fast-requantize multiplied by the inverse scale first. Returns the transpose, or
  /// nullptr where there is none to move.
  static Node *transposeBeforeElementwise(Graph &g, Value *y, const PassOptions &options) {
    std::vector<Node *> chain;
    const Value *v = y;
    Node *t = y->uses().size() == 1 ? y->uses()[0].node : nullptr;
    while (t && t->op() != Op::kTranspose) {
      const Value *out = t->output(0);
      if (!elementwiseOfOne(*t, v) || chain.size() > 4 || !out || out->uses().size() != 1 ||
          g.isOutput(out))
        return nullptr;
      chain.push_back(t);
      v = out;
      t = out->uses()[0].node;
    }
    Value *tv = t ? t->output(0) : nullptr;
    if (!tv || g.isOutput(tv) || chain.empty())
      return nullptr;
    Value *last = chain.back()->output(0);
    g.replaceAllUsesWith(tv, last);
    t->setInput(0, y);
    Node *head = chain.front();
    for (int i = 0; i < head->numInputs(); ++i)
      if (head->input(i) == y)
        head->setInput(i, tv);
    tv->setType(TensorType(y->dtype(), tv->shape()));
    for (Node *c : chain) {
      c->output(0)->setType(TensorType(c->output(0)->dtype(), tv->shape()));
      options.debugf("{}: computes after {} instead of before it (the same values, moved)",
                     c->describe(), t->describe());
    }
    g.moveNode(t, head);
    return t;
  }

  /// Why operand `i` of `n` cannot be read through `perm` of its source; "" when it can.
  static std::string refusal(const Node &n, int i, const std::vector<int64_t> &perm) {
    if (isIdentityPerm(perm))
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
