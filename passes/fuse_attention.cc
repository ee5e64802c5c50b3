// fuse-attention: scaled dot-product attention as exporters write it becomes one Attention
// node (ir/ops/attention.h), which the GPU runs as one flash-attention kernel: the scores
// never go to memory.
//
// After fold-transpose-matmul, BERT's attention reads (one layer; mask and casts optional):
//
//     %s  = matmul(%q, %k) {perm_a = [0, 2, 1, 3], perm_b = [0, 2, 3, 1]}   // [B, H, Sq, Sk]
//     %t  = div(%s, %c)                      // or mul; %c a one-element constant
//     %u  = add(%t, %mask)                   // mask broadcast to [B, H, Sq, Sk]
//     %p  = softmax(%u) {axis = -1}
//     %y  = matmul(%p, %v) {perm_b = [0, 2, 1, 3], perm_y = [0, 2, 1, 3]}
//  =>
//     %y  = attention(%q, %k, %v, %mask) {scale = 1/c, perm_q = [0, 2, 1, 3],
//                                        perm_k = [0, 2, 1, 3], perm_v = ..., perm_y = ...}
//
// The product's perm_b reads Kᵀ; perm_k is it with the last two axes swapped. One-element
// constant multiplications (or divisions) of Q or K just before the product (PyTorch's
// export of scaled_dot_product_attention scales both by sqrt(scale)) join the scale when the
// product is their only reader. Casts from the product's dtype to a wider float and back
// around the softmax chain (mixed precision keeps softmax in float32) are absorbed: the
// kernel computes the scores and the softmax in float32 anyway.
//
// Then each operand is read from the buffer its data was moved out of (passes/util/
// strided_view.h): walking up through Reshapes, Transposes, Gathers of one constant index and,
// for Q and K, one-element constant scalings (which join the scale), the operand becomes a
// strided one (sizes_q, strides_q, offset_q) over the buffer where the walk stopped. PyTorch's
// multi-head attention (ViT) then reads Q, K and V straight out of its packed projection:
//
//     %p = add(%b, matmul(%x, %w))                      // [S, B, 3 * E]
//     %t = transpose(unsqueeze(reshape(%p)))            // [3, S, B, 1, E]
//     %q = gather(squeeze(%t), 0) ... %v = gather(squeeze(%t), 2)
//     %y = attention(mul(reshape(%q), c), mul(reshape(%k), c), reshape(%v)) {perm_q = ...}
//  =>
//     %y = attention(%p, %p, %p) {sizes_q = [B, H, S, D], strides_q = [3E, D, 3BE, 1],
//                                 offset_k = E, offset_v = 2E, ..., scale = c * c}
//
// The walk keeps the deepest point past which something was saved (a data-moving op or a
// scaling), and is undone when the GPU cannot read the strided operands. Then, around the
// node (passes/util/attention_operands.h):
//  * torch's batch_first attention projects transpose(%x): the projection reads %x (the same
//    GEMM, its rows in %x's order) and the attention reads through the transpose;
//  * three projections of one input (BERT's query, key, value) become one GEMM three times
//    as wide, its weights side by side, read through strided operands;
//  * Y reshaped to rows, projected and transposed back (torch again): Y is stored in the
//    transposed order, so the transpose goes and the residual add can join the projection.
//
// Fused only when every intermediate value is read by the chain alone, the logical operands
// are 4-D with equal batch and head counts, and (when the pipeline knows a GPU backend,
// PassOptions::gpuSupport) the GPU can run the Attention node; otherwise the reason is given
// under --debug-only=fuse-attention. Run dce after this pass (the chain's nodes stay until
// then).
#include "ir/match.h"
#include "ir/ops/attention.h"
#include "ir/ops/util.h"
#include "passes/registry.h"
#include "passes/util/attention_operands.h"

namespace dlc {

namespace {

using attention::label;
using attention::onlyReader;
using attention::scalarFactor;
using attention::soleReader;

/// An intermediate cast between float types (f16 <-> f32 and the like).
bool isFloatCast(const Node &n) {
  return n.op() == Op::kCast && n.input(0) && isFloat(n.input(0)->dtype()) &&
         isFloat(n.output(0)->dtype());
}

std::vector<int64_t> identity4() { return {0, 1, 2, 3}; }

class FuseAttention : public Pass {
public:
  Expected<bool> run(Graph &g, const PassOptions &options) override {
    std::vector<Node *> softmaxes;
    for (Node *n : g.nodes())
      if (n->op() == Op::kSoftmax)
        softmaxes.push_back(n);
    bool changed = false;
    for (Node *s : softmaxes) {
      std::string why;
      DLC_ASSIGN_OR_RETURN(bool fused, fuse(g, *s, options, &why));
      if (!fused && !why.empty())
        options.debugf("{}: not fused: {}", label(*s), why);
      changed = changed || fused;
    }
    return changed;
  }

private:
  struct Match {
    Node *scores = nullptr, *context = nullptr;
    Value *q = nullptr, *k = nullptr, *mask = nullptr;
    double scale = 1.0;
  };

  /// Which operand of the mask add `p` carries the scores: the one with the sum's shape, read
  /// by `p` alone, made by the chain (a product, scaling or cast), the product preferred when
  /// both are; -1 when none is.
  static int chainOperand(const Graph &g, const Node &p) {
    int best = -1;
    for (int i : {0, 1}) {
      const Value *x = p.input(i);
      const Node *maker = x ? x->producer() : nullptr;
      int unused = 0;
      if (!maker || x->shape() != p.output(0)->shape() || !onlyReader(g, x, &p) ||
          !(maker->op() == Op::kMatMul || isFloatCast(*maker) || scalarFactor(*maker, &unused)))
        continue;
      if (best < 0 || maker->op() == Op::kMatMul)
        best = i;
    }
    return best;
  }

  /// Walks from softmax `s` to both products; false (with `why`) when it is not attention.
  static bool match(const Graph &g, Node &s, Match &m, std::string *why) {
    auto no = [&](std::string msg) {
      *why = std::move(msg);
      return false;
    };
    const Value *in = s.input(0);
    if (!in->shape().isRanked() || in->shape().rank() != 4)
      return no("the scores are not 4-D [batch, heads, queries, keys]");
    const int64_t axis = s.getInt("axis");
    if (axis != -1 && axis != 3)
      return no("softmax is not over the last axis");
    // Down: softmax -> [cast] -> matmul(p, v).
    Value *probs = s.output(0);
    Node *after = soleReader(g, probs);
    if (after && isFloatCast(*after)) {
      probs = after->output(0);
      after = soleReader(g, probs);
    }
    if (!after || after->op() != Op::kMatMul || after->input(0) != probs ||
        after->input(1) == probs)
      return no("the probabilities are not the first operand of one MatMul, their only reader");
    if (after->hasAttr("perm_a") && !after->getInts("perm_a").empty())
      return no("the second product reads the probabilities permuted");
    m.context = after;
    // Up: [cast] <- [add mask] <- [scale] <- [cast] <- matmul(q, k).
    // A scale met before the mask (walking up) would scale the mask too.
    const Node *reader = &s;
    Value *v = s.input(0);
    bool scaled = false;
    for (;;) {
      Node *p = v->producer();
      if (!p || !onlyReader(g, v, reader))
        return no(fmt::format("'{}' has other readers or no producer", v->name()));
      reader = p;
      if (p->op() == Op::kMatMul) {
        m.scores = p;
        break;
      }
      int data = 0;
      if (isFloatCast(*p)) {
        v = p->input(0);
      } else if (auto f = scalarFactor(*p, &data)) {
        m.scale *= *f;
        scaled = true;
        v = p->input(data);
      } else if (p->op() == Op::kAdd && !m.mask) {
        if (scaled)
          return no(fmt::format("{} adds the mask before a scaling, which would scale it too",
                                label(*p)));
        const int chain = chainOperand(g, *p);
        if (chain < 0)
          return no(fmt::format("{}: neither operand is the scores alone", label(*p)));
        m.mask = p->input(1 - chain);
        v = p->input(chain);
      } else {
        return no(fmt::format("{} between the product and the softmax", label(*p)));
      }
    }
    if (m.scores->hasAttr("perm_y") && !m.scores->getInts("perm_y").empty())
      return no("the scores are stored permuted");
    if (m.scores->output(0)->dtype() != m.context->output(0)->dtype() ||
        m.scores->input(0)->dtype() != m.context->input(1)->dtype())
      return no("the two products have different dtypes");
    m.q = m.scores->input(0);
    m.k = m.scores->input(1);
    return true;
  }

  /// Operand `i` of product `p` as an Attention operand: its source and perm (identity when
  /// absent); with `scale`, one-element constant scalings just before it, read by `p` alone,
  /// join it.
  static Value *operand(const Graph &g, Node &p, int i, std::vector<int64_t> *perm, double *scale) {
    const char *attr = i == 0 ? "perm_a" : "perm_b";
    *perm = p.hasAttr(attr) && !p.getInts(attr).empty() ? p.getInts(attr) : identity4();
    Value *v = p.input(i);
    const Node *reader = &p;
    int data = 0;
    while (Node *s = scale ? v->producer() : nullptr) {
      auto f = scalarFactor(*s, &data);
      if (!f || !onlyReader(g, v, reader))
        break;
      *scale *= *f;
      reader = s;
      v = s->input(data);
    }
    return v;
  }

  static Expected<bool> fuse(Graph &g, Node &s, const PassOptions &options, std::string *why) {
    Match m;
    if (!match(g, s, m, why))
      return false;
    for (const Value *v : {m.scores->input(0), m.scores->input(1), m.context->input(1)})
      if (!v->shape().isRanked() || v->shape().rank() != 4)
        return (*why = "Q, K and V are not 4-D", false);
    double scale = m.scale;
    std::vector<int64_t> pq, pk, pv;
    Value *q = operand(g, *m.scores, 0, &pq, &scale);
    Value *k = operand(g, *m.scores, 1, &pk, &scale);
    std::swap(pk[2], pk[3]); // the product read Kᵀ
    Value *v = operand(g, *m.context, 1, &pv, nullptr);
    std::vector<std::pair<std::string, Attribute>> attrs = {
        {"scale", Attribute(static_cast<float>(scale))}};
    auto perm = [&](const char *name, const std::vector<int64_t> &p) {
      if (p != identity4())
        attrs.emplace_back(name, Attribute(p));
    };
    perm("perm_q", pq);
    perm("perm_k", pk);
    perm("perm_v", pv);
    if (m.context->hasAttr("perm_y"))
      perm("perm_y", m.context->getInts("perm_y"));
    std::vector<Value *> inputs = {q, k, v};
    if (m.mask)
      inputs.push_back(m.mask);
    auto y = addTypedNode(g, Op::kAttention, inputs, m.context->output(0)->name(), m.context,
                          *m.context, attrs);
    if (!y)
      return (*why = std::string(y.status().message()), false);
    // Equal batch and head counts (the products could broadcast them; the kernel does not).
    auto logical = [](const Value *x, const std::vector<int64_t> &p) {
      std::vector<Dim> d;
      for (int64_t a : p)
        d.push_back(x->shape()[a]);
      return d;
    };
    const auto lq = logical(q, pq), lk = logical(k, pk), lv = logical(v, pv);
    std::string no;
    if (lq[0] != lk[0] || lk[0] != lv[0] || lq[1] != lk[1] || lk[1] != lv[1])
      no = "Q, K and V differ in batch or head counts (broadcast products)";
    else if ((*y)->type() != m.context->output(0)->type())
      no = fmt::format("the Attention node's type {} is not the product's {}", (*y)->type().str(),
                       m.context->output(0)->type().str());
    else if (options.gpuSupport && !options.gpuSupport(*(*y)->producer(), &no))
      no = no.empty() ? "the GPU backend cannot run it" : no;
    if (!no.empty()) {
      g.eraseNode((*y)->producer());
      return (*why = no, false);
    }
    options.debugf("{}: fused {} .. {} into attention -> {}", label(s), label(*m.scores),
                   label(*m.context), m.context->output(0)->name());
    // The Attention node takes the second product's name (profiles and errors keep the
    // model's names).
    const std::string name = m.context->name();
    replaceOutputNamed(g, m.context, *y);
    (*y)->producer()->setName(name);
    // The chain is dead now; gone, it no longer counts as a reader of Q, K and V.
    std::vector<Node *> chain = {&s}; // s, then its readers (a cast) first
    for (const Use &u : s.output(0)->uses())
      chain.push_back(u.node);
    attention::eraseDead(g, chain, &s);
    DLC_ASSIGN_OR_RETURN(Node * a, attention::foldOperandViews(g, *(*y)->producer(), options));
    Node *b = attention::sinkInputTranspose(g, *a, options);
    if (!b)
      b = attention::mergeProjections(g, *a, options);
    attention::hoistOutputTranspose(g, b ? *b : *a, options);
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> createFuseAttention() { return std::make_unique<FuseAttention>(); }

} // namespace dlc
